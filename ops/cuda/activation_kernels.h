// Launchers of Activation's and LeakyReLU's CUDA kernels (ops/activation.cc;
// activation_kernels.cu), called by ops/cuda/activation_gpu.cc for what cuDNN does not run
// (softrelu, softsign, LeakyReLU, and tensors too large for its int descriptors). Like
// kernel_types.h, included by nvcc and g++.
#pragma once

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

enum class UnaryKind { kRelu, kSigmoid, kTanh, kSoftrelu, kSoftsign };
// Activation (ops/activation.cc): y = f(x); dx = dy * f'(x) written with y.
template <typename T>
cudaError_t ActivationForward(UnaryKind kind, const T* x, T* y, int64_t n, cudaStream_t s);
template <typename T>
cudaError_t ActivationBackward(UnaryKind kind, const T* y, const T* dy, T* dx, int64_t n,
                               cudaStream_t s);

// LeakyReLU (leaky or elu), forward from x, backward from x.
template <typename T>
cudaError_t LeakyForward(bool elu, double slope, const T* x, T* y, int64_t n, cudaStream_t s);
template <typename T>
cudaError_t LeakyBackward(bool elu, double slope, const T* x, const T* dy, T* dx, int64_t n,
                          cudaStream_t s);

}  // namespace mxlite::cuda
