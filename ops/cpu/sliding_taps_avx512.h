// One kernel row of a sliding register tile on AVX-512, shared by the depthwise kernels that keep
// a tile of output pixels in registers: NHWC (conv_depthwise_avx512.cc) and NCHW16c
// (conv_nchw16c.cc).
//
// P output pixels of a kTaps-wide undilated kernel at stride kStride read the columns
// k = 0 .. (P - 1) * kStride + kTaps - 1 of one input row, `column_step` floats apart from `x`
// (tap j of pixel p is column p * kStride + j). Each column is loaded once and multiplied into
// every pixel whose window holds it (8 pixels of a 5-wide kernel: 12 loads for 40 FMAs, where a
// pixel at a time loads 40). A pixel still receives its taps left to right, one FMA each, so its
// sum is the pixel-at-a-time walk's, bit for bit. kMasked: only `lanes` of each column are loaded.
// kSkipColumns: the columns outside [k_begin, k_end) (the padding) are neither loaded nor added,
// which skips exactly the taps that land there.
#pragma once

#include <cstdint>

#include "ops/cpu/avx512.h"

#if MXLITE_HAS_AVX512_KERNEL
#include <immintrin.h>

namespace mxlite::cpu::detail {

template <int kTaps, int kStride, int P, bool kMasked, bool kSkipColumns>
MXLITE_AVX512 inline void SlideKernelRow(const float* x, int64_t column_step, const __m512* weight,
                                         __mmask16 lanes, int64_t k_begin, int64_t k_end,
                                         __m512* acc) {
  constexpr int kColumns = (P - 1) * kStride + kTaps;
#pragma GCC unroll 21
  for (int k = 0; k < kColumns; ++k) {
    if (kSkipColumns && (k < k_begin || k >= k_end)) continue;
    __m512 column = kMasked ? _mm512_maskz_loadu_ps(lanes, x + k * column_step)
                            : _mm512_loadu_ps(x + k * column_step);
    // In a register: GCC would otherwise fold the load into each tap's FMA and load the column
    // kTaps times.
    asm("" : "+v"(column));
#pragma GCC unroll 7
    for (int j = 0; j < kTaps; ++j) {
      const int offset = k - j;  // = kStride * pixel where column k is the pixel's tap j
      if (offset < 0 || offset % kStride != 0 || offset / kStride >= P) continue;
      acc[offset / kStride] = _mm512_fmadd_ps(weight[j], column, acc[offset / kStride]);
    }
  }
}

}  // namespace mxlite::cpu::detail

#endif  // MXLITE_HAS_AVX512_KERNEL
