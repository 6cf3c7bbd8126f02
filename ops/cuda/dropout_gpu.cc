// Dropout's GPU kernels (ops/dropout.cc): the CPU op's draws, bit for bit
// (ops/cuda/dropout_kernels.cu).
#include <vector>

#include "ops/cuda/array_kernels.h"
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/dropout_kernels.h"
#include "ops/dropout.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

void DropoutForwardGpu(const OpContext& ctx, const Attributes& attrs,
                       const std::vector<TensorView>& inputs,
                       const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "Dropout " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const DropoutSettings settings = DropoutSettingsOf(attrs, ctx.is_train);
  const Shape& shape = inputs[0].shape;
  if (!settings.active) {
    cuda::CopyDeviceAsync(inputs[0].data, outputs[0].data, outputs[0].bytes(), stream, owner);
    return;
  }
  MX_CHECK(ctx.random != nullptr) << owner << ": no random generator in the op context";
  const uint64_t seed = (*ctx.random)();  // the CPU op's draw: the same mask for the same seed
  const Shape drawn = DropoutDrawShape(attrs, shape, owner);
  cuda::DropoutGeometry g;
  g.ndim = shape.ndim();
  for (int d = 0; d < shape.ndim(); ++d) {
    g.extents[d] = shape[d];
    g.drawn[d] = drawn[d];
  }
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    T* mask = WrittenOrNull<T>(outputs[1], req[1]);
    MXLITE_CUDA_CALL(
        cuda::DropoutForward(g, seed, settings.p, settings.scale, inputs[0].data_as<T>(),
                             outputs[0].data_as<T>(), mask, shape.size(), stream),
        owner);
  });
}

void DropoutBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                        const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                        const std::vector<TensorView>& outputs,
                        const std::vector<TensorView>& input_grads,
                        const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "Dropout " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  if (!DropoutSettingsOf(attrs, ctx.is_train).active) {
    cuda::CopyDeviceAsync(output_grads[0].data, input_grads[0].data, input_grads[0].bytes(), stream,
                          owner);
    return;
  }
  MXLITE_GPU_FLOAT_TYPE_SWITCH(input_grads[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(
        cuda::MultiplyArrays(output_grads[0].data_as<T>(), outputs[1].data_as<T>(),
                             input_grads[0].data_as<T>(), input_grads[0].size(), stream),
        owner);
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(Dropout, kGPU, DropoutForwardGpu, DropoutBackwardGpu);

}  // namespace mxlite
