// The shared array helpers on the GPU (array_kernels.h): grid-stride loops over int64 indices,
// float16 computed in float.
#include "ops/cuda/array_kernels.h"
#include "ops/cuda/grid.cuh"

namespace mxlite::cuda {
namespace {

template <typename T>
__global__ void AddKernel(const T* a, const T* b, T* out, int64_t n) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) { out[i] = static_cast<T>(static_cast<C>(a[i]) + static_cast<C>(b[i])); }
}

template <typename T>
__global__ void MultiplyKernel(const T* a, const T* b, T* out, int64_t n) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) { out[i] = static_cast<T>(static_cast<C>(a[i]) * static_cast<C>(b[i])); }
}

template <typename T>
__global__ void ScaleKernel(const T* x, T* y, ComputeType<T> scale, int64_t n) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) { y[i] = static_cast<T>(static_cast<C>(x[i]) * scale); }
}

template <typename T>
__global__ void BroadcastAssignKernel(BroadcastGeometry g, const T* x, T* out, ComputeType<T> scale,
                                      int64_t n) {
  MXLITE_GRID_LOOP(i, n) {
    int64_t a, b;
    BroadcastOffsets(g, i, &a, &b);
    out[i] = static_cast<T>(scale * static_cast<ComputeType<T>>(x[a]));
  }
}

}  // namespace

template <typename T>
cudaError_t AddArrays(const T* a, const T* b, T* out, int64_t n, cudaStream_t s) {
  if (n > 0) AddKernel<T><<<Blocks(n), kThreads, 0, s>>>(a, b, out, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t MultiplyArrays(const T* a, const T* b, T* out, int64_t n, cudaStream_t s) {
  if (n > 0) MultiplyKernel<T><<<Blocks(n), kThreads, 0, s>>>(a, b, out, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t ScaleArray(const T* x, T* y, double scale, int64_t n, cudaStream_t s) {
  if (n > 0) {
    ScaleKernel<T><<<Blocks(n), kThreads, 0, s>>>(x, y, static_cast<ComputeType<T>>(scale), n);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t BroadcastAssign(const BroadcastGeometry& g, const T* x, T* out, double scale, int64_t n,
                            cudaStream_t s) {
  if (n > 0) {
    BroadcastAssignKernel<T>
        <<<Blocks(n), kThreads, 0, s>>>(g, x, out, static_cast<ComputeType<T>>(scale), n);
  }
  return cudaGetLastError();
}

#define MXLITE_INSTANTIATE_FOR(T)                                                               \
  template cudaError_t AddArrays(const T*, const T*, T*, int64_t, cudaStream_t);                \
  template cudaError_t MultiplyArrays(const T*, const T*, T*, int64_t, cudaStream_t);           \
  template cudaError_t ScaleArray(const T*, T*, double, int64_t, cudaStream_t);                 \
  template cudaError_t BroadcastAssign(const BroadcastGeometry&, const T*, T*, double, int64_t, \
                                       cudaStream_t);

MXLITE_INSTANTIATE_FOR(float)
MXLITE_INSTANTIATE_FOR(double)
MXLITE_INSTANTIATE_FOR(__half)

}  // namespace mxlite::cuda
