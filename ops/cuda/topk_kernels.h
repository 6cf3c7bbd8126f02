// Launchers of topk's CUDA kernels (ops/topk.h; topk_kernels.cu), called by
// ops/cuda/topk_gpu.cc. The ranking is ops/topk_order.h's, as on the CPU. Like kernel_types.h,
// included by nvcc and g++.
#pragma once

#include <cstdint>

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

// The lines of a topk node (ops/topk.h's TopkGeometry).
struct TopkLines {
  int64_t outer, extent, inner, k;
  bool ascending;
};

// picked (outer, k, inner): the positions of each line's k first-ranked elements, in rank order.
// A thread per line keeps the k best in a heap (in `picked` itself), then sorts it.
template <typename T>
cudaError_t TopkRank(const TopkLines& g, const T* data, int64_t* picked, cudaStream_t s);

// values (outer, k, inner) = data at the picked positions.
template <typename T>
cudaError_t TopkGatherValues(const TopkLines& g, const T* data, const int64_t* picked, T* values,
                             cudaStream_t s);

// out (outer, k, inner) = the picked positions as P (float, double, int32_t, int64_t).
template <typename P>
cudaError_t TopkStorePositions(const TopkLines& g, const int64_t* picked, P* out, cudaStream_t s);

// mask (data's shape) = 1 at the picked positions, else 0.
template <typename T>
cudaError_t TopkMask(const TopkLines& g, const int64_t* picked, T* mask, cudaStream_t s);

// dx (data's shape) = dy (outer, k, inner) at the picked positions, else 0.
template <typename T>
cudaError_t TopkScatterGradient(const TopkLines& g, const int64_t* picked, const T* dy, T* dx,
                                cudaStream_t s);

}  // namespace mxlite::cuda
