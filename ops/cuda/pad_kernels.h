// Launchers of Pad's CUDA kernels (ops/pad.cc; pad_kernels.cu), called by ops/cuda/pad_gpu.cc.
// Like kernel_types.h, included by nvcc and g++.
#pragma once

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

// Pad (ops/pad.cc). Per axis a: source[a] maps each output index to its input index (-1:
// constant); first[a] / outputs[a] list, per input index, the output indices copying it (CSR).
struct PadGeometry {
  int ndim = 0;
  int64_t in_extents[kMaxKernelDims] = {}, out_extents[kMaxKernelDims] = {};
  const int64_t* source[kMaxKernelDims] = {};
  const int64_t* first[kMaxKernelDims] = {};
  const int64_t* outputs[kMaxKernelDims] = {};
};
template <typename T>
cudaError_t PadForward(const PadGeometry& g, const T* x, T* y, double fill, int64_t n,
                       cudaStream_t s);
template <typename T>
cudaError_t PadBackward(const PadGeometry& g, const T* dy, T* dx, int64_t n, cudaStream_t s);

}  // namespace mxlite::cuda
