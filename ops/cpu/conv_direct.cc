// direct_nchw: the forward convolution computed straight from the input, without a lowered matrix,
// for problems whose reduction is short (C/G * KH * KW <= kMaxReduction, 512): the first layer of
// an image network (ResNet's 7x7/2 stem over 3 channels: 147 products per output) is the case it is
// for. There im2col writes and the GEMM re-reads a matrix as large as the arithmetic is short.
//
// 1. The input is copied, zero-padded, into a "phase-split" buffer: for horizontal stride s, each
//    padded row is stored as s rows, phase q holding the padded columns x = q (mod s). Output
//    column ox at kernel column kw reads padded column ox * s + kw * dilate, that is entry
//    ox + (kw * dilate) / s of phase (kw * dilate) % s: for every tap, a run of consecutive output
//    columns reads consecutive floats, whatever the stride, padding and dilation. The runs are
//    rounded up to whole 16-column chunks (the buffer has the slack; the extra columns are never
//    stored).
// 2. The weights are repacked as blocks of up to 6 output channels, tap-major.
// 3. Each register tile (6 output channels x 16 columns of one output row) sums, for every tap,
//    one weight per channel times a 16-column run of inputs: on AVX2+FMA float32 the 6 x 2 vectors
//    of accumulators stay in registers for the whole reduction and are stored once. On CPUs with
//    AVX-512 a tile is two blocks (12 channels) x 16 columns in one 512-bit vector per channel,
//    the same sums in the same order. A task is a run of 4 output rows of one image and group,
//    through every channel block.
// Every output value is summed over the taps in the same order on any thread count (deterministic,
// bitwise the same for 1 and 2 threads). float64 and CPUs without AVX2 run the same plan in plain
// C++.
#include <algorithm>
#include <cstring>
#include <type_traits>

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

// Longest reduction claimed: a tile's 12 channels' weights (24 KiB at 512 taps) and the taps' input
// runs stay in L1 across a row; beyond it the GEMM paths reuse their operands better. AlexNet's
// 11x11 stride-4 first layer (363 taps) ran 1.5 ms here against 3.0 for im2col_gemm (a Sapphire
// Rapids box, 1 thread, caches swept before each run), where a limit of 256 had left it to the
// GEMM.
constexpr int64_t kMaxReduction = 512;
constexpr int64_t kChunk = 16;         // output columns per register tile (two AVX2 vectors)
constexpr int64_t kBlockChannels = 6;  // output channels per register tile

// The sizes of one problem's buffers and the work split.
struct DirectPlan {
  int64_t cg, og, taps;  // per group: input channels, output channels, C/G * KH * KW
  int64_t rows;          // padded rows the output reads: (OH-1)*sh + (KH-1)*dh + 1
  int64_t phases;        // the horizontal stride
  int64_t phase_width;   // entries per phase row (whole chunks plus the widest tap's shift)
  int64_t chunks;        // 16-column runs per output row
  int64_t blocks;        // channel blocks per group

  explicit DirectPlan(const ConvGeometry& g)
      : cg(g.in_channels_per_group()),
        og(g.out_channels_per_group()),
        taps(g.patch_size()),
        rows((g.out_h - 1) * g.stride_h + (g.kernel_h - 1) * g.dilate_h + 1),
        phases(g.stride_w),
        // Rounded up to whole 64-byte lines: the runs of unshifted taps then load aligned.
        phase_width(
            CeilDiv(CeilDiv(g.out_w, kChunk) * kChunk + (g.kernel_w - 1) * g.dilate_w / g.stride_w,
                    kChunk) *
            kChunk),
        chunks(CeilDiv(g.out_w, kChunk)),
        blocks(CeilDiv(og, kBlockChannels)) {}

  int64_t channel_size() const { return rows * phases * phase_width; }  // one channel, one image
  int64_t input_size(const ConvGeometry& g) const {
    return g.batch * g.in_channels * channel_size();
  }
  int64_t weight_size(const ConvGeometry& g) const { return g.out_channels * taps; }
};

