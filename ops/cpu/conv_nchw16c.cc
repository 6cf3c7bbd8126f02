// The convolutions of the blocked layout NCHW16c (ops/activation_layout.h: channels in blocks of
// 16, one 64-byte vector per pixel and block), forward only: the layout is planned for inference
// (scheduler/planning/conv_planning.h).
//
// direct_nchw16c (channels and filters per group multiples of 16; any kernel, stride, pad and
// dilation) computes each output straight from the input, as oneDNN's and ONNX Runtime's blocked
// kernels do:
// 1. The weight (O, C/G, KH, KW) is reordered to (O/16, C/G/16, KH, KW, 16 inputs, 16 outputs):
//    for one input channel and tap, the 16 outputs of a block are one vector. An output block
//    reads the input blocks of its group only (grouped layers: RegNet, ResNeXt).
// 2. A task is one output row of one image and one pair of output blocks (32 channels; one block
//    where a group has an odd number of them and there are several groups). The row is
//    walked in tiles of up to 14 pixels whose 28 vector accumulators stay in registers through the
//    whole reduction (input blocks, kernel rows, kernel columns, the 16 channels of a block): each
//    input value is broadcast once and multiplied into both blocks' weight vectors. A tile is
//    stored once: bias first (the accumulators start from it), then the residual, then the clamp.
//    Kernel rows outside the image are skipped; pixels whose window leaves the image sideways run
//    one at a time over the kernel columns inside it, or, on narrow maps where they are many, the
//    rows are read from a copy of the input with the padding columns written out (PadsWidth). When
//    the weights outweigh an image, the tasks go pair by pair (a pair's weights stay in cache
//    across the rows), else row by row (a row's input stays in cache across the pairs). A task's
//    first tile prefetches the weights a little ahead of its loads: in a pass they were last read
//    a pass ago and come from memory in a stream the hardware prefetcher follows too late (layers
//    on 7x7 and 14x14 maps, whose weights outweigh their input, ran 5-12% faster). A 1x1
//    stride-1 unpadded layer on rows narrower than a tile takes each image as one row of H x W
//    pixels (RowsJoined), so its tiles are whole ones.
//
// depthwise_direct NCHW16c (groups == channels == filters, a multiple of 16; any kernel, stride,
// pad, dilation): each lane is its own channel, so a pixel's block is one vector multiplied by one
// weight vector per tap, for tiles of up to 8 pixels of a row; the weight (C, 1, KH, KW) is
// reordered to (C/16, KH, KW, 16). Inside the row, undilated kernels 3, 5 or 7 wide at stride 1
// or 2 slide: each input column is loaded once for every pixel of the tile whose window holds it.
//
// grouped_nchw16c (groups of 2, 4 or 8 channels with as many filters, GroupsShareChannelBlocks;
// any kernel, stride, pad, dilation): a block holds 16 / k whole groups of k channels, so output
// block b reads input block b only. Lane o of the output needs input channel (o / k) * k + i of
// the pixel for the group's channel i: one permute of the pixel's vector per i, multiplied by the
// weight vector of that i, for tiles of up to 14 pixels of a row. The weight (C, k, KH, KW) is
// reordered to (C/16, KH, KW, k, 16). Before it, these layers ran plain NCHW at a quarter of the
// speed (RegNet-Y-400MF's 3x3 groups of 8).
//
// Every output element is summed in the same order whatever the thread count. Float32 on CPUs with
// AVX-512F runs the vector kernels (fused multiply-adds); float64, and float32 elsewhere, run the
// same walk in plain C++ (multiply then add), so the two differ in the last bits.
#include <algorithm>
#include <array>
#include <limits>
#include <type_traits>
#include <utility>

#include "core/error.h"
#include "ops/cpu/avx512.h"
#include "ops/cpu/conv_algorithms.h"
#include "ops/cpu/int_math.h"
#include "ops/cpu/parallel.h"
#include "ops/cpu/sliding_taps_avx512.h"

#if MXLITE_HAS_AVX512_KERNEL
#include <immintrin.h>
#endif

