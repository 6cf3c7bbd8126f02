// Launchers of the array helpers several GPU ops share (array_kernels.cu): AddArrays (add_n),
// ScaleArray (cuda_util.h's ReduceToShape, and through it the gradients of the broadcast ops,
// FullyConnected, Gemm and MatMul), MultiplyArrays (Dropout's backward) and BroadcastAssign
// (FullyConnected's bias, Gemm's C). The sum over broadcast axes, ReduceSum, is a reduction
// (reduce_kernels.h). Like kernel_types.h, included by nvcc and g++.
#pragma once

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

// out = a + b (out may be a or b); out += a.
template <typename T>
cudaError_t AddArrays(const T* a, const T* b, T* out, int64_t n, cudaStream_t s);
// y = scale * x (y may be x).
template <typename T>
cudaError_t ScaleArray(const T* x, T* y, double scale, int64_t n, cudaStream_t s);
// out = a * b, element by element (out may be a or b).
template <typename T>
cudaError_t MultiplyArrays(const T* a, const T* b, T* out, int64_t n, cudaStream_t s);

// out[i] = scale * x[.] with x broadcast (operand 0 of g) to the output (Gemm's C).
template <typename T>
cudaError_t BroadcastAssign(const BroadcastGeometry& g, const T* x, T* out, double scale, int64_t n,
                            cudaStream_t s);

}  // namespace mxlite::cuda