// Step 1: data (N, C, H, W) -> phased (N, C, rows, phases, phase_width), zero where the padded
// position lies outside the image. One task per (image, channel, padded row): three input channels
// would not keep two threads busy.
template <typename T>
void SplitPhases(const ConvGeometry& g, const DirectPlan& plan, const T* data, T* phased) {
  ParallelFor(g.batch * g.in_channels * plan.rows, [&](int64_t task) {
    const int64_t plane = task / plan.rows, y = task % plan.rows, iy = y - g.pad_h;
    T* dst_row = phased + (plane * plan.rows + y) * plan.phases * plan.phase_width;
    if (iy < 0 || iy >= g.in_h) {
      std::fill(dst_row, dst_row + plan.phases * plan.phase_width, T(0));
      return;
    }
    const T* src = data + plane * g.in_spatial() + iy * g.in_w;
    for (int64_t q = 0; q < plan.phases; ++q) {
      // Entry j holds input column j * phases + q - pad_w: inside the image for j in [begin, end).
      const int64_t first = g.pad_w - q, last = g.in_w + g.pad_w - q;  // ix >= 0, ix < in_w
      const int64_t begin =
          std::min(plan.phase_width, first <= 0 ? 0 : CeilDiv(first, plan.phases));
      const int64_t end =
          std::clamp<int64_t>(last <= 0 ? 0 : CeilDiv(last, plan.phases), begin, plan.phase_width);
      T* dst = dst_row + q * plan.phase_width;
      std::fill(dst, dst + begin, T(0));
      const T* column = src + q - g.pad_w;
      if (plan.phases == 1) {
        std::copy(column + begin, column + end, dst + begin);
      } else {
        for (int64_t j = begin; j < end; ++j) dst[j] = column[j * plan.phases];
      }
      std::fill(dst + end, dst + plan.phase_width, T(0));
    }
  });
}

// Step 2: weight (O, C/G, KH, KW) -> per group and block, [tap][channel of the block] (a last block
// of fewer than 6 channels is packed as narrow as it is).
template <typename T>
void PackWeights(const ConvGeometry& g, const DirectPlan& plan, const T* weight, T* packed) {
  for (int64_t o = 0; o < g.out_channels; ++o) {
    const int64_t group = o / plan.og, within = o % plan.og;
    const int64_t block = within / kBlockChannels, lane = within % kBlockChannels;
    const int64_t width = std::min(kBlockChannels, plan.og - block * kBlockChannels);
    T* dst = packed + (group * plan.og + block * kBlockChannels) * plan.taps + lane;
    for (int64_t r = 0; r < plan.taps; ++r) dst[r * width] = weight[o * plan.taps + r];
  }
}

// Where tap r = (c, kh, kw) of output row 0, column 0 reads, relative to the group's first channel
// in the phased buffer. Row oy adds oy * stride_h rows.
void TapOffsets(const ConvGeometry& g, const DirectPlan& plan, int64_t* offsets) {
  for (int64_t c = 0, r = 0; c < plan.cg; ++c) {
    for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
      for (int64_t kw = 0; kw < g.kernel_w; ++kw, ++r) {
        const int64_t shift = kw * g.dilate_w;
        offsets[r] = c * plan.channel_size() +
                     (kh * g.dilate_h * plan.phases + shift % plan.phases) * plan.phase_width +
                     shift / plan.phases;
      }
    }
  }
}

// One register tile, portable: out[o][0:columns] = clamp(bias[o] + sum_r w[r][o] * in[offsets[r] +
// i]).
template <typename T>
void DirectTile(const T* in, const int64_t* offsets, int64_t taps, const T* w, int width,
                const T* bias, const Epilogue<T>& clamp, T* out, int64_t out_stride,
                int64_t columns) {
  T acc[kBlockChannels][kChunk];
  for (int o = 0; o < width; ++o) std::fill(acc[o], acc[o] + kChunk, bias ? bias[o] : T(0));
  for (int64_t r = 0; r < taps; ++r) {
    const T* src = in + offsets[r];
    for (int o = 0; o < width; ++o) {
      const T weight = w[r * width + o];
      for (int64_t i = 0; i < kChunk; ++i) acc[o][i] += weight * src[i];
    }
  }
  for (int o = 0; o < width; ++o) {
    for (int64_t i = 0; i < columns; ++i) out[o * out_stride + i] = clamp.Apply(acc[o][i], 0, 0);
  }
}

