// Element-wise optimiser updates on the GPU, the formulas of scheduler/train/optimizer.h (MXNet's):
//
//   g = rescale * grad, clipped to [-clip, clip] when clip > 0, plus wd * w
//   SGD:  momentum == nullptr: w -= lr * g;  else: m = momentum * m - lr * g; w += m
//   Adam: m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; w -= lr * m / (sqrt(v) + eps)
//         (lr here is the bias-corrected rate lr * sqrt(1 - b2^t) / (1 - b1^t), as the CPU
//         optimiser passes it)
//
// Arithmetic is in the arrays' type with the options cast to it, as the CPU loops do. The
// functions enqueue one kernel on `stream` and return cudaGetLastError() of the launch; pointers
// are device memory of `n` elements. C++17-clean: included by nvcc and g++.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace mxlite::cuda {

struct GradientOptions {
  double rescale_grad = 1.0;
  double clip_gradient = -1.0;  // <= 0: no clipping
  double wd = 0.0;
};

// `momentum_state` may be null (plain SGD; `momentum` is then ignored).
cudaError_t SgdUpdate(float* weight, const float* grad, float* momentum_state, int64_t n, double lr,
                      double momentum, const GradientOptions& options, cudaStream_t stream);
cudaError_t SgdUpdate(double* weight, const double* grad, double* momentum_state, int64_t n,
                      double lr, double momentum, const GradientOptions& options,
                      cudaStream_t stream);

cudaError_t AdamUpdate(float* weight, const float* grad, float* mean, float* variance, int64_t n,
                       double corrected_lr, double beta1, double beta2, double epsilon,
                       const GradientOptions& options, cudaStream_t stream);
cudaError_t AdamUpdate(double* weight, const double* grad, double* mean, double* variance,
                       int64_t n, double corrected_lr, double beta1, double beta2, double epsilon,
                       const GradientOptions& options, cudaStream_t stream);

}  // namespace mxlite::cuda
