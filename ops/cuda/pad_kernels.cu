// Pad on the GPU (pad_kernels.h): one thread per output element forward, one per input element
// backward (edge and reflect over the per-axis lists pad_gpu.cc builds).
#include "ops/cuda/grid.cuh"
#include "ops/cuda/pad_kernels.h"

namespace mxlite::cuda {
namespace {

// Output index j's source along one axis (ops/pad.h's PadSourceIndex): -1 for a constant.
__device__ int64_t SourceIndex(int mode, int64_t j, int64_t before, int64_t extent) {
  const int64_t i = j - before;
  if (i >= 0 && i < extent) return i;
  if (mode == 0) return -1;
  if (mode == 1) return i < 0 ? 0 : extent - 1;
  if (mode == 3) return (i % extent + extent) % extent;
  return i < 0 ? -i : 2 * (extent - 1) - i;
}

template <typename T>
__global__ void PadForwardKernel(PadGeometry g, const T* x, T* y, T fill, int64_t n) {
  MXLITE_GRID_LOOP(i, n) {
    int64_t rest = i, offset = 0, stride = 1;
    bool constant = false;
    for (int d = g.ndim - 1; d >= 0; --d) {
      const int64_t source =
          SourceIndex(g.mode, rest % g.out_extents[d], g.before[d], g.in_extents[d]);
      rest /= g.out_extents[d];
      if (source < 0) constant = true;
      offset += source * stride;
      stride *= g.in_extents[d];
    }
    y[i] = constant ? fill : x[offset];
  }
}

// Constant mode: input element i is copied to exactly one output (none where negative pads
// crop it).
template <typename T>
__global__ void PadConstantBackwardKernel(PadGeometry g, const T* dy, T* dx, int64_t n) {
  MXLITE_GRID_LOOP(i, n) {
    int64_t rest = i, offset = 0, stride = 1;
    bool copied = true;
    for (int d = g.ndim - 1; d >= 0; --d) {
      const int64_t j = rest % g.in_extents[d] + g.before[d];
      rest /= g.in_extents[d];
      if (j < 0 || j >= g.out_extents[d]) copied = false;
      offset += j * stride;
      stride *= g.out_extents[d];
    }
    dx[i] = copied ? dy[offset] : T(0.0f);
  }
}

// Edge and reflect: input element i gathers the output gradients of every output position that
// copied it: the combinations of each axis' output list, outer axes first (the CPU kernel's order).
template <typename T>
__global__ void PadBackwardKernel(PadGeometry g, PadBackwardMaps maps, const T* dy, T* dx,
                                  int64_t n) {
  MXLITE_GRID_LOOP(i, n) {
    int64_t index[kMaxKernelDims], cursor[kMaxKernelDims];
    int64_t rest = i;
    bool copied = true;
    for (int d = g.ndim - 1; d >= 0; --d) {
      index[d] = rest % g.in_extents[d];
      rest /= g.in_extents[d];
      cursor[d] = maps.first[d][index[d]];
      if (cursor[d] == maps.first[d][index[d] + 1]) copied = false;
    }
    ComputeType<T> sum = 0;
    while (copied) {
      int64_t offset = 0;
      for (int d = 0; d < g.ndim; ++d) {
        offset = offset * g.out_extents[d] + maps.outputs[d][cursor[d]];
      }
      sum += static_cast<ComputeType<T>>(dy[offset]);
      int d = g.ndim - 1;
      for (; d >= 0; --d) {
        if (++cursor[d] < maps.first[d][index[d] + 1]) break;
        cursor[d] = maps.first[d][index[d]];
      }
      if (d < 0) break;
    }
    dx[i] = static_cast<T>(sum);
  }
}

}  // namespace

template <typename T>
cudaError_t PadForward(const PadGeometry& g, const T* x, T* y, double fill, int64_t n,
                       cudaStream_t s) {
  if (n > 0)
    PadForwardKernel<T><<<Blocks(n), kThreads, 0, s>>>(
        g, x, y, static_cast<T>(static_cast<ComputeType<T>>(fill)), n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t PadBackward(const PadGeometry& g, const PadBackwardMaps& maps, const T* dy, T* dx,
                        int64_t n, cudaStream_t s) {
  if (n <= 0) return cudaGetLastError();
  if (g.mode == 0) {
    PadConstantBackwardKernel<T><<<Blocks(n), kThreads, 0, s>>>(g, dy, dx, n);
  } else {
    PadBackwardKernel<T><<<Blocks(n), kThreads, 0, s>>>(g, maps, dy, dx, n);
  }
  return cudaGetLastError();
}

#define MXLITE_INSTANTIATE_FOR(T)                                                            \
  template cudaError_t PadForward(const PadGeometry&, const T*, T*, double, int64_t,         \
                                  cudaStream_t);                                             \
  template cudaError_t PadBackward(const PadGeometry&, const PadBackwardMaps&, const T*, T*, \
                                   int64_t, cudaStream_t);

MXLITE_INSTANTIATE_FOR(float)
MXLITE_INSTANTIATE_FOR(double)
MXLITE_INSTANTIATE_FOR(__half)
// Integers move too (forward only: they have no gradient).
template cudaError_t PadForward(const PadGeometry&, const int32_t*, int32_t*, double, int64_t,
                                cudaStream_t);
template cudaError_t PadForward(const PadGeometry&, const int64_t*, int64_t*, double, int64_t,
                                cudaStream_t);
template cudaError_t PadForward(const PadGeometry&, const uint8_t*, uint8_t*, double, int64_t,
                                cudaStream_t);

}  // namespace mxlite::cuda
