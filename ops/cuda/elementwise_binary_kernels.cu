// The broadcast_* / elemwise_* arithmetic, extrema and comparisons on the GPU
// (elementwise_binary_kernels.h): grid-stride loops over int64 indices; every formula is the CPU
// kernel's.
#include "ops/cuda/elementwise_binary_kernels.h"
#include "ops/cuda/grid.cuh"

namespace mxlite::cuda {
namespace {

template <typename C>
__device__ C ApplyBinary(BinaryKind kind, C x, C y) {
  switch (kind) {
    case BinaryKind::kAdd: return x + y;
    case BinaryKind::kSub: return x - y;
    case BinaryKind::kMul: return x * y;
    case BinaryKind::kDiv: return x / y;
    case BinaryKind::kMaximum: return x >= y || x != x ? x : y;  // as std::max, but NaN-keeping
    case BinaryKind::kMinimum: return x <= y || x != x ? x : y;
    case BinaryKind::kEqual: return C(x == y ? 1 : 0);
    case BinaryKind::kNotEqual: return C(x != y ? 1 : 0);
    case BinaryKind::kGreater: return C(x > y ? 1 : 0);
    case BinaryKind::kGreaterEqual: return C(x >= y ? 1 : 0);
    case BinaryKind::kLesser: return C(x < y ? 1 : 0);
    case BinaryKind::kLesserEqual:
      return C(x <= y ? 1 : 0);
    case BinaryKind::kPower:
      return pow(x, y);
    case BinaryKind::kPowerBaseGradient:
      return y == C(0) ? C(0) : y * pow(x, y - C(1));
    default:
      return x == C(0) && y >= C(0) ? C(0) : pow(x, y) * log(x);  // kPowerExponentGradient
  }
}

template <typename T, typename Index>
__global__ void BroadcastBinaryKernel(BinaryKind kind, BroadcastGeometry g, const T* lhs,
                                      const T* rhs, T* out, Index n) {
  using C = ComputeType<T>;
  const Index step = static_cast<Index>(blockDim.x) * gridDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    Index a, b;
    BroadcastOffsets(g, i, &a, &b);
    out[i] = static_cast<T>(ApplyBinary(kind, static_cast<C>(lhs[a]), static_cast<C>(rhs[b])));
  }
}

template <typename T>
__global__ void ElementwiseBinaryKernel(BinaryKind kind, const T* lhs, const T* rhs, T* out,
                                        int64_t n) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) {
    out[i] = static_cast<T>(ApplyBinary(kind, static_cast<C>(lhs[i]), static_cast<C>(rhs[i])));
  }
}

}  // namespace

template <typename T>
cudaError_t BroadcastBinary(BinaryKind kind, const BroadcastGeometry& g, const T* lhs, const T* rhs,
                            T* out, int64_t n, cudaStream_t s) {
  if (n <= 0) return cudaGetLastError();
  if (FitsInt32(n)) {
    BroadcastBinaryKernel<T, int32_t>
        <<<Blocks(n), kThreads, 0, s>>>(kind, g, lhs, rhs, out, static_cast<int32_t>(n));
  } else {
    BroadcastBinaryKernel<T, int64_t><<<Blocks(n), kThreads, 0, s>>>(kind, g, lhs, rhs, out, n);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t ElementwiseBinary(BinaryKind kind, const T* lhs, const T* rhs, T* out, int64_t n,
                              cudaStream_t s) {
  if (n > 0) ElementwiseBinaryKernel<T><<<Blocks(n), kThreads, 0, s>>>(kind, lhs, rhs, out, n);
  return cudaGetLastError();
}

#define MXLITE_INSTANTIATE_FOR(T)                                                                \
  template cudaError_t BroadcastBinary(BinaryKind, const BroadcastGeometry&, const T*, const T*, \
                                       T*, int64_t, cudaStream_t);                               \
  template cudaError_t ElementwiseBinary(BinaryKind, const T*, const T*, T*, int64_t, cudaStream_t);

MXLITE_INSTANTIATE_FOR(float)
MXLITE_INSTANTIATE_FOR(double)
MXLITE_INSTANTIATE_FOR(__half)

}  // namespace mxlite::cuda
