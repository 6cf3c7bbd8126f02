// gather_nd (ops/gather_nd.h): tuples of 1 to all of data's axes picking elements or slices,
// negative indices, tuples that repeat (their gradients add up), several tuple axes, int64 data
// moved as it is; bad indices and shapes named; GPU cases.
#include <gtest/gtest.h>

#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

struct NdCase {
  Shape data, indices;
  std::vector<double> values;  // repeated to fill indices
};

OpCase Case(const NdCase& c) {
  OpCase test_case{"gather_nd", {}, {c.data, c.indices}};
  test_case.init["indices"] = Cycled(c.values);
  return test_case;
}

// The definition: output[y, x] = data[indices[0, y], ..., indices[M-1, y], x].
std::vector<double> Reference(const NdCase& c, const std::vector<double>& data,
                              const std::vector<double>& indices) {
  const int m = static_cast<int>(c.indices[0]);
  const int64_t tuples = c.indices.size() / m, slice = c.data.size(m, c.data.ndim());
  std::vector<double> out;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = 0;
    for (int a = 0; a < m; ++a) {
      auto index = static_cast<int64_t>(indices[static_cast<size_t>(a * tuples + t)]);
      if (index < 0) index += c.data[a];
      offset = offset * c.data[a] + index;
    }
    for (int64_t e = 0; e < slice; ++e)
      out.push_back(data[static_cast<size_t>(offset * slice + e)]);
  }
  return out;
}

class GatherNdTest : public ::testing::TestWithParam<NdCase> {};

TEST_P(GatherNdTest, PicksSlicesAndAddsTheGradientBack) {
  const NdCase c = GetParam();
  const OpCase test_case = Case(c);
  CheckForwardAgainstReference(
      test_case, [c](const std::vector<std::vector<double>>& in, const std::vector<Shape>&) {
        return std::vector<std::vector<double>>{Reference(c, in[0], in[1])};
      });
  CheckGradients(test_case);
}

INSTANTIATE_TEST_SUITE_P(
    Tuples, GatherNdTest,
    ::testing::Values(NdCase{{5}, {1, 4}, {4, 0, -1, 2}},                       // elements of 1-D
                      NdCase{{3, 4}, {2, 3}, {2, 0, -3, 1, 3, -1}},             // elements of 2-D
                      NdCase{{3, 4}, {1, 5}, {2, 0, 2, 1, -1}},                 // rows, repeated
                      NdCase{{2, 3, 4}, {2, 2, 2}, {1, 0, 0, 1, 2, 0, -1, 1}},  // 2 tuple axes
                      NdCase{{2, 3, 4, 2}, {3, 2}, {1, 0, 2, 1, 3, 0}}));       // all three leading

TEST(GatherNdTest, OutputShape) {
  EXPECT_EQ(InferOutputShapes(Case({{2, 3, 4}, {2, 5, 6}, {0}}))[0], (Shape{5, 6, 4}));
  EXPECT_EQ(InferOutputShapes(Case({{2, 3, 4}, {3, 7}, {0}}))[0], (Shape{7}));
}

TEST(GatherNdTest, Int64DataMovesUnrounded) {
  const NdCase c{{3, 2}, {1, 4}, {2, 0, 1, 2}};
  std::vector<HostTensor> inputs = MakeInputs(Case(c), DType::kInt64);
  for (int64_t i = 0; i < inputs[0].size(); ++i) inputs[0].Set(i, 1000000007.0 * (i + 1));
  const OpRun run = RunForward(Case(c), inputs);
  ASSERT_EQ(run.outputs[0].dtype(), DType::kInt64);
  EXPECT_EQ(run.outputs[0].Values(), Reference(c, inputs[0].Values(), inputs[1].Values()));
}

TEST(GatherNdTest, ErrorsNameTheNode) {
  ExpectShapeError(Case({{3, 4}, {3, 2}, {0}}), {"tuples of 3 indices", "rank 2"});
  const OpCase outside = Case({{3, 4}, {2, 2}, {0, 1, 4, 0}});
  try {
    RunForward(outside, MakeInputs(outside, DType::kFloat32));
    FAIL() << "expected an error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("gather_nd"), std::string::npos) << message;
    EXPECT_NE(message.find("index 4 of tuple 0 is outside [-4, 4) (axis 1"), std::string::npos)
        << message;
  }
}

MXLITE_GPU_CASES(GatherNd) {
  return {Case({{3, 4}, {2, 3}, {2, 0, -3, 1, 3, -1}}), Case({{3, 4}, {1, 5}, {2, 0, 2, 1, -1}}),
          Case({{2, 3, 4}, {2, 2, 2}, {1, 0, 0, 1, 2, 0, -1, 1}})};
}

}  // namespace
}  // namespace mxlite::testing
