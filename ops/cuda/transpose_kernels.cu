// transpose on the GPU (transpose_kernels.h), any dtype by element size: a batch of 2-D
// transposes tiled, any other permutation a strided copy (strided_copy.h).
#include "ops/cuda/grid.cuh"
#include "ops/cuda/strided_copy.h"
#include "ops/cuda/transpose_kernels.h"

namespace mxlite::cuda {
namespace {

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
void LaunchTiled(const TransposeGeometry& g, const void* in, void* out, cudaStream_t s) {
  const int64_t tiles = g.batch * ((g.rows + kTile - 1) / kTile) * ((g.cols + kTile - 1) / kTile);
  const int64_t max_blocks = 65535 * 16;
  const unsigned blocks = static_cast<unsigned>(tiles < max_blocks ? tiles : max_blocks);
  BatchedTransposeKernel<E><<<blocks, dim3(kTile, kTileRows), 0, s>>>(g, static_cast<const E*>(in),
                                                                      static_cast<E*>(out), tiles);
}

}  // namespace

cudaError_t TransposeCopy(const TransposeGeometry& g, const void* in, void* out,
                          size_t element_size, int64_t n, cudaStream_t s) {
  if (n <= 0) return cudaGetLastError();
  if (g.batch == 0) {  // the output dense, the input its window
    StridedCopy copy;
    copy.ndim = g.ndim;
    for (int d = 0; d < g.ndim; ++d) {
      copy.extents[d] = g.out_extents[d];
      copy.steps[d] = g.in_strides_permuted[d];
    }
    copy.count = n;
    copy.element_size = static_cast<int>(element_size);
    return RunStridedCopy(copy, n, in, out, s);
  }
  switch (element_size) {
    case 1:
      LaunchTiled<uint8_t>(g, in, out, s);
      break;
    case 2:
      LaunchTiled<uint16_t>(g, in, out, s);
      break;
    case 4:
      LaunchTiled<uint32_t>(g, in, out, s);
      break;
    case 8:
      LaunchTiled<uint64_t>(g, in, out, s);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace mxlite::cuda
