// Internal to the AVX2 translation units (gemm_kernel_avx2.cc, conv_winograd_avx2.cc): register
// transposes — six rows of 8 values into 8 steps of a packed 6-row GEMM panel
// (ops/cpu/gemm_kernel_avx2.h: row r of step p at p * 6 + r), and a plain 8x8 one. Include it only
// where AVX2 code is compiled; the functions carry their own target attribute.
#pragma once

#include "ops/cpu/gemm_kernel_avx2.h"

#if MXLITE_HAS_AVX2_KERNEL
#include <immintrin.h>

namespace mxlite::cpu::detail {

// dst[i * 6 + r] = lane i of row r, for the 8 lanes i and the 6 rows r. Each step is stored as 8
// floats, so the call also writes dst[48] and dst[49]: the caller either stores a later step over
// them or has room for them.
MXLITE_AVX2 inline void StoreRowsAsPanelSteps(__m256 r0, __m256 r1,
                                                                      __m256 r2, __m256 r3,
                                                                      __m256 r4, __m256 r5,
                                                                      float* dst) {
  static_assert(kAvx2KernelRows == 6, "the transpose packs six rows");
  constexpr int kRows = kAvx2KernelRows;
  const __m256 zero = _mm256_setzero_ps();
  // Lanes i and i+4 of (r0..r3) and of (r4, r5, 0, 0), then whole steps.
  const __m256 a0 = _mm256_unpacklo_ps(r0, r1), a1 = _mm256_unpackhi_ps(r0, r1);
  const __m256 a2 = _mm256_unpacklo_ps(r2, r3), a3 = _mm256_unpackhi_ps(r2, r3);
  const __m256 a4 = _mm256_unpacklo_ps(r4, r5), a5 = _mm256_unpackhi_ps(r4, r5);
  const __m256 b0 = _mm256_shuffle_ps(a0, a2, 0x44), b1 = _mm256_shuffle_ps(a0, a2, 0xEE);
  const __m256 b2 = _mm256_shuffle_ps(a1, a3, 0x44), b3 = _mm256_shuffle_ps(a1, a3, 0xEE);
  const __m256 b4 = _mm256_shuffle_ps(a4, zero, 0x44), b5 = _mm256_shuffle_ps(a4, zero, 0xEE);
  const __m256 b6 = _mm256_shuffle_ps(a5, zero, 0x44), b7 = _mm256_shuffle_ps(a5, zero, 0xEE);
  _mm256_storeu_ps(dst + 0 * kRows, _mm256_permute2f128_ps(b0, b4, 0x20));
  _mm256_storeu_ps(dst + 1 * kRows, _mm256_permute2f128_ps(b1, b5, 0x20));
  _mm256_storeu_ps(dst + 2 * kRows, _mm256_permute2f128_ps(b2, b6, 0x20));
  _mm256_storeu_ps(dst + 3 * kRows, _mm256_permute2f128_ps(b3, b7, 0x20));
  _mm256_storeu_ps(dst + 4 * kRows, _mm256_permute2f128_ps(b0, b4, 0x31));
  _mm256_storeu_ps(dst + 5 * kRows, _mm256_permute2f128_ps(b1, b5, 0x31));
  _mm256_storeu_ps(dst + 6 * kRows, _mm256_permute2f128_ps(b2, b6, 0x31));
  _mm256_storeu_ps(dst + 7 * kRows, _mm256_permute2f128_ps(b3, b7, 0x31));
}

// r[i] becomes column i of the 8x8 block whose rows were r[0..7]: lane j of the result i is lane
// i of the input row j.
MXLITE_AVX2 inline void Transpose8x8(__m256 r[8]) {
  const __m256 a0 = _mm256_unpacklo_ps(r[0], r[1]), a1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 a2 = _mm256_unpacklo_ps(r[2], r[3]), a3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 a4 = _mm256_unpacklo_ps(r[4], r[5]), a5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 a6 = _mm256_unpacklo_ps(r[6], r[7]), a7 = _mm256_unpackhi_ps(r[6], r[7]);
  // Lanes (i, i+4) of rows 0-3 in b0..b3 and of rows 4-7 in b4..b7.
  const __m256 b0 = _mm256_shuffle_ps(a0, a2, 0x44), b1 = _mm256_shuffle_ps(a0, a2, 0xEE);
  const __m256 b2 = _mm256_shuffle_ps(a1, a3, 0x44), b3 = _mm256_shuffle_ps(a1, a3, 0xEE);
  const __m256 b4 = _mm256_shuffle_ps(a4, a6, 0x44), b5 = _mm256_shuffle_ps(a4, a6, 0xEE);
  const __m256 b6 = _mm256_shuffle_ps(a5, a7, 0x44), b7 = _mm256_shuffle_ps(a5, a7, 0xEE);
  r[0] = _mm256_permute2f128_ps(b0, b4, 0x20);
  r[1] = _mm256_permute2f128_ps(b1, b5, 0x20);
  r[2] = _mm256_permute2f128_ps(b2, b6, 0x20);
  r[3] = _mm256_permute2f128_ps(b3, b7, 0x20);
  r[4] = _mm256_permute2f128_ps(b0, b4, 0x31);
  r[5] = _mm256_permute2f128_ps(b1, b5, 0x31);
  r[6] = _mm256_permute2f128_ps(b2, b6, 0x31);
  r[7] = _mm256_permute2f128_ps(b3, b7, 0x31);
}

}  // namespace mxlite::cpu::detail

#endif  // MXLITE_HAS_AVX2_KERNEL
