// Element-wise math functions, one op each under MXNet's names: sqrt, rsqrt, square, exp, log,
// abs, negative, reciprocal, erf, sin, cos, tan, arcsin, arccos, arctan, sinh, cosh, arcsinh,
// arccosh, arctanh, floor, ceil, round (half to even), _power_scalar (x ^ scalar),
// hard_sigmoid (max(0, min(1, alpha * x + beta))), hard_swish (x * hard_sigmoid(x); also what the
// executor makes of that product written as two ops), silu (x * sigmoid(x), PyTorch's name; also
// what the executor makes of x * sigmoid(x) written as two ops, scheduler/graph/fusion.h) and gelu
// (x/2 * (1 + erf(x / sqrt 2)), the exact GELU; also what the ONNX importer makes of that formula
// written out, scheduler/onnx/onnx_patterns.h). ONNX's
// Sqrt, Exp, Log, Abs, Neg, Reciprocal, Erf, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh,
// Acosh, Atanh, Floor, Ceil, Round, Pow (with an exponent known at load), HardSigmoid and HardSwish
// import to them.
//
// Each op reads its data and writes one output of the same shape and dtype. Backward is
// dy * f'(x), computed from x (so the ops never run in place): floor, ceil and round pass no
// gradient;
// abs passes sign(x) (0 at 0); hard_sigmoid passes alpha where 0 < alpha * x + beta < 1;
// hard_swish passes hard_sigmoid(x) + x * (that slope).
// Outside a function's domain the result is what C's function gives (sqrt(-1) is NaN, log(0) is
// -inf), as in NumPy and PyTorch.
//
// This header is what the CPU kernels (ops/unary_math.cc) and the GPU kernels
// (ops/cuda/unary_math_gpu.cc, ops/cuda/unary_math_kernels.cu) share; nvcc includes it too.
#pragma once

#include <string>

namespace mxlite {

class Attributes;

enum class UnaryMath {
  kSqrt,
  kRsqrt,
  kSquare,
  kExp,
  kLog,
  kAbs,
  kNegative,
  kReciprocal,
  kErf,
  kSin,
  kCos,
  kTan,
  kArcsin,
  kArccos,
  kArctan,
  kSinh,
  kCosh,
  kArcsinh,
  kArccosh,
  kArctanh,
  kFloor,
  kCeil,
  kRound,
  kPowerScalar,
  kHardSigmoid,
  kSilu,
  kGelu,
  kHardSwish,
};

// The op's registered name: "sqrt", ..., "_power_scalar", "hard_sigmoid".
const char* UnaryMathName(UnaryMath function);

// The attributes a function reads, as numbers: _power_scalar's exponent `scalar` (in `a`),
// hard_sigmoid's and hard_swish's `alpha` and `beta` (in `a` and `b`); zero for the others.
struct UnaryMathParams {
  double a = 0;
  double b = 0;
};
UnaryMathParams UnaryMathParamsOf(UnaryMath function, const Attributes& attrs);

// 2 / sqrt(pi): erf'(x) = kTwoOverSqrtPi * e^(-x^2).
inline constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
// 1 / sqrt(2) and 1 / sqrt(2 pi): gelu(x) = x Phi(x), Phi(x) = (1 + erf(x kSqrtHalf)) / 2,
// Phi'(x) = kOneOverSqrtTwoPi e^(-x^2 / 2).
inline constexpr double kSqrtHalf = 0.70710678118654752440;
inline constexpr double kOneOverSqrtTwoPi = 0.39894228040143267794;

}  // namespace mxlite
