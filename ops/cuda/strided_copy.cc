// StridedCopy's planning on the host (strided_copy.h); the kernel is in strided_copy.cu.
#include <cstdint>

#include "ops/cuda/strided_copy.h"
#include "ops/strided_axes.h"

namespace mxlite::cuda {
namespace {

// 32-bit offsets up to 2^30 elements: a thread's index plus the grid's stride (at most 2^28
// threads) stays below 2^31 as well.
constexpr int64_t kNarrowLimit = int64_t{1} << 30;

// Extent-1 axes dropped, axes the window continues across merged (ops/strided_axes.h); a copy of
// one element (or none) keeps one axis.
StridedCopy MergedAxes(const StridedCopy& copy) {
  StridedCopy merged = copy;
  merged.ndim = MergeContinuingAxes(copy.ndim, merged.extents, merged.steps);
  if (merged.ndim == 0) {
    merged.ndim = 1;
    merged.extents[0] = copy.count;
    merged.steps[0] = 1;
  }
  return merged;
}

// Whether `factor` elements of the innermost axis can move as one: the axis is contiguous in the
// window, and every run of `factor` starts aligned in both tensors.
bool Widens(const StridedCopy& copy, int factor, uintptr_t dense, uintptr_t window) {
  const int last = copy.ndim - 1;
  const uintptr_t bytes = static_cast<uintptr_t>(factor) * copy.element_size;
  if (copy.steps[last] != 1 || copy.extents[last] % factor != 0) return false;
  if (copy.base % factor != 0 || dense % bytes != 0 || window % bytes != 0) return false;
  for (int d = 0; d < last; ++d) {
    if (copy.steps[d] % factor != 0) return false;
  }
  return true;
}

}  // namespace

StridedCopy Simplified(const StridedCopy& copy, int64_t window_elements, const void* dense,
                       const void* window) {
  StridedCopy s = MergedAxes(copy);
  const uintptr_t dense_address = reinterpret_cast<uintptr_t>(dense);
  const uintptr_t window_address = reinterpret_cast<uintptr_t>(window);
  for (int bytes = 16; bytes > s.element_size; bytes /= 2) {
    const int factor = bytes / s.element_size;
    if (bytes % s.element_size != 0 || !Widens(s, factor, dense_address, window_address)) continue;
    s.extents[s.ndim - 1] /= factor;
    for (int d = 0; d < s.ndim - 1; ++d) s.steps[d] /= factor;
    s.base /= factor;
    s.count /= factor;
    window_elements /= factor;
    s.element_size = bytes;
    break;
  }
  s.narrow_index = s.count <= kNarrowLimit && window_elements <= kNarrowLimit;
  return s;
}

}  // namespace mxlite::cuda
