// Internal to ops/cpu/conv_depthwise.cc: the float32 NHWC depthwise forward for CPUs with
// AVX2+FMA, channel multiplier 1 (groups == in == out channels: MobileNet's layers).
//
// One call computes one output row. For each block of 8 channels it keeps 4 output pixels in
// registers and sums every kernel tap into them (one load of the input and one FMA per pixel and
// tap; the tap's 8 weights are loaded once for the 4 pixels), then adds nothing more: the bias is
// the starting sum and the clamp is applied at the store. A 3-wide undilated kernel at stride 1
// or 2 (MobileNet's) takes 8 pixels at a time instead and loads each input column of a kernel row
// once for every pixel whose window holds it. Pixels whose window leaves the input
// (the padded edges: three of seven at 7x7) take a checked path, four channel vectors at a time
// so their sums do not wait on each other; the last channels past a multiple of 8 a scalar one. The portable
// kernel in conv_depthwise.cc re-reads and re-writes the output row for every tap instead.
//
// Each output element is summed in the same order (bias, then taps row by row) wherever it falls,
// so results do not depend on the thread count or on which path computed a pixel.
// Thread safety: reentrant; writes only its output row.
#pragma once

#include <cstdint>

#include "ops/cpu/epilogue.h"
#include "ops/cpu/im2col.h"

namespace mxlite::cpu::detail {

// True when this build and this CPU can run the function below (x86-64 with avx2 and fma).
bool DepthwiseAvx2Available();

// Channels [channel_begin, channel_end) of one output row of the NHWC depthwise convolution g
// (groups == in_channels == out_channels, channels_last): y_row[ow, c] = clamp(bias[c] + sum over
// taps (i, j) of by_tap[i * KW + j, c] * input_rows[i][iw, c]), iw = ow * stride_w - pad_w + j *
// dilate_w, where input_rows[i] is the input row kernel row i reads (W x C floats) or null where
// it falls in the padding. by_tap is the weight as (KH*KW, C); bias may be null. The rows may live
// anywhere (a whole input tensor, or a ring of rows computed just before:
// ops/cpu/depthwise_block.h). Channels outside the range are neither read nor written, so threads
// may share a row by channel slices (a slice's width need not be a multiple of 8).
void DepthwiseForwardRowNhwcAvx2(const ConvGeometry& g, const float* const* input_rows,
                                 const float* by_tap, const float* bias,
                                 const Epilogue<float>& clamp, int64_t channel_begin,
                                 int64_t channel_end, float* y_row);

}  // namespace mxlite::cpu::detail