namespace mxlite::cpu {
namespace {

constexpr int64_t kBlock = kChannelBlock;  // channels per vector
constexpr int kMaxTilePixels = 14;         // direct: 2 x 14 accumulators + 2 weights + 1 input
constexpr int kMaxDepthwisePixels = 8;

bool IsBlocked(const ConvGeometry& g) { return g.layout == ConvLayout::kNCHW16c; }

bool UsesAvx512(DType dtype) { return dtype == DType::kFloat32 && CpuSupportsAvx512f(); }

// The kernel taps [begin, end) along one axis that read inside an input of `extent` for the
// output position whose first tap reads `start`.
struct TapRange {
  int64_t begin, end;
  bool empty() const { return begin >= end; }
};

TapRange TapsInside(int64_t start, int64_t dilation, int64_t taps, int64_t extent) {
  const int64_t begin = start >= 0 ? 0 : CeilDiv(-start, dilation);
  const int64_t end = start >= extent ? 0 : std::min(taps, (extent - 1 - start) / dilation + 1);
  return {std::min(begin, taps), std::max(std::min(begin, taps), end)};
}

// Where one task reads and writes: fixed for one image, output row and (pair of) output blocks.
template <typename T>
struct RowTask {
  const T* input;        // (C/16, IH, IW, 16) of the image
  const T* weight;       // the first output block's (C/16, KH, KW, 16, 16) or (KH, KW, 16)
  int64_t weight_block;  // elements from one output block's weights to the next's
  const T* bias;         // the first output block's 16 per block, or null
  const T* residual;     // like output, or null
  T* output;             // (OW, 16) of the row in the first output block
  int64_t output_block;  // elements from one output block's row to the next's
  int64_t blocks;        // output blocks in this task (1 or 2; depthwise 1)
  int64_t input_row;     // the input row of kernel row 0 (may be outside the image)
  TapRange rows;         // kernel rows inside the image
  T low, high;
};

// Calls tile(ox, pixels, columns) over one output row: the edge pixels (windows leaving the image
// sideways) one at a time with the kernel columns inside it, the interior in tiles of up to
// `max_pixels` with every column.
template <typename Tile>
void WalkRow(const ConvGeometry& g, const ColumnSpan& interior, int max_pixels, Tile&& tile) {
  auto edge = [&](int64_t ox) {
    tile(ox, 1, TapsInside(ox * g.stride_w - g.pad_w, g.dilate_w, g.kernel_w, g.in_w));
  };
  for (int64_t ox = 0; ox < interior.begin; ++ox) edge(ox);
  for (int64_t ox = interior.begin; ox < interior.end; ox += max_pixels) {
    const int pixels = static_cast<int>(std::min<int64_t>(max_pixels, interior.end - ox));
    tile(ox, pixels, TapRange{0, g.kernel_w});
  }
  for (int64_t ox = interior.end; ox < g.out_w; ++ox) edge(ox);
}

// ---- Width padding ----------------------------------------------------------------------------

// Whether the kernels run on a copy of the input with its padding columns written out as zeros:
// then every output pixel's window lies inside the copy and whole rows run in full tiles. Worth
// the copy (one pass over the input) when the edge pixels, which otherwise run one at a time with
// a tile's loads for one pixel's multiplications, are an eighth of a row or more (maps of 7x7 and
// 14x14 with padding: 3x3 layers of 14x14 1.1x, of 7x7 1.2x faster, conv_algorithms_bench).
bool PadsWidth(const ConvGeometry& g) {
  if (g.pad_w == 0) return false;
  const ColumnSpan interior = UnpaddedOutputColumns(g);
  return (g.out_w - (interior.end - interior.begin)) * 8 >= g.out_w;
}

// A pointwise convolution (1x1, stride 1, no padding) reads each output pixel's own input pixel,
// so an image's rows can be computed as one row of H x W pixels: the layout (N, C/16, H, W, 16)
// is (N, C/16, 1, H * W, 16) in memory. Done where the rows are narrower than a whole tile
// (7x7 and 13x13 maps): a 7-pixel row took tiles of 7 pixels, each weight load feeding half the
// FMAs a 14-pixel tile gets from it (ResNet-50's 512->2048 at 7x7: 1.4 ms against 0.9 for its GEMM
// in NHWC). Wider rows keep their rows, whose tasks reuse an input row across output blocks.
ConvGeometry RowsJoined(const ConvGeometry& g) {
  const bool pointwise = g.kernel_h == 1 && g.kernel_w == 1 && g.stride_h == 1 && g.stride_w == 1 &&
                         g.pad_h == 0 && g.pad_w == 0;
  if (!pointwise || g.out_w >= kMaxTilePixels || g.out_h == 1) return g;
  ConvGeometry joined = g;
  joined.in_w = joined.out_w = g.in_h * g.in_w;
  joined.in_h = joined.out_h = 1;
  return joined;
}

// The geometry of the convolution over the padded copy (the same output).
ConvGeometry WidthPadded(const ConvGeometry& g) {
  ConvGeometry padded = g;
  padded.in_w = g.in_w + 2 * g.pad_w;
  padded.pad_w = 0;
  return padded;
}

int64_t PaddedInputSize(const ConvGeometry& g) {
  return g.batch * g.in_channels * g.in_h * (g.in_w + 2 * g.pad_w);
}

// The input (N, C/16, IH, IW, 16) copied to (N, C/16, IH, IW + 2 * pad_w, 16), zeros at the sides.
template <typename T>
const T* PadWidth(const ConvGeometry& g, const T* data, ScratchSpace& scratch) {
  const int64_t width = g.in_w + 2 * g.pad_w;
  const int64_t rows = g.batch * (g.in_channels / kBlock) * g.in_h;
  T* padded = scratch.GetArray<T>(PaddedInputSize(g));
  const int64_t chunks = std::min(rows, 4 * static_cast<int64_t>(IntraOpThreads()));
  ParallelFor(chunks, [&](int64_t chunk) {
    for (int64_t r = chunk * rows / chunks; r < (chunk + 1) * rows / chunks; ++r) {
      T* dst = padded + r * width * kBlock;
      std::fill(dst, dst + g.pad_w * kBlock, T(0));
      std::copy(data + r * g.in_w * kBlock, data + (r + 1) * g.in_w * kBlock,
                dst + g.pad_w * kBlock);
      std::fill(dst + (g.pad_w + g.in_w) * kBlock, dst + width * kBlock, T(0));
    }
  });
  return padded;
}

// Runs `run(geometry, tensors)` on the width-padded copy of the input when PadsWidth, else as is.
template <typename T, typename Run>
void WithPaddedWidth(const ConvGeometry& g, const ConvTensors<T>& t, ScratchSpace& scratch,
                     Run&& run) {
  if (!PadsWidth(g)) {
    run(g, t);
    return;
  }
  ConvTensors<T> padded = t;
  padded.data = PadWidth(g, t.data, scratch);
  run(WidthPadded(g), padded);
}

// ---- Reordered weights ------------------------------------------------------------------------

// Input channels per group (all of them with one group).
int64_t GroupChannels(const ConvGeometry& g) { return g.in_channels / g.groups; }

int64_t DirectWeightSize(const ConvGeometry& g) {
  return g.out_channels * GroupChannels(g) * g.kernel_spatial();
}

// (O, C/G, KH, KW) -> (O/16, C/G/16, KH, KW, 16 in, 16 out).
template <typename T>
void ReorderDirectWeight(const ConvGeometry& g, const T* weight, T* blocked) {
  const int64_t taps = g.kernel_spatial(), in_blocks = GroupChannels(g) / kBlock;
  const int64_t out_blocks = g.out_channels / kBlock;
  ParallelFor(out_blocks, [&](int64_t ob) {
    for (int64_t ib = 0; ib < in_blocks; ++ib) {
      for (int64_t tap = 0; tap < taps; ++tap) {
        T* dst = blocked + ((ob * in_blocks + ib) * taps + tap) * kBlock * kBlock;
        for (int64_t i = 0; i < kBlock; ++i) {
          for (int64_t o = 0; o < kBlock; ++o) {
            const int64_t out = ob * kBlock + o, in = ib * kBlock + i;
            dst[i * kBlock + o] = weight[(out * GroupChannels(g) + in) * taps + tap];
          }
        }
      }
    }
  });
}

// (C, 1, KH, KW) -> (C/16, KH, KW, 16).
template <typename T>
void ReorderDepthwiseWeight(const ConvGeometry& g, const T* weight, T* blocked) {
  const int64_t taps = g.kernel_spatial();
  for (int64_t c = 0; c < g.out_channels; ++c) {
    for (int64_t tap = 0; tap < taps; ++tap) {
      blocked[((c / kBlock) * taps + tap) * kBlock + c % kBlock] = weight[c * taps + tap];
    }
  }
}

// Channels per group of a grouped_nchw16c layer (2, 4 or 8).
int64_t LaneGroupSize(const ConvGeometry& g) { return g.in_channels / g.groups; }

// (C, k, KH, KW) -> (C/16, KH, KW, k, 16).
template <typename T>
void ReorderLaneGroupWeight(const ConvGeometry& g, const T* weight, T* blocked) {
  const int64_t taps = g.kernel_spatial(), k = LaneGroupSize(g);
  for (int64_t c = 0; c < g.out_channels; ++c) {
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t tap = 0; tap < taps; ++tap) {
        blocked[(((c / kBlock) * taps + tap) * k + i) * kBlock + c % kBlock] =
            weight[(c * k + i) * taps + tap];
      }
    }
  }
}

