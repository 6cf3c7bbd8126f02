// Cast's GPU kernels: conversions by ops/cuda/cast_kernels.cu (ops/cast.cc's rules), a plain copy
// when the dtypes agree.
#include "ops/cuda/cast_kernels.h"
#include "ops/cuda/cuda_util.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

void ConvertGpu(const OpContext& ctx, const TensorView& from, const TensorView& to,
                const char* what) {
  const std::string owner = "Cast " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  if (from.dtype == to.dtype) {
    cuda::CopyDeviceAsync(from.data, to.data, to.bytes(), stream, owner);
    return;
  }
  const cudaError_t status =
      cuda::CastArray(from.dtype, from.data, to.dtype, to.data, to.size(), stream);
  MX_CHECK(status != cudaErrorInvalidValue)
      << owner << ": " << what << " from " << from.dtype << " to " << to.dtype
      << " is not supported (float32, float64, float16, int32, int64 and uint8 are)";
  MXLITE_CUDA_CALL(status, owner);
}

void CastForwardGpu(const OpContext& ctx, const Attributes&, const std::vector<TensorView>& inputs,
                    const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  ConvertGpu(ctx, inputs[0], outputs[0], "converting the data");
}

void CastBackwardGpu(const OpContext& ctx, const Attributes&,
                     const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                     const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                     const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  ConvertGpu(ctx, output_grads[0], input_grads[0], "converting the gradient");
}

}  // namespace

MXLITE_REGISTER_KERNELS(Cast, kGPU, CastForwardGpu, CastBackwardGpu);

}  // namespace mxlite
