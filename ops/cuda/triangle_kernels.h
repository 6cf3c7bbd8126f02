// Launcher of tril's and triu's CUDA kernel (ops/triangle.cc; triangle_kernels.cu), called by
// ops/cuda/triangle_gpu.cc. Like kernel_types.h, included by nvcc and g++.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

// out[m][i][j] = in[m][i][j] where the triangle keeps (i, j) (upper: j - i >= k; lower:
// j - i <= k), zero elsewhere, over `matrices` matrices of rows x columns elements of
// `element_bytes` bytes (1, 2, 4 or 8: the kernel moves bits, so any dtype). In place when
// out == in. One thread per element.
cudaError_t Triangle(const void* in, void* out, size_t element_bytes, int64_t matrices,
                     int64_t rows, int64_t columns, int64_t k, bool upper, cudaStream_t s);

}  // namespace mxlite::cuda
