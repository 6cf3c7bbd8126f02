// The full-width exp, sigmoid, silu and gelu (ops/cpu/vector_math.h): on every instruction set
// this CPU runs, against double precision over the whole float range (denormal results,
// saturation, infinities, NaN), on every length up to past two vectors (the masked and scalar
// tails), and silu with the bits of x * sigmoid(x); softmax's exp-and-sum of shifted values.
#include "ops/cpu/vector_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ops/cpu/avx512.h"
#include "ops/cpu/gemm.h"

namespace mxlite::cpu {
namespace {

std::vector<VectorIsa> IsasHere() {
  std::vector<VectorIsa> isas = {VectorIsa::kEigen};
  if (CpuSupportsAvx2Fma()) isas.push_back(VectorIsa::kAvx2);
  if (CpuSupportsAvx512f()) isas.push_back(VectorIsa::kAvx512);
  return isas;
}

const char* Name(VectorIsa isa) {
  return isa == VectorIsa::kAvx512 ? "avx512" : isa == VectorIsa::kAvx2 ? "avx2" : "eigen";
}

// Every value from -110 to 100 in steps of 1/64, then the edges.
std::vector<float> Inputs() {
  std::vector<float> x;
  for (int i = -110 * 64; i <= 100 * 64; ++i) x.push_back(static_cast<float>(i) / 64.0f);
  const float inf = std::numeric_limits<float>::infinity();
  for (float edge : {0.0f, -0.0f, 1e-30f, -1e-30f, 88.72f, 88.73f, -87.33f, -103.9f, -104.1f,
                     inf, -inf, std::numeric_limits<float>::denorm_min()}) {
    x.push_back(edge);
  }
  return x;
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// |got - want| within a few float ulps of want, or of the smallest denormals near 0. Eigen's exp
// (the fallback without AVX2) stops at the smallest normal float: below it only the magnitude is
// right.
void ExpectClose(float got, double want, float x, const char* what, VectorIsa isa) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << "(" << x << ") = " << got;
    return;
  }
  const double wanted = static_cast<float>(want);  // what float can hold (inf past the range)
  if (std::isinf(wanted)) {
    EXPECT_EQ(got, wanted) << what << "(" << x << ")";
    return;
  }
  const double floor = isa == VectorIsa::kEigen ? 3e-39 : 1e-44;
  EXPECT_LE(std::abs(got - want), 4e-7 * std::abs(want) + floor) << what << "(" << x << ") = "
                                                                   << got << ", want " << want;
}

TEST(VectorMathTest, MatchesDoublePrecisionOnEveryInstructionSet) {
  const std::vector<float> x = Inputs();
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> e(x.size()), s(x.size()), u(x.size());
  for (VectorIsa isa : IsasHere()) {
    SCOPED_TRACE(Name(isa));
    detail::ExpFloatsWith(isa, x.data(), e.data(), n);
    detail::SigmoidFloatsWith(isa, x.data(), s.data(), n);
    detail::SiluFloatsWith(isa, x.data(), u.data(), n);
    for (size_t i = 0; i < x.size(); ++i) {
      ExpectClose(e[i], std::exp(double{x[i]}), x[i], "exp", isa);
      if (x[i] < -88.7228f) {  // e^-x overflows a float: the formula gives 0, as in PyTorch
        EXPECT_EQ(s[i], 0.0f) << "sigmoid(" << x[i] << ")";
      } else {
        ExpectClose(s[i], Sigmoid(x[i]), x[i], "sigmoid", isa);
        ExpectClose(u[i], x[i] * Sigmoid(x[i]), x[i], "silu", isa);
      }
      // silu rounds as sigmoid and a product apart do (-inf * 0 is NaN either way).
      const float apart = x[i] * s[i];
      if (std::isnan(apart)) {
        EXPECT_TRUE(std::isnan(u[i])) << "silu(" << x[i] << ")";
      } else {
        EXPECT_EQ(u[i], apart) << "silu(" << x[i] << ")";
      }
    }
    float nan = std::numeric_limits<float>::quiet_NaN(), out = 0;
    detail::SigmoidFloatsWith(isa, &nan, &out, 1);
    EXPECT_TRUE(std::isnan(out));
  }
}

double Gelu(double x) { return x / 2 * std::erfc(-x / std::sqrt(2.0)); }

// GELU keeps its relative accuracy where x is very negative (erfc, not 1 + erf). The error grows
// with x^2 there: x / sqrt 2 is rounded to a float before it is squared, as in PyTorch's float
// GELU. Eigen's exp (the fallback without AVX2) stops at the smallest normal float.
TEST(VectorMathTest, GeluMatchesDoublePrecisionOnEveryInstructionSet) {
  std::vector<float> x;
  for (int i = -20 * 64; i <= 20 * 64; ++i) x.push_back(static_cast<float>(i) / 64.0f);
  const float inf = std::numeric_limits<float>::infinity();
  for (float edge : {0.0f, -0.0f, 1e-30f, -1e-30f, inf, 1e30f, -1e30f}) x.push_back(edge);
  std::vector<float> y(x.size());
  for (VectorIsa isa : IsasHere()) {
    SCOPED_TRACE(Name(isa));
    detail::GeluFloatsWith(isa, x.data(), y.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = Gelu(x[i]);
      if (std::isinf(want)) {
        EXPECT_EQ(y[i], want) << "gelu(" << x[i] << ")";
        continue;
      }
      const double xx = std::min(double{x[i]} * x[i], 400.0);
      const double floor = isa == VectorIsa::kEigen ? 3e-38 * std::abs(x[i]) : 1e-44;
      EXPECT_LE(std::abs(y[i] - want), (4e-7 + 3e-7 * xx) * std::abs(want) + floor)
          << "gelu(" << x[i] << ") = " << y[i] << ", want " << want;
    }
    float nan = std::numeric_limits<float>::quiet_NaN(), out = 0;
    detail::GeluFloatsWith(isa, &nan, &out, 1);
    EXPECT_TRUE(std::isnan(out));
  }
}

TEST(VectorMathTest, EveryLengthAndTailIsComputed) {
  for (VectorIsa isa : IsasHere()) {
    SCOPED_TRACE(Name(isa));
    for (int64_t n = 0; n <= 100; ++n) {  // past four vectors at a time plus two and a tail
      std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n) + 1, -7.0f);
      for (int64_t i = 0; i < n; ++i) x[i] = 0.17f * static_cast<float>(i) - 8.0f;
      detail::SigmoidFloatsWith(isa, x.data(), y.data(), n);
      for (int64_t i = 0; i < n; ++i) ExpectClose(y[i], Sigmoid(x[i]), x[i], "sigmoid", isa);
      EXPECT_EQ(y[n], -7.0f) << "wrote past the end at length " << n;
      detail::GeluFloatsWith(isa, x.data(), y.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        EXPECT_NEAR(y[i], Gelu(x[i]), 1e-6 * (1 + std::abs(x[i]))) << "gelu, length " << n;
      }
      EXPECT_EQ(y[n], -7.0f) << "gelu wrote past the end at length " << n;
    }
  }
}

