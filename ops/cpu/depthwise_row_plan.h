// Internal to the NHWC depthwise vector kernels (conv_depthwise_avx2.cc, conv_depthwise_avx512.cc):
// what both need to know of one output row before computing it — the input row each kernel row
// reads, and the output columns whose whole window lies inside the input's width (those take the
// unchecked register tiles; the rest, the padded edges, a checked path).
#pragma once

#include <algorithm>
#include <cstdint>

#include "ops/cpu/im2col.h"

namespace mxlite::cpu::detail {

struct DepthwiseRowPlan {
  const float* const* input_rows;  // per kernel row i: its input row at column 0, or null (padding)
  int64_t kernel_h;
  int64_t first_inside, end_inside;  // [first, end): columns with no tap in the padding

  DepthwiseRowPlan(const ConvGeometry& g, const float* const* rows)
      : input_rows(rows), kernel_h(g.kernel_h) {
    // ow * stride - pad >= 0, and ow * stride - pad + (KW - 1) * dilate <= in_w - 1.
    first_inside = (g.pad_w + g.stride_w - 1) / g.stride_w;
    const int64_t last_start = g.in_w - 1 - (g.kernel_w - 1) * g.dilate_w + g.pad_w;
    end_inside = last_start < 0 ? 0 : std::min(g.out_w, last_start / g.stride_w + 1);
    end_inside = std::max(end_inside, std::min(first_inside, g.out_w));
  }
};

}  // namespace mxlite::cpu::detail
