// The element-wise math functions' GPU kernels (ops/unary_math.h; unary_math_kernels.cu), the
// attributes read as on the CPU (UnaryMathParamsOf).
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/unary_math_kernels.h"
#include "ops/operator.h"
#include "ops/unary_math.h"

namespace mxlite {
namespace {

template <UnaryMath kF>
void UnaryMathForwardGpu(const OpContext& ctx, const Attributes& attrs,
                         const std::vector<TensorView>& inputs,
                         const std::vector<TensorView>& outputs,
                         const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = cuda::Owner(UnaryMathName(kF), ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const UnaryMathParams params = UnaryMathParamsOf(kF, attrs);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(cuda::UnaryMathForward(kF, params, inputs[0].data_as<T>(),
                                            outputs[0].data_as<T>(), inputs[0].size(), stream),
                     owner);
  });
}

template <UnaryMath kF>
void UnaryMathBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                          const std::vector<TensorView>& output_grads,
                          const std::vector<TensorView>& inputs, const std::vector<TensorView>&,
                          const std::vector<TensorView>& input_grads,
                          const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = cuda::Owner(UnaryMathName(kF), ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const UnaryMathParams params = UnaryMathParamsOf(kF, attrs);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(
        cuda::UnaryMathBackward(kF, params, inputs[0].data_as<T>(), output_grads[0].data_as<T>(),
                                input_grads[0].data_as<T>(), inputs[0].size(), stream),
        owner);
  });
}

}  // namespace

#define MXLITE_UNARY_MATH_GPU(name, function)                                               \
  MXLITE_REGISTER_KERNELS(name, kGPU, UnaryMathForwardGpu<UnaryMath::function>, \
                          UnaryMathBackwardGpu<UnaryMath::function>)
MXLITE_UNARY_MATH_GPU(sqrt, kSqrt);
MXLITE_UNARY_MATH_GPU(rsqrt, kRsqrt);
MXLITE_UNARY_MATH_GPU(square, kSquare);
MXLITE_UNARY_MATH_GPU(exp, kExp);
MXLITE_UNARY_MATH_GPU(log, kLog);
MXLITE_UNARY_MATH_GPU(abs, kAbs);
MXLITE_UNARY_MATH_GPU(negative, kNegative);
MXLITE_UNARY_MATH_GPU(reciprocal, kReciprocal);
MXLITE_UNARY_MATH_GPU(erf, kErf);
MXLITE_UNARY_MATH_GPU(sin, kSin);
MXLITE_UNARY_MATH_GPU(cos, kCos);
MXLITE_UNARY_MATH_GPU(tan, kTan);
MXLITE_UNARY_MATH_GPU(arcsin, kArcsin);
MXLITE_UNARY_MATH_GPU(arccos, kArccos);
MXLITE_UNARY_MATH_GPU(arctan, kArctan);
MXLITE_UNARY_MATH_GPU(sinh, kSinh);
MXLITE_UNARY_MATH_GPU(cosh, kCosh);
MXLITE_UNARY_MATH_GPU(arcsinh, kArcsinh);
MXLITE_UNARY_MATH_GPU(arccosh, kArccosh);
MXLITE_UNARY_MATH_GPU(arctanh, kArctanh);
MXLITE_UNARY_MATH_GPU(floor, kFloor);
MXLITE_UNARY_MATH_GPU(ceil, kCeil);
MXLITE_UNARY_MATH_GPU(round, kRound);
MXLITE_UNARY_MATH_GPU(_power_scalar, kPowerScalar);
MXLITE_UNARY_MATH_GPU(hard_sigmoid, kHardSigmoid);
MXLITE_UNARY_MATH_GPU(silu, kSilu);
MXLITE_UNARY_MATH_GPU(gelu, kGelu);
MXLITE_UNARY_MATH_GPU(hard_swish, kHardSwish);
#undef MXLITE_UNARY_MATH_GPU

}  // namespace mxlite
