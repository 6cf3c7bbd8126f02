#include <gtest/gtest.h>

#include "tests/ops/op_harness.h"
#include "tests/ops/reference.h"

namespace mxlite::testing {
namespace {

constexpr int64_t kM = 3, kN = 4, kK = 5;

// Y[i][j] = alpha * sum_p op(A)[i][p] op(B)[p][j] + beta * C broadcast.
ReferenceFn GemmReference(bool trans_a, bool trans_b, double alpha, double beta, bool has_c) {
  return [=](const auto& inputs, const auto& shapes) {
    const Shape out{kM, kN};
    std::vector<double> y(kM * kN);
    for (int64_t i = 0; i < kM; ++i) {
      for (int64_t j = 0; j < kN; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < kK; ++p) {
          const double a = trans_a ? inputs[0][p * kM + i] : inputs[0][i * kK + p];
          const double b = trans_b ? inputs[1][j * kK + p] : inputs[1][p * kN + j];
          sum += a * b;
        }
        y[i * kN + j] = alpha * sum;
        if (has_c) y[i * kN + j] += beta * inputs[2][BroadcastIndex({i, j}, shapes[2])];
      }
    }
    return std::vector<std::vector<double>>{y};
  };
}

// transA, transB, and C's shape (nullopt: no C).
using GemmParam = std::tuple<bool, bool, std::optional<Shape>>;

class GemmOpTest : public ::testing::TestWithParam<GemmParam> {};

TEST_P(GemmOpTest, GradientAndReference) {
  const auto& [trans_a, trans_b, c_shape] = GetParam();
  OpCase test_case{
      "Gemm",
      {{"alpha", "0.7"},
       {"beta", "1.3"},
       {"transA", trans_a ? "1" : "0"},
       {"transB", trans_b ? "1" : "0"},
       {"no_bias", c_shape ? "false" : "true"}},
      {trans_a ? Shape{kK, kM} : Shape{kM, kK}, trans_b ? Shape{kN, kK} : Shape{kK, kN}}};
  if (c_shape) test_case.input_shapes.push_back(*c_shape);
  ASSERT_EQ(InferOutputShapes(test_case)[0], (Shape{kM, kN}));
  CheckGradients(test_case);
  CheckForwardAgainstReference(test_case,
                               GemmReference(trans_a, trans_b, 0.7, 1.3, c_shape.has_value()));
}

INSTANTIATE_TEST_SUITE_P(TransposesAndBiases, GemmOpTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool(),
                                            ::testing::Values(std::optional<Shape>{},
                                                              std::optional<Shape>{Shape{kN}},
                                                              std::optional<Shape>{Shape{1, kN}},
                                                              std::optional<Shape>{Shape{kM, 1}},
                                                              std::optional<Shape>{Shape{kM, kN}},
                                                              std::optional<Shape>{Shape{}})));

TEST(GemmOpTest, BetaZeroIgnoresC) {
  OpCase test_case{"Gemm", {{"beta", "0"}}, {{kM, kK}, {kK, kN}, {kM, kN}}};
  CheckGradients(test_case);  // C's gradient is zero
  CheckForwardAgainstReference(test_case, GemmReference(false, false, 1, 0, false));
}

TEST(GemmOpTest, LargerProductInFloat32) {
  OpCase test_case{"Gemm", {{"transB", "1"}}, {{70, 300}, {90, 300}, {90}}};
  CheckForwardAgainstReference(
      test_case,
      [](const auto& inputs, const auto&) {
        std::vector<double> y(70 * 90);
        for (int64_t i = 0; i < 70; ++i) {
          for (int64_t j = 0; j < 90; ++j) {
            double sum = inputs[2][j];
            for (int64_t p = 0; p < 300; ++p)
              sum += inputs[0][i * 300 + p] * inputs[1][j * 300 + p];
            y[i * 90 + j] = sum;
          }
        }
        return std::vector<std::vector<double>>{y};
      },
      1e-4);
}

TEST(GemmOpTest, ShapesAndErrors) {
  // An unknown C is a bias per column, (N).
  OpCase inferred{"Gemm", {}, {{kM, kK}, {kK, kN}}};
  EXPECT_EQ(MakeInputs(inferred, DType::kFloat64)[2].shape(), (Shape{kN}));
  ExpectShapeError({"Gemm", {}, {{3, 5}, {4, 6}}}, {"(3,5)", "(4,6)", "inner dimension"});
  ExpectShapeError({"Gemm", {{"transA", "1"}}, {{3, 5}, {5, 6}}}, {"(3,5)", "transA", "(5,6)"});
  ExpectShapeError({"Gemm", {}, {{3, 5}, {5, 4}, {2, 4}}}, {"'C' (2,4)", "(3,4)"});
  ExpectShapeError({"Gemm", {}, {{3, 5}, {5, 4}, {1, 3, 4}}}, {"(1,3,4)"});
  ExpectShapeError({"Gemm", {{"no_bias", "1"}}, {{3, 5, 1}, {5, 4}}}, {"(3,5,1)", "2 dims"});
}

MXLITE_GPU_CASES(Gemm) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  add({"Gemm", {}, {{3, 4}, {4, 5}}});
  add({"Gemm",
       {{"transA", "true"}, {"transB", "true"}, {"alpha", "0.5"}, {"beta", "2"}},
       {{4, 3}, {5, 4}, {3, 1}}});
  add({"Gemm", {{"transB", "true"}, {"no_bias", "true"}}, {{3, 4}, {5, 4}}});
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
