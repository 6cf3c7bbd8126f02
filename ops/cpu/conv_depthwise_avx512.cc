#include "ops/cpu/conv_depthwise_avx512.h"

#include "core/error.h"
#include "ops/cpu/avx512.h"
#include "ops/cpu/depthwise_row_plan.h"
#include "ops/cpu/sliding_taps_avx512.h"

#if MXLITE_HAS_AVX512_KERNEL
#include <immintrin.h>

namespace mxlite::cpu::detail {
namespace {

constexpr int64_t kLanes = 16;  // channels per vector
constexpr int kPixels = 8;      // output pixels per register tile
constexpr int kRestPixels = 4;  // per tile of a row's last few unpadded pixels

// What every tile of a row shares: the geometry, the row's plan, the weights by tap, the clamp.
struct RowContext {
  const ConvGeometry& g;
  const DepthwiseRowPlan& plan;
  const float* by_tap;
  const float* bias;  // or null
  __m512 low, high;
  float* y_row;
};

// One vector of channels: its first channel and the lanes that hold channels of the slice (all 16
// but in the slice's last, partial vector).
struct ChannelVector {
  int64_t c;
  __mmask16 lanes;
};

// Loads and stores of a channel vector; kMasked touches only its lanes (the partial vector, whose
// other lanes may lie past the end of the row).
template <bool kMasked>
MXLITE_AVX512 inline __m512 Load(const float* at, __mmask16 lanes) {
  if constexpr (kMasked) return _mm512_maskz_loadu_ps(lanes, at);
  return _mm512_loadu_ps(at);
}

template <bool kMasked>
MXLITE_AVX512 inline void Store(float* at, __m512 value, __mmask16 lanes) {
  if constexpr (kMasked) {
    _mm512_mask_storeu_ps(at, lanes, value);
  } else {
    _mm512_storeu_ps(at, value);
  }
}

template <bool kMasked>
MXLITE_AVX512 inline __m512 StartingSum(const RowContext& row, ChannelVector v) {
  return row.bias != nullptr ? Load<kMasked>(row.bias + v.c, v.lanes) : _mm512_setzero_ps();
}

// Bound first: Max16/Min16 return their second operand when one is NaN, so NaN stays NaN.
MXLITE_AVX512 inline __m512 Clamp(const RowContext& row, __m512 value) {
  return Min16(row.high, Max16(row.low, value));
}

template <int kTile, bool kMasked>
MXLITE_AVX512 inline void StoreTile(const RowContext& row, const __m512* acc, int64_t ow,
                                    ChannelVector v) {
  const int64_t channels = row.g.in_channels;
#pragma GCC unroll 8
  for (int p = 0; p < kTile; ++p) {
    Store<kMasked>(row.y_row + (ow + p) * channels + v.c, Clamp(row, acc[p]), v.lanes);
  }
}

// kTile pixels from `ow`, one channel vector, a kTaps-wide undilated kernel at stride kStride,
// each kernel row slid over the pixels (sliding_taps_avx512.h). kEdge: some windows reach into the
// padding; the columns outside the input are skipped, which skips exactly the taps that land
// there (so the sums are the checked path's, bit for bit).
template <int kTaps, int kStride, int kTile, bool kMasked, bool kEdge>
MXLITE_AVX512 void SlidingTile(const RowContext& row, int64_t ow, ChannelVector v) {
  constexpr int kColumns = (kTile - 1) * kStride + kTaps;
  const ConvGeometry& g = row.g;
  const int64_t channels = g.in_channels;
  const int64_t first_column = ow * kStride - g.pad_w;  // of the input, at k = 0
  // Columns k of the tile inside the input: [k_begin, k_end).
  const int64_t k_begin = kEdge ? -first_column : 0;
  const int64_t k_end = kEdge ? g.in_w - first_column : kColumns;
  __m512 acc[kTile];
  const __m512 start = StartingSum<kMasked>(row, v);
#pragma GCC unroll 8
  for (int p = 0; p < kTile; ++p) acc[p] = start;
  for (int64_t i = 0; i < row.plan.kernel_h; ++i) {
    if (row.plan.input_rows[i] == nullptr) continue;
    // Column k's channels (before the row's start at an edge's padded columns, never read).
    const float* x = row.plan.input_rows[i] + first_column * channels + v.c;
    const float* w = row.by_tap + i * kTaps * channels + v.c;
    __m512 weight[kTaps];
#pragma GCC unroll 7
    for (int j = 0; j < kTaps; ++j) weight[j] = Load<kMasked>(w + j * channels, v.lanes);
    SlideKernelRow<kTaps, kStride, kTile, kMasked, kEdge>(x, channels, weight, v.lanes, k_begin,
                                                          k_end, acc);
  }
  StoreTile<kTile, kMasked>(row, acc, ow, v);
}

// kTile pixels from `ow`, one channel vector, any kernel, stride and dilation, every window
// inside the input: each tap's weights loaded once for the kTile pixels.
template <int kTile, bool kMasked>
MXLITE_AVX512 void GeneralTile(const RowContext& row, int64_t ow, ChannelVector v) {
  const ConvGeometry& g = row.g;
  const int64_t channels = g.in_channels;
  const int64_t step = g.stride_w * channels;  // between neighbouring output pixels' inputs
  __m512 acc[kTile];
  const __m512 start = StartingSum<kMasked>(row, v);
#pragma GCC unroll 8
  for (int p = 0; p < kTile; ++p) acc[p] = start;
  for (int64_t i = 0; i < row.plan.kernel_h; ++i) {
    if (row.plan.input_rows[i] == nullptr) continue;
    const float* x = row.plan.input_rows[i] + (ow * g.stride_w - g.pad_w) * channels + v.c;
    const float* w = row.by_tap + i * g.kernel_w * channels + v.c;
    for (int64_t j = 0; j < g.kernel_w; ++j, x += g.dilate_w * channels, w += channels) {
      const __m512 weight = Load<kMasked>(w, v.lanes);
#pragma GCC unroll 8
      for (int p = 0; p < kTile; ++p) {
        acc[p] = _mm512_fmadd_ps(weight, Load<kMasked>(x + p * step, v.lanes), acc[p]);
      }
    }
  }
  StoreTile<kTile, kMasked>(row, acc, ow, v);
}

// One pixel, kVectors channel vectors from `first` (the last one masked when kMaskLast), taps in
// the padding skipped. Several vectors go together so their chains of dependent FMAs overlap.
template <int kVectors, bool kMaskLast>
MXLITE_AVX512 void CheckedPixel(const RowContext& row, int64_t ow, int64_t first,
                                __mmask16 last_lanes) {
  const ConvGeometry& g = row.g;
  const int64_t channels = g.in_channels;
  const auto load = [last_lanes](const float* at, int v) MXLITE_AVX512 {
    return kMaskLast && v == kVectors - 1 ? _mm512_maskz_loadu_ps(last_lanes, at)
                                          : _mm512_loadu_ps(at);
  };
  __m512 acc[kVectors];
#pragma GCC unroll 4
  for (int v = 0; v < kVectors; ++v) {
    acc[v] = row.bias != nullptr ? load(row.bias + first + v * kLanes, v) : _mm512_setzero_ps();
  }
  for (int64_t i = 0; i < row.plan.kernel_h; ++i) {
    if (row.plan.input_rows[i] == nullptr) continue;
    for (int64_t j = 0; j < g.kernel_w; ++j) {
      const int64_t iw = ow * g.stride_w - g.pad_w + j * g.dilate_w;
      if (iw < 0 || iw >= g.in_w) continue;
      const float* w = row.by_tap + (i * g.kernel_w + j) * channels + first;
      const float* x = row.plan.input_rows[i] + iw * channels + first;
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) {
        acc[v] = _mm512_fmadd_ps(load(w + v * kLanes, v), load(x + v * kLanes, v), acc[v]);
      }
    }
  }
  float* y = row.y_row + ow * channels + first;
#pragma GCC unroll 4
  for (int v = 0; v < kVectors; ++v) {
    const __m512 value = Clamp(row, acc[v]);
    if (kMaskLast && v == kVectors - 1) {
      _mm512_mask_storeu_ps(y + v * kLanes, last_lanes, value);
    } else {
      _mm512_storeu_ps(y + v * kLanes, value);
    }
  }
}

// Pixel `ow`, channels [begin, end): four whole vectors at a time, then one, then the masked rest.
MXLITE_AVX512 void CheckedPixelChannels(const RowContext& row, int64_t ow, int64_t begin,
                                        int64_t end) {
  constexpr int kGroup = 4;
  int64_t c = begin;
  for (; c + kGroup * kLanes <= end; c += kGroup * kLanes) {
    CheckedPixel<kGroup, false>(row, ow, c, 0);
  }
  for (; c + kLanes <= end; c += kLanes) CheckedPixel<1, false>(row, ow, c, 0);
  if (c < end) {
    CheckedPixel<1, true>(row, ow, c, static_cast<__mmask16>((1u << (end - c)) - 1));
  }
}

// One tile at `ow` over channels [begin, end): whole vectors, then the masked rest.
using TileFn = void (*)(const RowContext&, int64_t, ChannelVector);
MXLITE_AVX512 inline void TileChannels(const RowContext& row, TileFn whole, TileFn masked,
                                       int64_t ow, int64_t begin, int64_t end) {
  const int64_t vector_end = begin + (end - begin) / kLanes * kLanes;
  for (int64_t c = begin; c < vector_end; c += kLanes) whole(row, ow, {c, 0xFFFF});
  if (vector_end < end) {
    masked(row, ow, {vector_end, static_cast<__mmask16>((1u << (end - vector_end)) - 1)});
  }
}

// A tile of some width and kind: its whole-vector and masked-vector functions.
struct Tile {
  int64_t pixels;
  TileFn whole, masked;
};

// The columns [first, end) of a row in tiles, pixels outer and channel vectors inner (the input a
// tile reads stays in L1 while every channel vector consumes it). tiles: [0] whole, [1] rest,
// [2] and [3] the same widths for tiles that touch the padding (is_edge(ow, pixels)). Whole tiles
// first; the last is shifted back to end at `end` (it recomputes a few pixels, to the same
// bits); a rest tile takes what is left where it fits it, and two of them cover a span too narrow
// for a whole tile. Needs end - first >= the rest tile's width.
template <typename IsEdge>
MXLITE_AVX512 void TileSpan(const RowContext& row, const Tile* tiles, int64_t first, int64_t end,
                            int64_t begin_channel, int64_t end_channel, IsEdge is_edge) {
  // tiles: [0] whole inside, [1] rest inside, [2] whole edge, [3] rest edge.
  const auto run = [&](int which, int64_t ow) MXLITE_AVX512 {
    const Tile& tile = tiles[which + (is_edge(ow, tiles[which].pixels) ? 2 : 0)];
    TileChannels(row, tile.whole, tile.masked, ow, begin_channel, end_channel);
  };
  const int64_t whole = tiles[0].pixels, rest_width = tiles[1].pixels;
  int64_t ow = first;
  for (; ow + whole <= end; ow += whole) run(0, ow);
  const int64_t rest = end - ow;
  if (rest == 0) return;
  if (rest > rest_width && ow > first) {  // a whole tile fits before the end
    run(0, end - whole);
    return;
  }
  if (rest > rest_width) run(1, ow);
  run(1, end - rest_width);
}

template <int kTaps, int kStride>
const Tile kSlidingTiles[4] = {
    {kPixels, SlidingTile<kTaps, kStride, kPixels, false, false>,
     SlidingTile<kTaps, kStride, kPixels, true, false>},
    {kRestPixels, SlidingTile<kTaps, kStride, kRestPixels, false, false>,
     SlidingTile<kTaps, kStride, kRestPixels, true, false>},
    {kPixels, SlidingTile<kTaps, kStride, kPixels, false, true>,
     SlidingTile<kTaps, kStride, kPixels, true, true>},
    {kRestPixels, SlidingTile<kTaps, kStride, kRestPixels, false, true>,
     SlidingTile<kTaps, kStride, kRestPixels, true, true>},
};

const Tile kGeneralTiles[2] = {
    {kPixels, GeneralTile<kPixels, false>, GeneralTile<kPixels, true>},
    {kRestPixels, GeneralTile<kRestPixels, false>, GeneralTile<kRestPixels, true>},
};

// The sliding tiles for g's kernel, or null where none is built for its width and stride.
const Tile* SlidingTilesFor(const ConvGeometry& g) {
  if (g.dilate_w != 1 || (g.stride_w != 1 && g.stride_w != 2)) return nullptr;
  const bool unit = g.stride_w == 1;
  switch (g.kernel_w) {
    case 3:
      return unit ? kSlidingTiles<3, 1> : kSlidingTiles<3, 2>;
    case 5:
      return unit ? kSlidingTiles<5, 1> : kSlidingTiles<5, 2>;
    case 7:
      return unit ? kSlidingTiles<7, 1> : kSlidingTiles<7, 2>;
    default:
      return nullptr;
  }
}

}  // namespace

