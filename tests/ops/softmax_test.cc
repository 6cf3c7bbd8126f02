#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/cpu/softmax.h"
#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

using Attrs = std::map<std::string, std::string>;

// Plain (log-)softmax of x / temperature along `axis`, stabilised by the row max.
ReferenceFn SoftmaxReference(int axis, double temperature, bool log) {
  return [=](const auto& inputs, const auto& shapes) {
    const Shape& shape = shapes[0];
    const int a = axis < 0 ? axis + shape.ndim() : axis;
    const int64_t outer = shape.size(0, a), length = shape[a],
                  inner = shape.size(a + 1, shape.ndim());
    const std::vector<double>& x = inputs[0];
    std::vector<double> y(x.size());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        auto at = [&](int64_t k) { return (o * length + k) * inner + i; };
        double max = -INFINITY, sum = 0;
        for (int64_t k = 0; k < length; ++k) max = std::max(max, x[at(k)] / temperature);
        for (int64_t k = 0; k < length; ++k) sum += std::exp(x[at(k)] / temperature - max);
        for (int64_t k = 0; k < length; ++k) {
          const double z = x[at(k)] / temperature - max;
          y[at(k)] = log ? z - std::log(sum) : std::exp(z) / sum;
        }
      }
    }
    return std::vector<std::vector<double>>{y};
  };
}

struct SoftmaxParam {
  std::string op;
  bool log;
};

class SoftmaxTest : public ::testing::TestWithParam<SoftmaxParam> {};

TEST_P(SoftmaxTest, EveryAxis) {
  const auto [op, log] = GetParam();
  for (int axis : {-1, 0, 1, 2}) {
    OpCase test_case{op, {{"axis", std::to_string(axis)}}, {{3, 4, 5}}};
    CheckGradients(test_case);
    CheckForwardAgainstReference(test_case, SoftmaxReference(axis, 1.0, log));
  }
  // The default axis is the last.
  CheckForwardAgainstReference({op, {}, {{2, 7}}}, SoftmaxReference(-1, 1.0, log));
}

TEST_P(SoftmaxTest, Temperature) {
  const auto [op, log] = GetParam();
  for (double temperature : {2.0, 0.5, -1.5}) {
    for (int axis : {-1, 1}) {
      OpCase test_case{
          op,
          {{"axis", std::to_string(axis)}, {"temperature", std::to_string(temperature)}},
          {{2, 6, 3}}};
      CheckGradients(test_case);
      CheckForwardAgainstReference(test_case, SoftmaxReference(axis, temperature, log));
    }
  }
}

TEST_P(SoftmaxTest, LargeInputsStayFinite) {
  const auto [op, log] = GetParam();
  for (int axis : {-1, 0}) {
    OpCase test_case{op, {{"axis", std::to_string(axis)}}, {{4, 6}}};
    test_case.init["data"] = [](HostTensor& tensor, std::mt19937_64& random) {
      std::uniform_real_distribution<double> uniform(-1, 1);
      // Multiples of 1/64, exact in float32, so both dtypes see the same inputs.
      for (int64_t i = 0; i < tensor.size(); ++i) {
        tensor.Set(i, 1000 + std::round(64 * 30 * uniform(random)) / 64);
      }
    };
    CheckForwardAgainstReference(test_case, SoftmaxReference(axis, 1.0, log), 1e-4);
    OpRun run = RunForward(test_case, MakeInputs(test_case, DType::kFloat32));
    for (double value : run.outputs[0].Values()) EXPECT_TRUE(std::isfinite(value)) << value;
  }
}

TEST_P(SoftmaxTest, AxisOutOfRangeIsAShapeError) {
  ExpectShapeError({GetParam().op, {{"axis", "3"}}, {{2, 3, 4}}}, {"axis 3", "(2,3,4)"});
  ExpectShapeError({GetParam().op, {{"temperature", "0"}}, {{2, 3}}}, {"temperature"});
}

