// Launchers of slice's CUDA kernels (ops/slice.h; slice_kernels.cu), called by
// ops/cuda/slice_gpu.cc. The kernels move elements of 1, 2, 4 or 8 bytes, whatever their dtype.
// Like kernel_types.h, included by nvcc and g++.
#pragma once

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

// Output element i, at output index (i_0, ..., i_{ndim-1}), is input element
// base + sum_d i_d * input_steps[d] (the input's stride times the slice's step, in elements).
struct SliceWindow {
  int ndim = 0;
  int64_t output_extents[kMaxKernelDims] = {};
  int64_t input_steps[kMaxKernelDims] = {};
  int64_t base = 0;
  int64_t count = 0;  // output elements
};

// out[i] = in[window's offset of i] (gather), or, with `scatter`, out[window's offset of i] =
// in[i] (out zeroed first by the caller). `element_size` is 1, 2, 4 or 8.
cudaError_t SliceCopy(const SliceWindow& window, const void* in, void* out, int element_size,
                      bool scatter, cudaStream_t s);

}  // namespace mxlite::cuda
