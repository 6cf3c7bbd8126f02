// transpose on the GPU (transpose_kernels.h): one thread per output element, any dtype by element
// size.
#include "ops/cuda/grid.cuh"
#include "ops/cuda/transpose_kernels.h"

namespace mxlite::cuda {
namespace {

template <typename E>
__global__ void TransposeKernel(TransposeGeometry g, const E* in, E* out, int64_t n) {
  MXLITE_GRID_LOOP(i, n) {
    int64_t rest = i, offset = 0;
    for (int d = g.ndim - 1; d >= 0; --d) {
      offset += (rest % g.out_extents[d]) * g.in_strides_permuted[d];
      rest /= g.out_extents[d];
    }
    out[i] = in[offset];
  }
}

}  // namespace

cudaError_t TransposeCopy(const TransposeGeometry& g, const void* in, void* out,
                          size_t element_size, int64_t n, cudaStream_t s) {
  if (n <= 0) return cudaGetLastError();
  switch (element_size) {
    case 1:
      TransposeKernel<uint8_t><<<Blocks(n), kThreads, 0, s>>>(g, static_cast<const uint8_t*>(in),
                                                              static_cast<uint8_t*>(out), n);
      break;
    case 2:
      TransposeKernel<uint16_t><<<Blocks(n), kThreads, 0, s>>>(g, static_cast<const uint16_t*>(in),
                                                               static_cast<uint16_t*>(out), n);
      break;
    case 4:
      TransposeKernel<uint32_t><<<Blocks(n), kThreads, 0, s>>>(g, static_cast<const uint32_t*>(in),
                                                               static_cast<uint32_t*>(out), n);
      break;
    case 8:
      TransposeKernel<uint64_t><<<Blocks(n), kThreads, 0, s>>>(g, static_cast<const uint64_t*>(in),
                                                               static_cast<uint64_t*>(out), n);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace mxlite::cuda
