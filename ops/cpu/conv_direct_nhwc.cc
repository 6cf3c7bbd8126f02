// direct_nhwc: the channels-last forward convolution computed straight from the input, for short
// reductions (C * KH * KW <= kMaxReduction, one group): a network's first layer (3 input channels)
// run in NHWC. im2row's lowered matrix there is as large as the arithmetic is short, and the GEMM's
// depth (27 for a 3x3 stem) too short to hide its packing; the NCHW alternative (direct_nchw)
// leaves its output in NCHW, and a network that continues in NHWC pays a transform of the whole
// (large) activation for it.
//
// 1. The weight (O, KH, KW, C) is repacked as [tap (kh, kw, c)][output channel], the channels
//    padded with zeros to whole 8-lane vectors, and the bias padded likewise.
// 2. Each thread takes a run of output rows. A row is walked once per block of up to 4 vectors of
//    output channels (32), in tiles of up to 3 pixels: for every tap, each pixel's input
//    value is broadcast and multiplied into the block's vectors of that tap's weights; the 3 x 4
//    vector accumulators stay in registers through the whole reduction and are stored once with
//    the bias and the output clamp. The taps are walked as runs contiguous in both the input and
//    the packed weight (a whole kernel row, KW * C taps, when the width is not dilated; see
//    RowSources); a run that leaves the image sideways is read from a copy with zeros there, and
//    kernel rows wholly outside the image are skipped (they add nothing).
// On CPUs with AVX-512 a block is the same 32 channels in two 16-lane vectors and a tile up to 8
// pixels, 8 x 2 vectors of accumulators, the same sums in the same order. Why 32 channels and 8
// pixels: the block's weights for every tap (a 7x7 stem's 147 taps x 32 channels, 18 KiB) stay in
// L1 across the row while each is used for 8 pixels; blocks of 64 channels in 3-pixel tiles
// re-read 37 KiB of weights from L2 for every tile and ran a 7x7 stem 1.5x slower.
// Every output value is summed over the taps in the same order whatever the thread count (rows are
// independent tasks). float64 and CPUs without AVX2 run the same walk in plain C++.
#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "ops/cpu/avx512.h"
#include "ops/cpu/conv_algorithms.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/gemm_kernel_avx2.h"
#include "ops/cpu/int_math.h"
#include "ops/cpu/parallel.h"

#if MXLITE_HAS_AVX2_KERNEL || MXLITE_HAS_AVX512_KERNEL
#include <immintrin.h>
#endif

namespace mxlite::cpu {
namespace {

// Longest reduction claimed, as direct_nchw's: one block's weights for every tap (32 channels x
// 256 taps, 32 KiB) stay in L1/L2 across a row; beyond it the GEMM paths reuse operands better.
constexpr int64_t kMaxReduction = 256;
constexpr int64_t kLanes = 8;        // output channels per vector
constexpr int kMaxTilePixels = 3;    // output pixels per register tile (AVX2, portable)
constexpr int kMaxBlockVectors = 4;  // vectors of output channels per register tile
constexpr int kSourceTilePixels = 8;  // pixels whose sources are kept together (AVX-512's tile)

// The sizes of one problem's buffers.
struct DirectNhwcPlan {
  int64_t taps;            // C * KH * KW
  int64_t padded_outputs;  // O rounded up to whole vectors
  int64_t vectors;         // padded_outputs / kLanes

  explicit DirectNhwcPlan(const ConvGeometry& g)
      : taps(g.patch_size()),
        padded_outputs(CeilDiv(g.out_channels, kLanes) * kLanes),
        vectors(CeilDiv(g.out_channels, kLanes)) {}

