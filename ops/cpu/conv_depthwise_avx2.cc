#include "ops/cpu/conv_depthwise_avx2.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "ops/cpu/depthwise_row_plan.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/gemm_kernel_avx2.h"

#if MXLITE_HAS_AVX2_KERNEL
#include <immintrin.h>

namespace mxlite::cpu::detail {
namespace {

constexpr int64_t kLanes = 8;      // channels per vector
constexpr int64_t kPixels = 4;     // output pixels per register tile (any kernel)
constexpr int kSlidingPixels = 8;  // output pixels per sliding tile (3-wide kernels)

MXLITE_AVX2 inline __m256 Clamp(__m256 value, __m256 low, __m256 high) {
  // Bound first: max/min return their second operand when one is NaN, so NaN stays NaN.
  return _mm256_min_ps(high, _mm256_max_ps(low, value));
}

// kPixels pixels from `ow`, channels [c, c + 8), every window inside the input.
MXLITE_AVX2 inline void InsideTile(const ConvGeometry& g, const DepthwiseRowPlan& plan,
                                   const float* by_tap, __m256 start, __m256 low, __m256 high,
                                   int64_t ow, int64_t c, float* y_row) {
  const int64_t channels = g.in_channels;
  const int64_t step = g.stride_w * channels;  // between neighbouring output pixels' inputs
  __m256 acc0 = start, acc1 = start, acc2 = start, acc3 = start;
  for (int64_t i = 0; i < plan.kernel_h; ++i) {
    if (plan.input_rows[i] == nullptr) continue;
    const float* x = plan.input_rows[i] + (ow * g.stride_w - g.pad_w) * channels + c;
    const float* w = by_tap + i * g.kernel_w * channels + c;
    for (int64_t j = 0; j < g.kernel_w; ++j, x += g.dilate_w * channels, w += channels) {
      const __m256 weight = _mm256_loadu_ps(w);
      acc0 = _mm256_fmadd_ps(weight, _mm256_loadu_ps(x), acc0);
      acc1 = _mm256_fmadd_ps(weight, _mm256_loadu_ps(x + step), acc1);
      acc2 = _mm256_fmadd_ps(weight, _mm256_loadu_ps(x + 2 * step), acc2);
      acc3 = _mm256_fmadd_ps(weight, _mm256_loadu_ps(x + 3 * step), acc3);
    }
  }
  float* y = y_row + ow * channels + c;
  _mm256_storeu_ps(y, Clamp(acc0, low, high));
  _mm256_storeu_ps(y + channels, Clamp(acc1, low, high));
  _mm256_storeu_ps(y + 2 * channels, Clamp(acc2, low, high));
  _mm256_storeu_ps(y + 3 * channels, Clamp(acc3, low, high));
}

// kSlidingPixels pixels from `ow`, channels [c, c + 8), a 3-wide undilated kernel at stride
// kStride, every window inside the input. Each input column of a kernel row is loaded once and
// multiplied into every pixel whose window holds it (8 pixels read 10 columns at stride 1, 17 at
// stride 2, where InsideTile loads 3 per pixel): the loads per FMA fall from 1.25 to 0.54 / 0.83,
// and 8 independent sums keep both FMA pipes busy. A pixel still receives its taps in order (its
// columns are visited left to right), so its sum is formed exactly as InsideTile forms it.
template <int kStride>
MXLITE_AVX2 inline void SlidingTile(const ConvGeometry& g, const DepthwiseRowPlan& plan,
                                    const float* by_tap, __m256 start, __m256 low, __m256 high,
                                    int64_t ow, int64_t c, float* y_row) {
  constexpr int kTaps = 3;
  constexpr int kColumns = (kSlidingPixels - 1) * kStride + kTaps;
  const int64_t channels = g.in_channels;
  __m256 acc[kSlidingPixels];
#pragma GCC unroll 8
  for (int p = 0; p < kSlidingPixels; ++p) acc[p] = start;
  for (int64_t i = 0; i < plan.kernel_h; ++i) {
    if (plan.input_rows[i] == nullptr) continue;
    const float* x = plan.input_rows[i] + (ow * kStride - g.pad_w) * channels + c;
    const float* w = by_tap + i * kTaps * channels + c;
    const __m256 weight[kTaps] = {_mm256_loadu_ps(w), _mm256_loadu_ps(w + channels),
                                  _mm256_loadu_ps(w + 2 * channels)};
#pragma GCC unroll 17
    for (int k = 0; k < kColumns; ++k) {
      __m256 column = _mm256_loadu_ps(x + k * channels);
      // In a register: the compiler would otherwise fold the load into each tap's FMA and load
      // the column three times.
      asm("" : "+x"(column));
#pragma GCC unroll 3
      for (int j = 0; j < kTaps; ++j) {
        const int offset = k - j;  // = kStride * pixel where column k is the pixel's tap j
        if (offset < 0 || offset % kStride != 0 || offset / kStride >= kSlidingPixels) continue;
        acc[offset / kStride] = _mm256_fmadd_ps(weight[j], column, acc[offset / kStride]);
      }
    }
  }
  float* y = y_row + ow * channels + c;
#pragma GCC unroll 8
  for (int p = 0; p < kSlidingPixels; ++p) {
    _mm256_storeu_ps(y + p * channels, Clamp(acc[p], low, high));
  }
}

// One pixel, channels [c, c + 8 * kVectors), taps in the padding skipped. Each vector's sum is
// a chain of up to KH * KW dependent FMAs, so several vectors go together: one alone waits on
// the FMA latency, and at 7x7 three of every seven pixels touch the padding (960 channels at
// 7x7, 1 thread: 37-41 us with one vector at a time, 24.5 with four).
template <int kVectors>
MXLITE_AVX2 inline void CheckedPixel(const ConvGeometry& g, const DepthwiseRowPlan& plan,
                                     const float* by_tap, const float* bias, __m256 low,
                                     __m256 high, int64_t ow, int64_t c, float* y_row) {
  const int64_t channels = g.in_channels;
  __m256 acc[kVectors];
#pragma GCC unroll 4
  for (int v = 0; v < kVectors; ++v) {
    acc[v] = bias != nullptr ? _mm256_loadu_ps(bias + c + v * kLanes) : _mm256_setzero_ps();
  }
  for (int64_t i = 0; i < plan.kernel_h; ++i) {
    if (plan.input_rows[i] == nullptr) continue;
    for (int64_t j = 0; j < g.kernel_w; ++j) {
      const int64_t iw = ow * g.stride_w - g.pad_w + j * g.dilate_w;
      if (iw < 0 || iw >= g.in_w) continue;
      const float* w = by_tap + (i * g.kernel_w + j) * channels + c;
      const float* x = plan.input_rows[i] + iw * channels + c;
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) {
        acc[v] = _mm256_fmadd_ps(_mm256_loadu_ps(w + v * kLanes), _mm256_loadu_ps(x + v * kLanes),
                                 acc[v]);
      }
    }
  }
#pragma GCC unroll 4
  for (int v = 0; v < kVectors; ++v) {
    _mm256_storeu_ps(y_row + ow * channels + c + v * kLanes, Clamp(acc[v], low, high));
  }
}

// Pixel `ow`, channels [begin, end) (whole vectors), four vectors at a time where they fit.
MXLITE_AVX2 inline void CheckedPixelChannels(const ConvGeometry& g, const DepthwiseRowPlan& plan,
                                             const float* by_tap, const float* bias, __m256 low,
                                             __m256 high, int64_t ow, int64_t begin, int64_t end,
                                             float* y_row) {
  constexpr int kGroup = 4;
  int64_t c = begin;
  for (; c + kGroup * kLanes <= end; c += kGroup * kLanes) {
    CheckedPixel<kGroup>(g, plan, by_tap, bias, low, high, ow, c, y_row);
  }
  for (; c < end; c += kLanes) CheckedPixel<1>(g, plan, by_tap, bias, low, high, ow, c, y_row);
}

// Channels [first, end) past the slice's last full vector, one at a time, in the same tap order.
void ScalarChannels(const ConvGeometry& g, const DepthwiseRowPlan& plan, const float* by_tap,
                    const float* bias, const Epilogue<float>& clamp, int64_t first, int64_t end,
                    float* y_row) {
  const int64_t channels = g.in_channels;
  for (int64_t ow = 0; ow < g.out_w; ++ow) {
    for (int64_t c = first; c < end; ++c) {
      float sum = bias != nullptr ? bias[c] : 0.0f;
      for (int64_t i = 0; i < plan.kernel_h; ++i) {
        if (plan.input_rows[i] == nullptr) continue;
        for (int64_t j = 0; j < g.kernel_w; ++j) {
          const int64_t iw = ow * g.stride_w - g.pad_w + j * g.dilate_w;
          if (iw < 0 || iw >= g.in_w) continue;
          sum = std::fma(by_tap[(i * g.kernel_w + j) * channels + c],
                         plan.input_rows[i][iw * channels + c], sum);
        }
      }
      y_row[ow * channels + c] = clamp.Apply(sum, 0, 0);
    }
  }
}

}  // namespace

