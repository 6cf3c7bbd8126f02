// The element-wise math functions on the GPU (unary_math_kernels.h): one kernel per direction,
// the function chosen per launch (the switch is uniform across a warp).
#include <cmath>

#include "ops/cuda/grid.cuh"
#include "ops/cuda/unary_math_kernels.h"

namespace mxlite::cuda {
namespace {

template <typename C>
__device__ C Forward(UnaryMath function, C x, C a, C b) {
  switch (function) {
    case UnaryMath::kSqrt: return sqrt(x);
    case UnaryMath::kRsqrt: return C(1) / sqrt(x);
    case UnaryMath::kSquare: return x * x;
    case UnaryMath::kExp: return exp(x);
    case UnaryMath::kLog: return log(x);
    case UnaryMath::kAbs: return fabs(x);
    case UnaryMath::kNegative: return -x;
    case UnaryMath::kReciprocal: return C(1) / x;
    case UnaryMath::kErf: return erf(x);
    case UnaryMath::kSin: return sin(x);
    case UnaryMath::kCos: return cos(x);
    case UnaryMath::kTan:
      return tan(x);
    case UnaryMath::kArcsin:
      return asin(x);
    case UnaryMath::kArccos:
      return acos(x);
    case UnaryMath::kArctan:
      return atan(x);
    case UnaryMath::kSinh:
      return sinh(x);
    case UnaryMath::kCosh:
      return cosh(x);
    case UnaryMath::kArcsinh:
      return asinh(x);
    case UnaryMath::kArccosh:
      return acosh(x);
    case UnaryMath::kArctanh:
      return atanh(x);
    case UnaryMath::kFloor: return floor(x);
    case UnaryMath::kCeil: return ceil(x);
    case UnaryMath::kRound:
      return rint(x);
    case UnaryMath::kPowerScalar: return a == C(2) ? x * x : pow(x, a);
    case UnaryMath::kHardSigmoid: {
      const C z = a * x + b;
      return z < C(0) ? C(0) : (z > C(1) ? C(1) : z);
    }
    case UnaryMath::kSilu: return x * (C(1) / (C(1) + exp(-x)));
    case UnaryMath::kGelu: return C(0.5) * x * erfc(-x * C(kSqrtHalf));
    case UnaryMath::kHardSwish: {
      const C z = a * x + b;
      return x * (z < C(0) ? C(0) : (z > C(1) ? C(1) : z));
    }
  }
  return x;
}

template <typename C>
__device__ C Derivative(UnaryMath function, C x, C a, C b) {
  switch (function) {
    case UnaryMath::kSqrt: return C(0.5) / sqrt(x);
    case UnaryMath::kRsqrt: return C(-0.5) / (sqrt(x) * x);
    case UnaryMath::kSquare: return C(2) * x;
    case UnaryMath::kExp: return exp(x);
    case UnaryMath::kLog: return C(1) / x;
    case UnaryMath::kAbs: return x > C(0) ? C(1) : (x < C(0) ? C(-1) : C(0));
    case UnaryMath::kNegative: return C(-1);
    case UnaryMath::kReciprocal: return C(-1) / (x * x);
    case UnaryMath::kErf: return C(kTwoOverSqrtPi) * exp(-x * x);
    case UnaryMath::kSin: return cos(x);
    case UnaryMath::kCos: return -sin(x);
    case UnaryMath::kTan:
      return C(1) / (cos(x) * cos(x));
    case UnaryMath::kArcsin:
      return C(1) / sqrt(C(1) - x * x);
    case UnaryMath::kArccos:
      return C(-1) / sqrt(C(1) - x * x);
    case UnaryMath::kArctan:
      return C(1) / (C(1) + x * x);
    case UnaryMath::kSinh:
      return cosh(x);
    case UnaryMath::kCosh:
      return sinh(x);
    case UnaryMath::kArcsinh:
      return C(1) / sqrt(x * x + C(1));
    case UnaryMath::kArccosh:
      return C(1) / sqrt(x * x - C(1));
    case UnaryMath::kArctanh:
      return C(1) / (C(1) - x * x);
    case UnaryMath::kFloor:
    case UnaryMath::kCeil:
    case UnaryMath::kRound:
      return C(0);
    case UnaryMath::kPowerScalar: return a * pow(x, a - C(1));
    case UnaryMath::kHardSigmoid: {
      const C z = a * x + b;
      return z > C(0) && z < C(1) ? a : C(0);
    }
    case UnaryMath::kSilu: {
      const C s = C(1) / (C(1) + exp(-x));
      return s * (C(1) + x * (C(1) - s));
    }
    case UnaryMath::kGelu:
      return C(0.5) * erfc(-x * C(kSqrtHalf)) + x * C(kOneOverSqrtTwoPi) * exp(C(-0.5) * x * x);
    case UnaryMath::kHardSwish: {
      const C z = a * x + b;
      return z <= C(0) ? C(0) : (z >= C(1) ? C(1) : z + x * a);
    }
  }
  return C(0);
}

template <typename T>
__global__ void ForwardKernel(UnaryMath function, ComputeType<T> a, ComputeType<T> b, const T* x,
                              T* y, int64_t n) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) { y[i] = static_cast<T>(Forward<C>(function, static_cast<C>(x[i]), a, b)); }
}

template <typename T>
__global__ void BackwardKernel(UnaryMath function, ComputeType<T> a, ComputeType<T> b, const T* x,
                               const T* dy, T* dx, int64_t n) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) {
    dx[i] = static_cast<T>(static_cast<C>(dy[i]) *
                           Derivative<C>(function, static_cast<C>(x[i]), a, b));
  }
}

}  // namespace

template <typename T>
cudaError_t UnaryMathForward(UnaryMath function, UnaryMathParams params, const T* x, T* y,
                             int64_t n, cudaStream_t s) {
  using C = ComputeType<T>;
  if (n > 0) {
    ForwardKernel<T><<<Blocks(n), kThreads, 0, s>>>(function, static_cast<C>(params.a),
                                                    static_cast<C>(params.b), x, y, n);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t UnaryMathBackward(UnaryMath function, UnaryMathParams params, const T* x, const T* dy,
                              T* dx, int64_t n, cudaStream_t s) {
  using C = ComputeType<T>;
  if (n > 0) {
    BackwardKernel<T><<<Blocks(n), kThreads, 0, s>>>(function, static_cast<C>(params.a),
                                                     static_cast<C>(params.b), x, dy, dx, n);
  }
  return cudaGetLastError();
}

#define MXLITE_INSTANTIATE_UNARY_MATH(T)                                                     \
  template cudaError_t UnaryMathForward(UnaryMath, UnaryMathParams, const T*, T*, int64_t,   \
                                        cudaStream_t);                                       \
  template cudaError_t UnaryMathBackward(UnaryMath, UnaryMathParams, const T*, const T*, T*, \
                                         int64_t, cudaStream_t);
MXLITE_INSTANTIATE_UNARY_MATH(float)
MXLITE_INSTANTIATE_UNARY_MATH(double)
MXLITE_INSTANTIATE_UNARY_MATH(__half)
#undef MXLITE_INSTANTIATE_UNARY_MATH

}  // namespace mxlite::cuda
