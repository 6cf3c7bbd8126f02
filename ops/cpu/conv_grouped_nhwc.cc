// grouped_nhwc: the channels-last forward of a grouped convolution whose groups are 2, 4 or 8
// channels wide with as many filters (any kernel, stride, padding, dilation; channels a multiple
// of the group width). RegNet-Y-400MF's 3x3 layers are groups of 8 at 104 and 440 channels, which
// NCHW16c cannot hold (its channels come in whole blocks of 16), so they ran im2row_gemm: a GEMM
// per group with 8 columns, at a tenth of the FMA rate of a dense layer.
//
// A 16-channel vector of a pixel holds 16 / k whole groups (k divides 16 and vectors start at
// multiples of 16), so output lane l reads input lanes (l / k) * k + i, i < k, of the same vector:
// one permute of the input vector per i, multiplied by the vector of that i's weights. The weight
// (O, KH, KW, k) is reordered once to (KH * KW, k, O). Each output row is walked in tiles of 8
// pixels whose windows lie inside the input (each tap's k weight vectors loaded once for the 8),
// the padded edges one pixel at a time with the taps in the padding skipped; the channels past
// the last whole vector in a masked one. Every output element is summed in the same order (bias,
// then taps row by row, then i), whatever the thread count (rows are independent tasks).
// float64 and CPUs without AVX-512 run the same sums in plain C++.
#include <algorithm>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "ops/cpu/avx512.h"
#include "ops/cpu/conv_algorithms.h"
#include "ops/cpu/parallel.h"

#if MXLITE_HAS_AVX512_KERNEL
#include <immintrin.h>
#endif

namespace mxlite::cpu {
namespace {

int64_t GroupWidth(const ConvGeometry& g) { return g.in_channels / g.groups; }

bool LaneGroups(const ConvGeometry& g) {
  const int64_t k = GroupWidth(g);
  return g.groups > 1 && (k == 2 || k == 4 || k == 8) && g.out_channels == g.in_channels &&
         g.in_channels % k == 0;
}

int64_t WeightSize(const ConvGeometry& g) {
  return g.kernel_spatial() * GroupWidth(g) * g.out_channels;
}

// The NHWC weight (O, KH, KW, k) -> (KH * KW, k, O).
template <typename T>
void ReorderWeight(const ConvGeometry& g, const T* weight, T* by_tap) {
  const int64_t taps = g.kernel_spatial(), k = GroupWidth(g), outputs = g.out_channels;
  for (int64_t o = 0; o < outputs; ++o) {
    for (int64_t tap = 0; tap < taps; ++tap) {
      for (int64_t i = 0; i < k; ++i) {
        by_tap[(tap * k + i) * outputs + o] = weight[(o * taps + tap) * k + i];
      }
    }
  }
}

template <typename T>
void PortableRow(const ConvGeometry& g, const T* const* rows, const T* by_tap, const T* bias, T low,
                 T high, T* y_row) {
  const int64_t k = GroupWidth(g), channels = g.in_channels;
  for (int64_t ow = 0; ow < g.out_w; ++ow) {
    for (int64_t o = 0; o < channels; ++o) {
      T sum = bias != nullptr ? bias[o] : T(0);
      const int64_t first_input = o / k * k;
      for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
        if (rows[kh] == nullptr) continue;
        for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
          const int64_t iw = ow * g.stride_w - g.pad_w + kw * g.dilate_w;
          if (iw < 0 || iw >= g.in_w) continue;
          const T* x = rows[kh] + iw * channels + first_input;
          const T* w = by_tap + (kh * g.kernel_w + kw) * k * channels + o;
          for (int64_t i = 0; i < k; ++i) sum += x[i] * w[i * channels];
        }
      }
      y_row[ow * channels + o] = std::min(std::max(sum, low), high);
    }
  }
}

