#include <gtest/gtest.h>

#include <cstring>

#include "ops/cpu/transpose.h"
#include "tests/ops/op_harness.h"
#include "tests/ops/reference.h"

namespace mxlite::testing {
namespace {

std::string AxesText(const std::vector<int>& axes) {
  std::vector<int64_t> values(axes.begin(), axes.end());
  return FormatIntTuple(values);
}

// out[c_0, ..., c_k] = in[c with c_i at input axis axes[i]].
ReferenceFn TransposeReference(const std::vector<int>& axes) {
  return [axes](const auto& inputs, const auto& shapes) {
    const Shape& in = shapes[0];
    std::vector<int64_t> out_dims;
    for (int axis : axes) out_dims.push_back(in[axis]);
    const Shape out(out_dims);
    std::vector<double> result(out.size());
    for (int64_t i = 0; i < out.size(); ++i) {
      const std::vector<int64_t> coords = Unravel(i, out);
      std::vector<int64_t> source(in.ndim());
      for (size_t k = 0; k < axes.size(); ++k) source[axes[k]] = coords[k];
      result[i] = inputs[0][Ravel(source, in)];
    }
    return std::vector<std::vector<double>>{result};
  };
}

struct TransposeCase {
  Shape input;
  std::vector<int> axes;
};

class TransposeTest : public ::testing::TestWithParam<TransposeCase> {};

TEST_P(TransposeTest, GradientAndReference) {
  const TransposeCase& c = GetParam();
  OpCase test_case{"transpose", {{"axes", AxesText(c.axes)}}, {c.input}};
  CheckGradients(test_case);
  CheckForwardAgainstReference(test_case, TransposeReference(c.axes));
}

INSTANTIATE_TEST_SUITE_P(
    RanksOneToSix, TransposeTest,
    ::testing::Values(TransposeCase{{5}, {0}}, TransposeCase{{3, 4}, {1, 0}},
                      TransposeCase{{2, 3, 4}, {1, 2, 0}}, TransposeCase{{2, 3, 4}, {2, 0, 1}},
                      TransposeCase{{2, 3, 4}, {0, 2, 1}},
                      TransposeCase{{2, 3, 4, 5}, {0, 2, 3, 1}},
                      TransposeCase{{2, 3, 4, 5}, {0, 3, 1, 2}},
                      TransposeCase{{2, 1, 3, 1}, {3, 2, 1, 0}},  // size-1 dims
                      TransposeCase{{2, 3, 1, 2, 3}, {4, 0, 3, 1, 2}},
                      TransposeCase{{2, 2, 3, 1, 2, 3}, {5, 1, 4, 0, 2, 3}}));

// Layout transforms at sizes past the 32 x 32 tiles, with ragged edges, both directions.
TEST(TransposeTest, NchwNhwcRoundTripsAtLargerSizes) {
  for (const std::vector<int>& axes :
       {std::vector<int>{0, 2, 3, 1}, std::vector<int>{0, 3, 1, 2}}) {
    OpCase test_case{"transpose", {{"axes", AxesText(axes)}}, {{2, 45, 13, 37}}};
    CheckForwardAgainstReference(test_case, TransposeReference(axes));
  }
  // Few channels (an image's): output rows shorter than a block, interleaved in bands of 1024
  // pixels (1155 here: a ragged second band).
  for (int64_t channels = 2; channels < 8; ++channels) {
    OpCase test_case{"transpose", {{"axes", "(0,2,3,1)"}}, {{2, channels, 33, 35}}};
    SCOPED_TRACE("channels " + std::to_string(channels));
    CheckForwardAgainstReference(test_case, TransposeReference({0, 2, 3, 1}));
  }
  OpCase matrix{"transpose", {}, {{300, 257}}};
  CheckForwardAgainstReference(matrix, TransposeReference({1, 0}));
}

TEST(TransposeTest, ShapesAndAttributes) {
  EXPECT_EQ(InferOutputShapes({"transpose", {}, {{2, 3, 4}}})[0], (Shape{4, 3, 2}));  // reverse
  EXPECT_EQ(InferOutputShapes({"transpose", {{"axes", "(0,-1,1)"}}, {{2, 3, 4}}})[0],
            (Shape{2, 4, 3}));
  EXPECT_EQ(InferOutputShapes({"transpose", {}, {Shape{}}})[0], Shape{});
  ExpectShapeError({"transpose", {{"axes", "(0,0,1)"}}, {{2, 3, 4}}},
                   {"(0,0,1)", "not a permutation", "(2,3,4)"});
  ExpectShapeError({"transpose", {{"axes", "(1,0)"}}, {{2, 3, 4}}}, {"(1,0)", "3 dims"});
  ExpectShapeError({"transpose", {{"axes", "(0,1,3)"}}, {{2, 3, 4}}}, {"not a permutation"});
}

TEST(TransposeKernelTest, MovesElementsOfAnySize) {
  const Shape shape{3, 5, 7};
  const std::vector<int> axes{2, 0, 1};
  for (DType dtype : {DType::kUInt8, DType::kFloat16, DType::kInt64}) {
    const size_t element = DTypeSize(dtype);
    std::vector<uint8_t> in(shape.size() * element), out(in.size());
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 7 + 3);
    cpu::TransposeAxes(in.data(), shape, axes, out.data(), dtype);
    const Shape out_shape{7, 3, 5};
    for (int64_t i = 0; i < out_shape.size(); ++i) {
      const std::vector<int64_t> c = Unravel(i, out_shape);
      const int64_t source = Ravel({c[1], c[2], c[0]}, shape);
      ASSERT_EQ(0, std::memcmp(&out[i * element], &in[source * element], element))
          << DTypeName(dtype) << " element " << i;
    }
  }
}

MXLITE_GPU_CASES(Transpose) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  add({"transpose", {}, {{2, 3, 4}}});
  add({"transpose", {{"axes", "(0,2,3,1)"}}, {{2, 3, 4, 5}}});
  // The innermost axis kept: strided copies, 16 bytes at a time where rows allow (attention's
  // head splits; Swin's window partition), element by element where they do not.
  add({"transpose", {{"axes", "(1,0,2)"}}, {{5, 6, 16}}});
  add({"transpose", {{"axes", "(0,2,1,3)"}}, {{2, 7, 3, 8}}});
  add({"transpose", {{"axes", "(2,0,3,1,4)"}}, {{2, 3, 4, 5, 4}}});
  add({"transpose", {{"axes", "(0,2,1,3)"}}, {{2, 3, 4, 5}}});
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
