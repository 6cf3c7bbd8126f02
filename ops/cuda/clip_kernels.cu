// clip on the GPU (clip_kernels.h): grid-stride loops over int64 indices, the CPU kernel's
// comparisons (ops/clip.cc).
#include "ops/cuda/clip_kernels.h"
#include "ops/cuda/grid.cuh"

namespace mxlite::cuda {
namespace {

// The bounds are compared in the compute type (float for float16 data, like cuDNN's clipped
// relu): a bound between two float16 values clips to the value itself, not to a rounded bound.
template <typename T>
__global__ void ClipForwardKernel(const T* x, T* y, int64_t n, ComputeType<T> low,
                                  ComputeType<T> high) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) {
    C v = static_cast<C>(x[i]);
    v = v < low ? low : v;
    y[i] = static_cast<T>(high < v ? high : v);
  }
}

template <typename T>
__global__ void ClipBackwardKernel(const T* x, const T* dy, T* dx, int64_t n, ComputeType<T> low,
                                   ComputeType<T> high) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) {
    const C v = static_cast<C>(x[i]);
    dx[i] = (v >= low && v <= high) ? dy[i] : static_cast<T>(C(0));
  }
}

}  // namespace

template <typename T>
cudaError_t ClipForward(const T* x, T* y, int64_t n, double low, double high, cudaStream_t s) {
  using C = ComputeType<T>;
  if (n > 0) {
    ClipForwardKernel<T>
        <<<Blocks(n), kThreads, 0, s>>>(x, y, n, static_cast<C>(low), static_cast<C>(high));
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t ClipBackward(const T* x, const T* dy, T* dx, int64_t n, double low, double high,
                         cudaStream_t s) {
  using C = ComputeType<T>;
  if (n > 0) {
    ClipBackwardKernel<T>
        <<<Blocks(n), kThreads, 0, s>>>(x, dy, dx, n, static_cast<C>(low), static_cast<C>(high));
  }
  return cudaGetLastError();
}

#define MXLITE_INSTANTIATE_FOR(T)                                                        \
  template cudaError_t ClipForward(const T*, T*, int64_t, double, double, cudaStream_t); \
  template cudaError_t ClipBackward(const T*, const T*, T*, int64_t, double, double, cudaStream_t);

MXLITE_INSTANTIATE_FOR(float)
MXLITE_INSTANTIATE_FOR(double)
MXLITE_INSTANTIATE_FOR(__half)

}  // namespace mxlite::cuda