// Vectors computed together (several in lockstep) and a float computed alone (a tail of one)
// give the same bits on the vector instruction sets: where an element falls in an array does not
// change its value (Eigen's fallback computes its tail with the scalar functions).
TEST(VectorMathTest, AnElementHasTheSameBitsWhereverItFalls) {
  std::vector<float> x(211);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i) * 0.7f) * 9.0f;
  using Fn = void (*)(VectorIsa, const float*, float*, int64_t);
  for (VectorIsa isa : IsasHere()) {
    if (isa == VectorIsa::kEigen) continue;
    SCOPED_TRACE(Name(isa));
    for (Fn fn : {Fn{detail::ExpFloatsWith}, Fn{detail::SigmoidFloatsWith},
                  Fn{detail::SiluFloatsWith}, Fn{detail::GeluFloatsWith}}) {
      std::vector<float> whole(x.size());
      fn(isa, x.data(), whole.data(), static_cast<int64_t>(x.size()));
      for (size_t i = 0; i < x.size(); ++i) {
        float alone = 0.0f;
        fn(isa, &x[i], &alone, 1);
        ASSERT_EQ(alone, whole[i]) << "element " << i << " of x = " << x[i];
      }
    }
    // Softmax's exps likewise, and the sum is the same whatever computes the exps.
    std::vector<float> exps(x.size());
    detail::ExpShiftedSumFloatsWith(isa, x.data(), 9.0f, exps.data(),
                                    static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      float alone = 0.0f;
      detail::ExpShiftedSumFloatsWith(isa, &x[i], 9.0f, &alone, 1);
      ASSERT_EQ(alone, exps[i]) << "exp of element " << i;
    }
  }
}

TEST(VectorMathTest, InPlaceAndSplitOverThreadsAgreeWithOneChunk) {
  std::vector<float> x(100003), whole(x.size()), in_place;
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i)) * 12.0f;
  detail::SiluFloatsWith(BestVectorIsa(), x.data(), whole.data(), static_cast<int64_t>(x.size()));
  in_place = x;
  SiluFloats(in_place.data(), in_place.data(), static_cast<int64_t>(x.size()));
  EXPECT_EQ(in_place, whole);
}

