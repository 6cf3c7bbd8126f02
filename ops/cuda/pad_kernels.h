// Launchers of Pad's CUDA kernels (ops/pad.cc; pad_kernels.cu), called by ops/cuda/pad_gpu.cc.
// Like kernel_types.h, included by nvcc and g++.
#pragma once

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

// Pad (ops/pad.cc): `before[a]` elements in front of axis a; mode as ops/pad.h's PadMode (0
// constant, 1 edge, 2 reflect, 3 wrap). The forward pass and the constant mode's backward compute
// each index from these alone, so they read no host-built tables and a CUDA graph can replay them.
// Edge and reflect copy an input element to several outputs; their backward gathers them through
// per-axis lists built on the host (PadBackwardMaps): first[a] / outputs[a] list, per input index,
// the output indices copying it (CSR).
struct PadGeometry {
  int ndim = 0, mode = 0;
  int64_t in_extents[kMaxKernelDims] = {}, out_extents[kMaxKernelDims] = {};
  int64_t before[kMaxKernelDims] = {};
};
struct PadBackwardMaps {
  const int64_t* first[kMaxKernelDims] = {};
  const int64_t* outputs[kMaxKernelDims] = {};
};
// T: float, double, __half, int32_t, int64_t, uint8_t.
template <typename T>
cudaError_t PadForward(const PadGeometry& g, const T* x, T* y, double fill, int64_t n,
                       cudaStream_t s);
// `maps` is read for edge and reflect only (may be empty for constant).
template <typename T>
cudaError_t PadBackward(const PadGeometry& g, const PadBackwardMaps& maps, const T* dy, T* dx,
                        int64_t n, cudaStream_t s);

}  // namespace mxlite::cuda
