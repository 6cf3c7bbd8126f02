// Launchers of softmax's and log_softmax's CUDA kernels (ops/softmax.cc; softmax_kernels.cu),
// called by ops/cuda/softmax_gpu.cc, and by ops/cuda/softmax_output_gpu.cc for SoftmaxOutput's
// forward. Like kernel_types.h, included by nvcc and g++.
#pragma once

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

// Softmax along the middle axis of (outer, length, inner) (ops/cpu/softmax.h).
struct SoftmaxGeometry {
  int64_t outer = 1, length = 1, inner = 1;
};
template <typename T>
cudaError_t SoftmaxForward(const SoftmaxGeometry& g, const T* x, T* y, double temperature, bool log,
                           cudaStream_t s);
template <typename T>
cudaError_t SoftmaxBackward(const SoftmaxGeometry& g, const T* y, const T* dy, T* dx,
                            double temperature, bool log, cudaStream_t s);

}  // namespace mxlite::cuda
