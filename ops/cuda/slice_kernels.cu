// slice on the GPU (slice_kernels.h): one thread per output element.
#include <cstdint>

#include "ops/cuda/grid.cuh"
#include "ops/cuda/slice_kernels.h"

namespace mxlite::cuda {
namespace {

__device__ int64_t WindowOffset(const SliceWindow& w, int64_t i) {
  int64_t offset = w.base;
  for (int d = w.ndim - 1; d >= 0; --d) {
    offset += (i % w.output_extents[d]) * w.input_steps[d];
    i /= w.output_extents[d];
  }
  return offset;
}

template <typename E>
__global__ void SliceKernel(SliceWindow w, const E* in, E* out, bool scatter) {
  MXLITE_GRID_LOOP(i, w.count) {
    const int64_t offset = WindowOffset(w, i);
    if (scatter) {
      out[offset] = in[i];
    } else {
      out[i] = in[offset];
    }
  }
}

template <typename E>
void Launch(const SliceWindow& w, const void* in, void* out, bool scatter, cudaStream_t s) {
  SliceKernel<E><<<Blocks(w.count), kThreads, 0, s>>>(w, static_cast<const E*>(in),
                                                      static_cast<E*>(out), scatter);
}

}  // namespace

cudaError_t SliceCopy(const SliceWindow& window, const void* in, void* out, int element_size,
                      bool scatter, cudaStream_t s) {
  if (window.count > 0) {
    switch (element_size) {
      case 1: Launch<uint8_t>(window, in, out, scatter, s); break;
      case 2: Launch<uint16_t>(window, in, out, scatter, s); break;
      case 4: Launch<uint32_t>(window, in, out, scatter, s); break;
      case 8: Launch<uint64_t>(window, in, out, scatter, s); break;
      default: return cudaErrorInvalidValue;
    }
  }
  return cudaGetLastError();
}

}  // namespace mxlite::cuda