#if MXLITE_HAS_AVX2_KERNEL
// A channel's starting sum: its bias, or zero.
MXLITE_AVX2 inline __m256 InitialSum(const float* bias, int o) {
  return bias != nullptr ? _mm256_set1_ps(bias[o]) : _mm256_setzero_ps();
}

// The output clamp in registers.
struct VectorClamp {
  bool active;
  __m256 low, high;
};

MXLITE_AVX2 inline VectorClamp LoadClamp(const Epilogue<float>& clamp) {
  return {clamp.clamps(), _mm256_set1_ps(clamp.low), _mm256_set1_ps(clamp.high)};
}

// Row o of the tile, clamped, into out (a partial chunk through an aligned tile row).
MXLITE_AVX2 inline void StoreTileRow(__m256 lo, __m256 hi, const VectorClamp& clamp, float* out,
                                     int64_t columns) {
  if (clamp.active) {  // bound first: max/min return their second operand when one is NaN
    lo = _mm256_min_ps(clamp.high, _mm256_max_ps(clamp.low, lo));
    hi = _mm256_min_ps(clamp.high, _mm256_max_ps(clamp.low, hi));
  }
  if (columns == kChunk) {
    _mm256_storeu_ps(out, lo);
    _mm256_storeu_ps(out + 8, hi);
    return;
  }
  alignas(32) float row[kChunk];
  _mm256_store_ps(row, lo);
  _mm256_store_ps(row + 8, hi);
  std::memcpy(out, row, sizeof(float) * columns);
}

// The same tile for float32 on AVX2+FMA, WIDTH channels (1-6) x 16 columns, in named accumulators
// (GCC keeps an array of vectors on the stack). Sums in the same order as DirectTile, but fused
// multiply-adds round once where DirectTile rounds twice, so the two differ in the last bits.
template <int WIDTH>
MXLITE_AVX2 void DirectTileAvx2(const float* in, const int64_t* offsets, int64_t taps,
                                const float* w, const float* bias, const Epilogue<float>& clamp,
                                float* out, int64_t out_stride, int64_t columns) {
  __m256 lo0, hi0, lo1, hi1, lo2, hi2, lo3, hi3, lo4, hi4, lo5, hi5;
  lo0 = hi0 = InitialSum(bias, 0);
  if constexpr (WIDTH > 1) lo1 = hi1 = InitialSum(bias, 1);
  if constexpr (WIDTH > 2) lo2 = hi2 = InitialSum(bias, 2);
  if constexpr (WIDTH > 3) lo3 = hi3 = InitialSum(bias, 3);
  if constexpr (WIDTH > 4) lo4 = hi4 = InitialSum(bias, 4);
  if constexpr (WIDTH > 5) lo5 = hi5 = InitialSum(bias, 5);
#pragma GCC unroll 4
  for (int64_t r = 0; r < taps; ++r, w += WIDTH) {
    const float* src = in + offsets[r];
    const __m256 x0 = _mm256_loadu_ps(src), x1 = _mm256_loadu_ps(src + 8);
    __m256 b = _mm256_broadcast_ss(w);
    lo0 = _mm256_fmadd_ps(x0, b, lo0);
    hi0 = _mm256_fmadd_ps(x1, b, hi0);
    if constexpr (WIDTH > 1) {
      b = _mm256_broadcast_ss(w + 1);
      lo1 = _mm256_fmadd_ps(x0, b, lo1);
      hi1 = _mm256_fmadd_ps(x1, b, hi1);
    }
    if constexpr (WIDTH > 2) {
      b = _mm256_broadcast_ss(w + 2);
      lo2 = _mm256_fmadd_ps(x0, b, lo2);
      hi2 = _mm256_fmadd_ps(x1, b, hi2);
    }
    if constexpr (WIDTH > 3) {
      b = _mm256_broadcast_ss(w + 3);
      lo3 = _mm256_fmadd_ps(x0, b, lo3);
      hi3 = _mm256_fmadd_ps(x1, b, hi3);
    }
    if constexpr (WIDTH > 4) {
      b = _mm256_broadcast_ss(w + 4);
      lo4 = _mm256_fmadd_ps(x0, b, lo4);
      hi4 = _mm256_fmadd_ps(x1, b, hi4);
    }
    if constexpr (WIDTH > 5) {
      b = _mm256_broadcast_ss(w + 5);
      lo5 = _mm256_fmadd_ps(x0, b, lo5);
      hi5 = _mm256_fmadd_ps(x1, b, hi5);
    }
  }
  const VectorClamp bounds = LoadClamp(clamp);
  StoreTileRow(lo0, hi0, bounds, out, columns);
  if constexpr (WIDTH > 1) StoreTileRow(lo1, hi1, bounds, out + out_stride, columns);
  if constexpr (WIDTH > 2) StoreTileRow(lo2, hi2, bounds, out + 2 * out_stride, columns);
  if constexpr (WIDTH > 3) StoreTileRow(lo3, hi3, bounds, out + 3 * out_stride, columns);
  if constexpr (WIDTH > 4) StoreTileRow(lo4, hi4, bounds, out + 4 * out_stride, columns);
  if constexpr (WIDTH > 5) StoreTileRow(lo5, hi5, bounds, out + 5 * out_stride, columns);
}