// ---- direct_nchw16c tiles ---------------------------------------------------------------------

// Portable: `pixels` pixels from output column ox, kernel columns `columns` (the same for every
// pixel of the tile).
template <typename T>
void DirectTile(const ConvGeometry& g, const RowTask<T>& task, int64_t ox, int pixels,
                TapRange columns) {
  const int64_t in_blocks = GroupChannels(g) / kBlock, taps = g.kernel_spatial();
  const int64_t plane = g.in_h * g.in_w * kBlock;
  for (int64_t b = 0; b < task.blocks; ++b) {
    const T* weight = task.weight + b * task.weight_block;
    for (int p = 0; p < pixels; ++p) {
      T acc[kBlock];
      for (int64_t o = 0; o < kBlock; ++o) {
        acc[o] = task.bias != nullptr ? task.bias[b * kBlock + o] : T(0);
      }
      const int64_t first_column = (ox + p) * g.stride_w - g.pad_w;
      for (int64_t ib = 0; ib < in_blocks; ++ib) {
        for (int64_t kh = task.rows.begin; kh < task.rows.end; ++kh) {
          const T* row =
              task.input + ib * plane + (task.input_row + kh * g.dilate_h) * g.in_w * kBlock;
          for (int64_t kw = columns.begin; kw < columns.end; ++kw) {
            const T* x = row + (first_column + kw * g.dilate_w) * kBlock;
            const T* w = weight + ((ib * taps) + kh * g.kernel_w + kw) * kBlock * kBlock;
            for (int64_t i = 0; i < kBlock; ++i) {
              for (int64_t o = 0; o < kBlock; ++o) acc[o] += x[i] * w[i * kBlock + o];
            }
          }
        }
      }
      const int64_t at = b * task.output_block + (ox + p) * kBlock;
      for (int64_t o = 0; o < kBlock; ++o) {
        T value = acc[o];
        if (task.residual != nullptr) value += task.residual[at + o];
        task.output[at + o] = std::min(std::max(value, task.low), task.high);
      }
    }
  }
}

#if MXLITE_HAS_AVX512_KERNEL
// Stores one accumulator: residual, then the clamp (bound first: Max16/Min16 return their second
// operand when one is NaN, so a NaN stays NaN).
MXLITE_AVX512 inline void StoreVector(__m512 value, const RowTask<float>& task, int64_t at,
                                      bool clamps) {
  if (task.residual != nullptr) value = _mm512_add_ps(value, _mm512_loadu_ps(task.residual + at));
  if (clamps) value = Min16(_mm512_set1_ps(task.high), Max16(_mm512_set1_ps(task.low), value));
  _mm512_storeu_ps(task.output + at, value);
}

// How far ahead of its loads a tile that prefetches the weights asks for them: two input blocks'
// worth (2 KB) of each output block's stream.
constexpr int64_t kWeightPrefetchAhead = 2 * kBlock * kBlock;

