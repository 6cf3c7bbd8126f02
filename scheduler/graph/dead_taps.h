// Kernel taps that only ever read padding, trimmed at bind.
//
// A tap (one kernel row or column) of a Convolution is dead when, over every output position, it
// reads only the zero padding: a dilated kernel whose dilation reaches past the data (DeepLabV3's
// atrous pyramid at dilation 24 and 36 on a 14x14 map), or a 3x3 kernel on a 1x1 map (an ImageNet
// network run on small images). Its products are zero, yet the kernels compute them: an ASPP
// branch whose off-centre taps are dead costs 9x the 1x1 convolution it equals.
//
// Along each spatial axis tap k reads input positions o * stride - pad + k * dilation for the
// outputs o; a tap is dead when that whole span lies before the data or past it, which holds for
// a run of taps at each end (with a stride, a tap whose span straddles the data may still skip
// it: such taps are kept, so the trim is exact and only sometimes short). The pass cuts the
// kernel to the taps between, the weight through a
// `slice` node (a constant step at inference: run once, kept while the weight does not change),
// and the padding by the dead taps' reach, pad - first * dilation. Every output reads the same
// data through the same live taps, so the result is exact: the same sums, minus terms that were
// products with zero. Backward too: the weight's gradient is zero on dead taps (slice's backward
// writes them), so training executors trim as well.
//
// Trimmed when, along an axis, the dead taps on the two ends reach equally far into the padding
// (the kernels take one pad per axis, on both sides); axes that would need uneven padding keep
// their kernel. Not trimmed: a kernel with no live tap (its output is the bias; rare enough to
// leave to the kernels), layouts other than NCW / NCHW / NCDHW / NWC / NHWC (the pass runs before
// layout planning, which writes NCHW16c).
//
// The trimmed node keeps the convolution's name (so reports name the layer as written; its
// tuning-DB key is the trimmed problem's, which is what runs); the slice is named
// "<convolution>_live_taps". The executor runs the pass on every executor before layout planning
// when MXNET_CONV_TRIM_DEAD_TAPS is on (the default).
// Pure function: `graph` is not changed.
#pragma once

#include <string>
#include <vector>

#include "scheduler/graph/graph.h"
#include "scheduler/graph/infer_shapes.h"

namespace mxlite {

struct TrimmedConvolution {
  std::string convolution;
  std::vector<int64_t> kernel_before, kernel_after;  // per spatial axis
  bool operator==(const TrimmedConvolution&) const = default;
};

struct DeadTapsResult {
  Graph graph;
  std::vector<TrimmedConvolution> trimmed;  // in graph order
};

// `shapes`: InferGraphShapes of `graph` (the data's extents decide which taps are live).
DeadTapsResult TrimDeadKernelTaps(const Graph& graph, const GraphShapes& shapes);

// "trimmed dead kernel taps of 2 convolutions (MXNET_CONV_TRIM_DEAD_TAPS)" and, with
// `per_layer`, one line per convolution: "  aspp3: kernel (3,3) -> (1,1)".
std::string FormatTrimmedTaps(const std::vector<TrimmedConvolution>& trimmed, bool per_layer);

}  // namespace mxlite
