// argmax / argmin on the GPU (arg_extremum_kernels.h): one thread per output element walks its
// row, as the CPU kernel does.
#include "ops/cuda/arg_extremum_kernels.h"
#include "ops/cuda/grid.cuh"

namespace mxlite::cuda {
namespace {

template <typename C>
__device__ bool Beats(bool largest, C x, C best) {
  if (best != best) return false;
  if (x != x) return true;
  return largest ? x > best : x < best;
}

template <typename T>
__global__ void ArgSearchKernel(bool largest, const T* x, T* y, int64_t outer, int64_t extent,
                                int64_t inner) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(j, outer * inner) {
    const int64_t o = j / inner, i = j % inner;
    const T* row = x + o * extent * inner + i;
    int64_t best = 0;
    C best_value = static_cast<C>(row[0]);
    for (int64_t k = 1; k < extent; ++k) {
      const C value = static_cast<C>(row[k * inner]);
      if (Beats(largest, value, best_value)) {
        best = k;
        best_value = value;
      }
    }
    y[j] = static_cast<T>(static_cast<C>(best));
  }
}

}  // namespace

template <typename T>
cudaError_t ArgSearch(bool largest, const T* x, T* y, int64_t outer, int64_t extent,
                      int64_t inner, cudaStream_t s) {
  const int64_t n = outer * inner;
  if (n > 0) ArgSearchKernel<T><<<Blocks(n), kThreads, 0, s>>>(largest, x, y, outer, extent, inner);
  return cudaGetLastError();
}

template cudaError_t ArgSearch<float>(bool, const float*, float*, int64_t, int64_t, int64_t,
                                      cudaStream_t);
template cudaError_t ArgSearch<double>(bool, const double*, double*, int64_t, int64_t, int64_t,
                                       cudaStream_t);
template cudaError_t ArgSearch<__half>(bool, const __half*, __half*, int64_t, int64_t, int64_t,
                                       cudaStream_t);

}  // namespace mxlite::cuda
