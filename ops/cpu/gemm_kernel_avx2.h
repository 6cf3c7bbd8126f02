// Internal to ops/cpu/gemm.cc: the AVX2+FMA single-precision micro-kernel. Call it only when the
// CPU supports avx2 and fma (the functions carry target attributes; the rest of the library does
// not assume AVX2). Every AVX2 kernel file includes it for MXLITE_HAS_AVX2_KERNEL and MXLITE_AVX2.
#pragma once

#include <cstdint>

#include "ops/cpu/epilogue.h"

#if defined(__x86_64__) || defined(__i386__)
#define MXLITE_HAS_AVX2_KERNEL 1
#else
#define MXLITE_HAS_AVX2_KERNEL 0
#endif

// The attribute every AVX2 kernel function carries (in any file) instead of its file being
// compiled with -mavx2: no inline function shared with other files can be emitted with AVX2 there
// and then be picked by the linker for a CPU without it.
#define MXLITE_AVX2 __attribute__((target("avx2,fma")))

namespace mxlite::cpu::detail {

inline constexpr int kAvx2KernelRows = 6;      // MR: rows of C per micro-tile
inline constexpr int kAvx2KernelColumns = 16;  // NR: columns of C per micro-tile (two ymm)

// C[0:rows, 0:columns] = alpha * A * B + beta * C over one micro-tile, where
//   A is a packed panel: kc steps of kAvx2KernelRows floats (row r of step p at p*MR + r),
//   B is a packed panel: kc steps of kAvx2KernelColumns floats, 32-byte aligned,
// both zero-padded beyond rows/columns. rows <= MR, columns <= NR. beta == 0 never reads C.
// `epilogue` (offset to the tile: row_bias[r], column_bias[j] and residual[r * residual_stride +
// j] for tile element (r, j)) is applied as each element is stored; pass an empty one for partial
// sums.
void SgemmMicroKernelAvx2Fma(int64_t kc, const float* a_panel, const float* b_panel, float* c,
                             int64_t ldc, int rows, int columns, float alpha, float beta,
                             const Epilogue<float>& epilogue);

// The same over a full-height tile (kAvx2KernelRows rows) whose A rows are read in place from
// row-major A (row r at a + r * lda, kc floats each) instead of a packed panel: for products whose
// A is used by few column panels, packing it would cost a copy of A for little reuse. Sums each
// element in the same order as the packed kernel (same bits).
// `prefetch`: cache lines to fetch on the way, one per four steps (as many as fit), for a later
// tile; none by default.
struct LinePrefetch {
  const char* first = nullptr;  // the first line; the others follow it, 64 bytes apart
  int64_t lines = 0;
};
void SgemmMicroKernelAvx2FmaRowsInPlace(int64_t kc, const float* a, int64_t lda,
                                        const float* b_panel, float* c, int64_t ldc, int columns,
                                        float alpha, float beta, const Epilogue<float>& epilogue,
                                        LinePrefetch prefetch = {});

// Two full-height tiles stacked (rows [0, 2 * MR)) of a narrow panel (columns <= NR / 2) in one
// pass: twelve independent accumulators instead of six per tile. A's element of row r < MR at step p is a_first[r * row_stride + p * step_stride], of
// row MR + r likewise from a_second: packed panels (1, MR) or rows in place (lda, 1). Same bits
// as the other kernels; the epilogue is offset to each tile.
void SgemmNarrowTilePairAvx2Fma(int64_t kc, const float* a_first, const float* a_second,
                                int64_t row_stride, int64_t step_stride, const float* b_panel,
                                float* c, int64_t ldc, int columns, float alpha, float beta,
                                const Epilogue<float>& epilogue);

// The same pair of full-height tiles over a full panel (columns <= NR, any), each row one AVX-512
// register: for CPUs that run AVX-512F (cpu::CpuSupportsAvx512f, ops/cpu/avx512.h) and run 512-bit
// FMAs at full rate. Same bits as the other kernels; stored through the same path.
void SgemmTilePairAvx512(int64_t kc, const float* a_first, const float* a_second,
                         int64_t row_stride, int64_t step_stride, const float* b_panel, float* c,
                         int64_t ldc, int columns, float alpha, float beta,
                         const Epilogue<float>& epilogue);

// Two full-height tiles of two adjacent panels (columns [0, NR) from b_left, [NR, NR +
// right_columns) from b_right, right_columns <= NR): a 12 x 32 block of C, in AVX-512 registers,
// for the same CPUs as SgemmTilePairAvx512. A is read as there. Same bits as the other kernels.
void SgemmTileQuadAvx512(int64_t kc, const float* a_first, const float* a_second,
                         int64_t row_stride, int64_t step_stride, const float* b_left,
                         const float* b_right, float* c, int64_t ldc, int right_columns,
                         float alpha, float beta, const Epilogue<float>& epilogue);

// One tile of `rows` (1..MR) rows of two adjacent panels, as SgemmTileQuadAvx512 does two full
// ones: the rows left under a pair of full tiles, at the cost of their own rows only (the 6x16
// kernel computes all MR rows of a tile, whatever it stores). A's row r at step p is
// a[r * row_stride + p * step_stride]. Same bits as the other kernels.
void SgemmTileOfPanelPairAvx512(int64_t kc, const float* a, int64_t row_stride,
                                int64_t step_stride, int rows, const float* b_left,
                                const float* b_right, float* c, int64_t ldc, int right_columns,
                                float alpha, float beta, const Epilogue<float>& epilogue);

// How much more multiply-add work this CPU does per second in 512-bit registers than in 256-bit
// ones: twelve independent FMA chains of each, the best of a few short runs (microseconds). About 2
// where a core has two full-width 512-bit FMA units (Intel Xeon), about 1 where it splits them
// (Zen 4). Call only on a CPU that runs AVX-512F.
double Fma512To256Rate();

// Packs one full A panel from row-major A: packed[p * MR + r] = a[r * lda + p] for the MR rows
// r and `depth` steps p (8 steps at a time through an 8x8 register transpose). Writes exactly
// MR * depth floats.
void PackRowPanelAvx2(const float* a, int64_t lda, int64_t depth, float* packed);

// Packs one full B panel from B^T stored row-major (each of the NR columns of B contiguous in k):
// packed[p * NR + x] = b[x * ldb + p] for the NR columns x and `depth` steps p (8 steps at a time
// through two 8x8 register transposes). Writes exactly NR * depth floats.
void PackColumnPanelAvx2(const float* b, int64_t ldb, int64_t depth, float* packed);

// Sum of x[i] * y[i] over i < n (four vector partial sums, then a fixed-order reduction: the same
// bits for the same inputs).
float DotAvx2(const float* x, const float* y, int64_t n);

// The dot products of x with the four rows y, y + ld, y + 2 ld, y + 3 ld (each of length n) into
// out[0..3]: x is loaded once for the four, and four rows stream from memory at once (a one-row
// product with a transposed B is bound by memory bandwidth). Two vector partial sums per row, then
// a fixed-order reduction: the same bits for the same inputs.
void Dot4Avx2(const float* x, const float* y, int64_t ld, int64_t n, float* out);

// acc[i] += s * row[i] for i < n.
void AxpyAvx2(float s, const float* row, float* acc, int64_t n);

}  // namespace mxlite::cpu::detail