using Avx2Tile = void (*)(const float*, const int64_t*, int64_t, const float*, const float*,
                          const Epilogue<float>&, float*, int64_t, int64_t);
constexpr Avx2Tile kAvx2Tiles[kBlockChannels] = {
    DirectTileAvx2<1>, DirectTileAvx2<2>, DirectTileAvx2<3>,
    DirectTileAvx2<4>, DirectTileAvx2<5>, DirectTileAvx2<6>,
};
#endif

#if MXLITE_HAS_AVX512_KERNEL
// Two blocks of channels (WA, then WB of them; WB = 0: one block) x the 16 columns of one 512-bit
// vector, each channel's sum in a register: on CPUs with two 512-bit FMA ports this does in one
// instruction what the AVX2 tile does in two. The sums run in the AVX2 tile's order with its
// fused multiply-adds, so the bits are the same.
template <int WA, int WB>
MXLITE_AVX512 void DirectTileAvx512(const float* in, const int64_t* offsets, int64_t taps,
                                    const float* wa, const float* wb, const float* bias,
                                    const Epilogue<float>& clamp, float* out, int64_t out_stride,
                                    int64_t columns) {
  constexpr int kWidth = WA + WB;
  __m512 acc[kWidth];
#pragma GCC unroll 12
  for (int o = 0; o < kWidth; ++o) {
    acc[o] = bias != nullptr ? _mm512_set1_ps(bias[o]) : _mm512_setzero_ps();
  }
#pragma GCC unroll 2
  for (int64_t r = 0; r < taps; ++r, wa += WA, wb += WB) {
    const __m512 x = _mm512_loadu_ps(in + offsets[r]);
#pragma GCC unroll 6
    for (int o = 0; o < WA; ++o) acc[o] = _mm512_fmadd_ps(x, _mm512_set1_ps(wa[o]), acc[o]);
#pragma GCC unroll 6
    for (int o = 0; o < WB; ++o) {
      acc[WA + o] = _mm512_fmadd_ps(x, _mm512_set1_ps(wb[o]), acc[WA + o]);
    }
  }
  const __mmask16 lanes = static_cast<__mmask16>((1u << columns) - 1);
  constexpr __mmask16 kAll = 0xFFFF;
  const __m512 low = _mm512_set1_ps(clamp.low), high = _mm512_set1_ps(clamp.high);
#pragma GCC unroll 12
  for (int o = 0; o < kWidth; ++o) {
    __m512 value = acc[o];
    // Bound first: max/min return their second operand when one is NaN. The maskz forms with
    // every lane set are max/min themselves (GCC 12 warns falsely on the plain ones).
    if (clamp.clamps()) {
      value = _mm512_maskz_min_ps(kAll, high, _mm512_maskz_max_ps(kAll, low, value));
    }
    _mm512_mask_storeu_ps(out + o * out_stride, lanes, value);
  }
}

using Avx512Tile = void (*)(const float*, const int64_t*, int64_t, const float*, const float*,
                            const float*, const Epilogue<float>&, float*, int64_t, int64_t);