#if MXLITE_HAS_AVX512_KERNEL
// What every tile of a row shares.
struct RowContext {
  const ConvGeometry& g;
  const float* const* rows;  // per kernel row its input row (W x C), or null in the padding
  const float* by_tap;
  const float* bias;  // or null
  __m512 low, high;
  float* y_row;
};

// Lane l of permute i takes lane l / K * K + i.
template <int K>
MXLITE_AVX512 inline void LanePicks(__m512i* pick) {
  const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  const __m512i group_first = _mm512_slli_epi32(_mm512_srli_epi32(lane, K == 2   ? 1
                                                                        : K == 4 ? 2
                                                                                 : 3),
                                                K == 2   ? 1
                                                : K == 4 ? 2
                                                         : 3);
#pragma GCC unroll 8
  for (int i = 0; i < K; ++i) pick[i] = _mm512_add_epi32(group_first, _mm512_set1_epi32(i));
}

// P pixels from `ow`, the 16 channels from c (only `lanes` of them loaded and stored); kChecked
// (one pixel at the edge): taps in the padding skipped.
template <int P, int K, bool kChecked>
MXLITE_AVX512 void Tile(const RowContext& row, int64_t ow, int64_t c, __mmask16 lanes) {
  const ConvGeometry& g = row.g;
  const int64_t channels = g.in_channels;
  __m512i pick[K];
  LanePicks<K>(pick);
  const __m512 start =
      row.bias != nullptr ? _mm512_maskz_loadu_ps(lanes, row.bias + c) : _mm512_setzero_ps();
  __m512 acc[P];
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) acc[p] = start;
  const int64_t pixel_step = g.stride_w * channels;
  for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
    if (row.rows[kh] == nullptr) continue;
    for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
      const int64_t iw = ow * g.stride_w - g.pad_w + kw * g.dilate_w;
      if (kChecked && (iw < 0 || iw >= g.in_w)) continue;
      const float* x = row.rows[kh] + iw * channels + c;
      const float* w = row.by_tap + (kh * g.kernel_w + kw) * K * channels + c;
      __m512 weights[K];
#pragma GCC unroll 8
      for (int i = 0; i < K; ++i) weights[i] = _mm512_maskz_loadu_ps(lanes, w + i * channels);
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) {
        const __m512 pixel = _mm512_maskz_loadu_ps(lanes, x + p * pixel_step);
#pragma GCC unroll 8
        for (int i = 0; i < K; ++i) {
          // The maskz form with every lane set is the plain permute (GCC 12 warns falsely on it).
          const __m512 picked = _mm512_maskz_permutexvar_ps(0xFFFF, pick[i], pixel);
          acc[p] = _mm512_fmadd_ps(picked, weights[i], acc[p]);
        }
      }
    }
  }
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) {
    _mm512_mask_storeu_ps(row.y_row + (ow + p) * channels + c, lanes,
                          Min16(row.high, Max16(row.low, acc[p])));
  }
}

constexpr int kTilePixels = 8;

template <int K>
MXLITE_AVX512 void Avx512RowOf(const ConvGeometry& g, const float* const* rows, const float* by_tap,
                               const float* bias, float low, float high, float* y_row) {
  const RowContext row{g, rows, by_tap, bias, _mm512_set1_ps(low), _mm512_set1_ps(high), y_row};
  const int64_t channels = g.in_channels;
  const auto each_vector = [&](auto&& tile) MXLITE_AVX512 {
    for (int64_t c = 0; c < channels; c += 16) {
      const int64_t width = std::min<int64_t>(16, channels - c);
      tile(c, static_cast<__mmask16>((1u << width) - 1));
    }
  };
  const ColumnSpan interior = UnpaddedOutputColumns(g);
  int64_t ow = 0;
  for (; ow < interior.begin; ++ow) {
    each_vector([&](int64_t c, __mmask16 m) MXLITE_AVX512 { Tile<1, K, true>(row, ow, c, m); });
  }
  for (; ow + kTilePixels <= interior.end; ow += kTilePixels) {
    each_vector([&](int64_t c, __mmask16 m)
                    MXLITE_AVX512 { Tile<kTilePixels, K, false>(row, ow, c, m); });
  }
  for (; ow < interior.end; ++ow) {
    each_vector([&](int64_t c, __mmask16 m) MXLITE_AVX512 { Tile<1, K, false>(row, ow, c, m); });
  }
  for (; ow < g.out_w; ++ow) {
    each_vector([&](int64_t c, __mmask16 m) MXLITE_AVX512 { Tile<1, K, true>(row, ow, c, m); });
  }
}

