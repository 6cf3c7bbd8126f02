// argmax / argmin's GPU kernels (ops/arg_extremum.h; ops/cuda/arg_extremum_kernels.cu).
#include "ops/arg_extremum.h"
#include "ops/cuda/arg_extremum_kernels.h"
#include "ops/cuda/cuda_util.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

template <bool kLargest>
void ArgForwardGpu(const OpContext& ctx, const Attributes& attrs,
                   const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                   const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = cuda::Owner(kLargest ? "argmax" : "argmin", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const ArgSearch search = ArgSearchOf(attrs, inputs[0].shape, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(cuda::ArgSearch(kLargest, inputs[0].data_as<T>(), outputs[0].data_as<T>(),
                                     search.outer, search.extent, search.inner, stream),
                     owner);
  });
}

template <bool kLargest>
void ArgBackwardGpu(const OpContext& ctx, const Attributes&, const std::vector<TensorView>&,
                    const std::vector<TensorView>&, const std::vector<TensorView>&,
                    const std::vector<TensorView>& input_grads,
                    const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = cuda::Owner(kLargest ? "argmax" : "argmin", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  MXLITE_CUDA_CALL(cudaMemsetAsync(input_grads[0].data, 0, input_grads[0].bytes(), stream), owner);
}

}  // namespace

MXLITE_REGISTER_KERNELS(argmax, kGPU, ArgForwardGpu<true>, ArgBackwardGpu<true>);
MXLITE_REGISTER_KERNELS(argmin, kGPU, ArgForwardGpu<false>, ArgBackwardGpu<false>);

}  // namespace mxlite
