#include <gtest/gtest.h>

#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

OpCase Fc(Shape data, int64_t hidden, bool flatten, bool no_bias) {
  return OpCase{"FullyConnected",
                {{"num_hidden", std::to_string(hidden)},
                 {"flatten", flatten ? "true" : "false"},
                 {"no_bias", no_bias ? "true" : "false"}},
                {data}};
}

// y[r, h] = sum_k x[r, k] * w[h, k] + b[h], with x read as rows of the weight's width.
ReferenceFn FullyConnectedReference(bool no_bias) {
  return
      [no_bias](const std::vector<std::vector<double>>& inputs, const std::vector<Shape>& shapes) {
        const int64_t hidden = shapes[1][0], inner = shapes[1][1];
        const int64_t rows = shapes[0].size() / inner;
        std::vector<double> y(static_cast<size_t>(rows * hidden));
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t h = 0; h < hidden; ++h) {
            double sum = no_bias ? 0.0 : inputs[2][h];
            for (int64_t k = 0; k < inner; ++k)
              sum += inputs[0][r * inner + k] * inputs[1][h * inner + k];
            y[r * hidden + h] = sum;
          }
        }
        return std::vector<std::vector<double>>{y};
      };
}

struct FcSpec {
  Shape data;
  int64_t hidden;
  bool flatten, no_bias;
};

void PrintTo(const FcSpec& spec, std::ostream* out) {
  *out << Fc(spec.data, spec.hidden, spec.flatten, spec.no_bias).Describe();
}

class FullyConnectedTest : public ::testing::TestWithParam<FcSpec> {};

TEST_P(FullyConnectedTest, GradientsAndReference) {
  const FcSpec& spec = GetParam();
  OpCase test_case = Fc(spec.data, spec.hidden, spec.flatten, spec.no_bias);
  CheckForwardAgainstReference(test_case, FullyConnectedReference(spec.no_bias));
  CheckGradients(test_case);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, FullyConnectedTest,
    ::testing::Values(FcSpec{{3, 2, 3, 2}, 5, true, false}, FcSpec{{4, 7}, 3, true, true},
                      FcSpec{{1, 5}, 1, true, false}, FcSpec{{4}, 3, true, false},
                      FcSpec{{2, 3, 4}, 5, false, false}, FcSpec{{6}, 2, false, true}));

TEST(FullyConnectedLargeTest, ForwardAgainstReference) {
  CheckForwardAgainstReference(Fc({70, 10, 31}, 130, true, false), FullyConnectedReference(false));
  CheckForwardAgainstReference(Fc({3, 50, 97}, 64, false, true), FullyConnectedReference(true));
}

TEST(FullyConnectedShapeTest, ShapesAreInferred) {
  EXPECT_EQ(InferOutputShapes(Fc({8, 3, 4, 4}, 10, true, false))[0], (Shape{8, 10}));
  EXPECT_EQ(InferOutputShapes(Fc({8, 3, 4, 4}, 10, false, false))[0], (Shape{8, 3, 4, 10}));
  std::vector<HostTensor> inputs = MakeInputs(Fc({8, 3, 4, 4}, 10, true, false), DType::kFloat32);
  EXPECT_EQ(inputs[1].shape(), (Shape{10, 48}));
  EXPECT_EQ(inputs[2].shape(), (Shape{10}));
  inputs = MakeInputs(Fc({8, 3, 4, 4}, 10, false, true), DType::kFloat32);
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[1].shape(), (Shape{10, 4}));

  const OpDef& op = OpRegistry::Global().Get("FullyConnected");
  const Attributes attrs = ParseOpAttributes(op, {{"num_hidden", "3"}}, "fc");
  EXPECT_TRUE(attrs.GetBool("flatten"));
  EXPECT_FALSE(attrs.GetBool("no_bias"));
  EXPECT_EQ(InputRoles(op, attrs), (std::vector<InputRole>{InputRole::kData, InputRole::kParameter,
                                                           InputRole::kParameter}));
  EXPECT_EQ(BackwardDependenciesOf(op, attrs).inputs, (std::vector<bool>{true, true, false}));
}

TEST(FullyConnectedShapeTest, ErrorsNameBothShapes) {
  OpCase wrong{"FullyConnected", {{"num_hidden", "10"}}, {{8, 3, 4}, {10, 13}}};
  ExpectShapeError(wrong, {"weight", "(10,13)", "(10,12)"});
  OpCase wrong_bias{"FullyConnected", {{"num_hidden", "10"}}, {{8, 12}, {10, 12}, {12}}};
  ExpectShapeError(wrong_bias, {"bias", "(12)", "(10)"});
  ExpectShapeError(Fc(Shape{}, 3, true, false), {"()"});
  OpCase zero_hidden = Fc({2, 3}, 0, true, false);
  EXPECT_THROW(InferOutputShapes(zero_hidden), Error);
}

MXLITE_GPU_CASES(FullyConnected) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  add({"FullyConnected", {{"num_hidden", "5"}}, {{4, 3, 2, 2}}});
  add({"FullyConnected",
       {{"num_hidden", "3"}, {"flatten", "false"}, {"no_bias", "true"}},
       {{2, 3, 6}}});
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