void Avx512Row(const ConvGeometry& g, const float* const* rows, const float* by_tap,
               const float* bias, float low, float high, float* y_row) {
  switch (GroupWidth(g)) {
    case 2:
      return Avx512RowOf<2>(g, rows, by_tap, bias, low, high, y_row);
    case 4:
      return Avx512RowOf<4>(g, rows, by_tap, bias, low, high, y_row);
    default:
      return Avx512RowOf<8>(g, rows, by_tap, bias, low, high, y_row);
  }
}
#endif

bool UsesAvx512(DType dtype) { return dtype == DType::kFloat32 && CpuSupportsAvx512f(); }

class GroupedNhwc final : public ConvAlgorithmBase<GroupedNhwc> {
 public:
  std::string_view name() const override { return "grouped_nhwc"; }
  ConvLayout layout() const override { return ConvLayout::kNHWC; }
  bool HasDirection(ConvDirection direction) const override {
    return direction == ConvDirection::kForward;
  }
  bool Supports(const ConvGeometry& g, ConvDirection direction) const override {
    return direction == ConvDirection::kForward && IsValidConvGeometry(g) &&
           g.layout == ConvLayout::kNHWC && LaneGroups(g);
  }
  size_t WorkspaceBytes(const ConvGeometry& g, ConvDirection direction,
                        DType dtype) const override {
    if (!Supports(g, direction)) return 0;
    WorkspaceTally tally(dtype);
    tally.Add(WeightSize(g));
    return tally.bytes();
  }
  std::unique_ptr<PreparedConvWeight> PrepareSupported(const ConvGeometry& g,
                                                       const float* weight) const override {
    auto prepared = std::make_unique<PreparedConvWeight>();
    prepared->reordered.resize(static_cast<size_t>(WeightSize(g)));
    ReorderWeight(g, weight, prepared->reordered.data());
    return prepared;
  }

  template <typename T>
  void Compute(ConvDirection, const ConvGeometry& g, const ConvTensors<T>& t,
               ScratchSpace& scratch) const {
    if (g.batch == 0) return;
    const T* by_tap = ReorderedWeight(
        g, t, WeightSize(g), name(), scratch,
        [](const ConvGeometry& geometry, const T* w, T* out) { ReorderWeight(geometry, w, out); });
    const bool avx512 = UsesAvx512(DTypeOf<T>::value);
    const T low = t.clamp_low, high = t.clamp_high;
    ParallelFor(g.batch * g.out_h, [&](int64_t index) {
      const int64_t n = index / g.out_h, oh = index % g.out_h;
      std::vector<const T*> rows(static_cast<size_t>(g.kernel_h));
      ChannelsLastInputRows(g, t.data, n, oh, rows.data());
      T* y_row = t.output + index * g.out_w * g.out_channels;
#if MXLITE_HAS_AVX512_KERNEL
      if constexpr (std::is_same_v<T, float>) {
        if (avx512) return Avx512Row(g, rows.data(), by_tap, t.bias, low, high, y_row);
      }
#endif
      PortableRow(g, rows.data(), by_tap, t.bias, low, high, y_row);
    });
  }
};

}  // namespace

const ConvAlgorithm& GroupedNhwcAlgorithm() {
  static const GroupedNhwc algorithm;
  return algorithm;
}

}  // namespace mxlite::cpu
