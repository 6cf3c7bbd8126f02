// The activation layouts (ops/activation_layout.h) and layout_transform (ops/layout_transform.cc,
// kernel ops/cpu/layout_transform.h): every pair of NCHW, NHWC and NCHW16c against an element by
// element reference at sizes past the transpose tiles, gradients, round trips in every dtype size,
// shape inference and its errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>

#include "core/error.h"
#include "ops/activation_layout.h"
#include "ops/cpu/layout_transform.h"
#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

using L = ActivationLayout;

// Where element (n, c, h, w) of an activation of NCHW shape `nchw` lives in `layout`, written out
// from the table in activation_layout.h.
int64_t OffsetIn(L layout, const Shape& nchw, int64_t n, int64_t c, int64_t h, int64_t w) {
  const int64_t channels = nchw[1], height = nchw[2], width = nchw[3];
  switch (layout) {
    case L::kNCHW:
      return ((n * channels + c) * height + h) * width + w;
    case L::kNHWC:
      return ((n * height + h) * width + w) * channels + c;
    case L::kNCHW16c:
      return (((n * (channels / 16) + c / 16) * height + h) * width + w) * 16 + c % 16;
  }
  return -1;
}

ReferenceFn TransformReference(const Shape& nchw, L from, L to) {
  return [=](const auto& inputs, const auto&) {
    std::vector<double> out(static_cast<size_t>(nchw.size()));
    for (int64_t n = 0; n < nchw[0]; ++n) {
      for (int64_t c = 0; c < nchw[1]; ++c) {
        for (int64_t h = 0; h < nchw[2]; ++h) {
          for (int64_t w = 0; w < nchw[3]; ++w) {
            out[OffsetIn(to, nchw, n, c, h, w)] = inputs[0][OffsetIn(from, nchw, n, c, h, w)];
          }
        }
      }
    }
    return std::vector<std::vector<double>>{out};
  };
}

OpCase TransformCase(const Shape& nchw, L from, L to) {
  return {"layout_transform",
          {{"src_layout", ActivationLayoutName(from)}, {"dst_layout", ActivationLayoutName(to)}},
          {LayoutShape(nchw, from)}};
}

// Every pair, including equal layouts (a copy), on shapes past the 32 x 32 tiles with ragged
// edges, one block and several.
TEST(LayoutTransformTest, EveryPairMatchesTheReference) {
  for (const Shape& nchw : {Shape{2, 16, 5, 7}, Shape{1, 48, 33, 35}, Shape{3, 32, 1, 1}}) {
    for (L from : kActivationLayouts) {
      for (L to : kActivationLayouts) {
        SCOPED_TRACE(nchw.ToString() + " " + ActivationLayoutName(from) + " -> " +
                     ActivationLayoutName(to));
        const OpCase test_case = TransformCase(nchw, from, to);
        EXPECT_EQ(InferOutputShapes(test_case)[0], LayoutShape(nchw, to));
        CheckForwardAgainstReference(test_case, TransformReference(nchw, from, to), 1e-7);
      }
    }
  }
}

TEST(LayoutTransformTest, Gradients) {
  for (L from : kActivationLayouts) {
    for (L to : kActivationLayouts) {
      CheckGradients(TransformCase(Shape{1, 32, 3, 4}, from, to));
    }
  }
}

// The kernel moves elements of any size: there and back gives the input, bit for bit.
TEST(LayoutTransformTest, KernelRoundTripsEveryElementSize) {
  const Shape nchw{2, 32, 9, 11};
  for (DType dtype : {DType::kUInt8, DType::kFloat16, DType::kFloat32, DType::kFloat64}) {
    const size_t bytes = static_cast<size_t>(nchw.size()) * DTypeSize(dtype);
    std::vector<uint8_t> in(bytes), there(bytes), back(bytes);
    std::iota(in.begin(), in.end(), uint8_t{7});
    for (L from : kActivationLayouts) {
      for (L to : kActivationLayouts) {
        cpu::TransformLayout(in.data(), nchw, from, to, there.data(), dtype);
        cpu::TransformLayout(there.data(), nchw, to, from, back.data(), dtype);
        EXPECT_EQ(back, in) << DTypeName(dtype) << " " << ActivationLayoutName(from) << " -> "
                            << ActivationLayoutName(to);
      }
    }
  }
}

TEST(LayoutTransformTest, ShapeErrorsNameTheNodeAndTheShape) {
  // Channels that NCHW16c cannot hold.
  ExpectShapeError(
      {"layout_transform", {{"src_layout", "NCHW"}, {"dst_layout", "NCHW16c"}}, {{1, 24, 3, 3}}},
      {"dst_layout=NCHW16c", "(1,24,3,3)", "24 channels"});
  // A rank or a last extent that does not fit src_layout.
  ExpectShapeError(
      {"layout_transform", {{"src_layout", "NCHW16c"}, {"dst_layout", "NCHW"}}, {{1, 2, 3, 3, 8}}},
      {"(1,2,3,3,8)", "src_layout=NCHW16c", "(N, C/16, H, W, 16)"});
  ExpectShapeError(
      {"layout_transform", {{"src_layout", "NHWC"}, {"dst_layout", "NCHW"}}, {{1, 2, 3}}},
      {"(1,2,3)", "src_layout=NHWC"});
}

TEST(ActivationLayoutTest, ShapesAndAxes) {
  const Shape nchw{2, 32, 5, 7};
  EXPECT_EQ(LayoutShape(nchw, L::kNHWC), (Shape{2, 5, 7, 32}));
  EXPECT_EQ(LayoutShape(nchw, L::kNCHW16c), (Shape{2, 2, 5, 7, 16}));
  for (L from : kActivationLayouts) {
    EXPECT_EQ(NchwShape(LayoutShape(nchw, from), from), nchw);
    for (L to : kActivationLayouts) {
      EXPECT_EQ(PermuteShape(LayoutShape(nchw, from), from, to), LayoutShape(nchw, to));
      for (int axis = 0; axis < 4; ++axis) {  // there and back
        EXPECT_EQ(PermutedAxis(PermutedAxis(axis, from, to), to, from), axis);
      }
    }
    EXPECT_EQ(ParseActivationLayout(ActivationLayoutName(from)), from);
  }
  EXPECT_EQ(PermutedAxis(1, L::kNCHW, L::kNHWC), 3);
  EXPECT_EQ(PermutedAxis(1, L::kNCHW, L::kNCHW16c), 1);  // the channel blocks
  EXPECT_EQ(PermutedAxis(3, L::kNHWC, L::kNCHW16c), 1);
  EXPECT_FALSE(ParseActivationLayout("NCHW8c").has_value());
  EXPECT_TRUE(LayoutHoldsChannels(L::kNCHW16c, 48));
  EXPECT_FALSE(LayoutHoldsChannels(L::kNCHW16c, 24));
  EXPECT_TRUE(LayoutHoldsChannels(L::kNHWC, 24));
  try {
    LayoutShape(Shape{1, 24, 3, 3}, L::kNCHW16c);
    FAIL() << "24 channels laid out in blocks of 16";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("24 channels of (1,24,3,3)"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(NchwShape(Shape{1, 2, 3, 3, 8}, L::kNCHW16c), Error);
  EXPECT_THROW(LayoutPermutation(L::kNCHW, L::kNCHW16c), Error);
}

}  // namespace
}  // namespace mxlite::testing
