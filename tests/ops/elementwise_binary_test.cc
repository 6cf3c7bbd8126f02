#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/ops/kernel_calls.h"
#include "tests/ops/op_harness.h"
#include "tests/ops/reference.h"

namespace mxlite::testing {
namespace {

double Apply(const std::string& op, double x, double y) {
  if (op.ends_with("maximum")) return std::max(x, y);
  if (op.ends_with("minimum")) return std::min(x, y);
  if (op.ends_with("add")) return x + y;
  if (op.ends_with("sub")) return x - y;
  if (op.ends_with("mul")) return x * y;
  if (op.ends_with("power")) return std::pow(x, y);
  return x / y;
}

// Divisors in +-[0.5, 1.5]: far from zero, where 1/y is smooth.
void AwayFromZero(HostTensor& tensor, std::mt19937_64& random) {
  std::uniform_real_distribution<double> magnitude(0.5, 1.5);
  for (int64_t i = 0; i < tensor.size(); ++i) {
    tensor.Set(i, (random() % 2 ? 1 : -1) * magnitude(random));
  }
}

ReferenceFn BinaryReference(const std::string& op, const Shape& out) {
  return [op, out](const auto& inputs, const auto& shapes) {
    std::vector<double> result(out.size());
    for (int64_t i = 0; i < out.size(); ++i) {
      const std::vector<int64_t> coords = Unravel(i, out);
      result[i] = Apply(op, inputs[0][BroadcastIndex(coords, shapes[0])],
                        inputs[1][BroadcastIndex(coords, shapes[1])]);
    }
    return std::vector<std::vector<double>>{result};
  };
}

// Bases in [0.5, 2]: x^y and ln(x) are smooth there for any exponent.
void PositiveBase(HostTensor& tensor, std::mt19937_64& random) {
  std::uniform_real_distribution<double> base(0.5, 2.0);
  for (int64_t i = 0; i < tensor.size(); ++i) tensor.Set(i, base(random));
}

OpCase BinaryCase(const std::string& op, const Shape& lhs, const Shape& rhs) {
  OpCase test_case{op, {}, {lhs, rhs}};
  if (op.ends_with("div")) test_case.init["rhs"] = AwayFromZero;
  if (op.ends_with("power")) test_case.init["lhs"] = PositiveBase;
  return test_case;
}

struct ShapePair {
  Shape lhs, rhs, out;
};

class BroadcastBinaryTest : public ::testing::TestWithParam<std::tuple<std::string, ShapePair>> {};

TEST_P(BroadcastBinaryTest, GradientAndReference) {
  const auto& [op, shapes] = GetParam();
  OpCase test_case = BinaryCase(op, shapes.lhs, shapes.rhs);
  EXPECT_EQ(InferOutputShapes(test_case)[0], shapes.out);
  CheckGradients(test_case);
  CheckForwardAgainstReference(test_case, BinaryReference(op, shapes.out));
}

INSTANTIATE_TEST_SUITE_P(
    OpsAndShapes, BroadcastBinaryTest,
    ::testing::Combine(
        ::testing::Values("broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div",
                          "broadcast_maximum", "broadcast_minimum", "broadcast_power"),
        ::testing::Values(ShapePair{{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},
                          ShapePair{{3, 1, 5}, {4, 1}, {3, 4, 5}},  // rank mismatch, both grow
                          ShapePair{{2, 3}, {}, {2, 3}},            // scalar rhs
                          ShapePair{{}, {2, 3}, {2, 3}},            // scalar lhs
                          ShapePair{{}, {}, {}},                    // scalar with scalar
                          ShapePair{{4, 5}, {5}, {4, 5}},           // row (FC bias)
                          ShapePair{{2, 3, 4, 5}, {1, 3, 1, 1}, {2, 3, 4, 5}},  // channel bias
                          ShapePair{{3, 1}, {1, 4}, {3, 4}},                    // outer product
                          ShapePair{{1}, {3}, {3}},                             // size-1 dim
                          ShapePair{{2, 1, 3}, {2, 4, 1}, {2, 4, 3}},
                          ShapePair{{5, 2}, {1, 1}, {5, 2}})));

class SameShapeBinaryTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SameShapeBinaryTest, GradientReferenceAndShapeError) {
  const std::string op = GetParam();
  OpCase test_case = BinaryCase(op, {3, 4, 2}, {3, 4, 2});
  CheckGradients(test_case);
  CheckForwardAgainstReference(test_case, BinaryReference(op, {3, 4, 2}));
  ExpectShapeError(BinaryCase(op, {3, 4}, {4}), {"(3,4)", "(4)"});
}

INSTANTIATE_TEST_SUITE_P(AllOps, SameShapeBinaryTest,
                         ::testing::Values("elemwise_add", "elemwise_sub", "elemwise_mul",
                                           "elemwise_div"));

// Ties go to lhs (maximum: lhs >= rhs, minimum: lhs <= rhs), as in MXNet; a NaN operand gives NaN.
TEST(BroadcastBinaryTest, ExtremaSendTiesToLhsAndKeepNaN) {
  for (const std::string op : {"broadcast_maximum", "broadcast_minimum"}) {
    OpCase test_case = BinaryCase(op, {4}, {4});
    std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat64);
    const double nan = std::nan("");
    const double x[] = {1.0, 2.0, nan, 0.5}, y[] = {1.0, -3.0, 0.0, nan};
    for (int i = 0; i < 4; ++i) {
      inputs[0].Set(i, x[i]);
      inputs[1].Set(i, y[i]);
    }
    const OpRun forward = RunForward(test_case, inputs);
    EXPECT_EQ(forward.outputs[0].Get(0), 1.0) << op;
    EXPECT_EQ(forward.outputs[0].Get(1), op == "broadcast_maximum" ? 2.0 : -3.0) << op;
    EXPECT_TRUE(std::isnan(forward.outputs[0].Get(2))) << op;
    EXPECT_TRUE(std::isnan(forward.outputs[0].Get(3))) << op;
    HostTensor out_grad(Shape{4}, DType::kFloat64);
    for (int i = 0; i < 4; ++i) out_grad.Set(i, 10.0 + i);
    const std::vector<HostTensor> grads = RunBackward(test_case, forward, {out_grad});
    EXPECT_EQ(grads[0].Get(0), 10.0) << op;  // the tie
    EXPECT_EQ(grads[1].Get(0), 0.0) << op;
    EXPECT_EQ(grads[0].Get(1) + grads[1].Get(1), 11.0) << op;
  }
}

// A negative base with integral exponents; PyTorch's zeros in the gradient: d/dx where the
// exponent is 0 (0^0 would give 0 * inf), d/dy where the base is 0 and the exponent >= 0.
TEST(BroadcastBinaryTest, PowerOfNegativeAndZeroBases) {
  OpCase test_case = BinaryCase("broadcast_power", {4}, {4});
  std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat64);
  const double x[] = {-2.0, 0.0, 0.0, 3.0}, y[] = {3.0, 0.0, 2.0, -1.0};
  for (int i = 0; i < 4; ++i) {
    inputs[0].Set(i, x[i]);
    inputs[1].Set(i, y[i]);
  }
  const OpRun forward = RunForward(test_case, inputs);
  const double want[] = {-8.0, 1.0, 0.0, 1.0 / 3.0};
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(forward.outputs[0].Get(i), want[i]) << i;
  HostTensor out_grad(Shape{4}, DType::kFloat64);
  for (int i = 0; i < 4; ++i) out_grad.Set(i, 1.0);
  const std::vector<HostTensor> grads = RunBackward(test_case, forward, {out_grad});
  EXPECT_DOUBLE_EQ(grads[0].Get(0), 12.0);  // 3 * (-2)^2
  EXPECT_EQ(grads[0].Get(1), 0.0);          // exponent 0
  EXPECT_EQ(grads[0].Get(2), 0.0);          // 2 * 0^1
  EXPECT_DOUBLE_EQ(grads[0].Get(3), -1.0 / 9.0);
  EXPECT_TRUE(std::isnan(grads[1].Get(0)));  // ln of a negative base
  EXPECT_EQ(grads[1].Get(1), 0.0);
  EXPECT_EQ(grads[1].Get(2), 0.0);
  EXPECT_DOUBLE_EQ(grads[1].Get(3), std::log(3.0) / 3.0);
}

