// Gemm<T>: the matrix product every CPU kernel uses, for float and double.
//
//   C = alpha * op(A) * op(B) + beta * C      (row-major, leading dimensions as in ops/cpu/gemm.h)
//
// float goes to mxlite's Sgemm (the tuned packed GEMM, multi-threaded); double — used by the
// float64 gradient checks and references — goes to Eigen. beta == 0 never reads C. The overloads
// with an Epilogue (ops/cpu/epilogue.h) add biases and clamp C after the product: inside Sgemm's
// micro-kernel for float, in a pass over C for double.
#pragma once

#include <Eigen/Core>
#include <cstdint>

#include "ops/cpu/epilogue.h"
#include "ops/cpu/gemm.h"

namespace mxlite::cpu {

template <typename T>
void Gemm(Transpose trans_a, Transpose trans_b, int64_t m, int64_t n, int64_t k, T alpha,
          const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

template <>
inline void Gemm<float>(Transpose trans_a, Transpose trans_b, int64_t m, int64_t n, int64_t k,
                        float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                        float beta, float* c, int64_t ldc) {
  Sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <>
inline void Gemm<double>(Transpose trans_a, Transpose trans_b, int64_t m, int64_t n, int64_t k,
                         double alpha, const double* a, int64_t lda, const double* b, int64_t ldb,
                         double beta, double* c, int64_t ldc) {
  using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::OuterStride<>;
  Eigen::Map<Matrix, 0, Stride> c_map(c, m, n, Stride(ldc));
  if (beta == 0.0) {
    c_map.setZero();
  } else if (beta != 1.0) {
    c_map *= beta;
  }
  if (m == 0 || n == 0 || k == 0 || alpha == 0.0) return;
  const bool ta = trans_a == Transpose::kYes, tb = trans_b == Transpose::kYes;
  Eigen::Map<const Matrix, 0, Stride> a_map(a, ta ? k : m, ta ? m : k, Stride(lda));
  Eigen::Map<const Matrix, 0, Stride> b_map(b, tb ? n : k, tb ? k : n, Stride(ldb));
  if (ta && tb) {
    c_map.noalias() += alpha * a_map.transpose() * b_map.transpose();
  } else if (ta) {
    c_map.noalias() += alpha * a_map.transpose() * b_map;
  } else if (tb) {
    c_map.noalias() += alpha * a_map * b_map.transpose();
  } else {
    c_map.noalias() += alpha * a_map * b_map;
  }
}

template <typename T>
void Gemm(Transpose trans_a, Transpose trans_b, int64_t m, int64_t n, int64_t k, T alpha,
          const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc,
          const Epilogue<T>& epilogue);

template <>
inline void Gemm<float>(Transpose trans_a, Transpose trans_b, int64_t m, int64_t n, int64_t k,
                        float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                        float beta, float* c, int64_t ldc, const Epilogue<float>& epilogue) {
  Sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, epilogue);
}

template <>
inline void Gemm<double>(Transpose trans_a, Transpose trans_b, int64_t m, int64_t n, int64_t k,
                         double alpha, const double* a, int64_t lda, const double* b, int64_t ldb,
                         double beta, double* c, int64_t ldc, const Epilogue<double>& epilogue) {
  Gemm<double>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  ApplyEpilogue(epilogue, m, n, c, ldc);
}

}  // namespace mxlite::cpu
