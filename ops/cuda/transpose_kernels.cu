// transpose on the GPU (transpose_kernels.h), any dtype by element size: a batch of 2-D
// transposes tiled, any other permutation one thread per output element.
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

// A batch of 2-D transposes through 32 x 32 tiles in shared memory (the extra column keeps the
// column reads free of bank conflicts): a block of 32 x 8 threads reads a tile row by row and
// writes it column by column, both along consecutive addresses.
constexpr int kTile = 32, kTileRows = 8;

template <typename E>
__global__ void BatchedTransposeKernel(TransposeGeometry g, const E* in, E* out, int64_t tiles) {
  __shared__ E tile[kTile][kTile + 1];
  const int64_t row_tiles = (g.rows + kTile - 1) / kTile, col_tiles = (g.cols + kTile - 1) / kTile;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int64_t col0 = (t % col_tiles) * kTile, row0 = ((t / col_tiles) % row_tiles) * kTile;
    const int64_t base = (t / (col_tiles * row_tiles)) * g.rows * g.cols;
    for (int r = threadIdx.y; r < kTile; r += kTileRows) {
      const int64_t row = row0 + r, col = col0 + threadIdx.x;
      if (row < g.rows && col < g.cols) tile[r][threadIdx.x] = in[base + row * g.cols + col];
    }
    __syncthreads();
    for (int c = threadIdx.y; c < kTile; c += kTileRows) {
      const int64_t col = col0 + c, row = row0 + threadIdx.x;
      if (row < g.rows && col < g.cols) out[base + col * g.rows + row] = tile[threadIdx.x][c];
    }
    __syncthreads();
  }
}

template <typename E>
void LaunchTranspose(const TransposeGeometry& g, const void* in, void* out, int64_t n,
                     cudaStream_t s) {
  const E* src = static_cast<const E*>(in);
  E* dst = static_cast<E*>(out);
  if (g.batch > 0) {
    const int64_t tiles = g.batch * ((g.rows + kTile - 1) / kTile) * ((g.cols + kTile - 1) / kTile);
    const int64_t max_blocks = 65535 * 16;
    const unsigned blocks = static_cast<unsigned>(tiles < max_blocks ? tiles : max_blocks);
    BatchedTransposeKernel<E><<<blocks, dim3(kTile, kTileRows), 0, s>>>(g, src, dst, tiles);
  } else {
    TransposeKernel<E><<<Blocks(n), kThreads, 0, s>>>(g, src, dst, n);
  }
}

}  // namespace

cudaError_t TransposeCopy(const TransposeGeometry& g, const void* in, void* out,
                          size_t element_size, int64_t n, cudaStream_t s) {
  if (n <= 0) return cudaGetLastError();
  switch (element_size) {
    case 1:
      LaunchTranspose<uint8_t>(g, in, out, n, s);
      break;
    case 2:
      LaunchTranspose<uint16_t>(g, in, out, n, s);
      break;
    case 4:
      LaunchTranspose<uint32_t>(g, in, out, n, s);
      break;
    case 8:
      LaunchTranspose<uint64_t>(g, in, out, n, s);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace mxlite::cuda
