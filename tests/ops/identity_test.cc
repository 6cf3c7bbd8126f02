#include <gtest/gtest.h>

#include "tests/ops/kernel_calls.h"
#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

TEST(IdentityTest, GradientReferenceAndShape) {
  OpCase test_case{"identity", {}, {{3, 1, 4}}};
  EXPECT_EQ(InferOutputShapes(test_case)[0], (Shape{3, 1, 4}));
  CheckGradients(test_case);
  CheckForwardAgainstReference(test_case, [](const auto& inputs, const auto&) {
    return std::vector<std::vector<double>>{inputs[0]};
  });
  EXPECT_EQ(InferOutputShapes({"identity", {}, {Shape{}}})[0], Shape{});
}

TEST(IdentityTest, LargeCopyAndInPlace) {
  OpCase test_case{"identity", {}, {{5, 70001}}};  // several parallel chunks, odd tail
  std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat64);
  EXPECT_EQ(RunForward(test_case, inputs).outputs[0].Values(), inputs[0].Values());
  EXPECT_EQ(RunForwardInPlace(test_case, inputs, 0), inputs[0].Values());
}

MXLITE_GPU_CASES(Identity) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  add({"identity", {}, {{5, 3}}});
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
