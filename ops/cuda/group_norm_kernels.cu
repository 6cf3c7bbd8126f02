// GroupNorm on the GPU (group_norm_kernels.h).
#include <cmath>

#include "ops/cuda/grid.cuh"
#include "ops/cuda/group_norm_kernels.h"

namespace mxlite::cuda {
namespace {

__device__ int64_t ChannelOf(const GroupNormShape& s, int64_t row, int64_t e) {
  return row % s.groups * s.channels_per_group + e / s.spatial;
}

template <typename T>
__global__ void ForwardKernel(GroupNormShape s, double eps, const T* x, const T* gamma,
                              const T* beta, T* y, T* mean, T* stdev) {
  const int64_t rows = s.batch * s.groups, length = s.channels_per_group * s.spatial;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* in = x + row * length;
    double sum = 0, unused = 0;
    for (int64_t e = threadIdx.x; e < length; e += blockDim.x) sum += static_cast<double>(in[e]);
    BlockSumPair(sum, unused);
    const double m = sum / static_cast<double>(length);
    double squares = 0;
    unused = 0;
    for (int64_t e = threadIdx.x; e < length; e += blockDim.x) {
      const double d = static_cast<double>(in[e]) - m;
      squares += d * d;
    }
    BlockSumPair(squares, unused);
    const double sd = sqrt(squares / static_cast<double>(length) + eps);
    for (int64_t e = threadIdx.x; e < length; e += blockDim.x) {
      const int64_t c = ChannelOf(s, row, e);
      const double xhat = (static_cast<double>(in[e]) - m) / sd;
      y[row * length + e] =
          static_cast<T>(xhat * static_cast<double>(gamma[c]) + static_cast<double>(beta[c]));
    }
    if (threadIdx.x == 0) {
      mean[row] = static_cast<T>(m);
      stdev[row] = static_cast<T>(sd);
    }
  }
}

template <typename T>
__global__ void DataGradientKernel(GroupNormShape s, const T* dy, const T* dmean, const T* dstd,
                                   const T* x, const T* gamma, const T* mean, const T* stdev,
                                   T* dx) {
  const int64_t rows = s.batch * s.groups, length = s.channels_per_group * s.spatial;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const double m = static_cast<double>(mean[row]);
    const double inv = 1.0 / static_cast<double>(stdev[row]);
    double sum_d = 0, sum_d_xhat = 0;
    for (int64_t e = threadIdx.x; e < length; e += blockDim.x) {
      const int64_t i = row * length + e;
      const double d =
          static_cast<double>(dy[i]) * static_cast<double>(gamma[ChannelOf(s, row, e)]);
      sum_d += d;
      sum_d_xhat += d * (static_cast<double>(x[i]) - m) * inv;
    }
    BlockSumPair(sum_d, sum_d_xhat);
    const double n = static_cast<double>(length);
    const double from_mean = dmean != nullptr ? static_cast<double>(dmean[row]) / n : 0.0;
    const double from_std = dstd != nullptr ? static_cast<double>(dstd[row]) / n : 0.0;
    for (int64_t e = threadIdx.x; e < length; e += blockDim.x) {
      const int64_t i = row * length + e;
      const double d =
          static_cast<double>(dy[i]) * static_cast<double>(gamma[ChannelOf(s, row, e)]);
      const double xhat = (static_cast<double>(x[i]) - m) * inv;
      dx[i] = static_cast<T>((d - sum_d / n - xhat * sum_d_xhat / n) * inv + from_mean +
                             from_std * xhat);
    }
  }
}

template <typename T>
__global__ void ParamGradientKernel(GroupNormShape s, const T* dy, const T* x, const T* mean,
                                    const T* stdev, T* dgamma, T* dbeta) {
  const int64_t channels = s.groups * s.channels_per_group;
  const int64_t length = s.channels_per_group * s.spatial, per_channel = s.batch * s.spatial;
  for (int64_t c = blockIdx.x; c < channels; c += gridDim.x) {
    const int64_t group = c / s.channels_per_group, k = c % s.channels_per_group;
    double sum_dy = 0, sum_dy_xhat = 0;
    for (int64_t j = threadIdx.x; j < per_channel; j += blockDim.x) {
      const int64_t n = j / s.spatial, row = n * s.groups + group;
      const int64_t i = row * length + k * s.spatial + j % s.spatial;
      const double d = static_cast<double>(dy[i]);
      sum_dy += d;
      sum_dy_xhat += d * (static_cast<double>(x[i]) - static_cast<double>(mean[row])) /
                     static_cast<double>(stdev[row]);
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
cudaError_t GroupNormForward(const GroupNormShape& shape, double eps, const T* x, const T* gamma,
                             const T* beta, T* y, T* mean, T* stdev, cudaStream_t s) {
  const int64_t rows = shape.batch * shape.groups;
  if (rows > 0 && shape.channels_per_group * shape.spatial > 0) {
    ForwardKernel<T>
        <<<BlocksPerItem(rows), kThreads, 0, s>>>(shape, eps, x, gamma, beta, y, mean, stdev);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t GroupNormBackward(const GroupNormShape& shape, const T* dy, const T* dmean,
                              const T* dstd, const T* x, const T* gamma, const T* mean,
                              const T* stdev, T* dx, T* dgamma, T* dbeta, cudaStream_t s) {
  const int64_t rows = shape.batch * shape.groups;
  if (rows == 0 || shape.channels_per_group * shape.spatial == 0) return cudaGetLastError();
  if (dx != nullptr) {
    DataGradientKernel<T><<<BlocksPerItem(rows), kThreads, 0, s>>>(shape, dy, dmean, dstd, x, gamma,
                                                                   mean, stdev, dx);
  }
  if (dgamma != nullptr || dbeta != nullptr) {
    ParamGradientKernel<T>
        <<<BlocksPerItem(shape.groups * shape.channels_per_group), kThreads, 0, s>>>(
            shape, dy, x, mean, stdev, dgamma, dbeta);
  }
  return cudaGetLastError();
}

#define MXLITE_INSTANTIATE_GROUP_NORM(T)                                                      \
  template cudaError_t GroupNormForward(const GroupNormShape&, double, const T*, const T*,    \
                                        const T*, T*, T*, T*, cudaStream_t);                  \
  template cudaError_t GroupNormBackward(const GroupNormShape&, const T*, const T*, const T*, \
                                         const T*, const T*, const T*, const T*, T*, T*, T*,  \
                                         cudaStream_t);
MXLITE_INSTANTIATE_GROUP_NORM(float)
MXLITE_INSTANTIATE_GROUP_NORM(double)
MXLITE_INSTANTIATE_GROUP_NORM(__half)
#undef MXLITE_INSTANTIATE_GROUP_NORM

}  // namespace mxlite::cuda