  int64_t weight_size() const { return taps * padded_outputs; }
};

// Step 1: weight (O, KH, KW, C) -> [(kh, kw, c)][padded O], zeros in the padding; bias (O, or
// none: zeros) -> padded O.
template <typename T>
void PackWeights(const ConvGeometry& g, const DirectNhwcPlan& plan, const T* weight, const T* bias,
                 T* packed, T* padded_bias) {
  std::fill(packed, packed + plan.weight_size(), T(0));
  for (int64_t o = 0; o < g.out_channels; ++o) {
    for (int64_t r = 0; r < plan.taps; ++r) {
      packed[r * plan.padded_outputs + o] = weight[o * plan.taps + r];
    }
  }
  std::fill(padded_bias, padded_bias + plan.padded_outputs, T(0));
  if (bias != nullptr) std::copy(bias, bias + g.out_channels, padded_bias);
}

// What an output row's register tiles read, as runs of taps contiguous in both the input and the
// packed weight: with dilation 1 along the width, a kernel row's KW pixels are adjacent in NHWC,
// so the row is one run of KW * C taps; otherwise each (kh, kw) is a run of C. The runs inside the
// image (kernel rows wholly above or below it are left out) are the same for every pixel of the
// row: `weights[t]` (rows of padded_outputs). Each pixel's inputs for run t are at
// `sources[(tile * runs + t) * kSourceTilePixels + p]` (tile = pixel / kSourceTilePixels), a
// pointer into the input, or into `edge` (the run copied, zeros where it leaves the image
// sideways). A tile function reads P <= kSourceTilePixels pixels from `tile(index) + first pixel`,
// stepping kSourceTilePixels per run.
template <typename T>
struct RowSources {
  std::vector<const T*> weights;
  std::vector<const T*> sources;
  std::vector<T> edge;
  std::vector<const T*> input_rows;  // per run: where its kernel row's input row starts
  int64_t runs = 0;
  int64_t run_length = 0;  // taps per run

