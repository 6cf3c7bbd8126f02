// Launchers of the binary element-wise CUDA kernels (ops/elementwise_binary.cc and
// ops/comparison.cc; elementwise_binary_kernels.cu), called by ops/cuda/elementwise_binary_gpu.cc.
// The operands' broadcast is kernel_types.h's BroadcastGeometry (cuda_util.h's
// MakeBroadcastGeometry). Like kernel_types.h, included by nvcc and g++.
#pragma once

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

// Arithmetic (broadcast_* / elemwise_*), the extrema (broadcast_maximum / minimum), the power
// (broadcast_power) with its partial derivatives, and the comparisons (ops/comparison.cc: 1 where
// it holds, else 0).
enum class BinaryKind {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMaximum,
  kMinimum,
  kEqual,
  kNotEqual,
  kGreater,
  kGreaterEqual,
  kLesser,
  kLesserEqual,
  kPower,                  // lhs^rhs
  kPowerBaseGradient,      // d(lhs^rhs)/d(lhs): rhs * lhs^(rhs - 1), 0 where rhs is 0
  kPowerExponentGradient,  // d(lhs^rhs)/d(rhs): lhs^rhs * ln(lhs), 0 where lhs is 0 and rhs >= 0
};
// out[i] = lhs[.] op rhs[.] over the output's elements (broadcast_* / elemwise_*).
template <typename T>
cudaError_t BroadcastBinary(BinaryKind kind, const BroadcastGeometry& g, const T* lhs, const T* rhs,
                            T* out, int64_t n, cudaStream_t s);
// out[i] = lhs[i] op rhs[i]: both operands of the output's shape (no index arithmetic; the common
// case of residual adds).
template <typename T>
cudaError_t ElementwiseBinary(BinaryKind kind, const T* lhs, const T* rhs, T* out, int64_t n,
                              cudaStream_t s);

}  // namespace mxlite::cuda
