// Launcher of argmax / argmin's CUDA kernel (ops/arg_extremum.h; arg_extremum_kernels.cu), called
// by ops/cuda/arg_extremum_gpu.cc. Like kernel_types.h, included by nvcc and g++.
#pragma once

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

// y[o * inner + i] = the index k of the largest (smallest) x[(o * extent + k) * inner + i], the
// first on a tie, the first NaN before any number; one thread per output element.
template <typename T>
cudaError_t ArgSearch(bool largest, const T* x, T* y, int64_t outer, int64_t extent,
                      int64_t inner, cudaStream_t s);

}  // namespace mxlite::cuda
