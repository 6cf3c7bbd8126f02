// Launcher of transpose's CUDA kernel (ops/transpose.cc; transpose_kernels.cu), called by
// ops/cuda/transpose_gpu.cc. The kernel moves elements of 1, 2, 4 or 8 bytes, whatever their
// dtype. Like kernel_types.h, included by nvcc and g++.
#pragma once

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

// out (out_extents) = in permuted: output axis i is input axis perm[i]; in_strides_permuted[i]
// is the input stride of axis perm[i]. When batch > 0 the permutation is a batch of 2-D
// transposes, in (batch, rows, cols) -> out (batch, cols, rows), which runs tiled through shared
// memory so that both the reads and the writes are coalesced (NCHW <-> NHWC, ConvNeXt's permutes,
// a key's transpose in attention); other permutations run as a strided copy (strided_copy.h),
// whole runs of elements at a time where the innermost axis stays (attention's head splits).
struct TransposeGeometry {
  int ndim = 0;
  int64_t out_extents[kMaxKernelDims] = {}, in_strides_permuted[kMaxKernelDims] = {};
  int64_t batch = 0, rows = 0, cols = 0;
};
cudaError_t TransposeCopy(const TransposeGeometry& g, const void* in, void* out,
                          size_t element_size, int64_t n, cudaStream_t s);

}  // namespace mxlite::cuda