TEST(BroadcastBinaryTest, IncompatibleShapesNameBoth) {
  ExpectShapeError(BinaryCase("broadcast_add", {3, 4}, {2, 4}), {"(3,4)", "(2,4)", "broadcast"});
  ExpectShapeError(BinaryCase("broadcast_mul", {3, 1, 5}, {4, 2}), {"(3,1,5)", "(4,2)"});
}

// Sizes beyond the parallel grain, through the channel (conv bias), row (FC bias, few units so
// the reduction splits into partial sums) and scalar patterns; backward against plain sums.
class LargeBroadcastTest : public ::testing::TestWithParam<ShapePair> {};

TEST_P(LargeBroadcastTest, ForwardAndReducedGradients) {
  const ShapePair shapes = GetParam();
  for (const std::string op : {"broadcast_add", "broadcast_mul", "broadcast_div"}) {
    OpCase test_case = BinaryCase(op, shapes.lhs, shapes.rhs);
    CheckForwardAgainstReference(test_case, BinaryReference(op, shapes.out));
    std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat64);
    HostTensor out_grad(shapes.out, DType::kFloat64);
    for (int64_t i = 0; i < out_grad.size(); ++i) out_grad.Set(i, std::sin(0.01 * i));
    std::vector<HostTensor> grads =
        RunBackward(test_case, RunForward(test_case, inputs), {out_grad});
    std::vector<double> want_lhs(shapes.lhs.size(), 0.0), want_rhs(shapes.rhs.size(), 0.0);
    for (int64_t i = 0; i < shapes.out.size(); ++i) {
      const std::vector<int64_t> coords = Unravel(i, shapes.out);
      const int64_t l = BroadcastIndex(coords, shapes.lhs), r = BroadcastIndex(coords, shapes.rhs);
      const double x = inputs[0].Get(l), y = inputs[1].Get(r), g = out_grad.Get(i);
      if (op == "broadcast_add") {
        want_lhs[l] += g;
        want_rhs[r] += g;
      } else if (op == "broadcast_mul") {
        want_lhs[l] += g * y;
        want_rhs[r] += g * x;
      } else {
        want_lhs[l] += g / y;
        want_rhs[r] -= g * x / (y * y);
      }
    }
    for (int side = 0; side < 2; ++side) {
      const std::vector<double>& want = side == 0 ? want_lhs : want_rhs;
      int mismatches = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        const double got = grads[side].Get(static_cast<int64_t>(i));
        if (std::abs(got - want[i]) > 1e-9 * std::max(1.0, std::abs(want[i])) &&
            ++mismatches <= 3) {
          ADD_FAILURE() << op << " gradient " << side << " element " << i << ": " << got << " vs "
                        << want[i];
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Patterns, LargeBroadcastTest,
    ::testing::Values(ShapePair{{4, 16, 24, 24}, {1, 16, 1, 1}, {4, 16, 24, 24}},
                      ShapePair{{2048, 64}, {64}, {2048, 64}}, ShapePair{{150000}, {}, {150000}},
                      ShapePair{{40, 1, 20}, {1, 100, 1}, {40, 100, 20}}));

TEST(BroadcastBinaryTest, RunsInPlaceOverEitherSameShapeInput) {
  for (int shared : {0, 1}) {
    OpCase test_case = BinaryCase("broadcast_sub", {4, 6}, {4, 6});
    if (shared == 0) test_case.input_shapes[1] = Shape{6};
    std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat32);
    const std::vector<double> want = RunForward(test_case, inputs).outputs[0].Values();
    EXPECT_EQ(RunForwardInPlace(test_case, inputs, shared), want) << "shared input " << shared;
  }
}

TEST(BroadcastBinaryTest, UnrequestedGradientsAreNotWritten) {
  OpCase test_case = BinaryCase("broadcast_mul", {3, 4}, {4});
  std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat64);
  HostTensor out_grad(Shape{3, 4}, DType::kFloat64);
  for (int64_t i = 0; i < out_grad.size(); ++i) out_grad.Set(i, 1.0);
  std::vector<HostTensor> grads = RunBackwardRequested(test_case, inputs, out_grad, {false, true});
  for (double value : grads[0].Values()) EXPECT_EQ(value, kUntouched);
  for (int64_t j = 0; j < 4; ++j) {  // d/d rhs_j = sum_i lhs_ij
    double want = 0;
    for (int64_t i = 0; i < 3; ++i) want += inputs[0].Get(i * 4 + j);
    EXPECT_NEAR(grads[1].Get(j), want, 1e-12);
  }
}

