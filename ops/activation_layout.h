// The layouts a 4-D activation (images with channels) is stored in, and what each does to its
// shape and axes. The convolution planner (scheduler/planning/conv_planning.h) chooses between
// them; the layout-sensitive ops (Convolution, Pooling, BatchNorm, layout_transform) read them.
//
//   layout    shape                  element (n, c, h, w) at
//   NCHW      (N, C, H, W)           ((n * C + c) * H + h) * W + w
//   NHWC      (N, H, W, C)           ((n * H + h) * W + w) * C + c
//   NCHW16c   (N, C/16, H, W, 16)    (((n * C/16 + c/16) * H + h) * W + w) * 16 + c % 16
//
// NCHW16c (oneDNN's nChw16c, ONNX Runtime's NCHWc with AVX-512's block) keeps 16 channels of one
// pixel in one 64-byte vector, so a kernel reads whole vectors of channels while walking the
// pixels of a plane. It holds only tensors whose channels are a multiple of 16 (no padding
// channels: an op that maps 0 to something else, a sigmoid, would make them wrong).
// Every function is pure; errors name the shape and what was expected.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/shape.h"

namespace mxlite {

enum class ActivationLayout { kNCHW, kNHWC, kNCHW16c };
inline constexpr int kNumActivationLayouts = 3;
inline constexpr ActivationLayout kActivationLayouts[kNumActivationLayouts] = {
    ActivationLayout::kNCHW, ActivationLayout::kNHWC, ActivationLayout::kNCHW16c};
// Channels per block of NCHW16c.
inline constexpr int64_t kChannelBlock = 16;

// Whether a grouped layer's groups share NCHW16c's blocks: 2, 4 or 8 channels per group, as many
// filters, whole blocks of channels. Each block then holds whole groups, and an output block reads
// the input block of the same channels only (grouped_nchw16c; RegNet-Y, ResNeXt's first stages).
inline bool GroupsShareChannelBlocks(int64_t channels, int64_t filters, int64_t groups) {
  if (groups <= 1 || channels != filters || channels % kChannelBlock != 0) return false;
  if (channels % groups != 0) return false;
  const int64_t per_group = channels / groups;
  return per_group == 2 || per_group == 4 || per_group == 8;
}

const char* ActivationLayoutName(ActivationLayout layout);  // "NCHW", "NHWC", "NCHW16c"
// The layout named `name` (exactly as ActivationLayoutName spells it), or nullopt.
std::optional<ActivationLayout> ParseActivationLayout(std::string_view name);

// Whether `layout` can hold an activation of `channels` channels (NCHW16c: a multiple of 16).
bool LayoutHoldsChannels(ActivationLayout layout, int64_t channels);

// The shape of an activation of NCHW shape `nchw` once laid out as `layout`; an error naming the
// shape when it is not 4-D or `layout` cannot hold its channels.
Shape LayoutShape(const Shape& nchw, ActivationLayout layout);
// The inverse: the NCHW shape of a tensor of shape `shape` in `layout`; an error naming the shape
// when its rank (or NCHW16c's last extent) does not fit the layout.
Shape NchwShape(const Shape& shape, ActivationLayout layout);
// LayoutShape(NchwShape(shape, from), to).
Shape PermuteShape(const Shape& shape, ActivationLayout from, ActivationLayout to);

// The axis of a tensor in `to` that holds axis `axis` (0..3) of the same tensor in `from`, for
// ops whose attributes name an axis (BatchNorm's axis, Concat's dim). In NCHW16c axis 1 holds the
// channel blocks (the channel itself is split over axes 1 and 4), the others are NCHW's.
int PermutedAxis(int axis, ActivationLayout from, ActivationLayout to);

// The axis that holds a 4-D NCHW tensor's axis `axis` (negative counts from the end) once it is
// laid out as `layout`, as attribute text ("3"): what ops that name an axis write when moved.
std::string AxisTextIn(ActivationLayout layout, int64_t axis);

// The transpose op's `axes` that take NCHW to NHWC (0,2,3,1) or back (0,3,1,2), identity for
// equal layouts. NCHW16c is no permutation of 4 axes: an error (see cpu::TransformLayout).
std::vector<int> LayoutPermutation(ActivationLayout from, ActivationLayout to);

}  // namespace mxlite