// [WB][WA - 1]: one block of WA channels (WB = 0), or a full block and WB more.
constexpr Avx512Tile kAvx512Tiles[kBlockChannels + 1][kBlockChannels] = {
    {DirectTileAvx512<1, 0>, DirectTileAvx512<2, 0>, DirectTileAvx512<3, 0>,
     DirectTileAvx512<4, 0>, DirectTileAvx512<5, 0>, DirectTileAvx512<6, 0>},
    {nullptr, nullptr, nullptr, nullptr, nullptr, DirectTileAvx512<6, 1>},
    {nullptr, nullptr, nullptr, nullptr, nullptr, DirectTileAvx512<6, 2>},
    {nullptr, nullptr, nullptr, nullptr, nullptr, DirectTileAvx512<6, 3>},
    {nullptr, nullptr, nullptr, nullptr, nullptr, DirectTileAvx512<6, 4>},
    {nullptr, nullptr, nullptr, nullptr, nullptr, DirectTileAvx512<6, 5>},
    {nullptr, nullptr, nullptr, nullptr, nullptr, DirectTileAvx512<6, 6>},
};
#endif

bool UsesAvx2(DType dtype) { return dtype == DType::kFloat32 && CpuSupportsAvx2Fma(); }
bool UsesAvx512(DType dtype) { return dtype == DType::kFloat32 && CpuSupportsAvx512f(); }

#if MXLITE_HAS_AVX512_KERNEL
// The rows [run * rows_per_run, ...) of one image and group, channel blocks [block, block_end) in
// pairs (a last one alone), every chunk of each row.
void DirectRowsAvx512(const ConvGeometry& g, const DirectPlan& plan, const float* phased,
                      const float* packed, const int64_t* offsets, const float* bias,
                      const Epilogue<float>& clamp, float* output, int64_t n, int64_t group,
                      int64_t run, int64_t rows_per_run, int64_t block, int64_t block_end) {
  for (; block < block_end; block += 2) {
    const int64_t first = group * plan.og + block * kBlockChannels;  // output channel
    const auto width_of = [&](int64_t b) {
      return static_cast<int>(std::min(kBlockChannels, plan.og - b * kBlockChannels));
    };
    const int width_a = width_of(block), width_b = block + 1 < block_end ? width_of(block + 1) : 0;
    const Avx512Tile tile = kAvx512Tiles[width_b][width_a - 1];
    const float* wa = packed + first * plan.taps;
    const float* wb = wa + width_a * plan.taps;
    const float* b = bias != nullptr ? bias + first : nullptr;
    const int64_t row_end = std::min(g.out_h, (run + 1) * rows_per_run);
    for (int64_t oy = run * rows_per_run; oy < row_end; ++oy) {
      const float* in = phased + (n * g.in_channels + group * plan.cg) * plan.channel_size() +
                        oy * g.stride_h * plan.phases * plan.phase_width;
      float* out = output + (n * g.out_channels + first) * g.out_spatial() + oy * g.out_w;
      for (int64_t column = 0; column < g.out_w; column += kChunk) {
        tile(in + column, offsets, plan.taps, wa, wb, b, clamp, out + column, g.out_spatial(),
             std::min(kChunk, g.out_w - column));
      }
    }
  }
}
#endif

