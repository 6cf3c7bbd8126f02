// Integer values read from tensors that hold indices or class labels (nll_loss's labels,
// gather_elements' and scatter_elements' indices): int32 and int64 as they are, and floating ones
// (MXNet's labels, and what the op test harness feeds) when they hold an integer. Host memory
// only. And the geometry of an index with one element per data element it picks or writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/shape.h"
#include "ops/attributes.h"
#include "ops/tensor.h"

namespace mxlite {

// Element `i` of `values` as an integer. Throws mxlite::Error naming `owner`, `what` ("label",
// "index") and the flat position for a floating value that is not an integer, and for a dtype
// that holds none (float16, uint8 are refused too: no index is written in them).
int64_t IntegerValueAt(const TensorView& values, size_t i, const std::string& owner,
                       const char* what);

// The axis of a node (attribute `axis`, negative from the end) whose index has one element per
// data element it picks or writes along that axis (gather_elements, scatter_elements). Throws
// mxlite::Error naming `owner` when data is a scalar, index has another rank, an index extent
// passes data's on another axis (`verb`, "gathered" or "scattered", names the axis that may), or
// the axis is out of range.
int ElementIndexAxis(const Attributes& attrs, const Shape& data, const Shape& index,
                     const std::string& owner, const char* verb);

// For each element of `index` (host memory), the flat offset of the data element it names:
// index's coordinates with the one on `axis` replaced by the index value (negative ones count
// from the end). An index outside [-extent, extent) is an error naming `owner`, the flat position
// and the value.
std::vector<int64_t> ElementIndexOffsets(const TensorView& index, const Shape& data, int axis,
                                         const std::string& owner);

}  // namespace mxlite
