#include "ops/cpu/conv_winograd_avx2.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "core/error.h"
#include "ops/cpu/avx2_panel.h"
#include "ops/cpu/conv_algorithms.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/gemm_kernel_avx2.h"
#include "ops/cpu/parallel.h"
#include "ops/cpu/winograd_matrices.h"

#if MXLITE_HAS_AVX2_KERNEL
#include <immintrin.h>

namespace mxlite::cpu::detail {
namespace {

constexpr int kBlockTiles = kAvx2KernelColumns;  // one B panel of the micro-kernel
constexpr int kPanelRows = kAvx2KernelRows;      // output channels per A panel
constexpr int kLanes = 8;                        // floats per AVX2 vector

// The sizes and the work split of one problem.
template <int M>
struct FusedPlan {
  static constexpr int kAlpha = M + 2, kPositions = kAlpha * kAlpha;
  int64_t tiles_h, tiles_w, tiles_per_image, tiles, blocks;
  int64_t cg, kg, groups, k_panels;  // k_panels: 6-row panels covering one group's kg channels
  int64_t k_splits, panels_per_split, work_items;
  int64_t workers;

  FusedPlan(const ConvGeometry& g, int threads)
      : tiles_h((g.out_h + M - 1) / M),
        tiles_w((g.out_w + M - 1) / M),
        tiles_per_image(tiles_h * tiles_w),
        tiles(g.batch * tiles_per_image),
        blocks((tiles + kBlockTiles - 1) / kBlockTiles),
        cg(g.in_channels_per_group()),
        kg(g.out_channels_per_group()),
        groups(g.groups),
        k_panels((kg + kPanelRows - 1) / kPanelRows) {
    // Split the output channels only when blocks alone cannot keep every thread busy: each split
    // transforms the block's input again.
    const int64_t items = blocks * groups;
    k_splits = items == 0 ? 1 : std::clamp<int64_t>((threads + items - 1) / items, 1, k_panels);
    panels_per_split = (k_panels + k_splits - 1) / k_splits;
    k_splits = (k_panels + panels_per_split - 1) / panels_per_split;
    work_items = items * k_splits;
    workers = std::min<int64_t>(threads, work_items);
  }
  // Packed U: [group][xi][k panel][c][6 rows].
  int64_t u_size() const { return groups * kPositions * k_panels * kPanelRows * cg; }
  // Per worker: V [xi][c][16 tiles] and M [xi][row of the split][16 tiles].
  int64_t v_size() const { return kPositions * cg * kBlockTiles; }
  int64_t m_size() const { return kPositions * panels_per_split * kPanelRows * kBlockTiles; }
};

// acc + c * x for a compile-time constant c (zeros and units cost nothing or an add).
template <const auto& kMatrix, int Row, int Col>
MXLITE_AVX2 inline __m256 Term(__m256 acc, __m256 x) {
  constexpr float c = static_cast<float>(kMatrix[Row][Col]);
  if constexpr (c == 0.0f) {
    return acc;
  } else if constexpr (c == 1.0f) {
    return _mm256_add_ps(acc, x);
  } else if constexpr (c == -1.0f) {
    return _mm256_sub_ps(acc, x);
  } else {
    return _mm256_fmadd_ps(_mm256_set1_ps(c), x, acc);
  }
}

// sum over k of kMatrix[Row][k] * in[k * stride].
template <const auto& kMatrix, int Row, int... Cols>
MXLITE_AVX2 inline __m256 MatrixRow(const __m256* in, int stride,
                                    std::integer_sequence<int, Cols...>) {
  __m256 acc = _mm256_setzero_ps();
  ((acc = Term<kMatrix, Row, Cols>(acc, in[Cols * stride])), ...);
  return acc;
}

// out[i * out_stride] = sum over k of kMatrix[i][k] * in[k * in_stride], i < Rows, k < Cols.
template <const auto& kMatrix, int Cols, int... Rows>
MXLITE_AVX2 inline void ApplyMatrix(const __m256* in, int in_stride, __m256* out, int out_stride,
                                    std::integer_sequence<int, Rows...>) {
  ((out[Rows * out_stride] =
        MatrixRow<kMatrix, Rows>(in, in_stride, std::make_integer_sequence<int, Cols>())),
   ...);
}

// out (Rows x Rows) = L x L^T (+ offset) for x (Inner x Inner) and L (Rows x Inner): the 2-D
// transforms B^T d B, G g G^T and A^T m A on 8 independent problems per vector. Grids are
// row-major; vector i of x is at in + i * in_stride and vector i of out goes to out + i *
// out_stride (floats, 32-byte aligned), so callers read and write their own layouts directly.
template <const auto& kL, int Rows, int Inner, bool kAddOffset = false>
MXLITE_AVX2 inline void Sandwich(const float* in, int64_t in_stride, float* out, int64_t out_stride,
                                 __m256 offset = _mm256_setzero_ps()) {
  __m256 x[Inner * Inner], lx[Rows * Inner], y[Rows];  // L x, then one row of (L x) L^T
  for (int i = 0; i < Inner * Inner; ++i) x[i] = _mm256_load_ps(in + i * in_stride);
  for (int j = 0; j < Inner; ++j) {
    ApplyMatrix<kL, Inner>(x + j, Inner, lx + j, Inner, std::make_integer_sequence<int, Rows>());
  }
  for (int i = 0; i < Rows; ++i) {
    ApplyMatrix<kL, Inner>(lx + i * Inner, 1, y, 1, std::make_integer_sequence<int, Rows>());
    for (int j = 0; j < Rows; ++j) {
      const __m256 value = kAddOffset ? _mm256_add_ps(y[j], offset) : y[j];
      _mm256_store_ps(out + (i * Rows + j) * out_stride, value);
    }
  }
}

// dst[lane * 6 + r] = values[r][xi][lane] for 8 lanes (channels) and 6 rows, through the shared
// register transpose; its 2 floats past the 48 are overwritten by the caller's next chunk.
template <int P>
MXLITE_AVX2 inline void StorePanelRows(const float (&values)[kPanelRows][P][kLanes], int xi,
                                       float* dst) {
  static_assert(kPanelRows == kAvx2KernelRows && kLanes == 8);
  StoreRowsAsPanelSteps(_mm256_load_ps(values[0][xi]), _mm256_load_ps(values[1][xi]),
                        _mm256_load_ps(values[2][xi]), _mm256_load_ps(values[3][xi]),
                        _mm256_load_ps(values[4][xi]), _mm256_load_ps(values[5][xi]), dst);
}

// U for the 6 output channels of panel `k_panel` of `group`, every input channel, into the packed
// layout. Rows beyond the group's channels are zeros (the micro-kernel reads whole panels).
// Channels go 8 at a time so each Winograd position's packed rows are written in address order.
template <int M>
MXLITE_AVX2 void TransformWeightPanel(const FusedPlan<M>& plan, const float* weight,
                                      WinogradWeights weights, int64_t group, int64_t k_panel,
                                      float* u) {
  using W = WinogradMatrices<M>;
  constexpr int A = M + 2, P = A * A;
  const int64_t cg = plan.cg, panel_stride = plan.k_panels * kPanelRows * cg;
  float* panel = u + (group * P * plan.k_panels + k_panel) * kPanelRows * cg;
  for (int64_t c0 = 0; c0 < cg; c0 += kLanes) {
    const int lanes = static_cast<int>(std::min<int64_t>(kLanes, cg - c0));
    alignas(32) float values[kPanelRows][P][kLanes];
    for (int r = 0; r < kPanelRows; ++r) {
      const int64_t k = k_panel * kPanelRows + r;
      if (k >= plan.kg) {
        std::fill(&values[r][0][0], &values[r][0][0] + P * kLanes, 0.0f);
        continue;
      }
      alignas(32) float taps[9][kLanes];
      for (int lane = 0; lane < kLanes; ++lane) {
        const int64_t c = c0 + lane;
        if (lane >= lanes) {
          for (int tap = 0; tap < 9; ++tap) taps[tap][lane] = 0.0f;
        } else if (weights == WinogradWeights::kAsGiven) {
          const float* filter = weight + ((group * plan.kg + k) * cg + c) * 9;
          for (int tap = 0; tap < 9; ++tap) taps[tap][lane] = filter[tap];
        } else {  // the filter (c, k) of the original convolution, rotated by 180 degrees
          const float* filter = weight + ((group * cg + c) * plan.kg + k) * 9;
          for (int tap = 0; tap < 9; ++tap) taps[tap][lane] = filter[8 - tap];
        }
      }
      Sandwich<W::kG, A, 3>(&taps[0][0], kLanes, &values[r][0][0], kLanes);
    }
    for (int xi = 0; xi < P; ++xi) {
      float* dst = panel + xi * panel_stride + c0 * kPanelRows;
      if (c0 + kLanes < cg) {
        StorePanelRows(values, xi, dst);
        continue;
      }
      for (int lane = 0; lane < lanes; ++lane) {  // the last chunk: never write past it
        for (int r = 0; r < kPanelRows; ++r) dst[lane * kPanelRows + r] = values[r][xi][lane];
      }
    }
  }
}

// Where one tile of the block reads its input and writes its output.
struct TileSpot {
  int64_t image;   // n
  int64_t y0, x0;  // top-left input pixel (may be outside the image)
  int64_t oy, ox;  // top-left output pixel
};

// Fills `spot` in place (a TileSpot returned by value was copied with rep movsq, 6% of a work
// item's time).
template <int M>
void LocateTile(const ConvGeometry& g, const FusedPlan<M>& plan, int64_t tile, TileSpot& spot) {
  spot.image = tile / plan.tiles_per_image;
  const int64_t in_image = tile % plan.tiles_per_image;
  spot.oy = in_image / plan.tiles_w * M;
  spot.ox = in_image % plan.tiles_w * M;
  spot.y0 = spot.oy - g.pad_h;
  spot.x0 = spot.ox - g.pad_w;
}

// Where one lane's window rows come from: the first input pixel (y0, x0) of its tile as an offset
// from its image's first channel plane, which of the window's A columns lie inside the image (a
// load mask), and which of its rows [row_begin, row_end). A lane without a tile reads no row.
struct WindowSource {
  // image * C * H * W + y0 * W + x0 (before the image's start at its top-left edge: masked lanes
  // are not read)
  int64_t offset = 0;
  __m256i columns;
  int row_begin = 0, row_end = 0;
};

template <int M>
MXLITE_AVX2 void LocateWindows(const ConvGeometry& g, const TileSpot* spots, int lanes,
                               WindowSource* sources) {
  constexpr int A = M + 2;
  for (int lane = 0; lane < kLanes; ++lane) {
    WindowSource& source = sources[lane];
    if (lane >= lanes) {
      source.row_begin = source.row_end = 0;
      source.columns = _mm256_setzero_si256();
      continue;
    }
    const TileSpot& spot = spots[lane];
    source.offset = spot.image * g.in_channels * g.in_spatial() + spot.y0 * g.in_w + spot.x0;
    source.row_begin = static_cast<int>(std::clamp<int64_t>(-spot.y0, 0, A));
    source.row_end = static_cast<int>(std::clamp<int64_t>(g.in_h - spot.y0, 0, A));
    alignas(32) int32_t bits[kLanes];
    for (int j = 0; j < kLanes; ++j) {
      const int64_t x = spot.x0 + j;
      bits[j] = j < A && x >= 0 && x < g.in_w ? -1 : 0;
    }
    source.columns = _mm256_load_si256(reinterpret_cast<const __m256i*>(bits));
  }
}

// window[i * A + j][lane] = the input pixel (y0 + i, x0 + j) of lane's tile in the channel plane
// at `plane_offset` of its image, 0 outside the image and for lanes without a tile: each lane's
// window row read as one vector (its columns inside the image, masked), the 8 lanes' rows turned
// into the window's columns by a register transpose.
template <int M>
MXLITE_AVX2 void GatherWindows(const ConvGeometry& g, const WindowSource* sources,
                               const float* data, int64_t plane_offset, float (*window)[kLanes]) {
  constexpr int A = M + 2;
  static_assert(A <= kLanes);
  const uintptr_t base = reinterpret_cast<uintptr_t>(data);
  for (int i = 0; i < A; ++i) {
    __m256 rows[kLanes];
    for (int lane = 0; lane < kLanes; ++lane) {
      const WindowSource& source = sources[lane];
      if (i < source.row_begin || i >= source.row_end) {
        rows[lane] = _mm256_setzero_ps();
        continue;
      }
      // As an integer: at the image's left edge the row's first pixel lies before the plane (its
      // lanes masked), a pointer C++ does not let one form.
      const int64_t at = plane_offset + source.offset + i * g.in_w;
      const auto* row = reinterpret_cast<const float*>(base + static_cast<uintptr_t>(at) * 4);
      rows[lane] = _mm256_maskload_ps(row, source.columns);
    }
    Transpose8x8(rows);
    for (int j = 0; j < A; ++j) _mm256_store_ps(window[i * A + j], rows[j]);
  }
}

// V[xi][c][16] = B^T d B for the block's tiles (`count` of them; the other lanes get zeros) and
// the input channels of `group`.
template <int M>
MXLITE_AVX2 void TransformInputBlock(const ConvGeometry& g, const FusedPlan<M>& plan,
                                     const TileSpot* spots, int count, const float* data,
                                     int64_t group, float* v) {
  using W = WinogradMatrices<M>;
  constexpr int A = M + 2, P = A * A;
  const int64_t cg = plan.cg;
  WindowSource sources[kBlockTiles];
  for (int half = 0; half < kBlockTiles / kLanes; ++half) {
    LocateWindows<M>(g, spots + half * kLanes, std::clamp(count - half * kLanes, 0, kLanes),
                     sources + half * kLanes);
  }
  for (int64_t c = 0; c < cg; ++c) {
    for (int half = 0; half < kBlockTiles / kLanes; ++half) {
      alignas(32) float window[P][kLanes];
      GatherWindows<M>(g, sources + half * kLanes, data, (group * cg + c) * g.in_spatial(), window);
      Sandwich<W::kBT, A, A>(&window[0][0], kLanes, v + c * kBlockTiles + half * kLanes,
                             cg * kBlockTiles);
    }
  }
}

// M[xi][row][16] = U[xi] rows [first_panel * 6, +rows) x V[xi] with the micro-kernels: on CPUs
// where the GEMM runs AVX-512 tiles (GemmUsesAvx512Tiles), two 6-row panels at a time in 512-bit
// registers (1.6-1.8x the 256-bit kernel's work per cycle); the same sums either way.
template <int M>
MXLITE_AVX2 void MultiplyBlock(const FusedPlan<M>& plan, const float* u, const float* v,
                               int64_t group, int64_t first_panel, int64_t panels, bool wide,
                               float* m) {
  constexpr int P = (M + 2) * (M + 2);
  const int64_t cg = plan.cg, rows = panels * kPanelRows, panel_floats = kPanelRows * cg;
  const int64_t paired = wide ? panels / 2 * 2 : 0;
  for (int xi = 0; xi < P; ++xi) {
    const float* u_xi = u + ((group * P + xi) * plan.k_panels + first_panel) * panel_floats;
    const float* v_xi = v + xi * cg * kBlockTiles;
    float* m_xi = m + xi * rows * kBlockTiles;
    for (int64_t panel = 0; panel < paired; panel += 2) {
      const float* first = u_xi + panel * panel_floats;
      SgemmTilePairAvx512(cg, first, first + panel_floats, /*row_stride=*/1,
                          /*step_stride=*/kPanelRows, v_xi, m_xi + panel * kPanelRows * kBlockTiles,
                          kBlockTiles, kBlockTiles, 1.0f, 0.0f, Epilogue<float>{});
    }
    for (int64_t panel = paired; panel < panels; ++panel) {
      SgemmMicroKernelAvx2Fma(cg, u_xi + panel * panel_floats, v_xi,
                              m_xi + panel * kPanelRows * kBlockTiles, kBlockTiles, kPanelRows,
                              kBlockTiles, 1.0f, 0.0f, Epilogue<float>{});
    }
  }
}

// Output channels [first_k, first_k + count_k) of `group` (rows of m from 0) for the block's tiles:
// Y = clamp(A^T m A + bias), clipped to the output.
template <int M>
MXLITE_AVX2 void TransformOutputBlock(const ConvGeometry& g, const FusedPlan<M>& plan,
                                      const TileSpot* spots, int count, const float* m,
                                      int64_t rows, int64_t group, int64_t first_k, int64_t count_k,
                                      const float* bias, const Epilogue<float>& clamp,
                                      float* output) {
  using W = WinogradMatrices<M>;
  constexpr int A = M + 2;
  for (int64_t r = 0; r < count_k; ++r) {
    const int64_t k = group * plan.kg + first_k + r;
    const __m256 offset = _mm256_set1_ps(bias != nullptr ? bias[k] : 0.0f);
    for (int half = 0; half * kLanes < count; ++half) {
      alignas(32) float values[M * M][kLanes];
      Sandwich<W::kAT, M, A, true>(m + r * kBlockTiles + half * kLanes, rows * kBlockTiles,
                                   &values[0][0], kLanes, offset);
      if (clamp.clamps()) {  // bound first: max/min return their second operand on NaN
        const __m256 low = _mm256_set1_ps(clamp.low), high = _mm256_set1_ps(clamp.high);
        for (auto& value : values) {
          _mm256_store_ps(value, _mm256_min_ps(high, _mm256_max_ps(low, _mm256_load_ps(value))));
        }
      }
      const int lanes = std::min(kLanes, count - half * kLanes);
      for (int lane = 0; lane < lanes; ++lane) {
        const TileSpot& spot = spots[half * kLanes + lane];
        float* plane = output + (spot.image * g.out_channels + k) * g.out_spatial();
        const int64_t out_rows = std::min<int64_t>(M, g.out_h - spot.oy);
        const int64_t out_cols = std::min<int64_t>(M, g.out_w - spot.ox);
        for (int64_t i = 0; i < out_rows; ++i) {
          float* dst = plane + (spot.oy + i) * g.out_w + spot.ox;
          for (int64_t j = 0; j < out_cols; ++j) dst[j] = values[i * M + j][lane];
        }
      }
    }
  }
}

// One work item: block `block` of tiles, `group`, output-channel split `split`.
template <int M>
MXLITE_AVX2 void RunWorkItem(const ConvGeometry& g, const FusedPlan<M>& plan, int64_t item,
                             const float* data, const float* u, const float* bias,
                             const Epilogue<float>& clamp, bool wide, float* output, float* v,
                             float* m) {
  const int64_t split = item % plan.k_splits;
  const int64_t group = item / plan.k_splits % plan.groups;
  const int64_t block = item / plan.k_splits / plan.groups;
  const int64_t first_tile = block * kBlockTiles;
  const int count = static_cast<int>(std::min<int64_t>(kBlockTiles, plan.tiles - first_tile));
  TileSpot spots[kBlockTiles];
  for (int t = 0; t < count; ++t) LocateTile<M>(g, plan, first_tile + t, spots[t]);

  const int64_t first_panel = split * plan.panels_per_split;
  const int64_t panels = std::min(plan.panels_per_split, plan.k_panels - first_panel);
  TransformInputBlock<M>(g, plan, spots, count, data, group, v);
  MultiplyBlock<M>(plan, u, v, group, first_panel, panels, wide, m);
  const int64_t first_k = first_panel * kPanelRows;
  const int64_t count_k = std::min(panels * kPanelRows, plan.kg - first_k);
  TransformOutputBlock<M>(g, plan, spots, count, m, panels * kPanelRows, group, first_k, count_k,
                          bias, clamp, output);
}

}  // namespace

bool WinogradAvx2Available() { return CpuSupportsAvx2Fma(); }

template <int M>
size_t WinogradAvx2WorkspaceBytes(const ConvGeometry& g) {
  const FusedPlan<M> plan(g, IntraOpThreads());
  WorkspaceTally tally(DType::kFloat32);
  tally.Add(plan.u_size());
  tally.Add(plan.workers * plan.v_size());
  tally.Add(plan.workers * plan.m_size());
  return tally.bytes();
}

template <int M>
int64_t WinogradAvx2TransformedWeightSize(const ConvGeometry& g) {
  return FusedPlan<M>(g, 1).u_size();  // U's layout does not depend on the threads
}

template <int M>
void WinogradAvx2TransformWeight(const ConvGeometry& g, const float* weight,
                                 WinogradWeights weights, float* u) {
  MX_CHECK(WinogradAvx2Available()) << "WinogradAvx2TransformWeight needs a CPU with avx2 and fma";
  const FusedPlan<M> plan(g, IntraOpThreads());
  ParallelFor(plan.groups * plan.k_panels, [&](int64_t task) {
    TransformWeightPanel<M>(plan, weight, weights, task / plan.k_panels, task % plan.k_panels, u);
  });
}

template <int M>
void WinogradForwardAvx2(const ConvGeometry& g, const float* data, const float* weight,
                         const float* bias, float* output, ScratchSpace& scratch,
                         WinogradWeights weights, const Epilogue<float>& clamp,
                         const float* transformed) {
  MX_CHECK(WinogradAvx2Available()) << "WinogradForwardAvx2 needs a CPU with avx2 and fma";
  const FusedPlan<M> plan(g, IntraOpThreads());
  float* u = transformed != nullptr ? nullptr : scratch.GetArray<float>(plan.u_size());
  float* v = scratch.GetArray<float>(plan.workers * plan.v_size());
  float* m = scratch.GetArray<float>(plan.workers * plan.m_size());
  if (plan.work_items == 0) return;
  if (transformed == nullptr) WinogradAvx2TransformWeight<M>(g, weight, weights, u);
  const float* u_read = transformed != nullptr ? transformed : u;
  const bool wide = GemmUsesAvx512Tiles();
  // Workers take items in order from a shared counter (balances a loaded machine); each owns its
  // V and M buffers, so the thread that computes an item does not change its result.
  std::atomic<int64_t> next_item{0};
  ParallelFor(plan.workers, [&](int64_t worker) {
    float* v_mine = v + worker * plan.v_size();
    float* m_mine = m + worker * plan.m_size();
    for (int64_t item = next_item++; item < plan.work_items; item = next_item++) {
      RunWorkItem<M>(g, plan, item, data, u_read, bias, clamp, wide, output, v_mine, m_mine);
    }
  });
}

}  // namespace mxlite::cpu::detail

