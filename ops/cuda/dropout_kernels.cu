// Dropout on the GPU (dropout_kernels.h): the CPU op's draws, bit for bit, one thread per element.
#include "ops/cuda/dropout_kernels.h"
#include "ops/cuda/grid.cuh"

namespace mxlite::cuda {
namespace {

// ops/dropout.cc's SplitMix64 and Keep, bit for bit.
__device__ uint64_t SplitMix64(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

template <typename T>
__global__ void DropoutKernel(DropoutGeometry g, uint64_t seed, double p, ComputeType<T> scale,
                              const T* x, T* y, T* mask, int64_t n) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) {
    int64_t rest = i, drawn_index = 0, drawn_stride = 1;
    for (int d = g.ndim - 1; d >= 0; --d) {
      const int64_t index = rest % g.extents[d];
      rest /= g.extents[d];
      if (g.drawn[d] != 1) drawn_index += index * drawn_stride;
      drawn_stride *= g.drawn[d];
    }
    const double uniform =
        static_cast<double>(SplitMix64(seed, static_cast<uint64_t>(drawn_index)) >> 11) *
        (1.0 / 9007199254740992.0);
    const C factor = uniform >= p ? scale : C(0);
    y[i] = static_cast<T>(static_cast<C>(x[i]) * factor);
    if (mask != nullptr) mask[i] = static_cast<T>(factor);
  }
}

}  // namespace

template <typename T>
cudaError_t DropoutForward(const DropoutGeometry& g, uint64_t seed, double p, double scale,
                           const T* x, T* y, T* mask, int64_t n, cudaStream_t s) {
  if (n > 0) {
    DropoutKernel<T><<<Blocks(n), kThreads, 0, s>>>(g, seed, p, static_cast<ComputeType<T>>(scale),
                                                    x, y, mask, n);
  }
  return cudaGetLastError();
}

#define MXLITE_INSTANTIATE_FOR(T)                                                                 \
  template cudaError_t DropoutForward(const DropoutGeometry&, uint64_t, double, double, const T*, \
                                      T*, T*, int64_t, cudaStream_t);

MXLITE_INSTANTIATE_FOR(float)
MXLITE_INSTANTIATE_FOR(double)
MXLITE_INSTANTIATE_FOR(__half)

}  // namespace mxlite::cuda
