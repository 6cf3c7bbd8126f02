// Copies between a dense tensor and a window of rows in another: slice's forward (gather) and
// backward (scatter), and the transposes that keep the innermost axis (attention's head splits,
// Swin's window partition). The CPU's counterpart of ops/cuda/strided_copy.h.
//
//   // rows 2..3 of a (4, 6) float tensor into a dense (2, 6) one
//   cpu::RowWindow w;
//   w.outer = 1; w.extents[0] = 2; w.steps[0] = 6; w.base = 12; w.row = 6;
//   cpu::CopyRowWindow(w, data, dense, sizeof(float), /*scatter=*/false);  // from data to dense
//
// Dense row r (row-major over `extents`) pairs with the window's row at
// base + sum_d i_d * steps[d]; a row is `row` consecutive elements in both, or (row == 1) a
// single element. Before copying, extent-1 axes go, an outer axis whose rows continue one another
// in the window joins the row (a slab read in one memcpy), and neighbouring outer axes merge where
// the window continues across them. Rows are walked like an odometer (no division per row) in
// chunks over the intra-op threads.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/shape.h"

namespace mxlite::cpu {

struct RowWindow {
  int outer = 0;                          // axes around the rows, outermost first
  int64_t extents[Shape::kMaxDims] = {};  // of the dense tensor's outer axes
  int64_t steps[Shape::kMaxDims] = {};    // window offset per step of each axis, in elements
  int64_t base = 0;                       // window offset of the first row
  int64_t row = 1;                        // elements per row
};

// The same window over the fewest axes and the longest rows (see above).
RowWindow Simplified(const RowWindow& window);

// Copies every row from the window (`from`) to the dense tensor (`to`), or with `scatter` from the
// dense tensor (`from`) into the window (`to`). Elements of `element_bytes` bytes (any dtype);
// the tensors must not overlap.
void CopyRowWindow(const RowWindow& window, const void* from, void* to, size_t element_bytes,
                   bool scatter);

}  // namespace mxlite::cpu
