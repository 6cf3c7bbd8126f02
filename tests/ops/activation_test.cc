#include <gtest/gtest.h>

#include <cmath>

#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

// Keeps inputs away from the kink at 0, where finite differences of relu/leaky are meaningless.
void AwayFromZero(HostTensor& tensor, std::mt19937_64& random) {
  std::uniform_real_distribution<double> magnitude(0.1, 1.0);
  for (int64_t i = 0; i < tensor.size(); ++i) {
    tensor.Set(i, (random() % 2 ? 1 : -1) * magnitude(random));
  }
}

double Apply(const std::string& type, double x) {
  if (type == "relu") return std::max(x, 0.0);
  if (type == "sigmoid") return 1 / (1 + std::exp(-x));
  if (type == "tanh") return std::tanh(x);
  if (type == "softrelu") return std::log1p(std::exp(x));
  return x / (1 + std::abs(x));
}

class ActivationTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ActivationTest, GradientAndReference) {
  const std::string type = GetParam();
  OpCase test_case{"Activation", {{"act_type", type}}, {{2, 3, 4, 5}}};
  test_case.init["data"] = AwayFromZero;
  CheckGradients(test_case);
  CheckForwardAgainstReference(test_case, [&](const auto& inputs, const auto&) {
    std::vector<double> out;
    for (double x : inputs[0]) out.push_back(Apply(type, x));
    return std::vector<std::vector<double>>{out};
  });
  EXPECT_EQ(InferOutputShapes(test_case)[0], (Shape{2, 3, 4, 5}));
}

INSTANTIATE_TEST_SUITE_P(AllTypes, ActivationTest,
                         ::testing::Values("relu", "sigmoid", "tanh", "softrelu", "softsign"));

TEST(ActivationTest, LargeInputsRunInParallelChunks) {
  OpCase test_case{"Activation", {{"act_type", "softrelu"}}, {{3, 100000}}};
  CheckForwardAgainstReference(test_case, [](const auto& inputs, const auto&) {
    std::vector<double> out;
    for (double x : inputs[0]) out.push_back(std::log1p(std::exp(x)));
    return std::vector<std::vector<double>>{out};
  });
}

TEST(ActivationTest, UnknownTypeAndAttributeAreClearErrors) {
  OpCase bad_type{"Activation", {{"act_type", "swish"}}, {{2, 2}}};
  try {
    InferOutputShapes(bad_type);
    FAIL();
  } catch (const Error& error) {
    std::string message = error.what();
    EXPECT_NE(message.find("act_type='swish'"), std::string::npos) << message;
    EXPECT_NE(message.find("relu, sigmoid, tanh, softrelu, softsign"), std::string::npos);
  }
  OpCase bad_attr{"Activation", {{"act_type", "relu"}, {"slope", "2"}}, {{2, 2}}};
  EXPECT_THROW(InferOutputShapes(bad_attr), Error);
}

class LeakyReLUTest : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(LeakyReLUTest, GradientAndReference) {
  const auto [type, slope] = GetParam();
  OpCase test_case{"LeakyReLU", {{"act_type", type}, {"slope", slope}}, {{4, 7}}};
  test_case.init["data"] = AwayFromZero;
  CheckGradients(test_case);
  const double a = std::stod(slope);
  CheckForwardAgainstReference(test_case, [&](const auto& inputs, const auto&) {
    std::vector<double> out;
    for (double x : inputs[0]) {
      out.push_back(x > 0 ? x : (type == "elu" ? a * (std::exp(x) - 1) : a * x));
    }
    return std::vector<std::vector<double>>{out};
  });
}

INSTANTIATE_TEST_SUITE_P(Variants, LeakyReLUTest,
                         ::testing::Values(std::make_pair("leaky", "0.25"),
                                           std::make_pair("leaky", "-0.5"),
                                           std::make_pair("elu", "1.0")));

MXLITE_GPU_CASES(Activations) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  // Activations.
  for (const char* type : {"relu", "sigmoid", "tanh", "softrelu", "softsign"}) {
    add({"Activation", {{"act_type", type}}, {{2, 3, 4, 5}}});
  }
  add({"LeakyReLU", {}, {{2, 3, 4, 5}}});
  add({"LeakyReLU", {{"act_type", "elu"}, {"slope", "0.7"}}, {{3, 7}}});
  add({"LeakyReLU", {{"slope", "-0.3"}}, {{3, 7}}});
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
