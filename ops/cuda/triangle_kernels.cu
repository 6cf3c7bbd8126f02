// tril and triu on the GPU (triangle_kernels.h): one thread per element, its row and column from
// its index, the value copied or zeroed as its bits (the CPU kernel's rule, ops/triangle.cc).
#include "ops/cuda/grid.cuh"
#include "ops/cuda/triangle_kernels.h"

namespace mxlite::cuda {
namespace {

template <typename Bits>
__global__ void TriangleKernel(const Bits* in, Bits* out, int64_t n, int64_t rows,
                               int64_t columns, int64_t k, bool upper) {
  MXLITE_GRID_LOOP(i, n) {
    const int64_t column = i % columns;
    const int64_t row = (i / columns) % rows;
    const bool kept = upper ? column - row >= k : column - row <= k;
    out[i] = kept ? in[i] : Bits(0);
  }
}

template <typename Bits>
cudaError_t Launch(const void* in, void* out, int64_t n, int64_t rows, int64_t columns,
                   int64_t k, bool upper, cudaStream_t s) {
  TriangleKernel<Bits><<<Blocks(n), kThreads, 0, s>>>(static_cast<const Bits*>(in),
                                                      static_cast<Bits*>(out), n, rows, columns,
                                                      k, upper);
  return cudaGetLastError();
}

}  // namespace

cudaError_t Triangle(const void* in, void* out, size_t element_bytes, int64_t matrices,
                     int64_t rows, int64_t columns, int64_t k, bool upper, cudaStream_t s) {
  const int64_t n = matrices * rows * columns;
  if (n == 0) return cudaSuccess;
  switch (element_bytes) {
    case 1:
      return Launch<uint8_t>(in, out, n, rows, columns, k, upper, s);
    case 2:
      return Launch<uint16_t>(in, out, n, rows, columns, k, upper, s);
    case 4:
      return Launch<uint32_t>(in, out, n, rows, columns, k, upper, s);
    case 8:
      return Launch<uint64_t>(in, out, n, rows, columns, k, upper, s);
  }
  return cudaErrorInvalidValue;
}

}  // namespace mxlite::cuda
