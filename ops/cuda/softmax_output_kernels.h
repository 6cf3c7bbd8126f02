// Launchers of SoftmaxOutput's gradient CUDA kernels (ops/softmax_output.cc;
// softmax_output_kernels.cu), called by ops/cuda/softmax_output_gpu.cc; its forward is
// softmax_kernels.h's. Like kernel_types.h, included by nvcc and g++.
#pragma once

#include "ops/cuda/kernel_types.h"
#include "ops/cuda/softmax_kernels.h"

namespace mxlite::cuda {

// SoftmaxOutput gradients (ops/softmax_output.cc). class_index: one per (outer, inner) position,
// -1 for ignored positions; dy may be null (out_grad=false).
template <typename T>
cudaError_t SoftmaxOutputHardGradient(const SoftmaxGeometry& g, const T* y,
                                      const int64_t* class_index, double on, double off,
                                      double scale, const T* dy, T* dx, cudaStream_t s);
template <typename T>
cudaError_t SoftmaxOutputSoftGradient(const T* y, const T* label, double scale, const T* dy, T* dx,
                                      int64_t n, cudaStream_t s);

}  // namespace mxlite::cuda
