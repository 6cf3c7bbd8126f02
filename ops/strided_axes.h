// The axis merge every strided copy plans with: the GPU's (ops/cuda/strided_copy.h) and the
// CPU's row windows (ops/cpu/row_window.h). Axes are outermost first; axis d moves `steps[d]`
// elements through the strided tensor per step.
#pragma once

#include <cstdint>

namespace mxlite {

// Drops extent-1 axes and merges each axis into the one outside it where the steps continue
// across the two (the outer's step is the inner's times the inner's extent), in place; returns the
// number of axes left (0 when every extent was 1).
inline int MergeContinuingAxes(int ndim, int64_t* extents, int64_t* steps) {
  int kept = 0;
  for (int d = 0; d < ndim; ++d) {
    if (extents[d] == 1) continue;
    if (kept > 0 && steps[kept - 1] == steps[d] * extents[d]) {
      extents[kept - 1] *= extents[d];
      steps[kept - 1] = steps[d];
      continue;
    }
    extents[kept] = extents[d];
    steps[kept] = steps[d];
    ++kept;
  }
  return kept;
}

}  // namespace mxlite
