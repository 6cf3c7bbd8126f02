// Internal to ops/cpu/conv_depthwise.cc: the float32 NHWC depthwise forward for CPUs with
// AVX-512F, channel multiplier 1 (groups == in == out channels). The same contract as the AVX2
// kernel (conv_depthwise_avx2.h), twice the channels per vector, and:
// - every undilated kernel 3, 5 or 7 wide at stride 1 or 2 (MobileNet's 3x3, EfficientNet's and
//   MNASNet's 5x5, ConvNeXt's 7x7) takes sliding tiles of 8 (or 4) output pixels over the whole
//   row: each input column of a kernel row is loaded once and multiplied into every pixel whose
//   window holds it (8 pixels of a 5-wide kernel read 12 columns for 40 FMAs, where a pixel at a
//   time reads 40), and a tile at an edge skips the columns in the padding;
// - other kernels take tiles of 8 (or 4) pixels loading each pixel's inputs inside, and a checked
//   path, four channel vectors at a time, on the edges;
// - the channels past the last whole vector of 16 run in a masked vector, not one at a time;
// - a row's last tile is shifted back to end at the row's end, so it recomputes a few pixels (to
//   the same bits) instead of leaving them to narrower code.
//
// Each output element is summed in the same order as the AVX2 kernel (bias, then the taps row by
// row, left to right, one FMA each), so the two give the same bits.
// Thread safety: reentrant; writes only its output row's channels [channel_begin, channel_end).
#pragma once

#include <cstdint>

#include "ops/cpu/epilogue.h"
#include "ops/cpu/im2col.h"

namespace mxlite::cpu::detail {

// True when this build and this CPU can run the function below (x86-64 with AVX-512F).
bool DepthwiseAvx512Available();

// As DepthwiseForwardRowNhwcAvx2 (conv_depthwise_avx2.h): channels [channel_begin, channel_end)
// of one output row, y_row[ow, c] = clamp(bias[c] + sum over taps (i, j) of by_tap[i * KW + j, c]
// * input_rows[i][iw, c]); channels outside the range are neither read nor written.
void DepthwiseForwardRowNhwcAvx512(const ConvGeometry& g, const float* const* input_rows,
                                   const float* by_tap, const float* bias,
                                   const Epilogue<float>& clamp, int64_t channel_begin,
                                   int64_t channel_end, float* y_row);

}  // namespace mxlite::cpu::detail
