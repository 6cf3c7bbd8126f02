// Launcher of Cast's CUDA kernel (ops/cast.cc; cast_kernels.cu), called by ops/cuda/cast_gpu.cc.
// Like kernel_types.h, included by nvcc and g++.
#pragma once

#include "core/dtype.h"
#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

// out (dtype `to`) = in (dtype `from`) converted by ops/cast.cc's rules; cudaErrorInvalidValue
// when either dtype is not one Cast supports.
cudaError_t CastArray(DType from, const void* in, DType to, void* out, int64_t n, cudaStream_t s);

}  // namespace mxlite::cuda