// P pixels x B output blocks (B * P + B + 1 <= 32 registers). kStrideW: the width's stride when it
// is 1 or 2 (0: any, read from g), so the pixels' inputs are 16 or 32 floats apart at offsets the
// compiler knows (no register per pixel for its offset: with 14 pixels, three offsets were
// reloaded from the stack every step).
template <int P, int B, int kStrideW, bool kPrefetch>
MXLITE_AVX512 void DirectTileAvx512(const ConvGeometry& g, const RowTask<float>& task, int64_t ox,
                                    TapRange columns) {
  const int64_t in_blocks = GroupChannels(g) / kBlock, taps = g.kernel_spatial();
  const int64_t plane = g.in_h * g.in_w * kBlock;
  const int64_t pixel_step = (kStrideW > 0 ? kStrideW : g.stride_w) * kBlock;
  __m512 acc[B][P];
#pragma GCC unroll 2
  for (int b = 0; b < B; ++b) {
    const __m512 bias =
        task.bias != nullptr ? _mm512_loadu_ps(task.bias + b * kBlock) : _mm512_setzero_ps();
#pragma GCC unroll 14
    for (int p = 0; p < P; ++p) acc[b][p] = bias;
  }
  const int64_t first_column = ox * g.stride_w - g.pad_w;
  for (int64_t ib = 0; ib < in_blocks; ++ib) {
    for (int64_t kh = task.rows.begin; kh < task.rows.end; ++kh) {
      const float* row =
          task.input + ib * plane + (task.input_row + kh * g.dilate_h) * g.in_w * kBlock;
      const float* w_row = task.weight + (ib * taps + kh * g.kernel_w) * kBlock * kBlock;
      for (int64_t kw = columns.begin; kw < columns.end; ++kw) {
        const float* x = row + (first_column + kw * g.dilate_w) * kBlock;
        const float* w = w_row + kw * kBlock * kBlock;
#pragma GCC unroll 4
        for (int64_t i = 0; i < kBlock; ++i) {
          __m512 weights[B];
#pragma GCC unroll 2
          for (int b = 0; b < B; ++b) {
            weights[b] = _mm512_loadu_ps(w + b * task.weight_block + i * kBlock);
            if constexpr (kPrefetch) {
              _mm_prefetch(reinterpret_cast<const char*>(w + b * task.weight_block + i * kBlock +
                                                         kWeightPrefetchAhead),
                           _MM_HINT_T0);
            }
          }
#pragma GCC unroll 14
          for (int p = 0; p < P; ++p) {
            const __m512 value = _mm512_set1_ps(x[p * pixel_step + i]);
#pragma GCC unroll 2
            for (int b = 0; b < B; ++b) acc[b][p] = _mm512_fmadd_ps(value, weights[b], acc[b][p]);
          }
        }
      }
    }
  }
  const bool clamps = task.low != -std::numeric_limits<float>::infinity() ||
                      task.high != std::numeric_limits<float>::infinity();
#pragma GCC unroll 2
  for (int b = 0; b < B; ++b) {
#pragma GCC unroll 14
    for (int p = 0; p < P; ++p) {
      StoreVector(acc[b][p], task, b * task.output_block + (ox + p) * kBlock, clamps);
    }
  }
}

using DirectAvx512Tile = void (*)(const ConvGeometry&, const RowTask<float>&, int64_t, TapRange);

template <int B, int kStrideW, bool kPrefetch, int... P>
constexpr std::array<DirectAvx512Tile, sizeof...(P)> DirectTilesOf(
    std::integer_sequence<int, P...>) {
  return {DirectTileAvx512<P + 1, B, kStrideW, kPrefetch>...};
}

template <int kStrideW, bool kPrefetch>
constexpr std::array<std::array<DirectAvx512Tile, kMaxTilePixels>, 2> DirectTilesOfStride() {
  return {DirectTilesOf<1, kStrideW, kPrefetch>(std::make_integer_sequence<int, kMaxTilePixels>{}),
          DirectTilesOf<2, kStrideW, kPrefetch>(std::make_integer_sequence<int, kMaxTilePixels>{})};
}

using DirectTileTable = std::array<std::array<DirectAvx512Tile, kMaxTilePixels>, 2>[3];

// [stride: 1, 2, or 0 for any other][blocks - 1][pixels - 1]
template <bool kPrefetch>
const DirectTileTable kDirectTiles = {DirectTilesOfStride<0, kPrefetch>(),
                                      DirectTilesOfStride<1, kPrefetch>(),
                                      DirectTilesOfStride<2, kPrefetch>()};
#endif

// One output row of one (pair of) block(s).
template <typename T>
void DirectRow(const ConvGeometry& g, const RowTask<T>& task, const ColumnSpan& interior,
               bool avx512) {
  WalkRow(g, interior, kMaxTilePixels, [&](int64_t ox, int pixels, TapRange columns) {
#if MXLITE_HAS_AVX512_KERNEL
    if constexpr (std::is_same_v<T, float>) {
      if (avx512) {
        const auto& tiles = ox == 0 ? kDirectTiles<true> : kDirectTiles<false>;
        tiles[g.stride_w <= 2 ? g.stride_w : 0][task.blocks - 1][pixels - 1](g, task, ox, columns);
        return;
      }
    }
#endif
    DirectTile(g, task, ox, pixels, columns);
  });
}

// ---- depthwise tiles --------------------------------------------------------------------------