TEST(BroadcastBinaryTest, BackwardOfAddAndSubReadsNoForwardTensor) {
  for (const std::string op : {"broadcast_add", "broadcast_sub", "elemwise_add"}) {
    const OpDef& def = OpRegistry::Global().Get(op);
    BackwardDependencies deps = BackwardDependenciesOf(def, Attributes());
    EXPECT_EQ(deps.inputs, (std::vector<bool>{false, false})) << op;
    EXPECT_EQ(deps.outputs, (std::vector<bool>{false})) << op;
  }
}

// Divisors for the GPU cases (AwayFromZero above draws its signs differently).
Initializer RandomSignAwayFromZero() {
  return [](HostTensor& tensor, std::mt19937_64& random) {
    std::uniform_real_distribution<double> uniform(0.5, 1.5);
    std::bernoulli_distribution sign(0.5);
    for (int64_t k = 0; k < tensor.size(); ++k) {
      tensor.Set(k, (sign(random) ? 1 : -1) * uniform(random));
    }
  };
}

Initializer SmallIntegers() {  // -1, 0 or 1: operands that tie often
  return [](HostTensor& tensor, std::mt19937_64& random) {
    for (int64_t k = 0; k < tensor.size(); ++k)
      tensor.Set(k, static_cast<double>(random() % 3) - 1);
  };
}

