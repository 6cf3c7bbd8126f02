#include "ops/cpu/transpose_avx2.h"

#if MXLITE_HAS_AVX2_KERNEL
#include <immintrin.h>

#include "ops/cpu/avx2_panel.h"

namespace mxlite::cpu::detail {

__attribute__((target("avx2,fma"))) void Transpose8x8Block4Bytes(const uint32_t* in,
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

}  // namespace mxlite::cpu::detail

#endif  // MXLITE_HAS_AVX2_KERNEL
