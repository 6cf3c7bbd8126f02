// The broadcast comparisons (ops/comparison.cc) against plain C++ comparisons, on operands that
// tie often, NaN included; their gradient is zero.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>

#include "tests/ops/op_harness.h"
#include "tests/ops/reference.h"

namespace mxlite::testing {
namespace {

const std::map<std::string, std::function<bool(double, double)>> kComparisons = {
    {"broadcast_equal", [](double x, double y) { return x == y; }},
    {"broadcast_not_equal", [](double x, double y) { return x != y; }},
    {"broadcast_greater", [](double x, double y) { return x > y; }},
    {"broadcast_greater_equal", [](double x, double y) { return x >= y; }},
    {"broadcast_lesser", [](double x, double y) { return x < y; }},
    {"broadcast_lesser_equal", [](double x, double y) { return x <= y; }}};

// -1, 0, 1 or NaN.
void FewValues(HostTensor& tensor, std::mt19937_64& random) {
  for (int64_t i = 0; i < tensor.size(); ++i) {
    const uint64_t pick = random() % 4;
    tensor.Set(i, pick == 3 ? std::nan("") : static_cast<double>(pick) - 1);
  }
}

struct ShapePair {
  Shape lhs, rhs, out;
};

class ComparisonTest : public ::testing::TestWithParam<std::tuple<std::string, ShapePair>> {};

TEST_P(ComparisonTest, OnesWhereItHoldsAndNoGradient) {
  const auto& [op, shapes] = GetParam();
  OpCase test_case{op, {}, {shapes.lhs, shapes.rhs}};
  test_case.init = {{"lhs", FewValues}, {"rhs", FewValues}};
  EXPECT_EQ(InferOutputShapes(test_case)[0], shapes.out);
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    const std::vector<HostTensor> inputs = MakeInputs(test_case, dtype);
    const OpRun forward = RunForward(test_case, inputs);
    ASSERT_EQ(forward.outputs[0].dtype(), dtype);
    const auto holds = kComparisons.at(op);
    for (int64_t i = 0; i < shapes.out.size(); ++i) {
      const std::vector<int64_t> coords = Unravel(i, shapes.out);
      const double x = inputs[0].Get(BroadcastIndex(coords, shapes.lhs));
      const double y = inputs[1].Get(BroadcastIndex(coords, shapes.rhs));
      EXPECT_EQ(forward.outputs[0].Get(i), holds(x, y) ? 1.0 : 0.0)
          << op << " element " << i << ": " << x << " vs " << y;
    }
    HostTensor out_grad(shapes.out, dtype);
    for (int64_t i = 0; i < out_grad.size(); ++i) out_grad.Set(i, 1.0 + i);
    for (const HostTensor& grad : RunBackward(test_case, forward, {out_grad})) {
      for (int64_t i = 0; i < grad.size(); ++i) EXPECT_EQ(grad.Get(i), 0.0) << op;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    OpsAndShapes, ComparisonTest,
    ::testing::Combine(::testing::Values("broadcast_equal", "broadcast_not_equal",
                                         "broadcast_greater", "broadcast_greater_equal",
                                         "broadcast_lesser", "broadcast_lesser_equal"),
                       ::testing::Values(ShapePair{{2, 3, 40}, {2, 3, 40}, {2, 3, 40}},
                                         ShapePair{{3, 1, 5}, {4, 1}, {3, 4, 5}},
                                         ShapePair{{2, 3}, {}, {2, 3}},  // scalar rhs
                                         ShapePair{{}, {2, 3}, {2, 3}},  // scalar lhs
                                         ShapePair{{}, {}, {}})));

TEST(ComparisonTest, IncompatibleShapesNameBoth) {
  ExpectShapeError(OpCase{"broadcast_greater", {}, {{3, 4}, {2, 4}}}, {"(3,4)", "(2,4)"});
}

Initializer SmallIntegers() {  // -1, 0 or 1: operands that tie often
  return [](HostTensor& tensor, std::mt19937_64& random) {
    for (int64_t k = 0; k < tensor.size(); ++k)
      tensor.Set(k, static_cast<double>(random() % 3) - 1);
  };
}

MXLITE_GPU_CASES(Comparisons) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  for (const char* op : {"broadcast_equal", "broadcast_not_equal", "broadcast_greater",
                         "broadcast_greater_equal", "broadcast_lesser", "broadcast_lesser_equal"}) {
    add({op, {}, {{2, 3, 4}, {3, 1}}});
    add({op, {}, {{3, 4}, {3, 4}}, {{"lhs", SmallIntegers()}, {"rhs", SmallIntegers()}}});  // ties
  }
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
