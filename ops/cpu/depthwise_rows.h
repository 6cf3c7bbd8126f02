// The NHWC depthwise convolution forward one output row at a time, from input rows that may live
// anywhere: in the input tensor (the depthwise_direct algorithm, conv_depthwise.cc) or in a ring of
// rows another kernel computed just before (the fused depthwise block, ops/cpu/depthwise_block.h).
//
//   const float* rows[KH];
//   ChannelsLastInputRows(g, data, n, oh, rows);          // (im2col.h) or rows of your own
//   DepthwiseRowNhwc(g, rows, by_tap, bias, clamp, AllChannels(g), y_row);
//
// g is a depthwise geometry (groups == in_channels, channels_last; out_channels a multiple of
// in_channels). float32 with multiplier 1 runs a vector kernel where the CPU has one
// (conv_depthwise_avx512.h, else conv_depthwise_avx2.h); everything else the portable loops. Each
// sums every output element in the same order (bias, then taps row by row), so a row's values do
// not depend on where its input rows live or which thread computes it.
// Thread safety: reentrant; each call writes only its output row.
#pragma once

#include <cstdint>

#include "ops/cpu/epilogue.h"
#include "ops/cpu/im2col.h"

namespace mxlite::cpu {

// The weight (O, KH, KW, 1) as (KH*KW, O): each tap's weights contiguous over the channels.
template <typename T>
void DepthwiseWeightsByTap(const ConvGeometry& g, const T* weight, T* by_tap);

// A slice of the input channels, [begin, end): threads may share a row by slices.
struct ChannelRange {
  int64_t begin = 0, end = 0;
};
inline ChannelRange AllChannels(const ConvGeometry& g) { return {0, g.in_channels}; }

// y_row (out_w x out_channels) = clamp(bias + sum over taps of by_tap[tap] * input), reading
// input_rows[i] (in_w x in_channels, or null: padding) for kernel row i. bias may be null. Only
// the outputs of input channels `channels` (out channels [begin * M, end * M), M the multiplier)
// are computed, and only those input channels read.
template <typename T>
void DepthwiseRowNhwc(const ConvGeometry& g, const T* const* input_rows, const T* by_tap,
                      const T* bias, const Epilogue<T>& clamp, ChannelRange channels, T* y_row);

}  // namespace mxlite::cpu
