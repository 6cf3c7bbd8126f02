// Launcher of Dropout's CUDA kernel (ops/dropout.cc; dropout_kernels.cu), called by
// ops/cuda/dropout_gpu.cc (whose backward multiplies by the mask, array_kernels.h). Like
// kernel_types.h, included by nvcc and g++.
#pragma once

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

// Dropout (ops/dropout.cc): element e keeps with SplitMix64(seed, drawn index) as the CPU op
// does; the drawn index decodes e over `extents` and re-encodes it over `drawn` (extent 1 on the
// shared axes). y = x * factor, mask = factor (mask may be null).
struct DropoutGeometry {
  int ndim = 0;
  int64_t extents[kMaxKernelDims] = {}, drawn[kMaxKernelDims] = {};
};
template <typename T>
cudaError_t DropoutForward(const DropoutGeometry& g, uint64_t seed, double p, double scale,
                           const T* x, T* y, T* mask, int64_t n, cudaStream_t s);

}  // namespace mxlite::cuda
