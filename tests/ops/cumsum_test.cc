// cumsum (ops/cumsum.cc): running sums along every axis of 1-D to 3-D data, exclusive and
// reverse and both, negative axes; the gradient (the sums the other way round); int32 and int64
// sums exact past float's precision; a bad axis named.
#include <gtest/gtest.h>

#include "tests/ops/op_harness.h"
#include "tests/ops/reference.h"

namespace mxlite::testing {
namespace {

struct CumsumCase {
  int64_t axis;
  bool exclusive, reverse;
  Shape shape;
};

OpCase Case(const CumsumCase& c) {
  return OpCase{"cumsum",
                {{"axis", std::to_string(c.axis)},
                 {"exclusive", c.exclusive ? "true" : "false"},
                 {"reverse", c.reverse ? "true" : "false"}},
                {c.shape}};
}

// Element by element: the sum over the axis positions before it (after it, reverse), itself
// included unless exclusive.
std::vector<double> Reference(const CumsumCase& c, const std::vector<double>& in) {
  const int a = static_cast<int>(c.axis < 0 ? c.axis + c.shape.ndim() : c.axis);
  const int64_t length = c.shape[a], inner = c.shape.size(a + 1, c.shape.ndim());
  std::vector<double> out(in.size());
  for (size_t e = 0; e < in.size(); ++e) {
    const int64_t k = (static_cast<int64_t>(e) / inner) % length;
    const int64_t line_start = static_cast<int64_t>(e) - k * inner;
    double sum = 0.0;
    for (int64_t j = 0; j < length; ++j) {
      const bool before = c.reverse ? j > k : j < k;
      if (before || (j == k && !c.exclusive))
        sum += in[static_cast<size_t>(line_start + j * inner)];
    }
    out[e] = sum;
  }
  return out;
}

class CumsumTest : public ::testing::TestWithParam<CumsumCase> {};

TEST_P(CumsumTest, SumsAlongTheAxisAndBack) {
  const CumsumCase c = GetParam();
  CheckForwardAgainstReference(
      Case(c), [c](const std::vector<std::vector<double>>& in, const std::vector<Shape>&) {
        return std::vector<std::vector<double>>{Reference(c, in[0])};
      });
  CheckGradients(Case(c));
}

INSTANTIATE_TEST_SUITE_P(
    Axes, CumsumTest,
    ::testing::Values(CumsumCase{0, false, false, {7}}, CumsumCase{0, true, false, {7}},
                      CumsumCase{0, false, true, {7}}, CumsumCase{0, true, true, {7}},
                      CumsumCase{0, false, false, {3, 4}}, CumsumCase{1, true, false, {3, 4}},
                      CumsumCase{-1, false, true, {3, 4}}, CumsumCase{1, true, true, {2, 5, 3}},
                      CumsumCase{-3, false, false, {2, 5, 3}},
                      CumsumCase{2, false, true, {2, 5, 3}},
                      CumsumCase{1, false, false, {2, 1, 3}}));

TEST(CumsumDTypeTest, IntegersSumExactly) {
  const CumsumCase c{0, false, false, {5}};
  for (DType dtype : {DType::kInt32, DType::kInt64}) {
    std::vector<HostTensor> inputs = MakeInputs(Case(c), dtype);
    for (int64_t i = 0; i < 5; ++i)
      inputs[0].Set(i, dtype == DType::kInt32 ? 400000001.0 : 1e15 + 1);
    const OpRun run = RunForward(Case(c), inputs);
    ASSERT_EQ(run.outputs[0].dtype(), dtype);
    if (dtype == DType::kInt64) {
      EXPECT_EQ(run.outputs[0].Values().back(), 5e15 + 5);
    } else {
      EXPECT_EQ(run.outputs[0].Values()[4],
                static_cast<double>(static_cast<int32_t>(2000000005LL)));
    }
  }
}

TEST(CumsumDTypeTest, Int32SumsWrapAsTheTypeDoes) {
  const CumsumCase c{0, false, false, {3}};
  std::vector<HostTensor> inputs = MakeInputs(Case(c), DType::kInt32);
  for (int64_t i = 0; i < 3; ++i) inputs[0].Set(i, 2000000000.0);
  const OpRun run = RunForward(Case(c), inputs);
  // 4e9 and 6e9 modulo 2^32, as two's complement int32.
  EXPECT_EQ(run.outputs[0].Values(), (std::vector<double>{2000000000.0, 4000000000.0 - 4294967296.0,
                                                          6000000000.0 - 4294967296.0}));
}

TEST(CumsumShapeTest, AnAxisOutsideTheDataIsNamed) {
  ExpectShapeError(Case({2, false, false, {3, 4}}), {"cumsum", "axis 2 is outside"});
}

MXLITE_GPU_CASES(Cumsum) {
  return {Case({1, true, false, {3, 4}}), Case({-1, false, true, {2, 5, 3}}),
          Case({0, true, true, {6, 2}})};
}

}  // namespace
}  // namespace mxlite::testing
