// Launchers of grid_sample's CUDA kernels (ops/grid_sample.h; grid_sample_kernels.cu), called by
// ops/cuda/grid_sample_gpu.cc. The taps are ops/grid_sample_taps.h's, as on the CPU. Like
// kernel_types.h, included by nvcc and g++.
#pragma once

#include "ops/cuda/kernel_types.h"
#include "ops/grid_sample_taps.h"

namespace mxlite::cuda {

// out (N, C, points) = data (N, C, plane) sampled at grid (N, points, axes): a thread per output
// element.
template <typename T>
cudaError_t GridSampleForward(const GridSampleGeometry& g, const T* data, const T* grid, T* out,
                              cudaStream_t s);

// dx = 0, then each output gradient times each tap's weight added at the tap (atomically: taps
// of different points meet).
template <typename T>
cudaError_t GridSampleDataGradient(const GridSampleGeometry& g, const T* grid, const T* dy, T* dx,
                                   cudaStream_t s);

// dgrid (N, points, axes): a thread per point, summing over the channels.
template <typename T>
cudaError_t GridSampleGridGradient(const GridSampleGeometry& g, const T* data, const T* grid,
                                   const T* dy, T* dgrid, cudaStream_t s);

}  // namespace mxlite::cuda