// Step 3 for every (image, group, run of output rows), on the intra-op pool. A task takes a few
// consecutive rows, which share input rows (KH - stride of each pair), through every channel block,
// so the run's input rows stay in this core's cache for all the channels.
template <typename T>
void DirectForward(const ConvGeometry& g, const DirectPlan& plan, const T* phased, const T* packed,
                   const int64_t* offsets, const T* bias, const Epilogue<T>& clamp, T* output) {
  constexpr int64_t kRowsPerTask = 4;
  const int64_t row_runs = CeilDiv(g.out_h, kRowsPerTask);
  // The channel blocks are split only when runs alone would leave threads idle.
  const int64_t runs = g.batch * g.groups * row_runs;
  const int64_t block_parts =
      std::clamp<int64_t>(CeilDiv(4 * IntraOpThreads(), runs), 1, plan.blocks);
  const int64_t blocks_per_part = CeilDiv(plan.blocks, block_parts);
  [[maybe_unused]] const bool avx2 = UsesAvx2(DTypeOf<T>::value);
  [[maybe_unused]] const bool avx512 = UsesAvx512(DTypeOf<T>::value);
  ParallelFor(runs * block_parts, [&](int64_t task) {
    const int64_t part = task % block_parts;
    const int64_t run = task / block_parts % row_runs;
    const int64_t group = task / block_parts / row_runs % g.groups;
    const int64_t n = task / block_parts / row_runs / g.groups;
    const int64_t block_end = std::min(plan.blocks, (part + 1) * blocks_per_part);
    int64_t block = part * blocks_per_part;
#if MXLITE_HAS_AVX512_KERNEL
    if constexpr (std::is_same_v<T, float>) {
      if (avx512) {
        DirectRowsAvx512(g, plan, phased, packed, offsets, bias, clamp, output, n, group, run,
                         kRowsPerTask, block, block_end);
        block = block_end;
      }
    }
#endif
    for (; block < block_end; ++block) {
      const int64_t first = group * plan.og + block * kBlockChannels;  // output channel
      const int width =
          static_cast<int>(std::min(kBlockChannels, plan.og - block * kBlockChannels));
      const T* w = packed + first * plan.taps;
      const T* b = bias != nullptr ? bias + first : nullptr;
      const int64_t row_end = std::min(g.out_h, (run + 1) * kRowsPerTask);
      for (int64_t oy = run * kRowsPerTask; oy < row_end; ++oy) {
        const T* in = phased + (n * g.in_channels + group * plan.cg) * plan.channel_size() +
                      oy * g.stride_h * plan.phases * plan.phase_width;
        T* out = output + (n * g.out_channels + first) * g.out_spatial() + oy * g.out_w;
        for (int64_t chunk = 0; chunk < plan.chunks; ++chunk) {
          const int64_t column = chunk * kChunk;
          const int64_t columns = std::min(kChunk, g.out_w - column);
#if MXLITE_HAS_AVX2_KERNEL
          if constexpr (std::is_same_v<T, float>) {
            if (avx2) {
              kAvx2Tiles[width - 1](in + column, offsets, plan.taps, w, b, clamp, out + column,
                                    g.out_spatial(), columns);
              continue;
            }
          }
#endif
          DirectTile(in + column, offsets, plan.taps, w, width, b, clamp, out + column,
                     g.out_spatial(), columns);
        }
      }
    }
  });
}

class DirectAlgorithm final : public ConvAlgorithmBase<DirectAlgorithm> {
 public:
  std::string_view name() const override { return "direct_nchw"; }
  ConvLayout layout() const override { return ConvLayout::kNCHW; }
  bool HasDirection(ConvDirection direction) const override {
    return direction == ConvDirection::kForward;
  }
  bool Supports(const ConvGeometry& g, ConvDirection direction) const override {
    return direction == ConvDirection::kForward && IsValidConvGeometry(g) &&
           g.layout == ConvLayout::kNCHW && g.patch_size() <= kMaxReduction;
  }
  size_t WorkspaceBytes(const ConvGeometry& g, ConvDirection direction,
                        DType dtype) const override {
    if (!Supports(g, direction)) return 0;
    const DirectPlan plan(g);
    WorkspaceTally tally(dtype);
    tally.Add(plan.input_size(g));
    tally.Add(plan.weight_size(g));
    WorkspaceTally offsets(DType::kInt64);
    offsets.Add(plan.taps);
    return tally.bytes() + offsets.bytes();
  }

  template <typename T>
  void Compute(ConvDirection, const ConvGeometry& g, const ConvTensors<T>& t,
               ScratchSpace& scratch) const {
    if (g.batch == 0) return;
    const DirectPlan plan(g);
    T* phased = scratch.GetArray<T>(plan.input_size(g));
    T* packed = scratch.GetArray<T>(plan.weight_size(g));
    auto* offsets = scratch.GetArray<int64_t>(plan.taps);
    SplitPhases(g, plan, t.data, phased);
    PackWeights(g, plan, t.weight, packed);
    TapOffsets(g, plan, offsets);
    DirectForward(g, plan, phased, packed, offsets, t.bias, t.OutputClamp(), t.output);
  }
};

}  // namespace

const ConvAlgorithm& DirectNchwAlgorithm() {
  static const DirectAlgorithm algorithm;
  return algorithm;
}

}  // namespace mxlite::cpu
