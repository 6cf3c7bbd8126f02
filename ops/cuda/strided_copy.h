// The one kernel of the ops that only move elements between a dense tensor and a strided window
// of another (ops/cuda/strided_copy.cc, strided_copy.cu): slice's forward (a gather from the
// window) and backward (a scatter into it), and transpose's permutations that are not a batch of
// 2-D transposes (attention's head splits). Called by ops/cuda/*_gpu.cc; like kernel_types.h,
// included by nvcc and g++.
//
// Rows 1 and 2 of a (4, 3) float tensor into a dense (2, 3) one: extents (2, 3), steps (3, 1),
// base 3, count 6, element_size 4, then RunStridedCopy(copy, 12, window_data, dense_data, s).
// Its transpose, (3, 2) <- the same rows: extents (3, 2), steps (1, 3), base 3.
//
// Why a planner of its own: a thread per element with 64-bit index arithmetic over every axis ran
// ViT-B/16's head splits at a twentieth of the card's copy speed. Simplified() turns a copy into
// its cheapest equal form first: fewer axes, wider elements, 32-bit offsets, or one memcpy.
#pragma once

#include <cstdint>

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

// Dense element i, at row-major index (i_0, ..., i_{ndim-1}) over `extents`, pairs with window
// element base + sum_d i_d * steps[d] (steps in elements, of any sign).
struct StridedCopy {
  int ndim = 0;
  int64_t extents[kMaxKernelDims] = {};
  int64_t steps[kMaxKernelDims] = {};
  int64_t base = 0;
  int64_t count = 0;          // dense elements, the product of the extents
  int element_size = 0;       // bytes: 1, 2, 4 or 8 (16 once Simplified widens them)
  bool scatter = false;       // dense -> window (slice's backward); else window -> dense
  bool narrow_index = false;  // set by Simplified: every offset fits 32 bits
};

// `copy` in its cheapest equal form: extent-1 axes dropped; an axis merged into the one outside
// it where the window continues across both; elements widened (to 16 bytes at most) while the
// window's innermost axis is contiguous and every offset and both addresses stay aligned; 32-bit
// offsets where the count and `window_elements` (the window tensor's size), both counted in the
// widened elements, are at most 2^30. At least one axis remains.
StridedCopy Simplified(const StridedCopy& copy, int64_t window_elements, const void* dense,
                       const void* window);

// Runs Simplified(copy) on `stream`: from the window to the dense tensor, or (copy.scatter) from
// the dense tensor into the window. A copy that is one contiguous run is one cudaMemcpyAsync.
cudaError_t RunStridedCopy(const StridedCopy& copy, int64_t window_elements, const void* from,
                           void* to, cudaStream_t stream);

}  // namespace mxlite::cuda
