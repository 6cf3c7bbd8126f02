// Row-major GEMMs on cuBLAS for the GPU kernels of FullyConnected, Gemm and MatMul (float32,
// float64, and float16 through cublasGemmEx with float accumulation and float alpha / beta, as
// MXNet's float16 GEMMs). cuBLAS is column-major, so C = op(A) op(B) is computed as
// C^T = op(B)^T op(A)^T, which reads the row-major buffers as they are. Host code (g++).
#pragma once

#include <algorithm>
#include <string>
#include <type_traits>

#include "ops/cuda/cuda_util.h"

namespace mxlite::cuda {

// Row-major C (m x n, leading dimension ldc) = alpha * op(A) op(B) + beta * C, with A stored
// (m x k), or (k x m) when trans_a, with row length lda; B likewise (k x n) or (n x k).
template <typename T>
void GemmRowMajor(cublasHandle_t handle, bool trans_a, bool trans_b, int64_t m, int64_t n,
                  int64_t k, double alpha, const T* a, int64_t lda, const T* b, int64_t ldb,
                  double beta, T* c, int64_t ldc, const std::string& owner) {
  if (m == 0 || n == 0) return;
  using Scalar = CudnnScalar<T>;  // float for float16 and float32, double for double
  const Scalar alpha_t = static_cast<Scalar>(alpha), beta_t = static_cast<Scalar>(beta);
  const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int im = CheckedInt(m, owner, "GEMM rows"), in = CheckedInt(n, owner, "GEMM columns"),
            ik = CheckedInt(k, owner, "GEMM depth");
  const int ilda = CheckedInt(std::max<int64_t>(lda, 1), owner, "leading dimension"),
            ildb = CheckedInt(std::max<int64_t>(ldb, 1), owner, "leading dimension"),
            ildc = CheckedInt(std::max<int64_t>(ldc, 1), owner, "leading dimension");
  if constexpr (std::is_same_v<T, float>) {
    MXLITE_CUBLAS_CALL(
        cublasSgemm(handle, op_b, op_a, in, im, ik, &alpha_t, b, ildb, a, ilda, &beta_t, c, ildc),
        owner);
  } else if constexpr (std::is_same_v<T, __half>) {
    MXLITE_CUBLAS_CALL(
        cublasGemmEx(handle, op_b, op_a, in, im, ik, &alpha_t, b, CUDA_R_16F, ildb, a, CUDA_R_16F,
                     ilda, &beta_t, c, CUDA_R_16F, ildc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        owner);
  } else {
    MXLITE_CUBLAS_CALL(
        cublasDgemm(handle, op_b, op_a, in, im, ik, &alpha_t, b, ildb, a, ilda, &beta_t, c, ildc),
        owner);
  }
}

// The same for `count` products whose operands sit `stride_*` elements apart (0: shared).
template <typename T>
void GemmRowMajorBatched(cublasHandle_t handle, bool trans_a, bool trans_b, int64_t m, int64_t n,
                         int64_t k, const T* a, int64_t lda, int64_t stride_a, const T* b,
                         int64_t ldb, int64_t stride_b, T* c, int64_t ldc, int64_t stride_c,
                         int64_t count, const std::string& owner) {
  if (m == 0 || n == 0 || count == 0) return;
  const CudnnScalar<T> one = 1, zero = 0;
  const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int im = CheckedInt(m, owner, "GEMM rows"), in = CheckedInt(n, owner, "GEMM columns"),
            ik = CheckedInt(k, owner, "GEMM depth");
  const int ilda = CheckedInt(std::max<int64_t>(lda, 1), owner, "leading dimension"),
            ildb = CheckedInt(std::max<int64_t>(ldb, 1), owner, "leading dimension"),
            ildc = CheckedInt(std::max<int64_t>(ldc, 1), owner, "leading dimension");
  const int batches = CheckedInt(count, owner, "batch count");
  if constexpr (std::is_same_v<T, float>) {
    MXLITE_CUBLAS_CALL(
        cublasSgemmStridedBatched(handle, op_b, op_a, in, im, ik, &one, b, ildb, stride_b, a, ilda,
                                  stride_a, &zero, c, ildc, stride_c, batches),
        owner);
  } else if constexpr (std::is_same_v<T, __half>) {
    MXLITE_CUBLAS_CALL(cublasGemmStridedBatchedEx(handle, op_b, op_a, in, im, ik, &one, b,
                                                  CUDA_R_16F, ildb, stride_b, a, CUDA_R_16F, ilda,
                                                  stride_a, &zero, c, CUDA_R_16F, ildc, stride_c,
                                                  batches, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                       owner);
  } else {
    MXLITE_CUBLAS_CALL(
        cublasDgemmStridedBatched(handle, op_b, op_a, in, im, ik, &one, b, ildb, stride_b, a, ilda,
                                  stride_a, &zero, c, ildc, stride_c, batches),
        owner);
  }
}

}  // namespace mxlite::cuda
