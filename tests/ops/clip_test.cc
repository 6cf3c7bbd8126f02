#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "tests/ops/kernel_calls.h"
#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

// Values in [-1, 1] kept 0.05 away from the bounds +-0.5, where clip has kinks.
void AwayFromBounds(HostTensor& tensor, std::mt19937_64& random) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (int64_t i = 0; i < tensor.size(); ++i) {
    double x = uniform(random);
    while (std::abs(std::abs(x) - 0.5) < 0.05) x = uniform(random);
    tensor.Set(i, x);
  }
}

TEST(ClipTest, GradientAndReference) {
  OpCase test_case{"clip", {{"a_min", "-0.5"}, {"a_max", "0.5"}}, {{4, 5, 3}}};
  test_case.init["data"] = AwayFromBounds;
  EXPECT_EQ(InferOutputShapes(test_case)[0], (Shape{4, 5, 3}));
  CheckGradients(test_case);
  CheckForwardAgainstReference(test_case, [](const auto& inputs, const auto&) {
    std::vector<double> out;
    for (double x : inputs[0]) out.push_back(std::min(std::max(x, -0.5), 0.5));
    return std::vector<std::vector<double>>{out};
  });
}

TEST(ClipTest, GradientPassesAtTheBoundsAndStopsOutside) {
  OpCase test_case{"clip", {{"a_min", "0"}, {"a_max", "6"}}, {{6}}};
  HostTensor data(Shape{6}, DType::kFloat32);
  const std::vector<double> values{-1, 0, 3, 6, 7, 6.0001};
  for (int64_t i = 0; i < 6; ++i) data.Set(i, values[i]);
  HostTensor ones(Shape{6}, DType::kFloat32);
  for (int64_t i = 0; i < 6; ++i) ones.Set(i, 1.0);
  EXPECT_EQ(RunForward(test_case, {data}).outputs[0].Values(),
            (std::vector<double>{0, 0, 3, 6, 6, 6}));
  std::vector<HostTensor> grads = RunBackwardRequested(test_case, {data}, ones, {true});
  EXPECT_EQ(grads[0].Values(), (std::vector<double>{0, 1, 1, 1, 0, 0}));
}

TEST(ClipTest, BoundsDefaultToInfinity) {
  OpCase upper_only{"clip", {{"a_max", "0.25"}}, {{50}}};
  CheckForwardAgainstReference(upper_only, [](const auto& inputs, const auto&) {
    std::vector<double> out;
    for (double x : inputs[0]) out.push_back(std::min(x, 0.25));
    return std::vector<std::vector<double>>{out};
  });
  OpCase neither{"clip", {}, {{3, 40000}}};  // parallel chunks; the identity
  CheckForwardAgainstReference(neither, [](const auto& inputs, const auto&) {
    return std::vector<std::vector<double>>{inputs[0]};
  });
}

MXLITE_GPU_CASES(Clip) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  add({"clip", {{"a_min", "-0.5"}, {"a_max", "0.3"}}, {{4, 5}}});
  add({"clip", {{"a_max", "0.1"}}, {{4, 5}}});
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
