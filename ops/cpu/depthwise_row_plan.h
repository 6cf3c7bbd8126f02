// Internal to the NHWC depthwise vector kernels (conv_depthwise_avx2.cc, conv_depthwise_avx512.cc):
// what both need to know of one output row before computing it — the input row each kernel row
// reads, and the output columns whose whole window lies inside the input's width (those take the
// unchecked register tiles; the rest, the padded edges, a checked path).
#pragma once

#include <cstdint>

#include "ops/cpu/im2col.h"

namespace mxlite::cpu::detail {

struct DepthwiseRowPlan {
  const float* const* input_rows;  // per kernel row i: its input row at column 0, or null (padding)
  int64_t kernel_h;
  ColumnSpan inside;  // the output columns with no tap in the padding

  DepthwiseRowPlan(const ConvGeometry& g, const float* const* rows)
      : input_rows(rows), kernel_h(g.kernel_h), inside(UnpaddedOutputColumns(g)) {}
};

}  // namespace mxlite::cpu::detail
