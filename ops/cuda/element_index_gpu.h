// The data offsets of an element-per-element index (ops/index_values.h's ElementIndexOffsets) for
// GPU kernels (gather_elements, scatter_elements; gather_nd's slices through DeviceOffsetsOf): the
// index is read on the host, checked there (so a bad index is the CPU's mxlite::Error naming the
// node) and the offsets uploaded into the op's scratch memory. The op's stream waits for the index
// once per call.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ops/cuda/cuda_util.h"
#include "ops/operator.h"

namespace mxlite {

const int64_t* DeviceElementOffsets(const OpContext& ctx, const TensorView& index,
                                    const Shape& data, int axis, cudaStream_t stream,
                                    const std::string& owner);

// The same for any offsets read from an index: `offsets_of` gets the index in host memory (a
// bad index is its error to throw); the offsets it returns go to scratch device memory. `count`
// (if not null) receives their number.
const int64_t* DeviceOffsetsOf(
    const OpContext& ctx, const TensorView& index, cudaStream_t stream, const std::string& owner,
    const std::function<std::vector<int64_t>(const TensorView& host_index)>& offsets_of,
    int64_t* count = nullptr);

}  // namespace mxlite
