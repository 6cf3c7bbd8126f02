#include "ops/cpu/transpose_avx2.h"

#if MXLITE_HAS_AVX2_KERNEL
#include <immintrin.h>

#include "ops/cpu/avx2_panel.h"

namespace mxlite::cpu::detail {

MXLITE_AVX2 void Transpose8x8Block4Bytes(const uint32_t* in,
                                                                 int64_t in_stride, uint32_t* out,
                                                                 int64_t out_stride) {
  __m256 rows[8];
  for (int i = 0; i < 8; ++i) {
    rows[i] = _mm256_castsi256_ps(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i * in_stride)));
  }
  Transpose8x8(rows);
  for (int j = 0; j < 8; ++j) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j * out_stride),
                        _mm256_castps_si256(rows[j]));
  }
}

namespace {

// Three rows into 8 pixels of 3 (r, g, b below) per step. Each output vector takes lanes of all
// three rows, and each row's lanes land in the three outputs at disjoint positions, so one
// permute per row lines up its values for all three outputs and blends pick them:
//   out0 = r0 g0 b0 r1 g1 b1 r2 g2,  out1 = b2 r3 g3 b3 r4 g4 b4 r5,  out2 = g5 b5 r6 g6 b6 r7 g7
//   b7.
MXLITE_AVX2 int64_t InterleaveThreeRows(const uint32_t* in, int64_t in_stride, int64_t count,
                                        uint32_t* out) {
  const __m256i r_order = _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5);
  const __m256i g_order = _mm256_setr_epi32(5, 0, 3, 6, 1, 4, 7, 2);
  const __m256i b_order = _mm256_setr_epi32(2, 5, 0, 3, 6, 1, 4, 7);
  int64_t b = 0;
  for (; b + 8 <= count; b += 8) {
    const __m256i r = _mm256_permutevar8x32_epi32(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + b)), r_order);
    const __m256i g = _mm256_permutevar8x32_epi32(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + in_stride + b)), g_order);
    const __m256i bl = _mm256_permutevar8x32_epi32(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 2 * in_stride + b)), b_order);
    // Blend masks select the second operand's lanes (bit i = lane i).
    const __m256i out0 = _mm256_blend_epi32(_mm256_blend_epi32(r, g, 0b10010010), bl, 0b00100100);
    const __m256i out1 = _mm256_blend_epi32(_mm256_blend_epi32(r, g, 0b00100100), bl, 0b01001001);
    const __m256i out2 = _mm256_blend_epi32(_mm256_blend_epi32(r, g, 0b01001001), bl, 0b10010010);
    __m256i* destination = reinterpret_cast<__m256i*>(out + b * 3);
    _mm256_storeu_si256(destination, out0);
    _mm256_storeu_si256(destination + 1, out1);
    _mm256_storeu_si256(destination + 2, out2);
  }
  return b;
}

}  // namespace

MXLITE_AVX2 int64_t InterleaveRows4Bytes(const uint32_t* in,
                                                                 int64_t in_stride, int rows,
                                                                 int64_t count, uint32_t* out) {
  if (rows == 3) return InterleaveThreeRows(in, in_stride, count, out);
  // The last store of a step at b writes up to (b + 7) * rows + 8.
  int64_t b = 0;
  for (; (b + 7) * rows + 8 <= count * rows; b += 8) {
    __m256 block[8];
    for (int r = 0; r < 8; ++r) {
      block[r] = r < rows ? _mm256_castsi256_ps(_mm256_loadu_si256(
                                reinterpret_cast<const __m256i*>(in + r * in_stride + b)))
                          : _mm256_setzero_ps();
    }
    Transpose8x8(block);  // block[j] = pixel b + j's values, the first `rows` lanes meaningful
    for (int j = 0; j < 8; ++j) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (b + j) * rows),
                          _mm256_castps_si256(block[j]));
    }
  }
  return b;
}

}  // namespace mxlite::cpu::detail

#endif  // MXLITE_HAS_AVX2_KERNEL
