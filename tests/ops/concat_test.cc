#include <gtest/gtest.h>

#include "tests/ops/kernel_calls.h"
#include "tests/ops/op_harness.h"
#include "tests/ops/reference.h"

namespace mxlite::testing {
namespace {

OpCase ConcatCase(const std::vector<Shape>& shapes, int dim) {
  return {"Concat",
          {{"num_args", std::to_string(shapes.size())}, {"dim", std::to_string(dim)}},
          shapes};
}

// Walks the output and picks, along `axis`, the input that covers each position.
ReferenceFn ConcatReference(const Shape& out, int axis) {
  return [out, axis](const auto& inputs, const auto& shapes) {
    std::vector<double> result(out.size());
    for (int64_t i = 0; i < out.size(); ++i) {
      std::vector<int64_t> coords = Unravel(i, out);
      size_t input = 0;
      while (coords[axis] >= shapes[input][axis]) coords[axis] -= shapes[input++][axis];
      result[i] = inputs[input][Ravel(coords, shapes[input])];
    }
    return std::vector<std::vector<double>>{result};
  };
}

struct ConcatShapes {
  std::vector<Shape> inputs;
  int dim;
  Shape out;
};

class ConcatTest : public ::testing::TestWithParam<ConcatShapes> {};

TEST_P(ConcatTest, GradientAndReference) {
  const ConcatShapes& c = GetParam();
  OpCase test_case = ConcatCase(c.inputs, c.dim);
  ASSERT_EQ(InferOutputShapes(test_case)[0], c.out);
  CheckGradients(test_case);
  const int axis = c.dim < 0 ? c.dim + c.out.ndim() : c.dim;
  CheckForwardAgainstReference(test_case, ConcatReference(c.out, axis));
}

INSTANTIATE_TEST_SUITE_P(
    Axes, ConcatTest,
    ::testing::Values(ConcatShapes{{{2, 3, 4}, {2, 1, 4}, {2, 2, 4}}, 1, {2, 6, 4}},
                      ConcatShapes{{{1, 3}, {4, 3}}, 0, {5, 3}},
                      ConcatShapes{{{2, 3, 4}, {2, 3, 1}}, -1, {2, 3, 5}},
                      ConcatShapes{{{3}, {2}, {1}}, 0, {6}},
                      ConcatShapes{{{2, 0, 3}, {2, 2, 3}}, 1, {2, 2, 3}},  // an empty input
                      ConcatShapes{{{2, 5}}, 1, {2, 5}}));                 // num_args=1

TEST(ConcatTest, LargeInputsCopyInParallelBlocks) {
  const std::vector<Shape> shapes{{300, 130}, {300, 7}, {300, 260}};
  CheckForwardAgainstReference(ConcatCase(shapes, 1), ConcatReference({300, 397}, 1));
}

TEST(ConcatTest, MismatchedShapesNameBoth) {
  ExpectShapeError(ConcatCase({{2, 3, 4}, {2, 3, 5}}, 1), {"(2,3,4)", "(2,3,5)", "arg1"});
  ExpectShapeError(ConcatCase({{2, 3}, {2, 3, 1}}, 0), {"(2,3)", "(2,3,1)"});
  ExpectShapeError(ConcatCase({{2, 3}, {2, 3}}, 2), {"dim=2", "(2,3)"});
  ExpectShapeError(ConcatCase({{2, 3}, {2, 3}}, -3), {"dim=-3"});
}

TEST(ConcatTest, BackwardSkipsUnrequestedInputs) {
  OpCase test_case = ConcatCase({{2, 3}, {2, 2}}, 1);
  std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat32);
  HostTensor out_grad(Shape{2, 5}, DType::kFloat32);
  for (int64_t i = 0; i < 10; ++i) out_grad.Set(i, static_cast<double>(i));
  std::vector<HostTensor> grads = RunBackwardRequested(test_case, inputs, out_grad, {true, false});
  EXPECT_EQ(grads[0].Values(), (std::vector<double>{0, 1, 2, 5, 6, 7}));
  for (double value : grads[1].Values()) EXPECT_EQ(value, kUntouched);
}

MXLITE_GPU_CASES(Concat) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  add({"Concat", {{"num_args", "3"}, {"dim", "1"}}, {{2, 3, 4}, {2, 1, 4}, {2, 2, 4}}});
  add({"Concat", {{"num_args", "2"}, {"dim", "-1"}}, {{3, 2}, {3, 5}}});
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
