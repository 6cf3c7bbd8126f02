// Launchers of gather_elements' CUDA kernels (ops/gather_elements.cc; gather_elements_kernels.cu),
// called by ops/cuda/gather_elements_gpu.cc. Like kernel_types.h, included by nvcc and g++.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

// out[i] = data[offsets[i]] for i in [0, count), elements of `element_bytes` bytes (1, 2, 4 or
// 8: the values move as bits, so any dtype).
cudaError_t GatherElements(const void* data, const int64_t* offsets, int64_t count,
                           size_t element_bytes, void* out, cudaStream_t s);

// dx (dx_count elements) = 0, then dx[offsets[i]] += dy[i] (atomically: offsets may repeat).
template <typename T>
cudaError_t GatherElementsBackward(const T* dy, const int64_t* offsets, int64_t count, T* dx,
                                   int64_t dx_count, cudaStream_t s);

}  // namespace mxlite::cuda
