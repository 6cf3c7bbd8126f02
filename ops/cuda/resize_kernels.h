// Launchers of Resize's CUDA kernels (ops/resize.h; resize_kernels.cu), called by
// ops/cuda/resize_gpu.cc: one pass over one axis, the data seen as (outer, extent, inner), with
// the taps (forward) or the readers (backward) of that axis in device memory. Computed in
// ComputeType<T>, rounded once when stored. Included by nvcc and g++.
#pragma once

#include <cstdint>

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

struct ResizePass {
  int64_t outer, in, out, inner;
};

// dst (outer, out, inner)[o, x, i] = the sum over taps k < count of
// src[o, index[x * count + k], i] * weight[x * count + k], in tap order (ResizeTaps, ops/resize.h):
// count 1 copies; count 2 is a * (1 - t) + b * t with t = weight[2x + 1] (a where t is 0);
// count 4, cubic, ((a w0 + b w1) + c w2) + d w3.
template <typename T>
cudaError_t ResizeForwardPass(const ResizePass& p, int count, const int64_t* index,
                              const double* weight, const T* src, T* dst, cudaStream_t s);

// dx (outer, in, inner)[o, j, i] = sum over k in [begin[j], begin[j + 1]) of
// dy[o, reader[k], i] * weight[k].
template <typename T>
cudaError_t ResizeBackwardPass(const ResizePass& p, const int64_t* begin, const int64_t* reader,
                               const double* weight, const T* dy, T* dx, cudaStream_t s);

}  // namespace mxlite::cuda
