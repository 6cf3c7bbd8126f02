// Launchers of GroupNorm's CUDA kernels (ops/group_norm.h; group_norm_kernels.cu), called by
// ops/cuda/group_norm_gpu.cc: a block per (image, group) row for the statistics, y and the data
// gradient, a block per channel for gamma's and beta's; sums in double, as on the CPU. Like
// kernel_types.h, included by nvcc and g++.
#pragma once

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

// ops/group_norm.h's GroupNormGeometry.
struct GroupNormShape {
  int64_t batch, groups, channels_per_group, spatial;
};

template <typename T>
cudaError_t GroupNormForward(const GroupNormShape& shape, double eps, const T* x, const T* gamma,
                             const T* beta, T* y, T* mean, T* stdev, cudaStream_t s);

// dx, dgamma and dbeta may each be null (not wanted); dmean and dstd null when nothing reads the
// statistics.
template <typename T>
cudaError_t GroupNormBackward(const GroupNormShape& shape, const T* dy, const T* dmean,
                              const T* dstd, const T* x, const T* gamma, const T* mean,
                              const T* stdev, T* dx, T* dgamma, T* dbeta, cudaStream_t s);

}  // namespace mxlite::cuda
