// Launchers of the reductions' CUDA kernels (ops/reduce.h; reduce_kernels.cu), called by
// ops/cuda/reduce_gpu.cc, and ReduceSum, which cuda_util.h's ReduceToShape calls for the
// gradients of broadcast operands (the broadcast ops, FullyConnected's bias, Gemm's C, MatMul).
// The geometry is ReduceGeometry (cuda_util.h's MakeReduceGeometry from the data's shape and its
// kept-dims shape): any set of axes, up to kMaxKernelDims. Accumulation is in double, rounded once
// when stored, for every element type. Like kernel_types.h, included by nvcc and g++.
#pragma once

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

// dst (kept axes) = scale * the sum of src over the reduced axes (ReduceToShape). dst element j
// is the row-major index over kept_extents; its src base is sum kept_index * kept_strides.
struct ReduceGeometry {
  int kept_ndim = 0, reduced_ndim = 0;
  int64_t kept_extents[kMaxKernelDims] = {}, kept_strides[kMaxKernelDims] = {};
  int64_t reduced_extents[kMaxKernelDims] = {}, reduced_strides[kMaxKernelDims] = {};
  int64_t kept_count = 1, reduced_count = 1;
};
template <typename T>
cudaError_t ReduceSum(const ReduceGeometry& g, const T* src, T* dst, double scale, cudaStream_t s);

enum class ReduceKind { kSum, kMax, kMin, kProd };

// dst[j] = (scale *, kSum only) reduce(src over group j).
template <typename T>
cudaError_t Reduce(ReduceKind kind, const ReduceGeometry& g, const T* src, T* dst, double scale,
                   cudaStream_t s);

// dx over the data's n elements from dy (one per group): kSum: scale * dy; kMax / kMin: dy
// where x equals the group's result y, else 0.
template <typename T>
cudaError_t ReduceBackward(ReduceKind kind, const ReduceGeometry& g, const T* x, const T* y,
                           const T* dy, T* dx, double scale, int64_t n, cudaStream_t s);

// prod's backward, in three steps: SplitZeros writes nonzero = (x == 0 ? 1 : x) and
// is_zero = (x == 0); Reduce gives each group's product of non-zeros and count of zeros; then
// ProdBackward: dx = dy * product / x without zeros, dy * product for a lone zero, else 0.
template <typename T>
cudaError_t SplitZeros(const T* x, T* nonzero, T* is_zero, int64_t n, cudaStream_t s);
template <typename T>
cudaError_t ProdBackward(const ReduceGeometry& g, const T* x, const T* dy, const T* nonzero_product,
                         const T* zeros, T* dx, int64_t n, cudaStream_t s);

}  // namespace mxlite::cuda