  const T* const* tile(int64_t index) const {
    return sources.data() + index * runs * kSourceTilePixels;
  }
};

// Whether pixel ox's kernel rows leave the image sideways (then its runs are copied to `edge`).
bool LeavesImageSideways(const ConvGeometry& g, int64_t ox) {
  const int64_t first = ox * g.stride_w - g.pad_w;
  return first < 0 || first + (g.kernel_w - 1) * g.dilate_w >= g.in_w;
}

template <typename T>
void ReserveRow(const ConvGeometry& g, RowSources<T>& row) {
  const bool whole_rows = g.dilate_w == 1;
  row.run_length = whole_rows ? g.kernel_w * g.in_channels : g.in_channels;
  const int64_t max_runs = whole_rows ? g.kernel_h : g.kernel_h * g.kernel_w;
  int64_t edge_pixels = 0;
  for (int64_t ox = 0; ox < g.out_w; ++ox) edge_pixels += LeavesImageSideways(g, ox) ? 1 : 0;
  row.weights.resize(static_cast<size_t>(max_runs));
  row.input_rows.reserve(static_cast<size_t>(max_runs));
  row.sources.resize(
      static_cast<size_t>(CeilDiv(g.out_w, kSourceTilePixels) * max_runs * kSourceTilePixels));
  row.edge.resize(static_cast<size_t>(edge_pixels * max_runs * row.run_length));
}

// Fills `row` for output row oy of image n.
template <typename T>
void GatherRow(const ConvGeometry& g, const DirectNhwcPlan& plan, const T* data, const T* packed,
               int64_t n, int64_t oy, RowSources<T>& row) {
  const bool whole_rows = g.dilate_w == 1;
  const int64_t c = g.in_channels, kernel_columns = whole_rows ? 1 : g.kernel_w;
  const int64_t pixels_in_run = whole_rows ? g.kernel_w : 1;
  std::vector<const T*>& input_rows = row.input_rows;
  input_rows.clear();
  row.runs = 0;
  for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
    const int64_t iy = oy * g.stride_h - g.pad_h + kh * g.dilate_h;
    if (iy < 0 || iy >= g.in_h) continue;
    for (int64_t kw = 0; kw < kernel_columns; ++kw) {
      row.weights[row.runs++] = packed + (kh * g.kernel_w + kw) * c * plan.padded_outputs;
      input_rows.push_back(data + ((n * g.in_h + iy) * g.in_w + kw * g.dilate_w) * c);
    }
  }
  T* edge = row.edge.data();
  for (int64_t ox = 0; ox < g.out_w; ++ox) {
    const int64_t tile = ox / kSourceTilePixels, p = ox % kSourceTilePixels;
    const int64_t first = ox * g.stride_w - g.pad_w;  // the input column of kw = 0
    const bool copied = LeavesImageSideways(g, ox);
    for (int64_t t = 0; t < row.runs; ++t) {
      const T*& source = row.sources[(tile * row.runs + t) * kSourceTilePixels + p];
      if (!copied) {
        source = input_rows[t] + first * c;
        continue;
      }
      const int64_t ix = first + (whole_rows ? 0 : t % kernel_columns * g.dilate_w);
      for (int64_t j = 0; j < pixels_in_run; ++j) {  // zero outside the image
        if (ix + j < 0 || ix + j >= g.in_w) {
          std::fill(edge + j * c, edge + (j + 1) * c, T(0));
          continue;
        }
        const T* pixel = input_rows[t] + (first + j) * c;
        std::copy(pixel, pixel + c, edge + j * c);
      }
      source = edge;
      edge += row.run_length;
    }
  }
}

// One tile, portable: out[p][o] = clamp(bias[o] + sum over runs t, taps i of
// sources[t][p][i] * weights[t][i][o]) for the block's `channels` outputs from `first`.
template <typename T>
void DirectNhwcTile(const RowSources<T>& row, const T* const* sources, int pixels,
                    int64_t weight_stride, int64_t first, int64_t channels, const T* bias,
                    const Epilogue<T>& clamp, T* out, int64_t out_pixel_stride) {
  T acc[kMaxTilePixels][kMaxBlockVectors * kLanes];
  for (int p = 0; p < pixels; ++p) std::copy(bias + first, bias + first + channels, acc[p]);
  for (int64_t t = 0; t < row.runs; ++t, sources += kSourceTilePixels) {
    for (int64_t i = 0; i < row.run_length; ++i) {
      const T* w = row.weights[t] + i * weight_stride + first;
      for (int p = 0; p < pixels; ++p) {
        const T x = sources[p][i];
        for (int64_t o = 0; o < channels; ++o) acc[p][o] += x * w[o];
      }
    }
  }
  for (int p = 0; p < pixels; ++p) {
    for (int64_t o = 0; o < channels; ++o) {
      out[p * out_pixel_stride + o] = clamp.Apply(acc[p][o], 0, 0);
    }
  }
}

#if MXLITE_HAS_AVX2_KERNEL
// The same tile for float32 on AVX2+FMA: P pixels x V vectors, the accumulators in registers
// (P * V + P + 1 <= 16 of them with the broadcasts and one weight vector). `lanes` channels of the
// last vector are stored (the rest is padding). Fused multiply-adds round once where
// DirectNhwcTile rounds twice, so the two differ in the last bits.
template <int P, int V>
MXLITE_AVX2 void DirectNhwcTileAvx2(const RowSources<float>& row, const float* const* sources,
                                    int64_t weight_stride, int64_t first, const float* bias,
                                    const Epilogue<float>& clamp, float* out,
                                    int64_t out_pixel_stride, int64_t lanes) {
  __m256 acc[P][V];
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    const __m256 b = _mm256_loadu_ps(bias + first + v * kLanes);
#pragma GCC unroll 4
    for (int p = 0; p < P; ++p) acc[p][v] = b;
  }
  for (int64_t t = 0; t < row.runs; ++t, sources += kSourceTilePixels) {
    const float* w = row.weights[t] + first;
    for (int64_t i = 0; i < row.run_length; ++i, w += weight_stride) {
      __m256 x[P];
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) x[p] = _mm256_broadcast_ss(sources[p] + i);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) {
        const __m256 weights = _mm256_loadu_ps(w + v * kLanes);
#pragma GCC unroll 4
        for (int p = 0; p < P; ++p) acc[p][v] = _mm256_fmadd_ps(x[p], weights, acc[p][v]);
      }
    }
  }
  const bool clamps = clamp.clamps();
  const __m256 low = _mm256_set1_ps(clamp.low), high = _mm256_set1_ps(clamp.high);
