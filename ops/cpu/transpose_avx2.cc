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

MXLITE_AVX2 int64_t InterleaveRows4Bytes(const uint32_t* in,
                                                                 int64_t in_stride, int rows,
                                                                 int64_t count, uint32_t* out) {
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
