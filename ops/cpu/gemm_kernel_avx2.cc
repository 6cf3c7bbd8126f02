#include "ops/cpu/gemm_kernel_avx2.h"

#if MXLITE_HAS_AVX2_KERNEL
#include <immintrin.h>

// Every function here carries target("avx2,fma") explicitly instead of the file being compiled with
// -mavx2: no inline function shared with other files can be emitted with AVX2 here and then be
// picked by the linker for a CPU without it.
#define MXLITE_AVX2 __attribute__((target("avx2,fma")))

namespace mxlite::cpu::detail {
namespace {

constexpr int kMr = kAvx2KernelRows;
constexpr int kNr = kAvx2KernelColumns;
constexpr int kPrefetchAheadFloats = 4 * 4 * kMr;  // four unrolled iterations

// One row of the tile: c_row = alpha * acc + beta * c_row, without reading C when beta == 0.
MXLITE_AVX2 inline void StoreRow(float* c, __m256 acc0, __m256 acc1, __m256 alpha, float beta) {
  acc0 = _mm256_mul_ps(acc0, alpha);
  acc1 = _mm256_mul_ps(acc1, alpha);
  if (beta == 0.0f) {
    // Nothing; C is write-only.
  } else if (beta == 1.0f) {
    acc0 = _mm256_add_ps(acc0, _mm256_loadu_ps(c));
    acc1 = _mm256_add_ps(acc1, _mm256_loadu_ps(c + 8));
  } else {
    const __m256 beta_v = _mm256_set1_ps(beta);
    acc0 = _mm256_fmadd_ps(beta_v, _mm256_loadu_ps(c), acc0);
    acc1 = _mm256_fmadd_ps(beta_v, _mm256_loadu_ps(c + 8), acc1);
  }
  _mm256_storeu_ps(c, acc0);
  _mm256_storeu_ps(c + 8, acc1);
}

// Partial tiles go through a local tile so the vector loop never runs out of bounds.
void MergePartialTile(const float* tile, float* c, int64_t ldc, int rows, int columns,
                      float alpha, float beta) {
  for (int r = 0; r < rows; ++r) {
    float* c_row = c + r * ldc;
    const float* t_row = tile + r * kNr;
    if (beta == 0.0f) {
      for (int j = 0; j < columns; ++j) c_row[j] = alpha * t_row[j];
    } else {
      for (int j = 0; j < columns; ++j) c_row[j] = alpha * t_row[j] + beta * c_row[j];
    }
  }
}

}  // namespace

MXLITE_AVX2 void SgemmMicroKernelAvx2Fma(int64_t kc, const float* a_panel, const float* b_panel,
                                         float* c, int64_t ldc, int rows, int columns, float alpha,
                                         float beta) {
  // 12 accumulators + 2 B vectors + 1 broadcast = 15 of the 16 ymm registers.
  __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
  __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
  __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
  __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
  __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
  __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();

  const float* a = a_panel;
  const float* b = b_panel;
  // The C tile is needed right after the loop; start fetching it now.
  for (int r = 0; r < rows; ++r) {
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + kNr - 1), _MM_HINT_T0);
  }

#define MXLITE_KERNEL_STEP(p)                                   \
  do {                                                          \
    const __m256 b0 = _mm256_load_ps(b + (p) * kNr);            \
    const __m256 b1 = _mm256_load_ps(b + (p) * kNr + 8);        \
    __m256 av = _mm256_broadcast_ss(a + (p) * kMr + 0);         \
    c00 = _mm256_fmadd_ps(av, b0, c00);                         \
    c01 = _mm256_fmadd_ps(av, b1, c01);                         \
    av = _mm256_broadcast_ss(a + (p) * kMr + 1);                \
    c10 = _mm256_fmadd_ps(av, b0, c10);                         \
    c11 = _mm256_fmadd_ps(av, b1, c11);                         \
    av = _mm256_broadcast_ss(a + (p) * kMr + 2);                \
    c20 = _mm256_fmadd_ps(av, b0, c20);                         \
    c21 = _mm256_fmadd_ps(av, b1, c21);                         \
    av = _mm256_broadcast_ss(a + (p) * kMr + 3);                \
    c30 = _mm256_fmadd_ps(av, b0, c30);                         \
    c31 = _mm256_fmadd_ps(av, b1, c31);                         \
    av = _mm256_broadcast_ss(a + (p) * kMr + 4);                \
    c40 = _mm256_fmadd_ps(av, b0, c40);                         \
    c41 = _mm256_fmadd_ps(av, b1, c41);                         \
    av = _mm256_broadcast_ss(a + (p) * kMr + 5);                \
    c50 = _mm256_fmadd_ps(av, b0, c50);                         \
    c51 = _mm256_fmadd_ps(av, b1, c51);                         \
  } while (0)

  int64_t p = 0;
  for (; p + 4 <= kc; p += 4) {
    // The B panel stays in L1 across the micro-tiles of a macro-kernel; the A panel streams from
    // L2, so fetch it a few iterations ahead.
    _mm_prefetch(reinterpret_cast<const char*>(a + kPrefetchAheadFloats), _MM_HINT_T0);
    MXLITE_KERNEL_STEP(0);
    MXLITE_KERNEL_STEP(1);
    MXLITE_KERNEL_STEP(2);
    MXLITE_KERNEL_STEP(3);
    a += 4 * kMr;
    b += 4 * kNr;
  }
  for (; p < kc; ++p) {
    MXLITE_KERNEL_STEP(0);
    a += kMr;
    b += kNr;
  }
#undef MXLITE_KERNEL_STEP

  const __m256 alpha_v = _mm256_set1_ps(alpha);
  if (rows == kMr && columns == kNr) {
    StoreRow(c + 0 * ldc, c00, c01, alpha_v, beta);
    StoreRow(c + 1 * ldc, c10, c11, alpha_v, beta);
    StoreRow(c + 2 * ldc, c20, c21, alpha_v, beta);
    StoreRow(c + 3 * ldc, c30, c31, alpha_v, beta);
    StoreRow(c + 4 * ldc, c40, c41, alpha_v, beta);
    StoreRow(c + 5 * ldc, c50, c51, alpha_v, beta);
    return;
  }
  alignas(32) float tile[kMr * kNr];
  _mm256_store_ps(tile + 0 * kNr, c00);
  _mm256_store_ps(tile + 0 * kNr + 8, c01);
  _mm256_store_ps(tile + 1 * kNr, c10);
  _mm256_store_ps(tile + 1 * kNr + 8, c11);
  _mm256_store_ps(tile + 2 * kNr, c20);
  _mm256_store_ps(tile + 2 * kNr + 8, c21);
  _mm256_store_ps(tile + 3 * kNr, c30);
  _mm256_store_ps(tile + 3 * kNr + 8, c31);
  _mm256_store_ps(tile + 4 * kNr, c40);
  _mm256_store_ps(tile + 4 * kNr + 8, c41);
  _mm256_store_ps(tile + 5 * kNr, c50);
  _mm256_store_ps(tile + 5 * kNr + 8, c51);
  MergePartialTile(tile, c, ldc, rows, columns, alpha, beta);
}

}  // namespace mxlite::cpu::detail

#endif  // MXLITE_HAS_AVX2_KERNEL
