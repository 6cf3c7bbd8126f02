// The data offsets of an element-per-element index (ops/index_values.h's ElementIndexOffsets) for
// GPU kernels (gather_elements, scatter_elements): the index is read on the host, checked there
// (so a bad index is the CPU's mxlite::Error naming the node) and the offsets uploaded into the
// op's scratch memory. The op's stream waits for the index once per call.
#pragma once

#include <cstdint>
#include <string>

#include "ops/cuda/cuda_util.h"
#include "ops/operator.h"

namespace mxlite {

const int64_t* DeviceElementOffsets(const OpContext& ctx, const TensorView& index,
                                    const Shape& data, int axis, cudaStream_t stream,
                                    const std::string& owner);

}  // namespace mxlite
