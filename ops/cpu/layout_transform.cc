#include "ops/cpu/layout_transform.h"

#include <cstring>
#include <vector>

#include "core/error.h"
#include "ops/cpu/transpose.h"

namespace mxlite::cpu {
namespace {

using L = ActivationLayout;

// The input of a transform seen as a tensor whose `axes` permutation is the output.
struct TransposeView {
  Shape shape;
  std::vector<int> axes;
};

TransposeView ViewOf(const Shape& nchw, L from, L to) {
  const int64_t n = nchw[0], c = nchw[1], hw = nchw[2] * nchw[3];
  const int64_t blocks = c / kChannelBlock;
  if (from != L::kNCHW16c && to != L::kNCHW16c) {
    return {LayoutShape(nchw, from), LayoutPermutation(from, to)};
  }
  const L other = from == L::kNCHW16c ? to : from;
  if (other == L::kNCHW) {  // (blocks, 16, HW) <-> (blocks, HW, 16): a transpose per block
    return {from == L::kNCHW ? Shape{n, blocks, kChannelBlock, hw}
                             : Shape{n, blocks, hw, kChannelBlock},
            {0, 1, 3, 2}};
  }
  // NHWC (HW, blocks, 16) <-> NCHW16c (blocks, HW, 16): whole vectors move.
  return {
      from == L::kNHWC ? Shape{n, hw, blocks, kChannelBlock} : Shape{n, blocks, hw, kChannelBlock},
      {0, 2, 1, 3}};
}

}  // namespace

void TransformLayout(const void* in, const Shape& nchw_shape, ActivationLayout from,
                     ActivationLayout to, void* out, DType dtype) {
  // Validates the rank and that both layouts hold the channels.
  LayoutShape(nchw_shape, from);
  LayoutShape(nchw_shape, to);
  if (from == to) {
    std::memcpy(out, in, static_cast<size_t>(nchw_shape.size()) * DTypeSize(dtype));
    return;
  }
  const TransposeView view = ViewOf(nchw_shape, from, to);
  TransposeAxes(in, view.shape, view.axes, out, dtype);
}

}  // namespace mxlite::cpu