bool DepthwiseAvx512Available() { return CpuSupportsAvx512f(); }

MXLITE_AVX512 void DepthwiseForwardRowNhwcAvx512(
    const ConvGeometry& g, const float* const* input_rows, const float* by_tap, const float* bias,
    const Epilogue<float>& clamp, int64_t channel_begin, int64_t channel_end, float* y_row) {
  const DepthwiseRowPlan plan(g, input_rows);
  const RowContext row{
      g, plan, by_tap, bias, _mm512_set1_ps(clamp.low), _mm512_set1_ps(clamp.high), y_row};
  const Tile* sliding = SlidingTilesFor(g);
  // Sliding tiles take the whole row, edges included, where it is wide enough for one: a 5- or
  // 7-wide kernel's edges are 2-3 pixels of rows of 7 to 28 (EfficientNet's 5x5 at 14x14 ran in
  // 0.59 of the time of checked edges; MobileNet's 3x3 at 7x7 in 0.78; its wider 3x3 rows within
  // a few percent either way).
  if (sliding != nullptr && g.out_w >= kRestPixels) {
    const auto is_edge = [&plan](int64_t ow, int64_t pixels) {
      return ow < plan.inside.begin || ow + pixels > plan.inside.end;
    };
    TileSpan(row, sliding, 0, g.out_w, channel_begin, channel_end, is_edge);
    return;
  }
  // Other kernels (and rows under kRestPixels): general tiles inside, the checked path on the
  // edges.
  const bool tiled = plan.inside.end - plan.inside.begin >= kRestPixels;
  const int64_t checked_until = tiled ? plan.inside.begin : 0;
  const int64_t checked_from = tiled ? plan.inside.end : 0;
  for (int64_t ow = 0; ow < checked_until; ++ow) {
    CheckedPixelChannels(row, ow, channel_begin, channel_end);
  }
  if (tiled) {
    const Tile tiles[4] = {kGeneralTiles[0], kGeneralTiles[1], kGeneralTiles[0], kGeneralTiles[1]};
    TileSpan(row, tiles, plan.inside.begin, plan.inside.end, channel_begin, channel_end,
             [](int64_t, int64_t) { return false; });
  }
  for (int64_t ow = checked_from; ow < g.out_w; ++ow) {
    CheckedPixelChannels(row, ow, channel_begin, channel_end);
  }
}

}  // namespace mxlite::cpu::detail

#else  // !MXLITE_HAS_AVX512_KERNEL

namespace mxlite::cpu::detail {

bool DepthwiseAvx512Available() { return false; }

void DepthwiseForwardRowNhwcAvx512(const ConvGeometry&, const float* const*, const float*,
                                   const float*, const Epilogue<float>&, int64_t, int64_t, float*) {
  MX_THROW() << "DepthwiseForwardRowNhwcAvx512 needs an x86-64 build";
}

}  // namespace mxlite::cpu::detail

#endif  // MXLITE_HAS_AVX512_KERNEL
