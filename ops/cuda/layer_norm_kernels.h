// Launchers of LayerNorm's CUDA kernels (ops/layer_norm.h; layer_norm_kernels.cu), called by
// ops/cuda/layer_norm_gpu.cc. The data is (outer, channels, inner) around the normalised axis;
// group (o, i) holds the channels at (o * channels + c) * inner + i. One block per group (or per
// channel for dgamma and dbeta), sums in double combined as a tree in shared memory, rounded once
// when stored. Included by nvcc and g++.
#pragma once

#include <cstdint>

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

struct LayerNormShape {
  int64_t outer, channels, inner;
};

// y, and each group's mean and std = sqrt(var + eps).
template <typename T>
cudaError_t LayerNormForward(const LayerNormShape& shape, double eps, const T* x, const T* gamma,
                             const T* beta, T* y, T* mean, T* stdev, cudaStream_t s);

// dx (when not null) from dy (and the gradients of the mean and std outputs when not null), x,
// gamma and the saved statistics; dgamma and dbeta (each when not null) summed over the groups.
template <typename T>
cudaError_t LayerNormBackward(const LayerNormShape& shape, const T* dy, const T* dmean,
                              const T* dstd, const T* x, const T* gamma,
                              const T* mean, const T* stdev, T* dx, T* dgamma, T* dbeta,
                              cudaStream_t s);

}  // namespace mxlite::cuda
