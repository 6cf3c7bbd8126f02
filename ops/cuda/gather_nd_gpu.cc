// gather_nd's GPU kernels (ops/gather_nd.h): the indices are read and checked on the host, the
// picked slices expanded to one data offset per output element and uploaded, then
// gather_elements' kernels copy (forward) and add atomically (backward; slices that repeat add
// up in an order the hardware picks; MXNET_ENFORCE_DETERMINISM=1 makes the backward an error).
#include <vector>

#include "core/settings.h"
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/element_index_gpu.h"
#include "ops/cuda/gather_elements_kernels.h"
#include "ops/gather_nd.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

// One data offset per output element (each picked slice's elements), in scratch memory on the
// device; `count` set to their number.
const int64_t* DeviceOffsets(const OpContext& ctx, const TensorView& indices, const Shape& data,
                             cudaStream_t stream, const std::string& owner, int64_t* count) {
  return DeviceOffsetsOf(
      ctx, indices, stream, owner,
      [&](const TensorView& host) {
        const GatherNdSlices s = GatherNdSlicesOf(host, data, owner);
        std::vector<int64_t> offsets;
        offsets.reserve(s.offsets.size() * static_cast<size_t>(s.size));
        for (int64_t slice : s.offsets) {
          for (int64_t e = 0; e < s.size; ++e) offsets.push_back(slice + e);
        }
        return offsets;
      },
      count);
}

void ForwardGpu(const OpContext& ctx, const Attributes&, const std::vector<TensorView>& inputs,
                const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = GatherNdOwner(ctx.node_name);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  int64_t count = 0;
  const int64_t* offsets = DeviceOffsets(ctx, inputs[1], inputs[0].shape, stream, owner, &count);
  MXLITE_CUDA_CALL(cuda::GatherElements(inputs[0].data, offsets, count, DTypeSize(inputs[0].dtype),
                                        outputs[0].data, stream),
                   owner);
}

void BackwardGpu(const OpContext& ctx, const Attributes&,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>& inputs,
                 const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = GatherNdOwner(ctx.node_name);
  MX_CHECK(!Settings::Global().GetBool("MXNET_ENFORCE_DETERMINISM"))
      << owner << ": the GPU's gradient to the data adds with atomics in no fixed order, and "
      << "MXNET_ENFORCE_DETERMINISM=1 is set (the CPU's is deterministic)";
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  int64_t count = 0;
  const int64_t* offsets =
      DeviceOffsets(ctx, inputs[1], input_grads[0].shape, stream, owner, &count);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(output_grads[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(
        cuda::GatherElementsBackward<T>(output_grads[0].data_as<T>(), offsets, count,
                                        input_grads[0].data_as<T>(), input_grads[0].size(), stream),
        owner);
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(gather_nd, kGPU, ForwardGpu, BackwardGpu);

}  // namespace mxlite