MXLITE_GPU_CASES(ElementwiseBinary) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  // Element-wise.
  for (const char* kind : {"add", "sub", "mul", "div"}) {
    const std::map<std::string, Initializer> init = {{"rhs", RandomSignAwayFromZero()}};
    add({std::string("broadcast_") + kind, {}, {{2, 3, 4}, {3, 1}}, init});
    add({std::string("broadcast_") + kind, {}, {{1, 3, 1, 2}, {4, 1, 5, 1}}, init});
    add({std::string("broadcast_") + kind, {}, {{2, 3}, {}}, init});
    add({std::string("elemwise_") + kind, {}, {{3, 4}, {3, 4}}, init});
  }
  const std::map<std::string, Initializer> positive_base = {{"lhs", PositiveBase}};
  add({"broadcast_power", {}, {{2, 3, 4}, {3, 1}}, positive_base});
  add({"broadcast_power", {}, {{3, 4}, {3, 4}}, positive_base});
  add({"broadcast_power", {}, {{2, 3}, {}}, positive_base});
  for (const char* op : {"broadcast_maximum", "broadcast_minimum"}) {
    add({op, {}, {{2, 3, 4}, {3, 1}}});
    add({op, {}, {{3, 4}, {3, 4}}, {{"lhs", SmallIntegers()}, {"rhs", SmallIntegers()}}});  // ties
  }
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
