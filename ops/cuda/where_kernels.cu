// where on the GPU (where_kernels.h): one thread per output element, the operands' offsets from
// the broadcast strides, as the CPU kernel reads them.
#include "ops/cuda/grid.cuh"
#include "ops/cuda/where_kernels.h"

namespace mxlite::cuda {
namespace {

// Offset of output element i in operand k of g.
__device__ int64_t OperandOffset(const BroadcastGeometry& g, int k, int64_t i) {
  int64_t offset = 0;
  for (int d = g.ndim - 1; d >= 0; --d) {
    offset += (i % g.extents[d]) * g.strides[k][d];
    i /= g.extents[d];
  }
  return offset;
}

template <typename T>
__global__ void WhereKernel(BroadcastGeometry cx, BroadcastGeometry yg, const T* condition,
                            const T* x, const T* y, T* out, int64_t n) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) {
    const bool holds = static_cast<C>(condition[OperandOffset(cx, 0, i)]) != C(0);
    const T* from = holds ? x : y;
    out[i] = from == nullptr ? static_cast<T>(C(0))
                             : from[holds ? OperandOffset(cx, 1, i) : OperandOffset(yg, 0, i)];
  }
}

}  // namespace

template <typename T>
cudaError_t Where(const BroadcastGeometry& cx, const BroadcastGeometry& yg, const T* condition,
                  const T* x, const T* y, T* out, int64_t n, cudaStream_t s) {
  if (n > 0) WhereKernel<T><<<Blocks(n), kThreads, 0, s>>>(cx, yg, condition, x, y, out, n);
  return cudaGetLastError();
}

template cudaError_t Where<float>(const BroadcastGeometry&, const BroadcastGeometry&,
                                  const float*, const float*, const float*, float*, int64_t,
                                  cudaStream_t);
template cudaError_t Where<double>(const BroadcastGeometry&, const BroadcastGeometry&,
                                   const double*, const double*, const double*, double*, int64_t,
                                   cudaStream_t);
template cudaError_t Where<__half>(const BroadcastGeometry&, const BroadcastGeometry&,
                                   const __half*, const __half*, const __half*, __half*, int64_t,
                                   cudaStream_t);

}  // namespace mxlite::cuda