#pragma GCC unroll 4
  for (int p = 0; p < P; ++p) {
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      __m256 value = acc[p][v];
      // Bound first: max/min return their second operand when one is NaN.
      if (clamps) value = _mm256_min_ps(high, _mm256_max_ps(low, value));
      float* dst = out + p * out_pixel_stride + v * kLanes;
      if (v < V - 1 || lanes == kLanes) {
        _mm256_storeu_ps(dst, value);
      } else {
        alignas(32) float lane_values[kLanes];
        _mm256_store_ps(lane_values, value);
        std::memcpy(dst, lane_values, sizeof(float) * static_cast<size_t>(lanes));
      }
    }
  }
}

using Avx2Tile = void (*)(const RowSources<float>&, const float* const*, int64_t, int64_t,
                          const float*, const Epilogue<float>&, float*, int64_t, int64_t);
// [pixels - 1][vectors - 1]
constexpr Avx2Tile kAvx2Tiles[kMaxTilePixels][kMaxBlockVectors] = {
    {DirectNhwcTileAvx2<1, 1>, DirectNhwcTileAvx2<1, 2>, DirectNhwcTileAvx2<1, 3>,
     DirectNhwcTileAvx2<1, 4>},
    {DirectNhwcTileAvx2<2, 1>, DirectNhwcTileAvx2<2, 2>, DirectNhwcTileAvx2<2, 3>,
     DirectNhwcTileAvx2<2, 4>},
    {DirectNhwcTileAvx2<3, 1>, DirectNhwcTileAvx2<3, 2>, DirectNhwcTileAvx2<3, 3>,
     DirectNhwcTileAvx2<3, 4>},
};
#endif

#if MXLITE_HAS_AVX512_KERNEL
constexpr int64_t kWideLanes = 16;  // output channels per 512-bit vector

// The tile for float32 on AVX-512: P pixels x V vectors of 16 channels (a block of up to 32), the
// accumulators in registers. The last vector's `lanes` channels are loaded (masked: the packed
// rows are padded to 8 channels only) and stored. The same sums in the AVX2 tile's order, with
// its fused multiply-adds: the same bits.
template <int P, int V>
MXLITE_AVX512 void DirectNhwcTileAvx512(const RowSources<float>& row, const float* const* sources,
                                        int64_t weight_stride, int64_t first, const float* bias,
                                        const Epilogue<float>& clamp, float* out,
                                        int64_t out_pixel_stride, int64_t lanes) {
  constexpr __mmask16 kAll = 0xFFFF;
  const __mmask16 last = static_cast<__mmask16>((1u << lanes) - 1);
  const auto mask_of = [&](int v) { return v < V - 1 ? kAll : last; };
  __m512 acc[P][V];
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    const __m512 b = _mm512_maskz_loadu_ps(mask_of(v), bias + first + v * kWideLanes);
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p) acc[p][v] = b;
  }
  for (int64_t t = 0; t < row.runs; ++t, sources += kSourceTilePixels) {
    const float* w = row.weights[t] + first;
    for (int64_t i = 0; i < row.run_length; ++i, w += weight_stride) {
      __m512 x[P];
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) x[p] = _mm512_set1_ps(sources[p][i]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) {
        const __m512 weights = _mm512_maskz_loadu_ps(mask_of(v), w + v * kWideLanes);
#pragma GCC unroll 8
        for (int p = 0; p < P; ++p) acc[p][v] = _mm512_fmadd_ps(x[p], weights, acc[p][v]);
      }
    }
  }
  const bool clamps = clamp.clamps();
  const __m512 low = _mm512_set1_ps(clamp.low), high = _mm512_set1_ps(clamp.high);
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) {
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      __m512 value = acc[p][v];
      // Bound first: max/min return their second operand when one is NaN. The maskz forms with
      // every lane set are max/min themselves (GCC 12 warns falsely on the plain ones).
      if (clamps) value = _mm512_maskz_min_ps(kAll, high, _mm512_maskz_max_ps(kAll, low, value));
      _mm512_mask_storeu_ps(out + p * out_pixel_stride + v * kWideLanes, mask_of(v), value);
    }
  }
}

