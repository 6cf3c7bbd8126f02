// Launch shape shared by mxlite's .cu kernels: blocks of kThreads threads, a grid of Blocks(n)
// blocks capped so huge tensors loop (grid-stride) instead of overflowing the grid limit.
//
//   template <typename T>
//   __global__ void ScaleKernel(const T* x, T* y, T scale, int64_t n) {
//     MXLITE_GRID_LOOP(i, n) { y[i] = x[i] * scale; }
//   }
//   ScaleKernel<<<Blocks(n), kThreads, 0, stream>>>(x, y, scale, n);
//
// Included only by .cu files (nvcc).
#pragma once

#include <cstdint>

namespace mxlite::cuda {

constexpr int kThreads = 256;

// Enough blocks for n elements (at least 1), at most 65535 * 16; the kernel's grid-stride loop
// covers the rest.
inline unsigned Blocks(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535 * 16 ? (blocks < 1 ? 1 : blocks) : 65535 * 16);
}

}  // namespace mxlite::cuda

// for (i over this thread's elements of [0, n)), int64 indices.
#define MXLITE_GRID_LOOP(i, n)                                                           \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)
