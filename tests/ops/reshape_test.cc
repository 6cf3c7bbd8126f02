#include <gtest/gtest.h>

#include "tests/ops/kernel_calls.h"
#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

struct ReshapeCase {
  Shape input;
  std::string shape;
  bool reverse;
  Shape expected;
};

class ReshapeCodesTest : public ::testing::TestWithParam<ReshapeCase> {};

TEST_P(ReshapeCodesTest, InfersTheDocumentedShape) {
  const ReshapeCase& c = GetParam();
  OpCase test_case{
      "Reshape", {{"shape", c.shape}, {"reverse", c.reverse ? "true" : "false"}}, {c.input}};
  EXPECT_EQ(InferOutputShapes(test_case)[0], c.expected) << test_case.Describe();
}

// The examples of MXNet's Reshape documentation, and a few more.
INSTANTIATE_TEST_SUITE_P(
    MXNetExamples, ReshapeCodesTest,
    ::testing::Values(ReshapeCase{{2, 3, 4}, "(4,0,2)", false, {4, 3, 2}},
                      ReshapeCase{{2, 3, 4}, "(2,0,0)", false, {2, 3, 4}},
                      ReshapeCase{{2, 3, 4}, "(6,1,-1)", false, {6, 1, 4}},
                      ReshapeCase{{2, 3, 4}, "(3,-1,8)", false, {3, 1, 8}},
                      ReshapeCase{{2, 3, 4}, "(-1,)", false, {24}},
                      ReshapeCase{{2, 3, 4}, "(-2,)", false, {2, 3, 4}},
                      ReshapeCase{{2, 3, 4}, "(2,-2)", false, {2, 3, 4}},
                      ReshapeCase{{2, 3, 4}, "(-2,1,1)", false, {2, 3, 4, 1, 1}},
                      ReshapeCase{{2, 3, 4}, "(-3,4)", false, {6, 4}},
                      ReshapeCase{{2, 3, 4, 5}, "(-3,-3)", false, {6, 20}},
                      ReshapeCase{{2, 3, 4}, "(0,-3)", false, {2, 12}},
                      ReshapeCase{{2, 3, 4}, "(-3,-2)", false, {6, 4}},
                      ReshapeCase{{2, 3, 4}, "(-4,1,2,-2)", false, {1, 2, 3, 4}},
                      ReshapeCase{{2, 3, 4}, "(2,-4,-1,3,-2)", false, {2, 1, 3, 4}},
                      ReshapeCase{{10, 5, 4}, "(-1,0)", false, {40, 5}},
                      ReshapeCase{{10, 5, 4}, "(-1,0)", true, {50, 4}},
                      ReshapeCase{{2, 6}, "(0,-4,2,-1)", false, {2, 2, 3}},
                      ReshapeCase{{2, 6}, "(0,-4,2,-1)", true, {2, 2, 3}},
                      ReshapeCase{{6, 2}, "(-4,-1,3,0)", true, {2, 3, 2}},
                      ReshapeCase{{1, 1}, "()", false, {}},
                      ReshapeCase{{}, "(1,1,-1)", false, {1, 1, 1}},
                      ReshapeCase{{0, 3}, "(-1,3)", false, {0, 3}}));

TEST(ReshapeTest, GradientAndReference) {
  OpCase test_case{"Reshape", {{"shape", "(-1,0)"}}, {{2, 3, 4}}};
  EXPECT_EQ(InferOutputShapes(test_case)[0], (Shape{8, 3}));
  CheckGradients(test_case);
  CheckForwardAgainstReference(test_case, [](const auto& inputs, const auto&) {
    return std::vector<std::vector<double>>{inputs[0]};
  });
}

TEST(ReshapeTest, CountMismatchNamesBothShapes) {
  ExpectShapeError({"Reshape", {{"shape", "(5,5)"}}, {{2, 3, 4}}},
                   {"(2,3,4)", "(5,5)", "24 elements", "25 elements"});
  ExpectShapeError({"Reshape", {{"shape", "(0,7)"}}, {{2, 3, 4}}}, {"(2,3,4)", "(2,7)"});
}

TEST(ReshapeTest, InvalidCodesAreClearErrors) {
  ExpectShapeError({"Reshape", {{"shape", "(-1,-1)"}}, {{2, 3}}}, {"more than one -1"});
  ExpectShapeError({"Reshape", {{"shape", "(-1,5)"}}, {{2, 3}}}, {"cannot infer -1", "(2,3)"});
  ExpectShapeError({"Reshape", {{"shape", "(-5,)"}}, {{2, 3}}}, {"unknown code -5"});
  ExpectShapeError({"Reshape", {{"shape", "(0,0,0)"}}, {{2, 3}}}, {"only 2 dims"});
  ExpectShapeError({"Reshape", {{"shape", "(-3,-3)"}}, {{2, 3, 4}}}, {"-3", "only 3 dims"});
  ExpectShapeError({"Reshape", {{"shape", "(-4,4,-1)"}}, {{6}}}, {"cannot split extent 6"});
  ExpectShapeError({"Reshape", {{"shape", "(-4,-1,-1)"}}, {{6}}}, {"at most one of them -1"});
  ExpectShapeError({"Reshape", {{"shape", "(-4,2)"}}, {{6}}}, {"followed by two extents"});
  ExpectShapeError({"Reshape", {{"shape", "(1,1,1,1,1,1,-1)"}}, {{6}}}, {"7 dims"});
}

TEST(ReshapeTest, RunsInPlace) {
  OpCase test_case{"Reshape", {{"shape", "(-3,-2)"}}, {{3, 4, 5}}};
  std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat64);
  EXPECT_EQ(RunForwardInPlace(test_case, inputs, 0), inputs[0].Values());
}

MXLITE_GPU_CASES(Reshape) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  add({"Reshape", {{"shape", "(4,-1)"}}, {{2, 3, 4}}});
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