using Avx512Tile = void (*)(const RowSources<float>&, const float* const*, int64_t, int64_t,
                            const float*, const Epilogue<float>&, float*, int64_t, int64_t);
constexpr int kMaxWideVectors = 2;  // a block of 32 output channels

template <int V, int... P>
constexpr std::array<Avx512Tile, sizeof...(P)> WideTilesOf(std::integer_sequence<int, P...>) {
  return {DirectNhwcTileAvx512<P + 1, V>...};
}

// [vectors - 1][pixels - 1]
const std::array<Avx512Tile, kSourceTilePixels> kAvx512Tiles[kMaxWideVectors] = {
    WideTilesOf<1>(std::make_integer_sequence<int, kSourceTilePixels>{}),
    WideTilesOf<2>(std::make_integer_sequence<int, kSourceTilePixels>{})};

// One output row (its sources gathered) in blocks of 32 channels.
void DirectNhwcRowAvx512(const ConvGeometry& g, const DirectNhwcPlan& plan,
                         const RowSources<float>& row, const float* padded_bias,
                         const Epilogue<float>& clamp, float* out_row) {
  constexpr int64_t kBlock = kMaxWideVectors * kWideLanes;
  const int64_t tiles = CeilDiv(g.out_w, kSourceTilePixels);
  for (int64_t first = 0; first < g.out_channels; first += kBlock) {
    const int64_t channels = std::min(kBlock, g.out_channels - first);
    const int64_t vectors = CeilDiv(channels, kWideLanes);
    const int64_t lanes = channels - (vectors - 1) * kWideLanes;
    for (int64_t tile = 0; tile < tiles; ++tile) {
      const int64_t ox0 = tile * kSourceTilePixels;
      const int pixels = static_cast<int>(std::min<int64_t>(kSourceTilePixels, g.out_w - ox0));
      kAvx512Tiles[vectors - 1][pixels - 1](
          row, row.tile(tile), plan.padded_outputs, first, padded_bias, clamp,
          out_row + ox0 * g.out_channels + first, g.out_channels, lanes);
    }
  }
}
#endif

bool UsesAvx2(DType dtype) { return dtype == DType::kFloat32 && CpuSupportsAvx2Fma(); }
bool UsesAvx512(DType dtype) { return dtype == DType::kFloat32 && CpuSupportsAvx512f(); }