template <typename T>
void DepthwiseTile(const ConvGeometry& g, const RowTask<T>& task, int64_t ox, int pixels,
                   TapRange columns) {
  for (int p = 0; p < pixels; ++p) {
    T acc[kBlock];
    for (int64_t c = 0; c < kBlock; ++c) acc[c] = task.bias != nullptr ? task.bias[c] : T(0);
    const int64_t first_column = (ox + p) * g.stride_w - g.pad_w;
    for (int64_t kh = task.rows.begin; kh < task.rows.end; ++kh) {
      const T* row = task.input + (task.input_row + kh * g.dilate_h) * g.in_w * kBlock;
      for (int64_t kw = columns.begin; kw < columns.end; ++kw) {
        const T* x = row + (first_column + kw * g.dilate_w) * kBlock;
        const T* w = task.weight + (kh * g.kernel_w + kw) * kBlock;
        for (int64_t c = 0; c < kBlock; ++c) acc[c] += x[c] * w[c];
      }
    }
    const int64_t at = (ox + p) * kBlock;
    for (int64_t c = 0; c < kBlock; ++c) {
      T value = acc[c];
      if (task.residual != nullptr) value += task.residual[at + c];
      task.output[at + c] = std::min(std::max(value, task.low), task.high);
    }
  }
}

#if MXLITE_HAS_AVX512_KERNEL
template <int P>
MXLITE_AVX512 void DepthwiseTileAvx512(const ConvGeometry& g, const RowTask<float>& task,
                                       int64_t ox, TapRange columns) {
  const int64_t pixel_step = g.stride_w * kBlock;
  const __m512 bias = task.bias != nullptr ? _mm512_loadu_ps(task.bias) : _mm512_setzero_ps();
  __m512 acc[P];
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) acc[p] = bias;
  const int64_t first_column = ox * g.stride_w - g.pad_w;
  for (int64_t kh = task.rows.begin; kh < task.rows.end; ++kh) {
    const float* row = task.input + (task.input_row + kh * g.dilate_h) * g.in_w * kBlock;
    for (int64_t kw = columns.begin; kw < columns.end; ++kw) {
      const float* x = row + (first_column + kw * g.dilate_w) * kBlock;
      const __m512 w = _mm512_loadu_ps(task.weight + (kh * g.kernel_w + kw) * kBlock);
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) {
        acc[p] = _mm512_fmadd_ps(_mm512_loadu_ps(x + p * pixel_step), w, acc[p]);
      }
    }
  }
  const bool clamps = task.low != -std::numeric_limits<float>::infinity() ||
                      task.high != std::numeric_limits<float>::infinity();
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) StoreVector(acc[p], task, (ox + p) * kBlock, clamps);
}

template <int... P>
constexpr std::array<DirectAvx512Tile, sizeof...(P)> DepthwiseTilesOf(
    std::integer_sequence<int, P...>) {
  return {DepthwiseTileAvx512<P + 1>...};
}

const std::array<DirectAvx512Tile, kMaxDepthwisePixels> kDepthwiseTiles =
    DepthwiseTilesOf(std::make_integer_sequence<int, kMaxDepthwisePixels>{});

// P pixels whose windows lie inside the row, a kTaps-wide undilated kernel at stride kStride,
// each kernel row slid over the pixels (sliding_taps_avx512.h: 8 pixels of a 7-wide kernel load
// 14 columns for 56 FMAs, where DepthwiseTileAvx512 loads once per FMA). A pixel receives its taps
// in the same order (kernel rows, then columns left to right), so the sums are
// DepthwiseTileAvx512's, bit for bit.
template <int P, int kTaps, int kStride>
MXLITE_AVX512 void DepthwiseSlidingTileAvx512(const ConvGeometry& g, const RowTask<float>& task,
                                              int64_t ox, TapRange) {
  const __m512 bias = task.bias != nullptr ? _mm512_loadu_ps(task.bias) : _mm512_setzero_ps();
  __m512 acc[P];
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) acc[p] = bias;
  const int64_t first_column = ox * kStride - g.pad_w;
  for (int64_t kh = task.rows.begin; kh < task.rows.end; ++kh) {
    const float* x = task.input + (task.input_row + kh) * g.in_w * kBlock + first_column * kBlock;
    const float* w = task.weight + kh * kTaps * kBlock;
    __m512 weight[kTaps];
#pragma GCC unroll 7
    for (int j = 0; j < kTaps; ++j) weight[j] = _mm512_loadu_ps(w + j * kBlock);
    detail::SlideKernelRow<kTaps, kStride, P, false, false>(x, kBlock, weight, 0xFFFF, 0, 0, acc);
  }
  const bool clamps = task.low != -std::numeric_limits<float>::infinity() ||
                      task.high != std::numeric_limits<float>::infinity();
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) StoreVector(acc[p], task, (ox + p) * kBlock, clamps);
}

template <int kTaps, int kStride, int... P>
constexpr std::array<DirectAvx512Tile, sizeof...(P)> DepthwiseSlidingTilesOf(
    std::integer_sequence<int, P...>) {
  return {DepthwiseSlidingTileAvx512<P + 1, kTaps, kStride>...};
}

template <int kTaps, int kStride>
const std::array<DirectAvx512Tile, kMaxDepthwisePixels> kDepthwiseSlidingTiles =
    DepthwiseSlidingTilesOf<kTaps, kStride>(std::make_integer_sequence<int, kMaxDepthwisePixels>{});

// The sliding tiles for g's kernel (by pixels), or null where none is built for its width,
// stride and dilation.
const std::array<DirectAvx512Tile, kMaxDepthwisePixels>* DepthwiseSlidingTilesFor(
    const ConvGeometry& g) {
  if (g.dilate_w != 1 || g.dilate_h != 1 || (g.stride_w != 1 && g.stride_w != 2)) return nullptr;
  const bool unit = g.stride_w == 1;
  switch (g.kernel_w) {
    case 3:
      return unit ? &kDepthwiseSlidingTiles<3, 1> : &kDepthwiseSlidingTiles<3, 2>;
    case 5:
      return unit ? &kDepthwiseSlidingTiles<5, 1> : &kDepthwiseSlidingTiles<5, 2>;
    case 7:
      return unit ? &kDepthwiseSlidingTiles<7, 1> : &kDepthwiseSlidingTiles<7, 2>;
    default:
      return nullptr;
  }
}
#endif

