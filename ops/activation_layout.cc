#include "ops/activation_layout.h"

#include "core/error.h"

namespace mxlite {

using L = ActivationLayout;

const char* ActivationLayoutName(ActivationLayout layout) {
  switch (layout) {
    case L::kNCHW:
      return "NCHW";
    case L::kNHWC:
      return "NHWC";
    case L::kNCHW16c:
      return "NCHW16c";
  }
  return "?";
}

std::optional<ActivationLayout> ParseActivationLayout(std::string_view name) {
  for (L layout : kActivationLayouts) {
    if (name == ActivationLayoutName(layout)) return layout;
  }
  return std::nullopt;
}

bool LayoutHoldsChannels(ActivationLayout layout, int64_t channels) {
  return layout != L::kNCHW16c || (channels > 0 && channels % kChannelBlock == 0);
}

Shape LayoutShape(const Shape& nchw, ActivationLayout layout) {
  MX_CHECK(nchw.ndim() == 4) << "an activation laid out as " << ActivationLayoutName(layout)
                             << " must be 4-D (N, C, H, W), not " << nchw;
  const int64_t n = nchw[0], c = nchw[1], h = nchw[2], w = nchw[3];
  switch (layout) {
    case L::kNCHW:
      return nchw;
    case L::kNHWC:
      return Shape{n, h, w, c};
    case L::kNCHW16c:
      MX_CHECK(LayoutHoldsChannels(layout, c))
          << "NCHW16c holds channels in blocks of " << kChannelBlock << ": the " << c
          << " channels of " << nchw << " are not a multiple of " << kChannelBlock;
      return Shape{n, c / kChannelBlock, h, w, kChannelBlock};
  }
  return nchw;
}

Shape NchwShape(const Shape& shape, ActivationLayout layout) {
  if (layout == L::kNCHW16c) {
    MX_CHECK(shape.ndim() == 5 && shape[4] == kChannelBlock)
        << "an NCHW16c activation has the shape (N, C/16, H, W, 16), not " << shape;
    return Shape{shape[0], shape[1] * kChannelBlock, shape[2], shape[3]};
  }
  MX_CHECK(shape.ndim() == 4) << "an " << ActivationLayoutName(layout)
                              << " activation must be 4-D, not " << shape;
  if (layout == L::kNHWC) return Shape{shape[0], shape[3], shape[1], shape[2]};
  return shape;
}

Shape PermuteShape(const Shape& shape, ActivationLayout from, ActivationLayout to) {
  return LayoutShape(NchwShape(shape, from), to);
}

namespace {

// The NCHW axis that axis `axis` of a tensor in `layout` holds (NCHW16c: axis 1 the blocks).
int NchwAxisOf(int axis, ActivationLayout layout) {
  static constexpr int kNhwc[4] = {0, 2, 3, 1};
  return layout == L::kNHWC ? kNhwc[axis] : axis;
}

}  // namespace

int PermutedAxis(int axis, ActivationLayout from, ActivationLayout to) {
  MX_CHECK(axis >= 0 && axis < 4) << "axis " << axis << " is not an axis of a 4-D activation";
  const int nchw = NchwAxisOf(axis, from);
  for (int i = 0; i < 4; ++i) {
    if (NchwAxisOf(i, to) == nchw) return i;
  }
  MX_THROW() << "axis " << axis << " has no place in " << ActivationLayoutName(to);
}

std::string AxisTextIn(ActivationLayout layout, int64_t axis) {
  const int written = static_cast<int>(axis < 0 ? axis + 4 : axis);
  return std::to_string(PermutedAxis(written, L::kNCHW, layout));
}

std::vector<int> LayoutPermutation(ActivationLayout from, ActivationLayout to) {
  MX_CHECK(from != L::kNCHW16c && to != L::kNCHW16c)
      << "no transpose takes " << ActivationLayoutName(from) << " to " << ActivationLayoutName(to)
      << ": a blocked layout is transformed by layout_transform";
  if (from == to) return {0, 1, 2, 3};
  if (from == L::kNCHW) return {0, 2, 3, 1};
  return {0, 3, 1, 2};
}

}  // namespace mxlite
