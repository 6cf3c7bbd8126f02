// What mxlite's .cu kernels share on the device. The launch shape: blocks of kThreads threads, a
// grid of Blocks(n) blocks capped so huge tensors loop (grid-stride) instead of overflowing the
// grid limit.
//
//   template <typename T>
//   __global__ void ScaleKernel(const T* x, T* y, T scale, int64_t n) {
//     MXLITE_GRID_LOOP(i, n) { y[i] = x[i] * scale; }
//   }
//   ScaleKernel<<<Blocks(n), kThreads, 0, stream>>>(x, y, scale, n);
//
// Beside it, the block reductions of the kernels that give a block one row or channel (softmax,
// BatchNorm) and the operand offsets of a kernel_types.h broadcast (the array and binary
// element-wise kernels).
//
// Included only by .cu files (nvcc).
#pragma once

#include <cstdint>

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

constexpr int kThreads = 256;

// Enough blocks for n elements (at least 1), at most 65535 * 16; the kernel's grid-stride loop
// covers the rest.
inline unsigned Blocks(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535 * 16 ? (blocks < 1 ? 1 : blocks) : 65535 * 16);
}

// A block for each of `items` (a row, a channel), at least 1 and at most 65535 * 16; the kernel's
// block-stride loop covers the rest.
inline unsigned BlocksPerItem(int64_t items) {
  return static_cast<unsigned>(items < 1 ? 1 : (items < 65535 * 16 ? items : 65535 * 16));
}

// The sums of a and b over the block's kThreads threads, in every thread (LayerNorm's and
// GroupNorm's statistics and gradients).
__device__ inline void BlockSumPair(double& a, double& b) {
  __shared__ double shared_a[kThreads], shared_b[kThreads];
  shared_a[threadIdx.x] = a;
  shared_b[threadIdx.x] = b;
  __syncthreads();
  for (unsigned half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      shared_a[threadIdx.x] += shared_a[threadIdx.x + half];
      shared_b[threadIdx.x] += shared_b[threadIdx.x + half];
    }
    __syncthreads();
  }
  a = shared_a[0];
  b = shared_b[0];
  __syncthreads();  // the shared arrays may be written again by the caller's next call
}

// The sum and the maximum of `value` over the block's kThreads threads, in `shared` (kThreads
// elements); every thread of the block calls them and gets the result.
template <typename T>
__device__ T BlockSum(T value, T* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int width = kThreads / 2; width > 0; width /= 2) {
    if (static_cast<int>(threadIdx.x) < width) shared[threadIdx.x] += shared[threadIdx.x + width];
    __syncthreads();
  }
  const T result = shared[0];
  __syncthreads();
  return result;
}

template <typename T>
__device__ T BlockMax(T value, T* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int width = kThreads / 2; width > 0; width /= 2) {
    if (static_cast<int>(threadIdx.x) < width) {
      const T other = shared[threadIdx.x + width];
      if (other > shared[threadIdx.x]) shared[threadIdx.x] = other;
    }
    __syncthreads();
  }
  const T result = shared[0];
  __syncthreads();
  return result;
}

// Offsets of output element i of g in its operands 0 and 1, in the index type of the caller
// (int32 where the tensor allows it: the GPU divides 32-bit integers several times faster).
template <typename Index>
__device__ inline void BroadcastOffsets(const BroadcastGeometry& g, Index i, Index* first,
                                        Index* second) {
  Index a = 0, b = 0;
  for (int d = g.ndim - 1; d >= 0; --d) {
    const Index extent = static_cast<Index>(g.extents[d]);
    const Index index = i % extent;
    i /= extent;
    a += index * static_cast<Index>(g.strides[0][d]);
    b += index * static_cast<Index>(g.strides[1][d]);
  }
  *first = a;
  *second = b;
}

// Whether every index of an n-element tensor (and a grid-stride step past it) fits int32.
inline bool FitsInt32(int64_t n) { return n <= (int64_t{1} << 30); }

}  // namespace mxlite::cuda

// for (i over this thread's elements of [0, n)), int64 indices.
#define MXLITE_GRID_LOOP(i, n)                                                           \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)