template <typename T>
void DepthwiseRow(const ConvGeometry& g, const RowTask<T>& task, const ColumnSpan& interior,
                  bool avx512) {
#if MXLITE_HAS_AVX512_KERNEL
  const auto* sliding = avx512 ? DepthwiseSlidingTilesFor(g) : nullptr;
#endif
  WalkRow(g, interior, kMaxDepthwisePixels, [&](int64_t ox, int pixels, TapRange columns) {
#if MXLITE_HAS_AVX512_KERNEL
    if constexpr (std::is_same_v<T, float>) {
      if (sliding != nullptr && columns.begin == 0 && columns.end == g.kernel_w) {
        (*sliding)[pixels - 1](g, task, ox, columns);
        return;
      }
      if (avx512) {
        kDepthwiseTiles[pixels - 1](g, task, ox, columns);
        return;
      }
    }
#endif
    DepthwiseTile(g, task, ox, pixels, columns);
  });
}

// ---- grouped_nchw16c tiles --------------------------------------------------------------------

template <typename T>
void LaneGroupTile(const ConvGeometry& g, const RowTask<T>& task, int64_t ox, int pixels,
                   TapRange columns) {
  const int64_t k = LaneGroupSize(g);
  for (int p = 0; p < pixels; ++p) {
    T acc[kBlock];
    for (int64_t o = 0; o < kBlock; ++o) acc[o] = task.bias != nullptr ? task.bias[o] : T(0);
    const int64_t first_column = (ox + p) * g.stride_w - g.pad_w;
    for (int64_t kh = task.rows.begin; kh < task.rows.end; ++kh) {
      const T* row = task.input + (task.input_row + kh * g.dilate_h) * g.in_w * kBlock;
      for (int64_t kw = columns.begin; kw < columns.end; ++kw) {
        const T* x = row + (first_column + kw * g.dilate_w) * kBlock;
        const T* w = task.weight + (kh * g.kernel_w + kw) * k * kBlock;
        for (int64_t i = 0; i < k; ++i) {
          for (int64_t o = 0; o < kBlock; ++o) acc[o] += x[o / k * k + i] * w[i * kBlock + o];
        }
      }
    }
    const int64_t at = (ox + p) * kBlock;
    for (int64_t o = 0; o < kBlock; ++o) {
      T value = acc[o];
      if (task.residual != nullptr) value += task.residual[at + o];
      task.output[at + o] = std::min(std::max(value, task.low), task.high);
    }
  }
}

#if MXLITE_HAS_AVX512_KERNEL
// P pixels, groups of K channels (P + 2 K + 1 <= 32 registers).
template <int P, int K>
MXLITE_AVX512 void LaneGroupTileAvx512(const ConvGeometry& g, const RowTask<float>& task,
                                       int64_t ox, TapRange columns) {
  const int64_t pixel_step = g.stride_w * kBlock;
  // Lane o of permute i takes lane o / K * K + i.
  __m512i pick[K];
#pragma GCC unroll 8
  for (int i = 0; i < K; ++i) {
    pick[i] = _mm512_add_epi32(
        _mm512_set1_epi32(i),
        _mm512_mullo_epi32(_mm512_srli_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6,
                                                              5, 4, 3, 2, 1, 0),
                                             K == 2 ? 1 : K == 4 ? 2 : 3),
                           _mm512_set1_epi32(K)));
  }
  const __m512 bias = task.bias != nullptr ? _mm512_loadu_ps(task.bias) : _mm512_setzero_ps();
  __m512 acc[P];
#pragma GCC unroll 14
  for (int p = 0; p < P; ++p) acc[p] = bias;
  const int64_t first_column = ox * g.stride_w - g.pad_w;
  for (int64_t kh = task.rows.begin; kh < task.rows.end; ++kh) {
    const float* row = task.input + (task.input_row + kh * g.dilate_h) * g.in_w * kBlock;
    for (int64_t kw = columns.begin; kw < columns.end; ++kw) {
      const float* x = row + (first_column + kw * g.dilate_w) * kBlock;
      const float* w = task.weight + (kh * g.kernel_w + kw) * K * kBlock;
      __m512 weights[K];
#pragma GCC unroll 8
      for (int i = 0; i < K; ++i) weights[i] = _mm512_loadu_ps(w + i * kBlock);
#pragma GCC unroll 14
      for (int p = 0; p < P; ++p) {
        const __m512 pixel = _mm512_loadu_ps(x + p * pixel_step);
#pragma GCC unroll 8
        for (int i = 0; i < K; ++i) {
          // The maskz form with every lane set is the plain permute (GCC 12 warns falsely on it).
          const __m512 lanes = _mm512_maskz_permutexvar_ps(0xFFFF, pick[i], pixel);
          acc[p] = _mm512_fmadd_ps(lanes, weights[i], acc[p]);
        }
      }
    }
  }
  const bool clamps = task.low != -std::numeric_limits<float>::infinity() ||
                      task.high != std::numeric_limits<float>::infinity();
#pragma GCC unroll 14
  for (int p = 0; p < P; ++p) StoreVector(acc[p], task, (ox + p) * kBlock, clamps);
}

template <int K, int... P>
constexpr std::array<DirectAvx512Tile, sizeof...(P)> LaneGroupTilesOf(
    std::integer_sequence<int, P...>) {
  return {LaneGroupTileAvx512<P + 1, K>...};
}