bool DepthwiseAvx2Available() { return CpuSupportsAvx2Fma(); }

MXLITE_AVX2 void DepthwiseForwardRowNhwcAvx2(const ConvGeometry& g, const float* const* input_rows,
                                             const float* by_tap, const float* bias,
                                             const Epilogue<float>& clamp, int64_t channel_begin,
                                             int64_t channel_end, float* y_row) {
  const DepthwiseRowPlan plan(g, input_rows);
  const __m256 low = _mm256_set1_ps(clamp.low), high = _mm256_set1_ps(clamp.high);
  const int64_t vector_end = channel_begin + (channel_end - channel_begin) / kLanes * kLanes;
  const auto start = [bias](int64_t c) MXLITE_AVX2 {
    return bias != nullptr ? _mm256_loadu_ps(bias + c) : _mm256_setzero_ps();
  };
  // Pixels outer, channels inner: the input a tile of pixels reads (kernel rows x its window x
  // every channel, ~10 KB for MobileNet-V2's layers) stays in L1 while every channel vector
  // consumes it; channels outer streamed the input rows through L1 once per vector (10-30% slower
  // on MobileNet-V2's layers at 56x56 and 112x112).
  int64_t ow = 0;
  for (; ow < plan.inside.begin && ow < g.out_w; ++ow) {
    CheckedPixelChannels(g, plan, by_tap, bias, low, high, ow, channel_begin, vector_end, y_row);
  }
  if (g.kernel_w == 3 && g.dilate_w == 1 && (g.stride_w == 1 || g.stride_w == 2)) {
    for (; ow + kSlidingPixels <= plan.inside.end; ow += kSlidingPixels) {
      for (int64_t c = channel_begin; c < vector_end; c += kLanes) {
        if (g.stride_w == 1) {
          SlidingTile<1>(g, plan, by_tap, start(c), low, high, ow, c, y_row);
        } else {
          SlidingTile<2>(g, plan, by_tap, start(c), low, high, ow, c, y_row);
        }
      }
    }
  }
  for (; ow + kPixels <= plan.inside.end; ow += kPixels) {
    for (int64_t c = channel_begin; c < vector_end; c += kLanes) {
      InsideTile(g, plan, by_tap, start(c), low, high, ow, c, y_row);
    }
  }
  for (; ow < g.out_w; ++ow) {
    CheckedPixelChannels(g, plan, by_tap, bias, low, high, ow, channel_begin, vector_end, y_row);
  }
  if (vector_end < channel_end) {
    ScalarChannels(g, plan, by_tap, bias, clamp, vector_end, channel_end, y_row);
  }
}

}  // namespace mxlite::cpu::detail

#else  // !MXLITE_HAS_AVX2_KERNEL

namespace mxlite::cpu::detail {

bool DepthwiseAvx2Available() { return false; }

void DepthwiseForwardRowNhwcAvx2(const ConvGeometry&, const float* const*, const float*,
                                 const float*, const Epilogue<float>&, int64_t, int64_t, float*) {
  MX_THROW() << "DepthwiseForwardRowNhwcAvx2 needs an x86-64 build";
}

}  // namespace mxlite::cpu::detail

#endif  // MXLITE_HAS_AVX2_KERNEL
