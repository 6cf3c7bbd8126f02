// What gather_elements' CPU kernels (ops/gather_elements.cc) and GPU kernels
// (ops/cuda/gather_elements_gpu.cc) share: the node's geometry, and the flat offset into data of
// each output element, computed from the indices on the host (where a bad index is an error
// naming the node on either device).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/shape.h"
#include "ops/attributes.h"
#include "ops/tensor.h"

namespace mxlite {

// "gather_elements NODE", for errors.
std::string GatherElementsOwner(const std::string& node);

// The axis of a node (attribute `axis`, negative from the end) over data of rank `rank`.
// Throws mxlite::Error naming `owner` when data is a scalar, index has another rank, an index
// extent passes data's on another axis, or the axis is out of range.
int GatherElementsAxis(const Attributes& attrs, const Shape& data, const Shape& index,
                       const std::string& owner);

// For each element of `index` (host memory), the flat offset of the data element it picks:
// index's coordinates with the one on `axis` replaced by the index value (negative ones count
// from the end). An index outside [-extent, extent) is an error naming `owner`, the flat position
// and the value.
std::vector<int64_t> GatherElementsOffsets(const TensorView& index, const Shape& data, int axis,
                                           const std::string& owner);

}  // namespace mxlite