// [log2(k) - 1][pixels - 1]
const std::array<DirectAvx512Tile, kMaxTilePixels> kLaneGroupTiles[3] = {
    LaneGroupTilesOf<2>(std::make_integer_sequence<int, kMaxTilePixels>{}),
    LaneGroupTilesOf<4>(std::make_integer_sequence<int, kMaxTilePixels>{}),
    LaneGroupTilesOf<8>(std::make_integer_sequence<int, kMaxTilePixels>{})};
#endif

template <typename T>
void LaneGroupRow(const ConvGeometry& g, const RowTask<T>& task, const ColumnSpan& interior,
                  bool avx512) {
  WalkRow(g, interior, kMaxTilePixels, [&](int64_t ox, int pixels, TapRange columns) {
#if MXLITE_HAS_AVX512_KERNEL
    if constexpr (std::is_same_v<T, float>) {
      if (avx512) {
        const int64_t k = LaneGroupSize(g);
        kLaneGroupTiles[k == 2 ? 0 : k == 4 ? 1 : 2][pixels - 1](g, task, ox, columns);
        return;
      }
    }
#endif
    LaneGroupTile(g, task, ox, pixels, columns);
  });
}

// ---- Tasks ------------------------------------------------------------------------------------

// Runs `row(task)` for every (image, output row, group of `blocks_per_task` output blocks) on the
// intra-op pool, each thread over a contiguous run of tasks; `blocks_outer` orders the tasks block
// group by block group within an image (else row by row).
template <typename T, typename Row>
void ForEachRowTask(const ConvGeometry& g, const ConvTensors<T>& t, const T* weight,
                    int64_t weight_block, int64_t blocks_per_task, bool blocks_outer, Row&& row) {
  const int64_t out_blocks = g.out_channels / kBlock;
  const int64_t groups = CeilDiv(out_blocks, blocks_per_task);
  const int64_t tasks = g.batch * g.out_h * groups;
  const int64_t out_plane = g.out_h * g.out_w * kBlock;
  // The first input block an output block reads: its own (groups inside blocks: depthwise and
  // grouped_nchw16c), or its group's first.
  const bool own_block = GroupChannels(g) < kBlock && g.groups > 1;
  const int64_t in_blocks_per_group = GroupChannels(g) / kBlock;
  const int64_t out_blocks_per_group = own_block ? 1 : out_blocks / g.groups;
  const auto first_input_block = [&](int64_t block) {
    return own_block ? block : block / out_blocks_per_group * in_blocks_per_group;
  };
  const int64_t in_image = g.in_channels * g.in_h * g.in_w;
  const int64_t runs = std::min(tasks, 4 * static_cast<int64_t>(IntraOpThreads()));
  ParallelFor(runs, [&](int64_t run) {
    for (int64_t index = run * tasks / runs; index < (run + 1) * tasks / runs; ++index) {
      const int64_t n = index / (g.out_h * groups), rest = index % (g.out_h * groups);
      const int64_t oy = blocks_outer ? rest % g.out_h : rest / groups;
      const int64_t group = blocks_outer ? rest / g.out_h : rest % groups;
      const int64_t first_block = group * blocks_per_task;
      RowTask<T> task;
      task.input = t.data + n * in_image + first_input_block(first_block) * g.in_h * g.in_w * kBlock;
      task.weight = weight + first_block * weight_block;
      task.weight_block = weight_block;
      task.bias = t.bias != nullptr ? t.bias + first_block * kBlock : nullptr;
      const int64_t out_offset = (n * out_blocks + first_block) * out_plane + oy * g.out_w * kBlock;
      task.output = t.output + out_offset;
      task.residual = t.residual != nullptr ? t.residual + out_offset : nullptr;
      task.output_block = out_plane;
      task.blocks = std::min(blocks_per_task, out_blocks - first_block);
      task.input_row = oy * g.stride_h - g.pad_h;
      task.rows = TapsInside(task.input_row, g.dilate_h, g.kernel_h, g.in_h);
      task.low = t.clamp_low;
      task.high = t.clamp_high;
      row(task);
    }
  });
}

// How a blocked algorithm's row tasks are laid out (ForEachRowTask).
struct BlockedTasks {
  int64_t weight_block;     // elements from one output block's weights to the next's
  int64_t blocks_per_task;  // output blocks a task computes
  bool blocks_outer;        // tasks block group by block group (else row by row)
};

// What the NCHW16c algorithms share: forward only, the residual fused, the weight reordered once
// (Derived::WeightSize elements by Derived::Reorder, or prepared), rows walked on a width-padded
// copy where that pays, tasks laid out by Derived::Tasks and each computed by Derived::Row.
template <typename Derived>
class BlockedAlgorithm : public ConvAlgorithmBase<Derived> {
 public:
  ConvLayout layout() const override { return ConvLayout::kNCHW16c; }
  bool FusesResidual() const override { return true; }
  bool HasDirection(ConvDirection direction) const override {
    return direction == ConvDirection::kForward;
  }
  size_t WorkspaceBytes(const ConvGeometry& g, ConvDirection direction,
                        DType dtype) const override {
    if (!this->Supports(g, direction)) return 0;
    WorkspaceTally tally(dtype);
    tally.Add(Derived::WeightSize(g));
    if (PadsWidth(g)) tally.Add(PaddedInputSize(g));
    return tally.bytes();
  }
  std::unique_ptr<PreparedConvWeight> PrepareSupported(const ConvGeometry& g,
                                                       const float* weight) const override {
    auto prepared = std::make_unique<PreparedConvWeight>();
    prepared->reordered.resize(static_cast<size_t>(Derived::WeightSize(g)));
    Derived::Reorder(g, weight, prepared->reordered.data());
    return prepared;
  }