// Step 2 for every output row of every image, on the intra-op pool: each thread takes runs of
// consecutive rows (neighbours share input rows), and walks each row's pixel tiles once per
// channel block, so the block's weights stay in L1 across the row.
template <typename T>
void DirectNhwcForward(const ConvGeometry& g, const DirectNhwcPlan& plan, const T* data,
                       const T* packed, const T* padded_bias, const Epilogue<T>& clamp, T* output) {
  [[maybe_unused]] const bool avx2 = UsesAvx2(DTypeOf<T>::value);
  [[maybe_unused]] const bool avx512 = UsesAvx512(DTypeOf<T>::value);
  const int64_t blocks = CeilDiv(plan.vectors, kMaxBlockVectors);
  const int64_t tiles = CeilDiv(g.out_w, kSourceTilePixels);
  const int64_t rows = g.batch * g.out_h;
  const int64_t row_runs = std::min(rows, 2 * static_cast<int64_t>(IntraOpThreads()));
  ParallelFor(row_runs, [&](int64_t run) {
    RowSources<T> row;
    ReserveRow(g, row);
    for (int64_t r = run * rows / row_runs; r < (run + 1) * rows / row_runs; ++r) {
      const int64_t n = r / g.out_h, oy = r % g.out_h;
      GatherRow(g, plan, data, packed, n, oy, row);
      T* out_row = output + r * g.out_w * g.out_channels;
#if MXLITE_HAS_AVX512_KERNEL
      if constexpr (std::is_same_v<T, float>) {
        if (avx512) {
          DirectNhwcRowAvx512(g, plan, row, padded_bias, clamp, out_row);
          continue;
        }
      }
#endif
      for (int64_t block = 0; block < blocks; ++block) {
        const int64_t first = block * kMaxBlockVectors * kLanes;
        const int64_t channels = std::min(kMaxBlockVectors * kLanes, g.out_channels - first);
        // Sub-tiles of up to kMaxTilePixels pixels inside each tile of kSourceTilePixels.
        for (int64_t tile = 0; tile < tiles; ++tile) {
          const int64_t begin = tile * kSourceTilePixels;
          const int64_t end = std::min(g.out_w, begin + kSourceTilePixels);
          for (int64_t ox0 = begin; ox0 < end; ox0 += kMaxTilePixels) {
            const int pixels = static_cast<int>(std::min<int64_t>(kMaxTilePixels, end - ox0));
            const T* const* sources = row.tile(tile) + (ox0 - begin);
            T* out = out_row + ox0 * g.out_channels + first;
#if MXLITE_HAS_AVX2_KERNEL
            if constexpr (std::is_same_v<T, float>) {
              if (avx2) {
                const int64_t vectors = CeilDiv(channels, kLanes);
                const int64_t lanes = channels - (vectors - 1) * kLanes;
                kAvx2Tiles[pixels - 1][vectors - 1](row, sources, plan.padded_outputs, first,
                                                    padded_bias, clamp, out, g.out_channels, lanes);
                continue;
              }
            }
#endif
            DirectNhwcTile(row, sources, pixels, plan.padded_outputs, first, channels, padded_bias,
                           clamp, out, g.out_channels);
          }
        }
      }
    }
  });
}

class DirectNhwc final : public ConvAlgorithmBase<DirectNhwc> {
 public:
  std::string_view name() const override { return "direct_nhwc"; }
  ConvLayout layout() const override { return ConvLayout::kNHWC; }
  bool HasDirection(ConvDirection direction) const override {
    return direction == ConvDirection::kForward;
  }
  bool Supports(const ConvGeometry& g, ConvDirection direction) const override {
    return direction == ConvDirection::kForward && IsValidConvGeometry(g) &&
           g.layout == ConvLayout::kNHWC && g.groups == 1 && g.patch_size() <= kMaxReduction;
  }
  size_t WorkspaceBytes(const ConvGeometry& g, ConvDirection direction,
                        DType dtype) const override {
    if (!Supports(g, direction)) return 0;
    const DirectNhwcPlan plan(g);
    WorkspaceTally tally(dtype);
    tally.Add(plan.weight_size());
    tally.Add(plan.padded_outputs);
    return tally.bytes();
  }

  template <typename T>
  void Compute(ConvDirection, const ConvGeometry& g, const ConvTensors<T>& t,
               ScratchSpace& scratch) const {
    if (g.batch == 0) return;
    const DirectNhwcPlan plan(g);
    T* packed = scratch.GetArray<T>(plan.weight_size());
    T* padded_bias = scratch.GetArray<T>(plan.padded_outputs);
    PackWeights(g, plan, t.weight, t.bias, packed, padded_bias);
    DirectNhwcForward(g, plan, t.data, packed, padded_bias, t.OutputClamp(), t.output);
  }
};

}  // namespace

const ConvAlgorithm& DirectNhwcAlgorithm() {
  static const DirectNhwc algorithm;
  return algorithm;
}

}  // namespace mxlite::cpu
