#include <gtest/gtest.h>

#include <algorithm>

#include "tests/ops/op_harness.h"
#include "tests/ops/reference.h"

namespace mxlite::testing {
namespace {

// numpy.pad, one output element at a time: reflect bounces off the borders until inside, wrap
// goes round the axis.
ReferenceFn PadReference(const std::string& mode, const std::vector<int64_t>& pads, double value) {
  return [=](const auto& inputs, const auto& shapes) {
    const Shape& in = shapes[0];
    std::vector<int64_t> out_dims = in.to_vector();
    for (int axis = 0; axis < in.ndim(); ++axis)
      out_dims[axis] += pads[2 * axis] + pads[2 * axis + 1];
    const Shape out(out_dims);
    std::vector<double> result(out.size());
    for (int64_t i = 0; i < out.size(); ++i) {
      std::vector<int64_t> coords = Unravel(i, out);
      bool outside = false;
      for (int axis = 0; axis < in.ndim(); ++axis) {
        int64_t c = coords[axis] - pads[2 * axis];
        const int64_t n = in[axis];
        if (mode == "edge") c = std::clamp<int64_t>(c, 0, n - 1);
        while (mode == "reflect" && (c < 0 || c >= n)) c = c < 0 ? -c : 2 * (n - 1) - c;
        while (mode == "wrap" && (c < 0 || c >= n)) c += c < 0 ? n : -n;
        outside = outside || c < 0 || c >= n;
        coords[axis] = c;
      }
      result[i] = outside ? value : inputs[0][Ravel(coords, in)];
    }
    return std::vector<std::vector<double>>{result};
  };
}

struct PadCase {
  std::string mode;
  Shape input;
  std::vector<int64_t> pads;
};

class PadTest : public ::testing::TestWithParam<PadCase> {};

TEST_P(PadTest, GradientAndReference) {
  const PadCase& c = GetParam();
  OpCase test_case{
      "Pad",
      {{"mode", c.mode}, {"pad_width", FormatIntTuple(c.pads)}, {"constant_value", "0.75"}},
      {c.input}};
  CheckGradients(test_case);
  CheckForwardAgainstReference(test_case, PadReference(c.mode, c.pads, 0.75));
}

INSTANTIATE_TEST_SUITE_P(
    ModesAndRanks, PadTest,
    ::testing::Values(PadCase{"constant", {5}, {2, 3}}, PadCase{"edge", {5}, {2, 3}},
                      PadCase{"reflect", {5}, {4, 3}}, PadCase{"edge", {1}, {3, 2}},
                      PadCase{"constant", {2, 3, 4, 5}, {0, 0, 0, 0, 1, 2, 2, 1}},
                      PadCase{"edge", {2, 3, 4, 5}, {0, 0, 0, 0, 1, 2, 2, 1}},
                      PadCase{"reflect", {2, 3, 4, 5}, {0, 0, 0, 0, 3, 2, 2, 4}},
                      PadCase{"reflect", {2, 3, 4, 5}, {1, 1, 2, 0, 1, 3, 0, 2}},  // every axis
                      PadCase{"edge", {3, 2, 4}, {2, 1, 1, 3, 0, 0}},
                      PadCase{"constant", {2, 1, 2, 1, 2, 1}, {1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 0, 1}},
                      PadCase{"reflect", {3, 4}, {0, 0, 0, 0}}, PadCase{"wrap", {5}, {2, 3}},
                      PadCase{"wrap", {2}, {5, 7}},  // past the axis
                      PadCase{"wrap", {2, 3, 4, 5}, {0, 0, 1, 2, 3, 2, 2, 9}}));

// Integer data moves as it is (the constant truncated toward zero); no gradient.
TEST(PadTest, IntegerDataInEveryMode) {
  for (DType dtype : {DType::kInt32, DType::kInt64, DType::kUInt8}) {
    for (const std::string mode : {"constant", "edge", "reflect", "wrap"}) {
      const std::vector<int64_t> pads = {1, 2, 0, 3};
      OpCase test_case{
          "Pad",
          {{"mode", mode}, {"pad_width", FormatIntTuple(pads)}, {"constant_value", "7.9"}},
          {{3, 4}}};
      std::vector<HostTensor> inputs = MakeInputs(test_case, dtype);
      for (int64_t i = 0; i < inputs[0].size(); ++i) inputs[0].Set(i, 10 + 3 * i);
      const OpRun run = RunForward(test_case, inputs);
      ASSERT_EQ(run.outputs[0].dtype(), dtype);
      const auto want = PadReference(mode, pads, 7.0)({inputs[0].Values()}, {Shape{3, 4}});
      EXPECT_EQ(run.outputs[0].Values(), want[0]) << mode << " " << DTypeName(dtype);
    }
  }
}

// A constant outside an integer dtype's range is clamped to it (the CPU and GPU agree).
TEST(PadTest, IntegerConstantsClampToTheDType) {
  const struct {
    DType dtype;
    const char* value;
    double want;
  } cases[] = {{DType::kUInt8, "-1", 0},
               {DType::kUInt8, "300.7", 255},
               {DType::kInt32, "3e9", 2147483647},
               {DType::kInt32, "-7.9", -7}};
  for (const auto& c : cases) {
    OpCase test_case{"Pad", {{"pad_width", "(1,0)"}, {"constant_value", c.value}}, {{2}}};
    const OpRun run = RunForward(test_case, MakeInputs(test_case, c.dtype));
    EXPECT_EQ(run.outputs[0].Get(0), c.want) << DTypeName(c.dtype) << " " << c.value;
  }
}

TEST(PadTest, LargerInputsRunInParallelRows) {
  for (const std::string mode : {"constant", "edge", "reflect", "wrap"}) {
    const std::vector<int64_t> pads{0, 0, 1, 1, 3, 3, 2, 5};
    OpCase test_case{
        "Pad", {{"mode", mode}, {"pad_width", FormatIntTuple(pads)}}, {{4, 8, 40, 50}}};
    CheckForwardAgainstReference(test_case, PadReference(mode, pads, 0.0));
  }
}

TEST(PadTest, ShapesAndErrors) {
  EXPECT_EQ(InferOutputShapes({"Pad", {{"pad_width", "(0,0,0,0,1,1,2,2)"}}, {{1, 3, 4, 5}}})[0],
            (Shape{1, 3, 6, 9}));
  EXPECT_EQ(InferOutputShapes({"Pad", {{"pad_width", "(2,0)"}}, {{0}}})[0], (Shape{2}));
  ExpectShapeError({"Pad", {{"mode", "reflect"}, {"pad_width", "(0,3)"}}, {{3}}},
                   {"(0,3)", "(3)", "smaller than its extent"});
  ExpectShapeError({"Pad", {{"mode", "reflect"}, {"pad_width", "(1,0)"}}, {{1}}}, {"(1)"});
  ExpectShapeError({"Pad", {{"pad_width", "(1,1)"}}, {{2, 3}}}, {"(1,1)", "(2,3)", "4 in all"});
  ExpectShapeError({"Pad", {{"pad_width", "(1,-1)"}}, {{3}}}, {"negative"});
  ExpectShapeError({"Pad", {{"mode", "edge"}, {"pad_width", "(1,0)"}}, {{0}}}, {"empty axis"});
  ExpectShapeError({"Pad", {{"pad_width", "()"}}, {Shape{}}}, {"at least 1 dim"});
}

MXLITE_GPU_CASES(Pad) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  add({"Pad",
       {{"mode", "constant"}, {"pad_width", "(0,0,0,0,1,2,2,1)"}, {"constant_value", "0.5"}},
       {{2, 2, 3, 4}}});
  add({"Pad", {{"mode", "edge"}, {"pad_width", "(0,0,1,1,3,2)"}}, {{2, 3, 4}}});
  add({"Pad", {{"mode", "reflect"}, {"pad_width", "(1,2,2,1)"}}, {{4, 5}}});
  add({"Pad", {{"mode", "wrap"}, {"pad_width", "(3,2,2,6)"}}, {{2, 5}}});
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
