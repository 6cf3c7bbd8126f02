#include "ops/cpu/blas.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace mxlite::cpu {
namespace {

// Gemm<double> (Eigen) and Gemm<float> (Sgemm) against a naive product, all transposes.
template <typename T>
void CheckAgainstNaive(Transpose ta, Transpose tb, int64_t m, int64_t n, int64_t k, T beta) {
  std::mt19937 random(3);
  std::uniform_real_distribution<double> uniform(-1, 1);
  const int64_t lda = (ta == Transpose::kYes ? m : k) + 2;
  const int64_t ldb = (tb == Transpose::kYes ? k : n) + 1;
  const int64_t ldc = n + 3;
  std::vector<T> a((ta == Transpose::kYes ? k : m) * lda), b((tb == Transpose::kYes ? n : k) * ldb),
      c(m * ldc);
  for (T& v : a) v = static_cast<T>(uniform(random));
  for (T& v : b) v = static_cast<T>(uniform(random));
  for (T& v : c) v = static_cast<T>(uniform(random));
  std::vector<T> expected = c;
  const T alpha = static_cast<T>(0.7);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double av = ta == Transpose::kYes ? a[p * lda + i] : a[i * lda + p];
        const double bv = tb == Transpose::kYes ? b[j * ldb + p] : b[p * ldb + j];
        sum += av * bv;
      }
      expected[i * ldc + j] = static_cast<T>(alpha * sum + (beta == 0 ? 0 : beta * c[i * ldc + j]));
    }
  }
  Gemm<T>(ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
  const double tolerance = sizeof(T) == 8 ? 1e-12 : 1e-4;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      ASSERT_NEAR(c[i * ldc + j], expected[i * ldc + j], tolerance) << i << "," << j;
    }
  }
}

TEST(BlasTest, FloatAndDoubleAgreeWithNaiveProduct) {
  for (Transpose ta : {Transpose::kNo, Transpose::kYes}) {
    for (Transpose tb : {Transpose::kNo, Transpose::kYes}) {
      CheckAgainstNaive<double>(ta, tb, 7, 9, 5, 0.0);
      CheckAgainstNaive<double>(ta, tb, 13, 4, 11, 0.5);
      CheckAgainstNaive<float>(ta, tb, 7, 9, 5, 0.0f);
      CheckAgainstNaive<float>(ta, tb, 13, 4, 11, 1.0f);
    }
  }
}

}  // namespace
}  // namespace mxlite::cpu
