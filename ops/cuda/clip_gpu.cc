// clip's GPU kernels (ops/clip.cc; ops/cuda/clip_kernels.cu).
#include "ops/clip.h"
#include "ops/cuda/clip_kernels.h"
#include "ops/cuda/cuda_util.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

using cuda::Owner;

void ClipForwardGpu(const OpContext& ctx, const Attributes& attrs,
                    const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                    const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = Owner("clip", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const ClipBounds bounds = ClipBoundsOf(attrs);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(cuda::ClipForward(inputs[0].data_as<T>(), outputs[0].data_as<T>(),
                                       outputs[0].size(), bounds.low, bounds.high, stream),
                     owner);
  });
}

void ClipBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                     const std::vector<TensorView>& output_grads,
                     const std::vector<TensorView>& inputs, const std::vector<TensorView>&,
                     const std::vector<TensorView>& input_grads,
                     const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = Owner("clip", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const ClipBounds bounds = ClipBoundsOf(attrs);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(input_grads[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(cuda::ClipBackward(inputs[0].data_as<T>(), output_grads[0].data_as<T>(),
                                        input_grads[0].data_as<T>(), input_grads[0].size(),
                                        bounds.low, bounds.high, stream),
                     owner);
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(clip, kGPU, ClipForwardGpu, ClipBackwardGpu);

}  // namespace mxlite
