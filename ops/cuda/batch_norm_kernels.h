// Launchers of BatchNorm's CUDA kernels (ops/batch_norm.cc; batch_norm_kernels.cu), called by
// ops/cuda/batch_norm_gpu.cc. Like kernel_types.h, included by nvcc and g++.
#pragma once

#include <cmath>

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

// BatchNorm (ops/batch_norm.cc) over (outer, channels, inner).
struct BatchNormGeometry {
  int64_t outer = 1, channels = 1, inner = 1;
};
struct BatchNormParams {
  double eps = 1e-3, momentum = 0.9;
  bool fix_gamma = true, batch_stats = true;
  // The fused activation's bounds (act_min / act_max, ops/output_clamp.h): y is clamped to them.
  double low = -HUGE_VAL, high = HUGE_VAL;
};
// The type of BatchNorm's parameters, moving states and saved statistics for data type T:
// float for float16 data (MXNet's rule: statistics of float16 data are kept in float32), T
// otherwise.
template <typename T>
using BatchNormParamType = ComputeType<T>;
// Per channel: the statistics (batch or moving), the moving-state update (batch_stats), the
// hidden outputs (when not null), and y = x * a[c] + b[c] coefficients into `coefficients`
// (2 * channels doubles: a then b).
template <typename T>
struct BatchNormForwardArgs {
  using P = BatchNormParamType<T>;
  const T* x;
  const P* gamma;
  const P* beta;
  P* moving_mean;
  P* moving_var;
  P* saved_mean;  // may be null
  P* saved_var;   // may be null
  T* y;           // may be null
  double* coefficients;
};
template <typename T>
cudaError_t BatchNormForward(const BatchNormGeometry& g, const BatchNormParams& p,
                             const BatchNormForwardArgs<T>& a, cudaStream_t s);
template <typename T>
struct BatchNormBackwardArgs {
  using P = BatchNormParamType<T>;
  const T* x;
  const T* dy;
  const P* gamma;
  const P* saved_mean;
  const P* saved_var;
  T* dx;                 // may be null
  P* dgamma;             // may be null
  P* dbeta;              // may be null
  double* coefficients;  // 3 * channels doubles of scratch
};
template <typename T>
cudaError_t BatchNormBackward(const BatchNormGeometry& g, const BatchNormParams& p,
                              const BatchNormBackwardArgs<T>& a, cudaStream_t s);

}  // namespace mxlite::cuda
