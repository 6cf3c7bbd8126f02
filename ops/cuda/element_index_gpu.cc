#include "ops/cuda/element_index_gpu.h"

#include <algorithm>
#include <vector>

#include "ops/index_values.h"

namespace mxlite {

const int64_t* DeviceOffsetsOf(
    const OpContext& ctx, const TensorView& index, cudaStream_t stream, const std::string& owner,
    const std::function<std::vector<int64_t>(const TensorView& host_index)>& offsets_of,
    int64_t* count) {
  std::vector<uint8_t> index_bytes =
      cuda::CopyToHost<uint8_t>(index.data, static_cast<int64_t>(index.bytes()), stream, owner);
  const TensorView host_index{index_bytes.data(), index.shape, index.dtype, Context::CPU()};
  const std::vector<int64_t> offsets = offsets_of(host_index);
  if (count != nullptr) *count = static_cast<int64_t>(offsets.size());
  int64_t* device =
      ctx.scratch->GetArray<int64_t>(std::max<int64_t>(static_cast<int64_t>(offsets.size()), 1));
  cuda::CopyToDevice(offsets, device, stream, owner);
  return device;
}

const int64_t* DeviceElementOffsets(const OpContext& ctx, const TensorView& index,
                                    const Shape& data, int axis, cudaStream_t stream,
                                    const std::string& owner) {
  return DeviceOffsetsOf(ctx, index, stream, owner, [&](const TensorView& host_index) {
    return ElementIndexOffsets(host_index, data, axis, owner);
  });
}

}  // namespace mxlite