// ExpShiftedSumFloats (softmax's rows): every element as exp(x - shift) would give it, the sum of
// exactly those values within float rounding, nothing written past the end or at all without y,
// and the same bits in place.
TEST(VectorMathTest, ExpShiftedSumOnEveryLength) {
  for (VectorIsa isa : IsasHere()) {
    SCOPED_TRACE(Name(isa));
    for (int64_t n = 0; n <= 100; ++n) {
      std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n) + 1, -7.0f);
      for (int64_t i = 0; i < n; ++i) x[i] = 0.37f * static_cast<float>(i % 23) - 3.0f;
      const float shift = n == 0 ? 0.0f : *std::max_element(x.begin(), x.end());
      const float sum = detail::ExpShiftedSumFloatsWith(isa, x.data(), shift, y.data(), n);
      double want_sum = 0.0, got_sum = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        ExpectClose(y[i], std::exp(static_cast<double>(x[i] - shift)), x[i], "exp", isa);
        want_sum += std::exp(static_cast<double>(x[i] - shift));
        got_sum += y[i];
      }
      EXPECT_EQ(y[n], -7.0f) << "wrote past the end at length " << n;
      EXPECT_NEAR(sum, got_sum, 1e-6 * got_sum) << "length " << n;
      EXPECT_NEAR(sum, want_sum, 2e-6 * want_sum) << "length " << n;
      EXPECT_EQ(detail::ExpShiftedSumFloatsWith(isa, x.data(), shift, nullptr, n), sum);
      std::vector<float> in_place = x;
      EXPECT_EQ(detail::ExpShiftedSumFloatsWith(isa, in_place.data(), shift, in_place.data(), n),
                sum);
      EXPECT_TRUE(std::equal(in_place.begin(), in_place.end(), y.begin()));
    }
  }
}

// Softmax's exps under the smallest normal float are 0, never denormals (a masked attention's
// -100 logits); those at or above it keep exp's accuracy. NaN stays NaN.
TEST(VectorMathTest, ExpShiftedSumWritesNoDenormals) {
  const std::vector<float> x = {0.0f,   -80.0f,  -87.3f,  -87.34f, -87.5f, -90.0f,
                                -95.0f, -100.0f, -103.9f, -110.0f, -1e30f, 0.0f,
                                -88.0f, -86.0f,  -99.0f,  -101.0f, -87.0f, -89.0f};
  for (VectorIsa isa : IsasHere()) {
    SCOPED_TRACE(Name(isa));
    for (int64_t n = 1; n <= static_cast<int64_t>(x.size()); ++n) {
      std::vector<float> y(static_cast<size_t>(n));
      detail::ExpShiftedSumFloatsWith(isa, x.data(), 0.0f, y.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        EXPECT_NE(std::fpclassify(y[i]), FP_SUBNORMAL) << "exp(" << x[i] << ") = " << y[i];
        const double want = std::exp(static_cast<double>(x[i]));
        if (want >= std::numeric_limits<float>::min()) {
          ExpectClose(y[i], want, x[i], "exp", isa);
        } else {
          EXPECT_EQ(y[i], 0.0f) << "exp(" << x[i] << ")";
        }
      }
    }
    const float nan = std::numeric_limits<float>::quiet_NaN();
    float out = 0.0f;
    detail::ExpShiftedSumFloatsWith(isa, &nan, 0.0f, &out, 1);
    EXPECT_TRUE(std::isnan(out));
  }
}

// SoftmaxRowFloats: the same bits as its steps done one by one (the max, the shifted exps and
// their sum, the division, the flush under the smallest normal float), on every length around the
// vector width, in place too, with masked (-100) entries among them.
TEST(VectorMathTest, SoftmaxRowIsItsStepsInOneKernel) {
  for (VectorIsa isa : IsasHere()) {
    SCOPED_TRACE(Name(isa));
    for (int64_t n = 1; n <= 70; ++n) {
      std::vector<float> x(static_cast<size_t>(n)), want(x.size()), got(x.size() + 1, -7.0f);
      for (int64_t i = 0; i < n; ++i) {
        x[i] = 0.41f * static_cast<float>(i % 17) - 2.0f - (i % 5 == 3 ? 100.0f : 0.0f);
      }
      const float max = *std::max_element(x.begin(), x.end());
      const float sum = detail::ExpShiftedSumFloatsWith(isa, x.data(), max, want.data(), n);
      for (float& p : want) {
        p /= sum;
        if (p < std::numeric_limits<float>::min()) p = 0.0f;
      }
      detail::SoftmaxRowFloatsWith(isa, x.data(), got.data(), n);
      EXPECT_TRUE(std::equal(want.begin(), want.end(), got.begin())) << "length " << n;
      EXPECT_EQ(got[static_cast<size_t>(n)], -7.0f) << "wrote past the end at length " << n;
      std::vector<float> in_place = x;
      detail::SoftmaxRowFloatsWith(isa, in_place.data(), in_place.data(), n);
      EXPECT_EQ(in_place, want) << "in place, length " << n;
    }
  }
}

}  // namespace
}  // namespace mxlite::cpu