INSTANTIATE_TEST_SUITE_P(AllNames, SoftmaxTest,
                         ::testing::Values(SoftmaxParam{"softmax", false},
                                           SoftmaxParam{"log_softmax", true},
                                           SoftmaxParam{"Softmax", false},
                                           SoftmaxParam{"LogSoftmax", true}),
                         [](const auto& info) { return info.param.op; });

TEST(SoftmaxTest, LargeInputsRunInParallel) {
  for (bool log : {false, true}) {
    const std::string op = log ? "log_softmax" : "softmax";
    CheckForwardAgainstReference({op, {{"axis", "1"}}, {{4, 200, 50}}},
                                 SoftmaxReference(1, 1.0, log));
    CheckForwardAgainstReference({op, {}, {{200, 400}}}, SoftmaxReference(-1, 1.0, log));
    OpCase big{op, {{"axis", "1"}}, {{12, 40, 70}}};  // several chunks of column blocks
    big.max_checked_elements = 10;
    CheckGradients(big);
  }
}

TEST(SoftmaxTest, RowsSumToOneAndBackwardReadsOnlyTheOutput) {
  OpCase test_case{"softmax", {{"axis", "0"}}, {{5, 3}}};
  OpRun run = RunForward(test_case, MakeInputs(test_case, DType::kFloat64));
  for (int64_t column = 0; column < 3; ++column) {
    double sum = 0;
    for (int64_t row = 0; row < 5; ++row) sum += run.outputs[0].Get(row * 3 + column);
    EXPECT_NEAR(sum, 1.0, 1e-12);
  }
  const OpDef& op = OpRegistry::Global().Get("softmax");
  BackwardDependencies deps = BackwardDependenciesOf(op, ParseOpAttributes(op, {}, "s"));
  EXPECT_EQ(deps.inputs, std::vector<bool>{false});
  EXPECT_EQ(deps.outputs, std::vector<bool>{true});
  EXPECT_EQ(op.inplace, (std::vector<std::pair<int, int>>{{0, 0}}));
}

MXLITE_GPU_CASES(Softmax) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  // softmax family.
  for (const char* name : {"softmax", "log_softmax", "Softmax", "LogSoftmax"}) {
    add({name, {}, {{3, 7}}});
    add({name, {{"axis", "1"}, {"temperature", "2"}}, {{2, 5, 3, 2}}});
  }
  add({"softmax", {{"axis", "0"}}, {{300, 2}}});
  return cases;
}

// Probabilities under the smallest normal float are 0, never denormals (each costs a microcode
// assist where it is computed and where it is read), along the last axis and along an inner one:
// e^-87 is normal but a quarter of it is not; a masked -100 is under the bound from the start.
TEST(SoftmaxTest, WritesNoDenormalProbabilities) {
  const std::vector<float> logits = {0.0f, 0.0f, 0.0f, 0.0f, -87.0f, -100.0f, -95.0f};
  const int64_t length = static_cast<int64_t>(logits.size());
  for (int64_t inner : {1, 3}) {
    SCOPED_TRACE("inner " + std::to_string(inner));
    std::vector<float> x, y(static_cast<size_t>(length * inner));
    for (float logit : logits) x.insert(x.end(), static_cast<size_t>(inner), logit);
    cpu::SoftmaxForward<float>(cpu::SoftmaxLayout{1, length, inner}, x.data(), y.data(), 1.0,
                               /*log=*/false);
    for (int64_t l = 0; l < length; ++l) {
      for (int64_t i = 0; i < inner; ++i) {
        const float p = y[static_cast<size_t>(l * inner + i)];
        EXPECT_NE(std::fpclassify(p), FP_SUBNORMAL) << "position " << l << ": " << p;
        EXPECT_NEAR(p, l < 4 ? 0.25f : 0.0f, 1e-7f) << "position " << l;
      }
    }
  }
}

}  // namespace
}  // namespace mxlite::testing
