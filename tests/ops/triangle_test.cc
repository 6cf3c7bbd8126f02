// tril and triu (ops/triangle.cc): the triangles of each matrix in the last two axes for every
// diagonal k (above, on and below the main one, and beyond the matrix), any leading axes, any
// dtype (int64 as ONNX's node tests feed it), the gradient under the same mask, and errors.
#include <gtest/gtest.h>

#include <limits>

#include "tests/ops/op_harness.h"
#include "tests/ops/reference.h"

namespace mxlite::testing {
namespace {

struct TriangleCase {
  bool upper;
  int64_t k;
  Shape shape;
};

OpCase Case(const TriangleCase& c) {
  return OpCase{c.upper ? "triu" : "tril", {{"k", std::to_string(c.k)}}, {c.shape}};
}

// NumPy's rule: element (i, j) stays when j - i >= k (triu) or j - i <= k (tril).
std::vector<double> Reference(const TriangleCase& c, const std::vector<double>& in) {
  const int64_t rows = c.shape.dim(-2), columns = c.shape.dim(-1);
  std::vector<double> out(in.size());
  for (size_t index = 0; index < in.size(); ++index) {
    const int64_t i = (static_cast<int64_t>(index) / columns) % rows;
    const int64_t j = static_cast<int64_t>(index) % columns;
    const bool kept = c.upper ? j - i >= c.k : j - i <= c.k;
    out[index] = kept ? in[index] : 0.0;
  }
  return out;
}

class TriangleTest : public ::testing::TestWithParam<TriangleCase> {};

TEST_P(TriangleTest, KeepsTheTriangleAndMasksTheGradient) {
  const TriangleCase c = GetParam();
  const OpCase test_case = Case(c);
  EXPECT_EQ(InferOutputShapes(test_case)[0], c.shape);
  CheckForwardAgainstReference(
      test_case, [c](const std::vector<std::vector<double>>& in, const std::vector<Shape>&) {
        return std::vector<std::vector<double>>{Reference(c, in[0])};
      });
  CheckGradients(test_case);
}

INSTANTIATE_TEST_SUITE_P(
    Diagonals, TriangleTest,
    ::testing::Values(TriangleCase{true, 0, {4, 5}}, TriangleCase{false, 0, {4, 5}},
                      TriangleCase{true, 2, {3, 4, 6}}, TriangleCase{false, -1, {3, 4, 6}},
                      TriangleCase{true, -2, {2, 1, 5, 3}}, TriangleCase{false, 1, {2, 1, 5, 3}},
                      // Beyond the matrix: nothing or everything kept.
                      TriangleCase{true, 7, {3, 5}}, TriangleCase{false, -7, {3, 5}},
                      TriangleCase{true, -9, {3, 5}}, TriangleCase{false, 9, {3, 5}},
                      // So far beyond that row + k would overflow unclamped.
                      TriangleCase{true, std::numeric_limits<int64_t>::max(), {3, 5}},
                      TriangleCase{false, std::numeric_limits<int64_t>::min(), {3, 5}},
                      // One row and one column.
                      TriangleCase{true, 1, {1, 6}}, TriangleCase{false, -1, {6, 1}}));

TEST(TriangleDTypeTest, Int64ValuesPassThroughUnrounded) {
  const TriangleCase c{false, 0, {3, 4}};
  std::vector<HostTensor> inputs = MakeInputs(Case(c), DType::kInt64);
  for (int64_t i = 0; i < inputs[0].size(); ++i) inputs[0].Set(i, 1000003.0 * (i + 1));
  const OpRun run = RunForward(Case(c), inputs);
  const std::vector<double> expected = Reference(c, inputs[0].Values());
  ASSERT_EQ(run.outputs[0].dtype(), DType::kInt64);
  EXPECT_EQ(run.outputs[0].Values(), expected);
}

TEST(TriangleShapeTest, FewerThanTwoAxesIsNamed) {
  ExpectShapeError(Case({true, 0, {5}}), {"triu", "at least two axes"});
}

MXLITE_GPU_CASES(Triangle) {
  return {Case({true, 1, {3, 4, 6}}), Case({false, -1, {2, 5, 3}}), Case({true, -9, {3, 5}})};
}

}  // namespace
}  // namespace mxlite::testing
