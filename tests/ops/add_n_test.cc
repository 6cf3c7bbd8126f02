#include <gtest/gtest.h>

#include "tests/ops/kernel_calls.h"
#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

OpCase AddNCase(int count, const Shape& shape) {
  return {"add_n", {{"num_args", std::to_string(count)}}, std::vector<Shape>(count, shape)};
}

ReferenceFn SumReference() {
  return [](const auto& inputs, const auto&) {
    std::vector<double> sum(inputs[0].size(), 0.0);
    for (const auto& input : inputs) {
      for (size_t i = 0; i < sum.size(); ++i) sum[i] += input[i];
    }
    return std::vector<std::vector<double>>{sum};
  };
}

TEST(AddNTest, GradientAndReference) {
  for (int count : {1, 2, 4}) {
    OpCase test_case = AddNCase(count, {3, 5});
    EXPECT_EQ(InferOutputShapes(test_case)[0], (Shape{3, 5}));
    CheckGradients(test_case);
    CheckForwardAgainstReference(test_case, SumReference());
  }
  CheckForwardAgainstReference(AddNCase(3, {4, 30001}), SumReference());  // parallel chunks
}

TEST(AddNTest, MismatchedShapesNameBoth) {
  OpCase test_case{"add_n", {{"num_args", "3"}}, {{2, 3}, {2, 3}, {3, 2}}};
  ExpectShapeError(test_case, {"(2,3)", "(3,2)", "arg2"});
}

TEST(AddNTest, AccumulatesInPlaceIntoTheFirstInput) {
  OpCase test_case = AddNCase(3, {7, 3});
  std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat64);
  const std::vector<double> want = RunForward(test_case, inputs).outputs[0].Values();
  EXPECT_EQ(RunForwardInPlace(test_case, inputs, 0), want);
}

MXLITE_GPU_CASES(AddN) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  add({"add_n", {{"num_args", "1"}}, {{3, 4}}});
  add({"add_n", {{"num_args", "3"}}, {{3, 4}, {3, 4}, {3, 4}}});
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
