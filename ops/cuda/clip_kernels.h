// Launchers of clip's CUDA kernels (ops/clip.cc; clip_kernels.cu), called by
// ops/cuda/clip_gpu.cc. Like kernel_types.h, included by nvcc and g++.
#pragma once

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

// clip: y = min(max(x, low), high); dx = dy where low <= x <= high, else 0.
template <typename T>
cudaError_t ClipForward(const T* x, T* y, int64_t n, double low, double high, cudaStream_t s);
template <typename T>
cudaError_t ClipBackward(const T* x, const T* dy, T* dx, int64_t n, double low, double high,
                         cudaStream_t s);

}  // namespace mxlite::cuda
