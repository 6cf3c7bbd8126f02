// BatchNorm's GPU kernels (ops/batch_norm.cc), our own (ops/cuda/batch_norm_kernels.cu), not
// cuDNN's: the CPU op keeps the moving variance from the biased batch variance (cuDNN the unbiased
// one), saves the variance (cuDNN 1/sqrt(var + eps)), takes any eps >= 0 and any channel axis.
#include <cmath>
#include <vector>

#include "ops/batch_norm.h"
#include "ops/cuda/batch_norm_kernels.h"
#include "ops/cuda/cuda_util.h"
#include "ops/operator.h"
#include "ops/output_clamp.h"

namespace mxlite {
namespace {

enum BatchNormInput { kData, kGamma, kBeta, kMovingMean, kMovingVar };
enum BatchNormOutput { kOut, kMean, kVar };

cuda::BatchNormGeometry BatchNormGeometryOf(const Attributes& attrs, const Shape& data,
                                            const std::string& owner) {
  const BatchNormChannels c = BatchNormChannelsOf(attrs, data, owner);
  MX_CHECK(!c.blocked()) << owner << ": channel_block=" << c.lanes << " runs on the CPU only";
  return {c.outer, c.channels, c.inner};
}

// The attributes read as on the CPU (BatchNormParamsOf, its checks included), for this pass.
cuda::BatchNormParams KernelParamsOf(const OpContext& ctx, const Attributes& attrs,
                                     const std::string& owner) {
  const BatchNormParams b = BatchNormParamsOf(attrs, owner);
  cuda::BatchNormParams p;
  p.eps = b.eps;
  p.momentum = b.momentum;
  p.fix_gamma = b.fix_gamma;
  p.batch_stats = b.UsesBatchStats(ctx.is_train);
  const OutputClamp clamp = ReadOutputClamp(attrs, owner);
  p.low = clamp.low;
  p.high = clamp.high;
  return p;
}

void BatchNormForwardGpu(const OpContext& ctx, const Attributes& attrs,
                         const std::vector<TensorView>& inputs,
                         const std::vector<TensorView>& outputs,
                         const std::vector<WriteMode>& req) {
  const std::string owner = "BatchNorm " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const cuda::BatchNormGeometry g = BatchNormGeometryOf(attrs, inputs[kData].shape, owner);
  const cuda::BatchNormParams p = KernelParamsOf(ctx, attrs, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[kData].dtype, T, owner, {
    using P = cuda::BatchNormParamType<T>;  // float for float16 data
    cuda::BatchNormForwardArgs<T> a;
    a.x = inputs[kData].data_as<T>();
    a.gamma = inputs[kGamma].data_as<P>();
    a.beta = inputs[kBeta].data_as<P>();
    a.moving_mean = inputs[kMovingMean].data_as<P>();
    a.moving_var = inputs[kMovingVar].data_as<P>();
    a.saved_mean = WrittenOrNull<P>(outputs[kMean], req[kMean]);
    a.saved_var = WrittenOrNull<P>(outputs[kVar], req[kVar]);
    a.y = WrittenOrNull<T>(outputs[kOut], req[kOut]);
    a.coefficients = ctx.scratch->GetArray<double>(2 * g.channels);
    MXLITE_CUDA_CALL(cuda::BatchNormForward(g, p, a, stream), owner);
  });
}

void BatchNormBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                          const std::vector<TensorView>& output_grads,
                          const std::vector<TensorView>& inputs,
                          const std::vector<TensorView>& outputs,
                          const std::vector<TensorView>& input_grads,
                          const std::vector<WriteMode>& req) {
  if (req[kData] == WriteMode::kNull && req[kGamma] == WriteMode::kNull &&
      req[kBeta] == WriteMode::kNull) {
    return;
  }
  const std::string owner = "BatchNorm " + ctx.node_name;
  CheckNoFusedActivation(attrs, owner);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const cuda::BatchNormGeometry g = BatchNormGeometryOf(attrs, inputs[kData].shape, owner);
  const cuda::BatchNormParams p = KernelParamsOf(ctx, attrs, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[kData].dtype, T, owner, {
    using P = cuda::BatchNormParamType<T>;
    cuda::BatchNormBackwardArgs<T> a;
    a.x = inputs[kData].data_as<T>();
    a.dy = output_grads[kOut].data_as<T>();
    a.gamma = inputs[kGamma].data_as<P>();
    a.saved_mean = outputs[kMean].data_as<P>();
    a.saved_var = outputs[kVar].data_as<P>();
    a.dx = WrittenOrNull<T>(input_grads[kData], req[kData]);
    a.dgamma = WrittenOrNull<P>(input_grads[kGamma], req[kGamma]);
    a.dbeta = WrittenOrNull<P>(input_grads[kBeta], req[kBeta]);
    a.coefficients = ctx.scratch->GetArray<double>(3 * g.channels);
    MXLITE_CUDA_CALL(cuda::BatchNormBackward(g, p, a, stream), owner);
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(BatchNorm, kGPU, BatchNormForwardGpu, BatchNormBackwardGpu);

}  // namespace mxlite
