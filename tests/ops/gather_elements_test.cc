// gather_elements (ops/gather_elements.cc): ONNX's GatherElements along each axis of 1-D to 4-D
// data, with negative indices, an index smaller than the data on the other axes, indices that
// repeat (their gradients add up), int64 data moved as it is; bad indices and shapes named.
#include <gtest/gtest.h>

#include "tests/ops/op_harness.h"
#include "tests/ops/reference.h"

namespace mxlite::testing {
namespace {

struct GatherCase {
  int64_t axis;
  Shape data, index;
  std::vector<double> indices;  // repeated to fill index
};

OpCase Case(const GatherCase& c) {
  OpCase test_case{"gather_elements", {{"axis", std::to_string(c.axis)}}, {c.data, c.index}};
  test_case.init["index"] = Cycled(c.indices);
  return test_case;
}

// The definition: output[p] = data[p with its axis coordinate replaced by index[p]].
std::vector<double> Reference(const GatherCase& c, const std::vector<double>& data,
                              const std::vector<double>& index) {
  const int rank = c.data.ndim();
  const int axis = static_cast<int>(c.axis < 0 ? c.axis + rank : c.axis);
  std::vector<double> out;
  for (int64_t flat = 0; flat < c.index.size(); ++flat) {
    std::vector<int64_t> coordinate(static_cast<size_t>(rank));
    for (int d = 0; d < rank; ++d) coordinate[d] = (flat / c.index.size(d + 1, rank)) % c.index[d];
    auto picked = static_cast<int64_t>(index[static_cast<size_t>(flat)]);
    coordinate[axis] = picked < 0 ? picked + c.data[axis] : picked;
    int64_t offset = 0;
    for (int d = 0; d < rank; ++d) offset = offset * c.data[d] + coordinate[d];
    out.push_back(data[static_cast<size_t>(offset)]);
  }
  return out;
}

class GatherElementsTest : public ::testing::TestWithParam<GatherCase> {};

TEST_P(GatherElementsTest, PicksAlongTheAxisAndScattersTheGradientBack) {
  const GatherCase c = GetParam();
  const OpCase test_case = Case(c);
  EXPECT_EQ(InferOutputShapes(test_case)[0], c.index);
  CheckForwardAgainstReference(
      test_case, [c](const std::vector<std::vector<double>>& in, const std::vector<Shape>&) {
        return std::vector<std::vector<double>>{Reference(c, in[0], in[1])};
      });
  CheckGradients(test_case);
}

INSTANTIATE_TEST_SUITE_P(
    Axes, GatherElementsTest,
    ::testing::Values(GatherCase{0, {5}, {7}, {4, 0, 2, 2, -1, -5, 3}},
                      GatherCase{0, {3, 4}, {2, 4}, {2, 0, 1, 1, 0, 2, 2, 1}},
                      GatherCase{1, {3, 4}, {3, 2}, {3, -1, 0, 2, -4, 1}},
                      // Index smaller than data on the other axis; repeated picks.
                      GatherCase{-1, {4, 5}, {2, 6}, {0, 0, 4, 1, 1, 3}},
                      GatherCase{1, {2, 3, 4}, {2, 5, 3}, {2, 0, 1, -3, -1}},
                      GatherCase{2, {2, 3, 4, 3}, {1, 3, 2, 2}, {3, 0, 1, 2, -2}}));

TEST(GatherElementsDTypeTest, Int64DataMovesUnrounded) {
  const GatherCase c{1, {2, 3}, {2, 2}, {2, 0, 1, 1}};
  std::vector<HostTensor> inputs = MakeInputs(Case(c), DType::kInt64);
  for (int64_t i = 0; i < inputs[0].size(); ++i) inputs[0].Set(i, 1000000007.0 * (i + 1));
  const OpRun run = RunForward(Case(c), inputs);
  ASSERT_EQ(run.outputs[0].dtype(), DType::kInt64);
  EXPECT_EQ(run.outputs[0].Values(), Reference(c, inputs[0].Values(), inputs[1].Values()));
}

TEST(GatherElementsErrorTest, AnIndexOutsideTheAxisIsNamed) {
  const OpCase test_case = Case({1, {2, 3}, {2, 2}, {0, 3}});
  try {
    RunForward(test_case, MakeInputs(test_case, DType::kFloat32));
    FAIL() << "expected an error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("gather_elements"), std::string::npos) << message;
    EXPECT_NE(message.find("index 3 at flat position 1"), std::string::npos) << message;
    EXPECT_NE(message.find("[-3, 3)"), std::string::npos) << message;
  }
}

TEST(GatherElementsErrorTest, ShapesThatCannotGatherAreNamed) {
  ExpectShapeError(Case({0, {2, 3}, {2, 3, 1}, {0}}), {"gather_elements", "same rank"});
  ExpectShapeError(Case({0, {2, 3}, {2, 4}, {0}}), {"gather_elements", "axis 1"});
  ExpectShapeError(Case({2, {2, 3}, {2, 3}, {0}}), {"gather_elements", "axis 2 is outside"});
}

MXLITE_GPU_CASES(GatherElements) {
  return {Case({1, {3, 4}, {3, 2}, {3, -1, 0, 2, -4, 1}}),
          Case({-1, {4, 5}, {2, 6}, {0, 0, 4, 1, 1, 3}}),
          Case({2, {2, 3, 4, 3}, {1, 3, 2, 2}, {3, 0, 1, 2, -2}})};
}

}  // namespace
}  // namespace mxlite::testing
