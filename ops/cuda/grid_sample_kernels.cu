// grid_sample on the GPU (grid_sample_kernels.h): the CPU kernels' formulas (ops/grid_sample.cc)
// from the same tap functions, in ComputeType.
#include "ops/cuda/grid.cuh"
#include "ops/cuda/grid_sample_kernels.h"

namespace mxlite::cuda {
namespace {

template <typename T>
__global__ void ForwardKernel(GridSampleGeometry g, const T* data, const T* grid, T* out) {
  using C = ComputeType<T>;
  const int64_t plane = g.plane();
  const int combos = GridCombinations(g);
  MXLITE_GRID_LOOP(e, g.batch * g.channels * g.points) {
    const int64_t p = e % g.points, plane_index = e / g.points, n = plane_index / g.channels;
    GridAxisTaps<C> taps[kGridSampleMaxAxes];
    int tap[kGridSampleMaxAxes];
    GridPointTaps<C>(g, grid + (n * g.points + p) * g.axes, taps);
    const T* in = data + plane_index * plane;
    C sum = C(0);
    for (int k = 0; k < combos; ++k) {
      const int64_t offset = GridCombination(g, taps, k, tap);
      if (offset < 0) continue;
      const C weight = GridCombinationWeight(g, taps, tap);
      sum += weight * static_cast<C>(in[offset]);
    }
    out[e] = static_cast<T>(sum);
  }
}

template <typename T>
__global__ void DataGradientKernel(GridSampleGeometry g, const T* grid, const T* dy, T* dx) {
  using C = ComputeType<T>;
  const int64_t plane = g.plane();
  const int combos = GridCombinations(g);
  MXLITE_GRID_LOOP(e, g.batch * g.channels * g.points) {
    const int64_t p = e % g.points, plane_index = e / g.points, n = plane_index / g.channels;
    GridAxisTaps<C> taps[kGridSampleMaxAxes];
    int tap[kGridSampleMaxAxes];
    GridPointTaps<C>(g, grid + (n * g.points + p) * g.axes, taps);
    const C grad = static_cast<C>(dy[e]);
    T* target = dx + plane_index * plane;
    for (int k = 0; k < combos; ++k) {
      const int64_t offset = GridCombination(g, taps, k, tap);
      if (offset < 0) continue;
      const C weight = GridCombinationWeight(g, taps, tap);
      atomicAdd(target + offset, static_cast<T>(weight * grad));
    }
  }
}

template <typename T>
__global__ void GridGradientKernel(GridSampleGeometry g, const T* data, const T* grid, const T* dy,
                                   T* dgrid) {
  using C = ComputeType<T>;
  const int64_t plane = g.plane();
  const int combos = GridCombinations(g);
  MXLITE_GRID_LOOP(np, g.batch * g.points) {
    const int64_t n = np / g.points, p = np % g.points;
    GridAxisTaps<C> taps[kGridSampleMaxAxes];
    int tap[kGridSampleMaxAxes];
    GridPointTaps<C>(g, grid + np * g.axes, taps);
    C slope[kGridSampleMaxAxes] = {};
    for (int k = 0; k < combos; ++k) {
      const int64_t offset = GridCombination(g, taps, k, tap);
      if (offset < 0) continue;
      C weighted = C(0);
      for (int64_t c = 0; c < g.channels; ++c) {
        const int64_t plane_index = n * g.channels + c;
        weighted += static_cast<C>(dy[plane_index * g.points + p]) *
                    static_cast<C>(data[plane_index * plane + offset]);
      }
      for (int a = 0; a < g.axes; ++a) slope[a] += GridCombinationSlope(g, taps, tap, a) * weighted;
    }
    for (int a = 0; a < g.axes; ++a) {
      dgrid[np * g.axes + (g.axes - 1 - a)] = static_cast<T>(slope[a] * taps[a].coordinate_slope);
    }
  }
}

}  // namespace

template <typename T>
cudaError_t GridSampleForward(const GridSampleGeometry& g, const T* data, const T* grid, T* out,
                              cudaStream_t s) {
  const int64_t n = g.batch * g.channels * g.points;
  if (n > 0) ForwardKernel<T><<<Blocks(n), kThreads, 0, s>>>(g, data, grid, out);
  return cudaGetLastError();
}

template <typename T>
cudaError_t GridSampleDataGradient(const GridSampleGeometry& g, const T* grid, const T* dy, T* dx,
                                   cudaStream_t s) {
  const int64_t planes = g.batch * g.channels;
  cudaError_t status = cudaMemsetAsync(dx, 0, planes * g.plane() * sizeof(T), s);
  if (status != cudaSuccess) return status;
  const int64_t n = planes * g.points;
  if (n > 0) DataGradientKernel<T><<<Blocks(n), kThreads, 0, s>>>(g, grid, dy, dx);
  return cudaGetLastError();
}

template <typename T>
cudaError_t GridSampleGridGradient(const GridSampleGeometry& g, const T* data, const T* grid,
                                   const T* dy, T* dgrid, cudaStream_t s) {
  const int64_t n = g.batch * g.points;
  if (n > 0) GridGradientKernel<T><<<Blocks(n), kThreads, 0, s>>>(g, data, grid, dy, dgrid);
  return cudaGetLastError();
}

#define MXLITE_INSTANTIATE_GRID_SAMPLE(T)                                                        \
  template cudaError_t GridSampleForward(const GridSampleGeometry&, const T*, const T*, T*,      \
                                         cudaStream_t);                                          \
  template cudaError_t GridSampleDataGradient(const GridSampleGeometry&, const T*, const T*, T*, \
                                              cudaStream_t);                                     \
  template cudaError_t GridSampleGridGradient(const GridSampleGeometry&, const T*, const T*,     \
                                              const T*, T*, cudaStream_t);
MXLITE_INSTANTIATE_GRID_SAMPLE(float)
MXLITE_INSTANTIATE_GRID_SAMPLE(double)
MXLITE_INSTANTIATE_GRID_SAMPLE(__half)
#undef MXLITE_INSTANTIATE_GRID_SAMPLE

}  // namespace mxlite::cuda
