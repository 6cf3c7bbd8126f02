// Single-precision GEMM for the CPU kernels (convolution via im2col, FullyConnected, Gemm, MatMul).
//
//   C = alpha * op(A) * op(B) + beta * C,   op(X) = X or X^T,
//
// all matrices row-major: op(A) is m x k, op(B) is k x n, C is m x n; lda, ldb, ldc are the strides
// between consecutive stored rows (A is stored m x k, or k x m when transposed; likewise B).
// beta == 0 never reads C (NaN or garbage in C is overwritten); alpha == 0 or k == 0 never reads A
// or B. The caller owns every buffer; Sgemm keeps no pointer after it returns.
// An Epilogue (ops/cpu/epilogue.h) adds row / column biases and a residual matrix and clamps each
// element of C after its sum, inside the micro-kernel's store on the AVX2 path (no second pass
// over C):
//   C = clamp(alpha * op(A) * op(B) + beta * C + row_bias + column_bias + residual, low, high).
//
// Implementations, chosen at run time (ActiveGemm() says which one and why):
//  - mxlite's BLIS-style GEMM: packed A and B panels, cache blocking, an AVX2+FMA 6x16
//    micro-kernel (a row-major A is read in place, not packed, when its whole depth is one k block
//    or a thread's product has at most 512 columns). Used when the CPU supports avx2 and fma. A
//    product with one row (m == 1, e.g. FullyConnected at batch 1) skips the packing and reads
//    op(B) once in place (dot products or row updates); being bound by memory bandwidth, it splits
//    across threads once each streams 256 KiB of op(B).
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
#include <memory>
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

// One operand packed ahead of time, for products that reuse it many times: a convolution's weight
// at inference (as Intel MKL's cblas_sgemm_pack and ONNX Runtime's MLAS pack B once). Either
// op(A) (m x k) or op(B) (k x n), copied into the micro-kernel's panels for every k block, so a
// product with it packs only the other operand. The layout depends only on the operand's shape,
// not on the thread count or the other operand: any Sgemm below with the same m / n / k may use
// it, from any thread. On the AVX2 path sums are formed in the same order as by the unpacked call,
// so results are bitwise those of Sgemm on the plain operand (except one-row products, whose plain
// path reads op(B) in place); under Eigen the panels are unpacked into a temporary first (equal
// within rounding). Immutable once packed; `bytes()` is its memory.
class PackedGemmOperand {
 public:
  enum class Side { kA, kB };

  // op(X) as the `side` operand: rows x columns as op(X) is (m x k for A, k x n for B), X stored
  // row-major with leading dimension ld (X itself is columns x rows when trans is kYes).
  // Errors name the argument: negative sizes, ld below the stored width, null X when not empty.
  static PackedGemmOperand Pack(Side side, Transpose trans, int64_t rows, int64_t columns,
                                const float* x, int64_t ld);

  PackedGemmOperand() = default;
  Side side() const { return side_; }
  int64_t rows() const { return rows_; }
  int64_t columns() const { return columns_; }
  size_t bytes() const;

  // For gemm.cc: the panels and the padded extent along the panel axis (m for A, n for B).
  const float* panels() const { return panels_.get(); }
  int64_t padded_extent() const { return padded_extent_; }

 private:
  struct Free {
    void operator()(float* p) const;
  };
  Side side_ = Side::kA;
  int64_t rows_ = 0, columns_ = 0, padded_extent_ = 0;
  std::unique_ptr<float, Free> panels_;
};

// C (m x n) = epilogue(alpha * A * op(B) + beta * C) with A packed (a.side() == kA, m x k).
void Sgemm(const PackedGemmOperand& a, Transpose trans_b, int64_t n, float alpha, const float* b,
           int64_t ldb, float beta, float* c, int64_t ldc,
           const Epilogue<float>& epilogue = Epilogue<float>{});
// C (m x n) = epilogue(alpha * op(A) * B + beta * C) with B packed (b.side() == kB, k x n).
void Sgemm(Transpose trans_a, int64_t m, float alpha, const float* a, int64_t lda,
           const PackedGemmOperand& b, float beta, float* c, int64_t ldc,
           const Epilogue<float>& epilogue = Epilogue<float>{});

enum class GemmImplementation {
  kAuto,     // the fastest one this CPU supports (the default)
  kAvx2Fma,  // mxlite's packed GEMM with the AVX2+FMA 6x16 micro-kernel
  kAvx512,   // the same, full tiles in 12x32 blocks (12x16 at an odd last panel) in AVX-512
             // registers: where measured faster, i.e. on CPUs that run a 512-bit FMA at twice
             // the work of a 256-bit one
  kEigen,    // Eigen 3.4's GEMM (portable reference)
};

// What Sgemm uses now, and why; printed by `mxlite info`.
struct GemmInfo {
  GemmImplementation implementation = GemmImplementation::kEigen;  // never kAuto
  std::string name;      // "mxlite AVX2+FMA 6x16 micro-kernel"
  std::string reason;    // "cpu supports avx2, fma"
  std::string blocking;  // "KC<=1024, MC x KC 144 KiB, KC x NC 3 MiB", empty for Eigen
  int threads = 1;       // IntraOpThreads() of the caller

  // "mxlite AVX2+FMA 6x16 micro-kernel, KC<=1024, MC x KC 144 KiB, KC x NC 3 MiB, 2 threads (cpu
  // supports avx2, fma)"
  std::string ToString() const;
};

GemmInfo ActiveGemm();

// True when Sgemm runs mxlite's packed GEMM now, which reads a PackedGemmOperand in place; under
// Eigen a packed operand is unpacked on every product, so packing ahead would only add a copy.
// Cheap enough for every call (ActiveGemm() builds its description strings).
bool PackedOperandsReadInPlace();

// True when Sgemm's packed GEMM runs its full tiles in AVX-512 registers now (kAvx512): kernels
// outside gemm.cc that call the micro-kernels themselves (Winograd's products) pick the same
// tiles. Cheap enough for every call.
bool GemmUsesAvx512Tiles();

// Selects the implementation for every later Sgemm call in the process. kAuto restores the default.
// Throws mxlite::Error when the CPU cannot run the one asked for (kAvx2Fma without avx2/fma).
void SetGemmImplementation(GemmImplementation implementation);

// True when this CPU can run the AVX2+FMA micro-kernel.
bool CpuSupportsAvx2Fma();

}  // namespace mxlite::cpu
