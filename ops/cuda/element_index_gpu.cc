#include "ops/cuda/element_index_gpu.h"

#include <algorithm>
#include <vector>

#include "ops/index_values.h"

namespace mxlite {

const int64_t* DeviceElementOffsets(const OpContext& ctx, const TensorView& index,
                                    const Shape& data, int axis, cudaStream_t stream,
                                    const std::string& owner) {
  std::vector<uint8_t> index_bytes =
      cuda::CopyToHost<uint8_t>(index.data, static_cast<int64_t>(index.bytes()), stream, owner);
  const TensorView host_index{index_bytes.data(), index.shape, index.dtype, Context::CPU()};
  const std::vector<int64_t> offsets = ElementIndexOffsets(host_index, data, axis, owner);
  int64_t* device = ctx.scratch->GetArray<int64_t>(std::max<int64_t>(index.size(), 1));
  cuda::CopyToDevice(offsets, device, stream, owner);
  return device;
}

}  // namespace mxlite
