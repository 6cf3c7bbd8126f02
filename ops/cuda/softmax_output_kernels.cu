// SoftmaxOutput's gradients on the GPU (softmax_output_kernels.h): one thread per element.
#include "ops/cuda/grid.cuh"
#include "ops/cuda/softmax_output_kernels.h"

namespace mxlite::cuda {
namespace {

template <typename T>
__global__ void HardGradientKernel(SoftmaxGeometry g, const T* y, const int64_t* class_index,
                                   ComputeType<T> on, ComputeType<T> off, ComputeType<T> factor,
                                   const T* dy, T* dx) {
  using C = ComputeType<T>;
  const int64_t total = g.outer * g.length * g.inner;
  MXLITE_GRID_LOOP(e, total) {
    const int64_t i = e % g.inner;
    const int64_t k = (e / g.inner) % g.length;
    const int64_t o = e / (g.inner * g.length);
    const int64_t target = class_index[o * g.inner + i];
    C grad = target < 0 ? C(0) : (static_cast<C>(y[e]) - (k == target ? on : off)) * factor;
    if (dy != nullptr) grad *= static_cast<C>(dy[e]);
    dx[e] = static_cast<T>(grad);
  }
}

template <typename T>
__global__ void SoftGradientKernel(const T* y, const T* label, ComputeType<T> factor, const T* dy,
                                   T* dx, int64_t n) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) {
    C grad = (static_cast<C>(y[i]) - static_cast<C>(label[i])) * factor;
    if (dy != nullptr) grad *= static_cast<C>(dy[i]);
    dx[i] = static_cast<T>(grad);
  }
}

}  // namespace

template <typename T>
cudaError_t SoftmaxOutputHardGradient(const SoftmaxGeometry& g, const T* y,
                                      const int64_t* class_index, double on, double off,
                                      double scale, const T* dy, T* dx, cudaStream_t s) {
  using C = ComputeType<T>;
  const int64_t total = g.outer * g.length * g.inner;
  if (total > 0) {
    HardGradientKernel<T><<<Blocks(total), kThreads, 0, s>>>(
        g, y, class_index, static_cast<C>(on), static_cast<C>(off), static_cast<C>(scale), dy, dx);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t SoftmaxOutputSoftGradient(const T* y, const T* label, double scale, const T* dy, T* dx,
                                      int64_t n, cudaStream_t s) {
  if (n > 0) {
    SoftGradientKernel<T>
        <<<Blocks(n), kThreads, 0, s>>>(y, label, static_cast<ComputeType<T>>(scale), dy, dx, n);
  }
  return cudaGetLastError();
}

#define MXLITE_INSTANTIATE_FOR(T)                                                                  \
  template cudaError_t SoftmaxOutputHardGradient(const SoftmaxGeometry&, const T*, const int64_t*, \
                                                 double, double, double, const T*, T*,             \
                                                 cudaStream_t);                                    \
  template cudaError_t SoftmaxOutputSoftGradient(const T*, const T*, double, const T*, T*,         \
                                                 int64_t, cudaStream_t);

MXLITE_INSTANTIATE_FOR(float)
MXLITE_INSTANTIATE_FOR(double)
MXLITE_INSTANTIATE_FOR(__half)

}  // namespace mxlite::cuda
