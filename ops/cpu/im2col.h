// Convolution geometry and the lowering helpers that turn a convolution into a GEMM on the CPU.
//
// ConvGeometry describes one 2-D convolution (a 1-D one is 2-D with height 1) with explicit input
// and output sizes, so the same description serves convolution and its transpose (Deconvolution,
// whose output may be larger than the convolution formula gives back: MXNet's `adj`).
// An output position (oh, ow) reads input (oh * stride_h - pad_h + i * dilate_h,
// ow * stride_w - pad_w + j * dilate_w) for kernel tap (i, j); positions outside the input read 0.
//
// Lowerings, for one image and one group of `channels` input channels:
//   Im2Col (channels-first, NCHW):   col[(c, i, j)][(oh, ow)]   rows C*KH*KW, columns OH*OW
//   Col2Im: the adjoint of Im2Col, adds col into the image (the data gradient)
//   Im2Row (channels-last, NHWC):    row[(oh, ow)][(i, j, c)]   rows OH*OW, columns KH*KW*C
//   Row2Im: the adjoint of Im2Row, adds row into the image
// For NHWC the image is the whole (H, W, channel_stride) image and the group is the channel range
// [channel_offset, channel_offset + channels).
//
// Every helper splits its work over the intra-op pool (ops/cpu/parallel.h) when it is large; called
// from inside a ParallelFor task (one image per thread) it runs inline. The adjoints (Col2Im,
// Row2Im) partition the *image* between tasks, so no two tasks ever add to the same element.
// Buffers belong to the caller; nothing is allocated here.
#pragma once

#include <algorithm>
#include <cstdint>

#include "ops/activation_layout.h"

namespace mxlite::cpu {

// The layout of a convolution's activations (1-D ones as NCHW / NHWC with height 1).
using ConvLayout = ActivationLayout;

struct ConvGeometry {
  int64_t batch = 1;
  int64_t in_channels = 1, out_channels = 1, groups = 1;
  int64_t in_h = 1, in_w = 1, out_h = 1, out_w = 1;
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t dilate_h = 1, dilate_w = 1;
  // NCHW / NCW: OIHW weights; NHWC / NWC: OHWI weights; NCHW16c: OIHW weights.
  ConvLayout layout = ConvLayout::kNCHW;

  bool operator==(const ConvGeometry&) const = default;
  bool channels_last() const { return layout == ConvLayout::kNHWC; }

  int64_t in_channels_per_group() const { return in_channels / groups; }
  int64_t out_channels_per_group() const { return out_channels / groups; }
  int64_t in_spatial() const { return in_h * in_w; }
  int64_t out_spatial() const { return out_h * out_w; }
  int64_t kernel_spatial() const { return kernel_h * kernel_w; }
  // The GEMM's reduction length: one group's input channels times the kernel taps.
  int64_t patch_size() const { return in_channels_per_group() * kernel_spatial(); }
  // Elements of one image's lowered matrix for one group (Im2Col or Im2Row).
  int64_t lowered_size() const { return patch_size() * out_spatial(); }
  // Multiply-adds of a forward pass over the whole batch (GFLOP/s = 2 * this / seconds / 1e9).
  double multiply_adds() const {
    return static_cast<double>(batch) * out_channels * out_spatial() * patch_size();
  }
};

// The output columns [begin, end) whose whole window (every kernel column) lies inside the
// input's width: the ones a kernel may compute without checking for padding.
struct ColumnSpan {
  int64_t begin = 0, end = 0;
};
inline ColumnSpan UnpaddedOutputColumns(const ConvGeometry& g) {
  const int64_t begin = std::min(g.out_w, (g.pad_w + g.stride_w - 1) / g.stride_w);
  const int64_t last_start = g.in_w - 1 + g.pad_w - (g.kernel_w - 1) * g.dilate_w;
  const int64_t end = last_start < 0 ? begin : std::min(g.out_w, last_start / g.stride_w + 1);
  return {begin, std::max(begin, end)};
}

// For output row oh of image n of the channels-last `data` (N, H, W, C): rows[i] (i < KH) = the
// input row kernel row i reads, or null where it falls in the padding.
template <typename T>
void ChannelsLastInputRows(const ConvGeometry& g, const T* data, int64_t n, int64_t oh,
                           const T** rows) {
  for (int64_t i = 0; i < g.kernel_h; ++i) {
    const int64_t ih = oh * g.stride_h - g.pad_h + i * g.dilate_h;
    rows[i] = ih >= 0 && ih < g.in_h ? data + (n * g.in_h + ih) * g.in_w * g.in_channels : nullptr;
  }
}

// image: `channels` planes of in_h x in_w; col: (channels * KH * KW) x (OH * OW), written fully.
template <typename T>
void Im2Col(const ConvGeometry& geometry, int64_t channels, const T* image, T* col);

// Adds col ((channels * KH * KW) x (OH * OW)) into image (`channels` planes of in_h x in_w).
template <typename T>
void Col2Im(const ConvGeometry& geometry, int64_t channels, const T* col, T* image);

// image: in_h x in_w pixels of `channel_stride` values; row: (OH * OW) x (KH * KW * channels),
// written fully from channels [channel_offset, channel_offset + channels).
template <typename T>
void Im2Row(const ConvGeometry& geometry, int64_t channel_stride, int64_t channel_offset,
            int64_t channels, const T* image, T* row);

// Adds row ((OH * OW) x (KH * KW * channels)) into channels [channel_offset, +channels) of image.
template <typename T>
void Row2Im(const ConvGeometry& geometry, int64_t channel_stride, int64_t channel_offset,
            int64_t channels, const T* row, T* image);

}  // namespace mxlite::cpu
