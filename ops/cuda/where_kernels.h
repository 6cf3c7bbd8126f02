// Launcher of where's CUDA kernel (ops/where.cc; where_kernels.cu), called by
// ops/cuda/where_gpu.cc. Like kernel_types.h, included by nvcc and g++.
#pragma once

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

// out[i] = condition[.] != 0 ? x[.] : y[.] over the n output elements; `cx` broadcasts condition
// (operand 0) and x (operand 1) to the output, `yg` y (operand 0). A null x or y reads zeros
// (backward's masked gradients). One thread per output element.
template <typename T>
cudaError_t Where(const BroadcastGeometry& cx, const BroadcastGeometry& yg, const T* condition,
                  const T* x, const T* y, T* out, int64_t n, cudaStream_t s);

}  // namespace mxlite::cuda
