// where (ops/where.cc): x where the condition holds, else y, all three broadcast; gradients to the
// chosen operand, summed over its broadcast axes.
#include <gtest/gtest.h>

#include "tests/ops/op_harness.h"
#include "tests/ops/reference.h"

namespace mxlite::testing {
namespace {

// 0 or 1, often both in one tensor.
void ZerosAndOnes(HostTensor& tensor, std::mt19937_64& random) {
  for (int64_t i = 0; i < tensor.size(); ++i) tensor.Set(i, static_cast<double>(random() % 2));
}

struct WhereShapes {
  Shape condition, x, y, out;
};

OpCase WhereCase(const WhereShapes& shapes) {
  OpCase test_case{"where", {}, {shapes.condition, shapes.x, shapes.y}};
  test_case.init = {{"condition", ZerosAndOnes}};
  return test_case;
}

class WhereTest : public ::testing::TestWithParam<WhereShapes> {};

TEST_P(WhereTest, PicksXWhereTheConditionHoldsAndRoutesTheGradient) {
  const WhereShapes& shapes = GetParam();
  const OpCase test_case = WhereCase(shapes);
  EXPECT_EQ(InferOutputShapes(test_case)[0], shapes.out);
  CheckForwardAgainstReference(test_case, [shapes](const std::vector<std::vector<double>>& in,
                                                   const std::vector<Shape>&) {
    std::vector<double> out(static_cast<size_t>(shapes.out.size()));
    for (int64_t i = 0; i < shapes.out.size(); ++i) {
      const std::vector<int64_t> at = Unravel(i, shapes.out);
      const bool holds = in[0][BroadcastIndex(at, shapes.condition)] != 0;
      out[i] = holds ? in[1][BroadcastIndex(at, shapes.x)] : in[2][BroadcastIndex(at, shapes.y)];
    }
    return std::vector<std::vector<double>>{out};
  });
  CheckGradients(test_case);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, WhereTest,
    ::testing::Values(WhereShapes{{2, 3}, {2, 3}, {2, 3}, {2, 3}},          // same shapes
                      WhereShapes{{3, 1}, {1, 4}, {3, 4}, {3, 4}},          // all broadcast
                      WhereShapes{{2, 1, 5}, {5}, {1}, {2, 1, 5}},          // a scalar y
                      WhereShapes{{1}, {2, 3, 4}, {2, 1, 4}, {2, 3, 4}}));  // one condition

TEST(WhereShapeTest, OperandsThatDoNotBroadcastAreNamed) {
  ExpectShapeError(WhereCase({{2, 3}, {4}, {2, 3}, {}}), {"'condition' (2,3)", "'x' (4)"});
}

MXLITE_GPU_CASES(Where) {
  return {WhereCase({{2, 3}, {2, 3}, {2, 3}, {2, 3}}), WhereCase({{3, 1}, {1, 4}, {3, 4}, {3, 4}}),
          WhereCase({{1}, {2, 3, 4}, {2, 1, 4}, {2, 3, 4}})};
}

}  // namespace
}  // namespace mxlite::testing