  template <typename T>
  void Compute(ConvDirection, const ConvGeometry& g, const ConvTensors<T>& t,
               ScratchSpace& scratch) const {
    if (g.batch == 0) return;
    const T* weight = ReorderedWeight(g, t, Derived::WeightSize(g), this->name(), scratch,
                                      [](const ConvGeometry& geometry, const T* w, T* out) {
                                        Derived::Reorder(geometry, w, out);
                                      });
    const BlockedTasks tasks = Derived::Tasks(g);
    const bool avx512 = UsesAvx512(DTypeOf<T>::value);
    WithPaddedWidth(
        RowsJoined(g), t, scratch, [&](const ConvGeometry& run, const ConvTensors<T>& tensors) {
          const ColumnSpan interior = UnpaddedOutputColumns(run);
          ForEachRowTask(
              run, tensors, weight, tasks.weight_block, tasks.blocks_per_task, tasks.blocks_outer,
              [&](const RowTask<T>& task) { Derived::Row(run, task, interior, avx512); });
        });
  }
};

class DirectNchw16c final : public BlockedAlgorithm<DirectNchw16c> {
 public:
  std::string_view name() const override { return "direct_nchw16c"; }
  bool Supports(const ConvGeometry& g, ConvDirection direction) const override {
    return direction == ConvDirection::kForward && IsValidConvGeometry(g) && IsBlocked(g) &&
           GroupChannels(g) % kBlock == 0 && (g.out_channels / g.groups) % kBlock == 0;
  }
  static int64_t WeightSize(const ConvGeometry& g) { return DirectWeightSize(g); }
  template <typename T>
  static void Reorder(const ConvGeometry& g, const T* weight, T* blocked) {
    ReorderDirectWeight(g, weight, blocked);
  }
  static BlockedTasks Tasks(const ConvGeometry& g) {
    const int64_t weight_block = GroupChannels(g) * g.kernel_spatial() * kBlock;
    // Pairs of output blocks, unless a pair would take blocks of two groups.
    const int64_t out_blocks_per_group = g.out_channels / g.groups / kBlock;
    const int64_t blocks_per_task = g.groups == 1 || out_blocks_per_group % 2 == 0 ? 2 : 1;
    // A task's weights against the input it reads: whichever is larger is kept in cache by
    // walking the other inside it.
    const bool blocks_outer =
        blocks_per_task * weight_block > GroupChannels(g) * g.in_h * g.in_w;
    return {weight_block, blocks_per_task, blocks_outer};
  }
  template <typename T>
  static void Row(const ConvGeometry& g, const RowTask<T>& task, const ColumnSpan& interior,
                  bool avx512) {
    DirectRow(g, task, interior, avx512);
  }
};

class DepthwiseNchw16c final : public BlockedAlgorithm<DepthwiseNchw16c> {
 public:
  std::string_view name() const override { return "depthwise_direct"; }
  bool Supports(const ConvGeometry& g, ConvDirection direction) const override {
    return direction == ConvDirection::kForward && IsValidConvGeometry(g) && IsBlocked(g) &&
           g.groups == g.in_channels && g.out_channels == g.in_channels &&
           g.in_channels % kBlock == 0;
  }
  static int64_t WeightSize(const ConvGeometry& g) { return g.out_channels * g.kernel_spatial(); }
  template <typename T>
  static void Reorder(const ConvGeometry& g, const T* weight, T* blocked) {
    ReorderDepthwiseWeight(g, weight, blocked);
  }
  static BlockedTasks Tasks(const ConvGeometry& g) {
    return {g.kernel_spatial() * kBlock, 1, /*blocks_outer=*/true};
  }
  template <typename T>
  static void Row(const ConvGeometry& g, const RowTask<T>& task, const ColumnSpan& interior,
                  bool avx512) {
    DepthwiseRow(g, task, interior, avx512);
  }
};

class LaneGroupNchw16c final : public BlockedAlgorithm<LaneGroupNchw16c> {
 public:
  std::string_view name() const override { return "grouped_nchw16c"; }
  bool Supports(const ConvGeometry& g, ConvDirection direction) const override {
    return direction == ConvDirection::kForward && IsValidConvGeometry(g) && IsBlocked(g) &&
           GroupsShareChannelBlocks(g.in_channels, g.out_channels, g.groups);
  }
  static int64_t WeightSize(const ConvGeometry& g) {
    return g.out_channels * LaneGroupSize(g) * g.kernel_spatial();
  }
  template <typename T>
  static void Reorder(const ConvGeometry& g, const T* weight, T* blocked) {
    ReorderLaneGroupWeight(g, weight, blocked);
  }
  static BlockedTasks Tasks(const ConvGeometry& g) {
    return {g.kernel_spatial() * LaneGroupSize(g) * kBlock, 1, /*blocks_outer=*/true};
  }
  template <typename T>
  static void Row(const ConvGeometry& g, const RowTask<T>& task, const ColumnSpan& interior,
                  bool avx512) {
    LaneGroupRow(g, task, interior, avx512);
  }
};

}  // namespace

const ConvAlgorithm& GroupedNchw16cAlgorithm() {
  static const LaneGroupNchw16c algorithm;
  return algorithm;
}

const ConvAlgorithm& DirectNchw16cAlgorithm() {
  static const DirectNchw16c algorithm;
  return algorithm;
}

const ConvAlgorithm& DepthwiseNchw16cAlgorithm() {
  static const DepthwiseNchw16c algorithm;
  return algorithm;
}

}  // namespace mxlite::cpu
