// Launchers of scatter_elements' CUDA kernels (ops/scatter_elements.h;
// scatter_elements_kernels.cu), called by ops/cuda/scatter_elements_gpu.cc: a thread per line of
// the index, writing its elements in order, as the CPU does. Like kernel_types.h, included by nvcc
// and g++.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

enum class ScatterKind { kNone, kAdd, kMul, kMax, kMin };

// The index's lines (ops/scatter_elements.h's ScatterLines).
struct ScatterLineGeometry {
  int64_t lines, steps, inner;
};

// out[offsets[j]] = updates[j] along every line, elements of `element_bytes` (1, 2, 4 or 8: the
// values move as bits, so any dtype). out already holds data.
cudaError_t ScatterElementsWrite(const ScatterLineGeometry& g, const int64_t* offsets,
                                 const void* updates, size_t element_bytes, void* out,
                                 cudaStream_t s);

// out[offsets[j]] = out[offsets[j]] (+ * max min) updates[j] along every line (T: float, double,
// __half, int32_t, int64_t).
template <typename T>
cudaError_t ScatterElementsCombine(ScatterKind kind, const ScatterLineGeometry& g,
                                   const int64_t* offsets, const T* updates, T* out,
                                   cudaStream_t s);

// The gradients of each line (ops/scatter_elements.h) into d_data (already holding dy) and
// d_update, either null when not wanted; `there` is scratch of data's size (mul's products, max
// and min's counts; null for none and add, which read neither data nor updates nor out).
template <typename T>
cudaError_t ScatterElementsBackward(ScatterKind kind, const ScatterLineGeometry& g,
                                    const int64_t* offsets, const T* data, const T* updates,
                                    const T* out, const T* dy, T* d_data, T* d_update,
                                    ComputeType<T>* there, cudaStream_t s);

}  // namespace mxlite::cuda
