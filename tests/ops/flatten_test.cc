#include <gtest/gtest.h>

#include "tests/ops/kernel_calls.h"
#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

ReferenceFn SameValues() {
  return
      [](const auto& inputs, const auto&) { return std::vector<std::vector<double>>{inputs[0]}; };
}

TEST(FlattenTest, GradientAndReference) {
  OpCase test_case{"Flatten", {}, {{2, 3, 4}}};
  EXPECT_EQ(InferOutputShapes(test_case)[0], (Shape{2, 12}));
  CheckGradients(test_case);
  CheckForwardAgainstReference(test_case, SameValues());
}

TEST(FlattenTest, Shapes) {
  EXPECT_EQ(InferOutputShapes({"Flatten", {}, {{2, 3, 4, 5}}})[0], (Shape{2, 60}));
  EXPECT_EQ(InferOutputShapes({"Flatten", {}, {{7}}})[0], (Shape{7, 1}));  // as MXNet
  EXPECT_EQ(InferOutputShapes({"Flatten", {}, {{4, 1, 1}}})[0], (Shape{4, 1}));
  EXPECT_EQ(InferOutputShapes({"Flatten", {{"axis", "0"}}, {{2, 3}}})[0], (Shape{1, 6}));
  EXPECT_EQ(InferOutputShapes({"Flatten", {{"axis", "2"}}, {{2, 3, 4}}})[0], (Shape{6, 4}));
  EXPECT_EQ(InferOutputShapes({"Flatten", {{"axis", "-1"}}, {{2, 3, 4}}})[0], (Shape{6, 4}));
  EXPECT_EQ(InferOutputShapes({"Flatten", {{"axis", "3"}}, {{2, 3, 4}}})[0], (Shape{24, 1}));
  EXPECT_EQ(InferOutputShapes({"Flatten", {}, {{0, 3}}})[0], (Shape{0, 3}));
  ExpectShapeError({"Flatten", {}, {Shape{}}}, {"()", "out of range"});
  ExpectShapeError({"Flatten", {{"axis", "4"}}, {{2, 3, 4}}}, {"(2,3,4)", "axis 4"});
}

TEST(FlattenTest, RunsInPlace) {
  OpCase test_case{"Flatten", {}, {{3, 5, 2}}};
  std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat32);
  EXPECT_EQ(RunForwardInPlace(test_case, inputs, 0), inputs[0].Values());
}

TEST(FlattenTest, BackwardReadsNoForwardTensor) {
  BackwardDependencies deps =
      BackwardDependenciesOf(OpRegistry::Global().Get("Flatten"), Attributes());
  EXPECT_EQ(deps.inputs, std::vector<bool>{false});
  EXPECT_EQ(deps.outputs, std::vector<bool>{false});
}

MXLITE_GPU_CASES(Flatten) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  add({"Flatten", {}, {{2, 3, 4}}});
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
