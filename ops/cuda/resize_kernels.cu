// Resize on the GPU (resize_kernels.h): one thread per element written.
#include "ops/cuda/grid.cuh"
#include "ops/cuda/resize_kernels.h"

namespace mxlite::cuda {
namespace {

template <typename T>
__global__ void ForwardKernel(ResizePass p, int count, const int64_t* index, const double* weight,
                              const T* src, T* dst) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(e, p.outer * p.out * p.inner) {
    const int64_t i = e % p.inner, x = (e / p.inner) % p.out, o = e / (p.inner * p.out);
    const int64_t* taps = index + x * count;
    const double* w = weight + x * count;
    const T* row = src + o * p.in * p.inner + i;  // element i of input row 0 of this outer
    const C a = static_cast<C>(row[taps[0] * p.inner]);
    if (count == 4) {
      const C b = static_cast<C>(row[taps[1] * p.inner]);
      const C c = static_cast<C>(row[taps[2] * p.inner]);
      const C d = static_cast<C>(row[taps[3] * p.inner]);
      dst[e] = static_cast<T>(a * static_cast<C>(w[0]) + b * static_cast<C>(w[1]) +
                              c * static_cast<C>(w[2]) + d * static_cast<C>(w[3]));
      continue;
    }
    if (count > 2) {  // antialiased filters: any number of taps
      C sum = a * static_cast<C>(w[0]);
      for (int k = 1; k < count; ++k)
        sum += static_cast<C>(row[taps[k] * p.inner]) * static_cast<C>(w[k]);
      dst[e] = static_cast<T>(sum);
      continue;
    }
    const C t = count == 2 ? static_cast<C>(w[1]) : C(0);
    dst[e] =
        static_cast<T>(t == C(0) ? a : a * (C(1) - t) + static_cast<C>(row[taps[1] * p.inner]) * t);
  }
}

template <typename T>
__global__ void BackwardKernel(ResizePass p, const int64_t* begin, const int64_t* reader,
                               const double* weight, const T* dy, T* dx) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(e, p.outer * p.in * p.inner) {
    const int64_t i = e % p.inner, j = (e / p.inner) % p.in, o = e / (p.inner * p.in);
    C sum = C(0);
    for (int64_t k = begin[j]; k < begin[j + 1]; ++k) {
      sum += static_cast<C>(dy[(o * p.out + reader[k]) * p.inner + i]) * static_cast<C>(weight[k]);
    }
    dx[e] = static_cast<T>(sum);
  }
}

}  // namespace

template <typename T>
cudaError_t ResizeForwardPass(const ResizePass& p, int count, const int64_t* index,
                              const double* weight, const T* src, T* dst, cudaStream_t s) {
  const int64_t n = p.outer * p.out * p.inner;
  if (n > 0) ForwardKernel<T><<<Blocks(n), kThreads, 0, s>>>(p, count, index, weight, src, dst);
  return cudaGetLastError();
}

template <typename T>
cudaError_t ResizeBackwardPass(const ResizePass& p, const int64_t* begin, const int64_t* reader,
                               const double* weight, const T* dy, T* dx, cudaStream_t s) {
  const int64_t n = p.outer * p.in * p.inner;
  if (n > 0) BackwardKernel<T><<<Blocks(n), kThreads, 0, s>>>(p, begin, reader, weight, dy, dx);
  return cudaGetLastError();
}

#define MXLITE_INSTANTIATE_RESIZE(T)                                                            \
  template cudaError_t ResizeForwardPass(const ResizePass&, int, const int64_t*, const double*, \
                                         const T*, T*, cudaStream_t);                           \
  template cudaError_t ResizeBackwardPass(const ResizePass&, const int64_t*, const int64_t*,    \
                                          const double*, const T*, T*, cudaStream_t);
MXLITE_INSTANTIATE_RESIZE(float)
MXLITE_INSTANTIATE_RESIZE(double)
MXLITE_INSTANTIATE_RESIZE(__half)
#undef MXLITE_INSTANTIATE_RESIZE

}  // namespace mxlite::cuda