#else  // !MXLITE_HAS_AVX2_KERNEL

namespace mxlite::cpu::detail {

bool WinogradAvx2Available() { return false; }

template <int M>
size_t WinogradAvx2WorkspaceBytes(const ConvGeometry&) {
  return 0;
}

template <int M>
int64_t WinogradAvx2TransformedWeightSize(const ConvGeometry&) {
  return 0;
}

template <int M>
void WinogradAvx2TransformWeight(const ConvGeometry&, const float*, WinogradWeights, float*) {
  MX_THROW() << "WinogradAvx2TransformWeight needs an x86-64 build";
}

template <int M>
void WinogradForwardAvx2(const ConvGeometry&, const float*, const float*, const float*, float*,
                         ScratchSpace&, WinogradWeights, const Epilogue<float>&, const float*) {
  MX_THROW() << "WinogradForwardAvx2 needs an x86-64 build";
}

}  // namespace mxlite::cpu::detail

#endif  // MXLITE_HAS_AVX2_KERNEL

// The same instantiations for either build (the x86-64 kernel, or the stand-ins that refuse).
namespace mxlite::cpu::detail {

template size_t WinogradAvx2WorkspaceBytes<2>(const ConvGeometry&);
template size_t WinogradAvx2WorkspaceBytes<4>(const ConvGeometry&);
template void WinogradForwardAvx2<2>(const ConvGeometry&, const float*, const float*, const float*,
                                     float*, ScratchSpace&, WinogradWeights,
                                     const Epilogue<float>&, const float*);
template void WinogradForwardAvx2<4>(const ConvGeometry&, const float*, const float*, const float*,
                                     float*, ScratchSpace&, WinogradWeights,
                                     const Epilogue<float>&, const float*);
template int64_t WinogradAvx2TransformedWeightSize<2>(const ConvGeometry&);
template int64_t WinogradAvx2TransformedWeightSize<4>(const ConvGeometry&);
template void WinogradAvx2TransformWeight<2>(const ConvGeometry&, const float*, WinogradWeights,
                                             float*);
template void WinogradAvx2TransformWeight<4>(const ConvGeometry&, const float*, WinogradWeights,
                                             float*);

}  // namespace mxlite::cpu::detail
