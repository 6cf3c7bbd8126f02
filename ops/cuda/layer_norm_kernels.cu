// LayerNorm on the GPU (layer_norm_kernels.h).
#include <cmath>

#include "ops/cuda/grid.cuh"
#include "ops/cuda/layer_norm_kernels.h"

namespace mxlite::cuda {
namespace {

__device__ int64_t At(const LayerNormShape& s, int64_t group, int64_t c) {
  return ((group / s.inner) * s.channels + c) * s.inner + group % s.inner;
}

template <typename T>
__global__ void ForwardKernel(LayerNormShape s, double eps, const T* x, const T* gamma,
                              const T* beta, T* y, T* mean, T* stdev) {
  const int64_t groups = s.outer * s.inner;
  for (int64_t group = blockIdx.x; group < groups; group += gridDim.x) {
    double sum = 0, unused = 0;
    for (int64_t c = threadIdx.x; c < s.channels; c += blockDim.x) {
      sum += static_cast<double>(x[At(s, group, c)]);
    }
    BlockSumPair(sum, unused);
    const double m = sum / static_cast<double>(s.channels);
    double squares = 0;
    unused = 0;
    for (int64_t c = threadIdx.x; c < s.channels; c += blockDim.x) {
      const double d = static_cast<double>(x[At(s, group, c)]) - m;
      squares += d * d;
    }
    BlockSumPair(squares, unused);
    const double sd = sqrt(squares / static_cast<double>(s.channels) + eps);
    for (int64_t c = threadIdx.x; c < s.channels; c += blockDim.x) {
      const int64_t i = At(s, group, c);
      const double xhat = (static_cast<double>(x[i]) - m) / sd;
      y[i] = static_cast<T>(xhat * static_cast<double>(gamma[c]) + static_cast<double>(beta[c]));
    }
    if (threadIdx.x == 0) {
      mean[group] = static_cast<T>(m);
      stdev[group] = static_cast<T>(sd);
    }
  }
}

template <typename T>
__global__ void DataGradientKernel(LayerNormShape s, const T* dy, const T* dmean, const T* dstd,
                                   const T* x, const T* gamma, const T* mean, const T* stdev,
                                   T* dx) {
  const int64_t groups = s.outer * s.inner;
  for (int64_t group = blockIdx.x; group < groups; group += gridDim.x) {
    const double m = static_cast<double>(mean[group]);
    const double inv = 1.0 / static_cast<double>(stdev[group]);
    double sum_g = 0, sum_g_xhat = 0;
    for (int64_t c = threadIdx.x; c < s.channels; c += blockDim.x) {
      const int64_t i = At(s, group, c);
      const double g = static_cast<double>(dy[i]) * static_cast<double>(gamma[c]);
      sum_g += g;
      sum_g_xhat += g * (static_cast<double>(x[i]) - m) * inv;
    }
    BlockSumPair(sum_g, sum_g_xhat);
    const double mean_g = sum_g / static_cast<double>(s.channels);
    const double mean_g_xhat = sum_g_xhat / static_cast<double>(s.channels);
    const double n = static_cast<double>(s.channels);
    const double from_mean = dmean != nullptr ? static_cast<double>(dmean[group]) / n : 0.0;
    const double from_std = dstd != nullptr ? static_cast<double>(dstd[group]) / n : 0.0;
    for (int64_t c = threadIdx.x; c < s.channels; c += blockDim.x) {
      const int64_t i = At(s, group, c);
      const double g = static_cast<double>(dy[i]) * static_cast<double>(gamma[c]);
      const double xhat = (static_cast<double>(x[i]) - m) * inv;
      dx[i] = static_cast<T>((g - mean_g - xhat * mean_g_xhat) * inv + from_mean + from_std * xhat);
    }
  }
}

template <typename T>
__global__ void ParamGradientKernel(LayerNormShape s, const T* dy, const T* x, const T* mean,
                                    const T* stdev, T* dgamma, T* dbeta) {
  const int64_t groups = s.outer * s.inner;
  for (int64_t c = blockIdx.x; c < s.channels; c += gridDim.x) {
    double sum_dy = 0, sum_dy_xhat = 0;
    for (int64_t group = threadIdx.x; group < groups; group += blockDim.x) {
      const int64_t i = At(s, group, c);
      const double d = static_cast<double>(dy[i]);
      sum_dy += d;
      sum_dy_xhat += d * (static_cast<double>(x[i]) - static_cast<double>(mean[group])) /
                     static_cast<double>(stdev[group]);
    }
    BlockSumPair(sum_dy, sum_dy_xhat);
    if (threadIdx.x == 0) {
      if (dgamma != nullptr) dgamma[c] = static_cast<T>(sum_dy_xhat);
      if (dbeta != nullptr) dbeta[c] = static_cast<T>(sum_dy);
    }
  }
}

}  // namespace

template <typename T>
cudaError_t LayerNormForward(const LayerNormShape& shape, double eps, const T* x, const T* gamma,
                             const T* beta, T* y, T* mean, T* stdev, cudaStream_t s) {
  const int64_t groups = shape.outer * shape.inner;
  if (groups > 0 && shape.channels > 0) {
    ForwardKernel<T>
        <<<BlocksPerItem(groups), kThreads, 0, s>>>(shape, eps, x, gamma, beta, y, mean, stdev);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t LayerNormBackward(const LayerNormShape& shape, const T* dy, const T* dmean,
                              const T* dstd, const T* x, const T* gamma, const T* mean,
                              const T* stdev, T* dx, T* dgamma, T* dbeta, cudaStream_t s) {
  const int64_t groups = shape.outer * shape.inner;
  if (groups == 0 || shape.channels == 0) return cudaGetLastError();
  if (dx != nullptr) {
    DataGradientKernel<T><<<BlocksPerItem(groups), kThreads, 0, s>>>(shape, dy, dmean, dstd, x,
                                                                     gamma, mean, stdev, dx);
  }
  if (dgamma != nullptr || dbeta != nullptr) {
    ParamGradientKernel<T><<<BlocksPerItem(shape.channels), kThreads, 0, s>>>(shape, dy, x, mean,
                                                                              stdev, dgamma, dbeta);
  }
  return cudaGetLastError();
}

#define MXLITE_INSTANTIATE_LAYER_NORM(T)                                                       \
  template cudaError_t LayerNormForward(const LayerNormShape&, double, const T*, const T*,     \
                                        const T*, T*, T*, T*, cudaStream_t);                   \
  template cudaError_t LayerNormBackward(const LayerNormShape&, const T*, const T*, const T*,  \
                                         const T*, const T*, const T*, const T*, T*, T*, T*,   \
                                         cudaStream_t);
MXLITE_INSTANTIATE_LAYER_NORM(float)
MXLITE_INSTANTIATE_LAYER_NORM(double)
MXLITE_INSTANTIATE_LAYER_NORM(__half)
#undef MXLITE_INSTANTIATE_LAYER_NORM

}  // namespace mxlite::cuda
