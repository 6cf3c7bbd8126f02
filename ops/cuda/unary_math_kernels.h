// Launchers of the element-wise math functions' CUDA kernels (ops/unary_math.h;
// unary_math_kernels.cu), called by ops/cuda/unary_math_gpu.cc. The same formulas as the CPU
// kernels (ops/unary_math.cc); float16 is computed in float. Like kernel_types.h, included by
// nvcc and g++.
#pragma once

#include "ops/cuda/kernel_types.h"
#include "ops/unary_math.h"

namespace mxlite::cuda {

// y = f(x) over n elements.
template <typename T>
cudaError_t UnaryMathForward(UnaryMath function, UnaryMathParams params, const T* x, T* y,
                             int64_t n, cudaStream_t s);

// dx = dy * f'(x) over n elements.
template <typename T>
cudaError_t UnaryMathBackward(UnaryMath function, UnaryMathParams params, const T* x, const T* dy,
                              T* dx, int64_t n, cudaStream_t s);

}  // namespace mxlite::cuda
