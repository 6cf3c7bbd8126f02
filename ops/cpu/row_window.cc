// The row window's planning (Simplified) and its copy: an odometer over each chunk of rows, the
// chunks over the intra-op threads (ops/cpu/row_window.h).
#include "ops/cpu/row_window.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "ops/cpu/copy.h"
#include "ops/cpu/elementwise.h"
#include "ops/cpu/parallel.h"
#include "ops/strided_axes.h"

namespace mxlite::cpu {
namespace {

// Rows from `begin` to `end` (dense order), each window offset advanced from the last like an
// odometer: one division per axis for the first row, none after.
template <typename Element>
void CopyRowRange(const RowWindow& w, int64_t begin, int64_t end, const Element* from, Element* to,
                  bool scatter) {
  int64_t index[Shape::kMaxDims] = {};
  int64_t offset = w.base, rest = begin;
  for (int d = w.outer - 1; d >= 0; --d) {
    index[d] = rest % w.extents[d];
    rest /= w.extents[d];
    offset += index[d] * w.steps[d];
  }
  const size_t row_bytes = static_cast<size_t>(w.row) * sizeof(Element);
  for (int64_t r = begin; r < end; ++r) {
    const int64_t dense = r * w.row;
    if (w.row == 1) {
      if (scatter) {
        to[offset] = from[dense];
      } else {
        to[dense] = from[offset];
      }
    } else if (scatter) {
      std::memcpy(to + offset, from + dense, row_bytes);
    } else {
      std::memcpy(to + dense, from + offset, row_bytes);
    }
    for (int d = w.outer - 1; d >= 0; --d) {
      offset += w.steps[d];
      if (++index[d] < w.extents[d]) break;
      offset -= index[d] * w.steps[d];
      index[d] = 0;
    }
  }
}

template <typename Element>
void CopyRows(const RowWindow& w, const Element* from, Element* to, bool scatter) {
  if (w.outer == 0) {  // one slab
    CopyElements(scatter ? from : from + w.base, scatter ? to + w.base : to, w.row,
                 sizeof(Element));
    return;
  }
  int64_t rows = 1;
  for (int d = 0; d < w.outer; ++d) rows *= w.extents[d];
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / w.row);
  ParallelFor((rows + grain - 1) / grain, [&](int64_t chunk) {
    const int64_t begin = chunk * grain;
    CopyRowRange(w, begin, std::min(rows, begin + grain), from, to, scatter);
  });
}

}  // namespace

RowWindow Simplified(const RowWindow& window) {
  RowWindow s = window;
  s.outer = MergeContinuingAxes(window.outer, s.extents, s.steps);
  // Rows that follow one another in the window join into one.
  while (s.outer > 0 && s.steps[s.outer - 1] == s.row) {
    s.row *= s.extents[s.outer - 1];
    --s.outer;
  }
  return s;
}

void CopyRowWindow(const RowWindow& window, const void* from, void* to, size_t element_bytes,
                   bool scatter) {
  if (window.row <= 0) return;
  for (int d = 0; d < window.outer; ++d) {
    if (window.extents[d] <= 0) return;
  }
  const RowWindow w = Simplified(window);
  switch (element_bytes) {
    case 1:
      CopyRows(w, static_cast<const uint8_t*>(from), static_cast<uint8_t*>(to), scatter);
      break;
    case 2:
      CopyRows(w, static_cast<const uint16_t*>(from), static_cast<uint16_t*>(to), scatter);
      break;
    case 4:
      CopyRows(w, static_cast<const uint32_t*>(from), static_cast<uint32_t*>(to), scatter);
      break;
    case 8:
      CopyRows(w, static_cast<const uint64_t*>(from), static_cast<uint64_t*>(to), scatter);
      break;
    default:
      MX_THROW() << "CopyRowWindow: elements of " << element_bytes << " bytes";
  }
}

}  // namespace mxlite::cpu
