// Single-precision GEMM for the CPU kernels (convolution via im2col, FullyConnected, Gemm, MatMul).
//
//   C = alpha * op(A) * op(B) + beta * C,   op(X) = X or X^T,
//
// all matrices row-major: op(A) is m x k, op(B) is k x n, C is m x n; lda, ldb, ldc are the strides
// between consecutive stored rows (A is stored m x k, or k x m when transposed; likewise B).
// beta == 0 never reads C (NaN or garbage in C is overwritten); alpha == 0 or k == 0 never reads A
// or B. The caller owns every buffer; Sgemm keeps no pointer after it returns.
// An Epilogue (ops/cpu/epilogue.h) adds row / column biases and clamps each element of C after
// its sum, inside the micro-kernel's store on the AVX2 path (no second pass over C):
//   C = clamp(alpha * op(A) * op(B) + beta * C + row_bias + column_bias, low, high).
//
// Implementations, chosen at run time (ActiveGemm() says which one and why):
//  - mxlite's BLIS-style GEMM: packed A and B panels, cache blocking, an AVX2+FMA 6x16
//    micro-kernel. Used when the CPU supports avx2 and fma. A product with one row (m == 1, e.g.
//    FullyConnected at batch 1) skips the packing and reads op(B) once in place (dot products or
//    row updates); being bound by memory bandwidth, it splits across threads once each streams
//    256 KiB of op(B).
//  - Eigen 3.4's GEMM, the portable reference, on CPUs without them or when forced with
//    SetGemmImplementation(GemmImplementation::kEigen) (tests and comparisons).
// Both split C into blocks run on the intra-op pool (ops/cpu/parallel.h) when the product is large
// enough, so IntraOpThreads() / MXNET_OMP_MAX_THREADS decides the thread count. The packed GEMM
// sums every element of C in the same order whatever the thread count (bitwise-identical results);
// Eigen's blocking depends on the block shape, so its results may differ in the last bits.
//
// Packing buffers are per thread, 64-byte aligned, allocated on first use, grown when a larger
// problem needs it and reused afterwards (fresh pages cost ~10 µs each to fault in here).
//
// Thread safety: Sgemm may be called concurrently from several threads on disjoint C.
// SetGemmImplementation() may be called at any time; a call already running finishes as it began.
// Errors: negative sizes, leading dimensions smaller than the stored row width, or null pointers
// for non-empty operands throw mxlite::Error naming the argument.
#pragma once

#include <cstdint>
#include <string>

#include "ops/cpu/epilogue.h"

namespace mxlite::cpu {

enum class Transpose { kNo, kYes };

void Sgemm(Transpose trans_a, Transpose trans_b, int64_t m, int64_t n, int64_t k, float alpha,
           const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
           int64_t ldc);
void Sgemm(Transpose trans_a, Transpose trans_b, int64_t m, int64_t n, int64_t k, float alpha,
           const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
           int64_t ldc, const Epilogue<float>& epilogue);

enum class GemmImplementation {
  kAuto,     // the fastest one this CPU supports (the default)
  kAvx2Fma,  // mxlite's packed GEMM with the AVX2+FMA 6x16 micro-kernel
  kEigen,    // Eigen 3.4's GEMM (portable reference)
};

// What Sgemm uses now, and why; printed by `mxlite info`.
struct GemmInfo {
  GemmImplementation implementation = GemmImplementation::kEigen;  // never kAuto
  std::string name;      // "mxlite AVX2+FMA 6x16 micro-kernel"
  std::string reason;    // "cpu supports avx2, fma"
  std::string blocking;  // "MC=144 KC=256 NC=3072", empty for Eigen
  int threads = 1;       // IntraOpThreads() of the caller

  // "mxlite AVX2+FMA 6x16 micro-kernel, MC=144 KC=256 NC=3072, 2 threads (cpu supports avx2, fma)"
  std::string ToString() const;
};

GemmInfo ActiveGemm();

// Selects the implementation for every later Sgemm call in the process. kAuto restores the default.
// Throws mxlite::Error when the CPU cannot run the one asked for (kAvx2Fma without avx2/fma).
void SetGemmImplementation(GemmImplementation implementation);

// True when this CPU can run the AVX2+FMA micro-kernel.
bool CpuSupportsAvx2Fma();

}  // namespace mxlite::cpu
