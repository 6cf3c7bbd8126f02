#include "ops/cpu/gemm.h"

#include <sys/mman.h>

#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <new>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/settings.h"
#include "ops/cpu/avx512.h"
#include "ops/cpu/cache_state.h"
#include "ops/cpu/gemm_kernel_avx2.h"
#include "ops/cpu/int_math.h"
#include "ops/cpu/parallel.h"

namespace mxlite::cpu {
namespace {

// ------------------------------------------------------------------------------------------------
// Blocking (BLIS loop order: jc over NC, pc over KC, ic over MC, jr over NR, ir over MR).
// Sized for this machine's caches (32 KiB L1d, 512 KiB L2 per core, shared L3):
//   - KC, the depth of a block, is the whole depth up to 1024 (deeper products take balanced
//     blocks of at most that): every k block reloads and stores each C tile and, where A is
//     packed, copies A again, which products with few rows cannot amortise (MobileNet-V2's 7x7
//     and 14x14 1x1 layers, 49-196 rows by 384-960 deep, ran 6-17% faster at one block than at
//     256-deep ones, gemm_bench BM_PointwiseNhwc, 1 and 2 threads). A KC x NR panel of B (up to
//     64 KiB) then streams from L2 rather than staying in L1, which the 6x16 kernel's two B loads
//     per 12 FMAs tolerate;
//   - MC rows of packed A fill 144 KiB of L2 (MC x KC), so they stay there for all NR panels.
//     Each row block reads the whole KC x NC block of B again, from L2 where it fits, else from
//     L3 or memory: a product whose B block is larger than half this core's L2 (a large weight)
//     and whose rows all fit the other half takes them in one block, so B goes past once (a
//     transformer's Linear layers at batch 1, 197 rows by 768-3072 deep, and NHWC 3x3 layers of
//     512 channels on 7x7 maps: 7-14% faster with B cold, 5-9% hot, on a Sapphire Rapids box;
//     products with many rows and a small B lost up to 18% in one block, so they keep 144 KiB);
//   - NC columns of packed B fill 3 MiB of L3 (KC x NC).
// ------------------------------------------------------------------------------------------------
constexpr int kMr = detail::kAvx2KernelRows;
constexpr int kNr = detail::kAvx2KernelColumns;
constexpr int64_t kMaxKc = 1024;
constexpr int64_t kABlockFloats = 144 * 256;   // 144 KiB
constexpr int64_t kBBlockFloats = 256 * 3072;  // 3 MiB

// Below this many flops per thread, waking another thread costs more than it saves.
constexpr double kMinFlopsPerThread = 2.0e6;
// The same for a row vector times a matrix, counted in matrix elements (256 KiB of float32).
constexpr double kMinStreamedElementsPerThread = 65536.0;

constexpr size_t kBufferAlignment = 64;
constexpr size_t kHugePageBytes = size_t{2} << 20;

std::atomic<GemmImplementation> requested_implementation{GemmImplementation::kAuto};

// op(X) of a row-major matrix: element (i, j) is data[i * ld + j], or data[j * ld + i] transposed.
// Or a pre-packed operand (PackedGemmOperand): `packed` holds its panels for every k block, and
// the view starts `panel_origin` rows (A) or columns (B) into them, a whole number of panels.
struct OperandView {
  const float* data = nullptr;
  int64_t ld = 0;
  bool transposed = false;
  const float* packed = nullptr;
  int64_t packed_extent = 0;  // padded rows (A) or columns (B) of one packed k block
  int64_t panel_origin = 0;

  // The view of op(X) starting at element (row, column). A packed view moves along its panel axis
  // only (rows of A, columns of B), by whole panels.
  OperandView Offset(int64_t row, int64_t column) const {
    OperandView view = *this;
    if (packed != nullptr) {
      view.panel_origin += row + column;  // one of them is 0
      return view;
    }
    view.data = transposed ? data + column * ld + row : data + row * ld + column;
    return view;
  }
  // The packed panels of the k block starting at `depth_offset` (of depth `depth`), from `index`
  // rows (A) or columns (B) past this view's start.
  const float* PackedBlock(int64_t depth_offset, int64_t depth, int64_t index) const {
    return packed + depth_offset * packed_extent + (panel_origin + index) * depth;
  }
};

// ------------------------------------------------------------------------------------------------
// Packing. A block of op(A) becomes row panels of kMr rows, each stored step by step (kMr floats
// per k step); a block of op(B) becomes column panels of kNr columns (kNr floats per k step). Rows
// and columns past the matrix edge are zero, so the micro-kernel always computes full tiles.
// ------------------------------------------------------------------------------------------------

// Both operands reduce to one of two layouts. Panel q of width W holds source lines
// [q*W, q*W + W) along the panel axis x; step p of the panel is W floats at packed[q*W*depth +
// p*W].

// The source stores each k step contiguously along x: element (p, x) at src[p * ld + x] (op(A) =
// A^T, op(B) = B). Rows are read in chunks of a few k steps across all panels: walking one panel
// down all k steps would touch a new page on every step.
template <int W>
void PackFromStepRows(const float* src, int64_t ld, int64_t depth, int64_t width, float* packed) {
  constexpr int64_t kStepsPerChunk = 8;
  for (int64_t p0 = 0; p0 < depth; p0 += kStepsPerChunk) {
    const int64_t p1 = std::min(depth, p0 + kStepsPerChunk);
    for (int64_t x0 = 0; x0 < width; x0 += W) {
      const int valid = static_cast<int>(std::min<int64_t>(W, width - x0));
      float* dst = packed + x0 * depth;
      for (int64_t p = p0; p < p1; ++p) {
        const float* row = src + p * ld + x0;
        if (valid == W) {
          std::memcpy(dst + p * W, row, sizeof(float) * W);
        } else {
          for (int x = 0; x < valid; ++x) dst[p * W + x] = row[x];
          for (int x = valid; x < W; ++x) dst[p * W + x] = 0.0f;
        }
      }
    }
  }
}

// The source stores each line along x contiguously in k: element (p, x) at src[x * ld + p]
// (op(A) = A, op(B) = B^T). Each panel reads its W lines side by side.
template <int W>
void PackFromStepColumns(const float* src, int64_t ld, int64_t depth, int64_t width,
                         float* packed) {
  for (int64_t x0 = 0; x0 < width; x0 += W) {
    const int valid = static_cast<int>(std::min<int64_t>(W, width - x0));
    float* dst = packed + x0 * depth;
    const float* lines[W];
    for (int x = 0; x < W; ++x) lines[x] = src + (x0 + std::min(x, valid - 1)) * ld;
    if (valid == W) {
      for (int64_t p = 0; p < depth; ++p) {
        for (int x = 0; x < W; ++x) dst[p * W + x] = lines[x][p];
      }
    } else {
      for (int64_t p = 0; p < depth; ++p) {
        for (int x = 0; x < W; ++x) dst[p * W + x] = x < valid ? lines[x][p] : 0.0f;
      }
    }
  }
}

#if MXLITE_HAS_AVX2_KERNEL
// The same layout as PackFromStepColumns: full panels through `vector_panel` (a register
// transpose of W lines), a partial last one element by element.
template <int W, typename VectorPanel>
void PackFromStepColumnsVector(const float* src, int64_t ld, int64_t depth, int64_t width,
                               float* packed, VectorPanel vector_panel) {
  const int64_t full = width / W * W;
  for (int64_t x0 = 0; x0 < full; x0 += W) {
    vector_panel(src + x0 * ld, ld, depth, packed + x0 * depth);
  }
  if (full < width) {
    PackFromStepColumns<W>(src + full * ld, ld, depth, width - full, packed + full * depth);
  }
}
#endif  // MXLITE_HAS_AVX2_KERNEL

// op(A)[0:rows, 0:depth] -> panels of kMr rows (register transposes where the CPU has AVX2).
void PackA(const OperandView& a, int64_t rows, int64_t depth, float* packed) {
  if (a.transposed) {
    PackFromStepRows<kMr>(a.data, a.ld, depth, rows, packed);
    return;
  }
#if MXLITE_HAS_AVX2_KERNEL
  if (CpuSupportsAvx2Fma()) {
    PackFromStepColumnsVector<kMr>(a.data, a.ld, depth, rows, packed, detail::PackRowPanelAvx2);
    return;
  }
#endif
  PackFromStepColumns<kMr>(a.data, a.ld, depth, rows, packed);
}

// op(B)[0:depth, 0:columns] -> panels of kNr columns.
void PackB(const OperandView& b, int64_t depth, int64_t columns, float* packed) {
  if (!b.transposed) {
    PackFromStepRows<kNr>(b.data, b.ld, depth, columns, packed);
    return;
  }
#if MXLITE_HAS_AVX2_KERNEL
  if (CpuSupportsAvx2Fma()) {
    PackFromStepColumnsVector<kNr>(b.data, b.ld, depth, columns, packed,
                                   detail::PackColumnPanelAvx2);
    return;
  }
#endif
  PackFromStepColumns<kNr>(b.data, b.ld, depth, columns, packed);
}

// Splits `total` into equal blocks of at most `max_block`, rounded up to `multiple`, so the last
// block is not a sliver.
int64_t BalancedBlock(int64_t total, int64_t max_block, int64_t multiple) {
  const int64_t blocks = CeilDiv(total, max_block);
  return std::min(max_block, RoundUp(CeilDiv(total, blocks), multiple));
}

// The depth of the k blocks of a product with depth k (all but the last are this deep). Packed
// operands are cut the same way, so it depends on k alone.
int64_t DepthBlock(int64_t k) { return BalancedBlock(k, kMaxKc, 1); }

// The columns of B (a multiple of kNr) in one cache block of a product whose k blocks are kc_max
// deep: as many as fill kBBlockFloats.
int64_t ColumnBlock(int64_t n, int64_t kc_max) {
  return BalancedBlock(n, std::max<int64_t>(kNr, kBBlockFloats / kc_max / kNr * kNr), kNr);
}
// The rows of A (a multiple of kMr) in one cache block when B's blocks are nc_max wide: as many as
// fill kABlockFloats, or all m where B's block outgrows this core's L2 and they fit half of it
// (see Blocking above).
int64_t RowBlock(int64_t m, int64_t kc_max, int64_t nc_max) {
  const auto l2_floats = static_cast<int64_t>(L2CacheBytesPerCore() / sizeof(float));
  if (kc_max * nc_max > l2_floats / 2 && m * kc_max <= l2_floats / 2) {
    return RoundUp(m, int64_t{kMr});
  }
  return BalancedBlock(m, std::max<int64_t>(kMr, kABlockFloats / kc_max / kMr * kMr), kMr);
}

#if MXLITE_HAS_AVX2_KERNEL
// A 64-byte aligned float buffer that only grows. Pages are touched once, by the first problem that
// needs them, and reused by every later call on the same thread.
class GrowingBuffer {
 public:
  GrowingBuffer() = default;
  GrowingBuffer(const GrowingBuffer&) = delete;
  GrowingBuffer& operator=(const GrowingBuffer&) = delete;
  ~GrowingBuffer() { std::free(data_); }

  float* Reserve(int64_t floats) {
    const size_t bytes = static_cast<size_t>(floats) * sizeof(float);
    if (bytes <= capacity_bytes_) return data_;
    std::free(data_);
    data_ = nullptr;
    capacity_bytes_ = 0;
    // Large buffers are huge-page aligned and ask for huge pages: faulting one in costs far less
    // than 512 separate 4 KiB faults.
    const size_t alignment = bytes >= kHugePageBytes ? kHugePageBytes : kBufferAlignment;
    const size_t rounded = RoundUp(static_cast<int64_t>(bytes), static_cast<int64_t>(alignment));
    void* memory = std::aligned_alloc(alignment, rounded);
    if (memory == nullptr) throw std::bad_alloc();
    if (alignment == kHugePageBytes) madvise(memory, rounded, MADV_HUGEPAGE);
    data_ = static_cast<float*>(memory);
    capacity_bytes_ = rounded;
    return data_;
  }

 private:
  float* data_ = nullptr;
  size_t capacity_bytes_ = 0;
};

struct PackBuffers {
  GrowingBuffer a;  // one MC x KC block of op(A)
  GrowingBuffer b;  // one KC x NC block of op(B)
};

PackBuffers& ThreadPackBuffers() {
  thread_local PackBuffers buffers;
  return buffers;
}

// B's panels for one macro-kernel: ready (packed by an earlier row block, or a pre-packed
// operand), or packed on the way into `buffer` from `to_pack`. `fetch_after` (pre-packed B only):
// the panel the thread needs after this block's last one (the next k block's first), or null.
struct BPanels {
  const float* ready = nullptr;
  bool prepacked = false;
  const float* fetch_after = nullptr;
  int64_t fetch_after_depth = 0;  // the next k block's depth: its first panel's lines
  const OperandView* to_pack = nullptr;
  float* buffer = nullptr;
};

// A's rows for one macro-kernel: packed panels (i * depth floats into `packed` for row i), or full
// tiles read in place from row-major A (`in_place`, row i at in_place + i * lda) with only a
// partial last tile packed (its panel at `packed`).
struct APanels {
  const float* packed = nullptr;
  const float* in_place = nullptr;
  int64_t lda = 0;
};

// The lines of pre-packed B that the macro-kernel reads after the panels it is on (those before
// column `next`): the next `panels` panels, or the next k block's first panel after the last ones.
// A network's prepared weights come from memory once per pass (the other layers' weights and
// activations have moved them out of cache), and the first row tile of each panel would wait for
// all of it at once. Each packed B step of a panel is one 64-byte line.
struct NextLines {
  const float* first = nullptr;
  int64_t lines = 0;
};
constexpr int64_t kLineBytes = 64;
static_assert(kNr * sizeof(float) == kLineBytes, "one packed B step is one cache line");
NextLines NextPrepackedLines(const BPanels& b, int64_t next, int64_t panels, int64_t columns,
                             int64_t depth) {
  if (!b.prepacked) return {};
  if (next >= columns) return {b.fetch_after, b.fetch_after == nullptr ? 0 : b.fetch_after_depth};
  const int64_t ahead = std::min(panels, CeilDiv(columns - next, int64_t{kNr}));
  return {b.ready + next * depth, ahead * depth};
}

// Row tile `tile`'s share of the fetch of `next`, spread over the `tiles` row tiles of the
// current panels: lines [begin, end).
struct LineShare {
  int64_t begin, end;
};
LineShare ShareOf(const NextLines& next, int64_t tiles, int64_t tile) {
  const int64_t per_tile = CeilDiv(next.lines, tiles);
  return {std::min(next.lines, tile * per_tile), std::min(next.lines, (tile + 1) * per_tile)};
}

void FetchLines(const float* panel, int64_t begin, int64_t end) {
  const char* bytes = reinterpret_cast<const char*>(panel);
  for (int64_t line = begin; line < end; ++line) {
    __builtin_prefetch(bytes + line * kLineBytes, /*rw=*/0, /*locality=*/3);
  }
}

// Fetches row tile `tile`'s share of `next` at once. Plain B packed here or on the way is
// already close.
void PrefetchShare(const NextLines& next, int64_t tiles, int64_t tile) {
  if (next.first == nullptr) return;
  const LineShare share = ShareOf(next, tiles, tile);
  FetchLines(next.first, share.begin, share.end);
}

// The same for a micro-kernel that fetches lines as it goes (one per four steps): the part of
// the share that fits is handed to the kernel, the rest fetched now. A burst of a hundred fetches
// would wait for free miss buffers.
detail::LinePrefetch PrefetchShareOnTheWay(const NextLines& next, int64_t depth, int64_t tiles,
                                           int64_t tile) {
  const LineShare share = ShareOf(next, tiles, tile);
  const int64_t on_the_way = std::min(share.end - share.begin, depth / 4);
  FetchLines(next.first, share.begin + on_the_way, share.end);
  return {reinterpret_cast<const char*>(next.first) + share.begin * kLineBytes, on_the_way};
}

// One macro-kernel's operands and where its block of C goes.
struct MacroBlock {
  int64_t rows, columns, depth;
  float alpha, beta;
  const APanels& a;
  float* c;
  int64_t ldc;
  const Epilogue<float>& epilogue;  // offset to this block; empty for partial sums
  bool wide_pairs;                  // AVX-512 kernels
  int64_t row_tiles() const { return CeilDiv(rows, int64_t{kMr}); }
  Epilogue<float> EpilogueAt(int64_t i, int64_t j) const {
    return epilogue.empty() ? epilogue : epilogue.Offset(i, j);
  }
  const float* ARows(int64_t i) const {
    return a.in_place ? a.in_place + i * a.lda : a.packed + i * depth;
  }
};

// Micro-tiles of rows [first_row, rows) of the panel at column j, fetching their shares of `next`.
void PanelTiles(const MacroBlock& m, int64_t first_row, int64_t j, const float* b_panel,
                const NextLines& next) {
  const int tile_columns = static_cast<int>(std::min<int64_t>(kNr, m.columns - j));
  const bool narrow = tile_columns <= kNr / 2;
  const APanels& a = m.a;
  for (int64_t i = first_row; i < m.rows; i += kMr) {
    const int tile_rows = static_cast<int>(std::min<int64_t>(kMr, m.rows - i));
    // The kernel for full tiles of a wide panel with A's rows in place fetches on the way.
    const bool fetches_on_the_way =
        next.first != nullptr && a.in_place != nullptr && tile_rows == kMr && !narrow;
    if (!fetches_on_the_way) PrefetchShare(next, m.row_tiles(), i / kMr);
    const Epilogue<float> tile_epilogue = m.EpilogueAt(i, j);
    float* c = m.c + i * m.ldc + j;
    if (i + 2 * kMr <= m.rows && (m.wide_pairs || narrow)) {
      // Two full tiles together: in AVX-512 registers, or a narrow panel's two half tiles.
      if (fetches_on_the_way) PrefetchShare(next, m.row_tiles(), i / kMr);
      PrefetchShare(next, m.row_tiles(), i / kMr + 1);
      const float* first = m.ARows(i);
      const float* second = m.ARows(i + kMr);
      const int64_t row_stride = a.in_place ? a.lda : 1, step_stride = a.in_place ? 1 : kMr;
      if (narrow) {
        detail::SgemmNarrowTilePairAvx2Fma(m.depth, first, second, row_stride, step_stride,
                                           b_panel, c, m.ldc, tile_columns, m.alpha, m.beta,
                                           tile_epilogue);
      } else {
        detail::SgemmTilePairAvx512(m.depth, first, second, row_stride, step_stride, b_panel, c,
                                    m.ldc, tile_columns, m.alpha, m.beta, tile_epilogue);
      }
      i += kMr;
      continue;
    }
    if (a.in_place == nullptr) {
      detail::SgemmMicroKernelAvx2Fma(m.depth, a.packed + i * m.depth, b_panel, c, m.ldc,
                                      tile_rows, tile_columns, m.alpha, m.beta, tile_epilogue);
    } else if (tile_rows == kMr) {
      const detail::LinePrefetch fetch =
          fetches_on_the_way ? PrefetchShareOnTheWay(next, m.depth, m.row_tiles(), i / kMr)
                             : detail::LinePrefetch{};
      detail::SgemmMicroKernelAvx2FmaRowsInPlace(m.depth, a.in_place + i * a.lda, a.lda, b_panel,
                                                 c, m.ldc, tile_columns, m.alpha, m.beta,
                                                 tile_epilogue, fetch);
    } else {
      detail::SgemmMicroKernelAvx2Fma(m.depth, a.packed, b_panel, c, m.ldc, tile_rows,
                                      tile_columns, m.alpha, m.beta, tile_epilogue);
    }
  }
}

// Two adjacent panels (columns j and j + kNr, the second possibly partial) on AVX-512: 12 x 32
// blocks for the full pairs of row tiles, then the remaining rows, a tile at a time, across both.
void PanelPairTiles(const MacroBlock& m, int64_t j, const float* left, const float* right,
                    const NextLines& next) {
  const int right_columns = static_cast<int>(std::min<int64_t>(kNr, m.columns - j - kNr));
  const int64_t paired_rows = m.rows / (2 * kMr) * (2 * kMr);
  const int64_t row_stride = m.a.in_place ? m.a.lda : 1, step_stride = m.a.in_place ? 1 : kMr;
  for (int64_t i = 0; i < paired_rows; i += 2 * kMr) {
    PrefetchShare(next, m.row_tiles(), i / kMr);
    PrefetchShare(next, m.row_tiles(), i / kMr + 1);
    detail::SgemmTileQuadAvx512(m.depth, m.ARows(i), m.ARows(i + kMr), row_stride, step_stride,
                                left, right, m.c + i * m.ldc + j, m.ldc, right_columns, m.alpha,
                                m.beta, m.EpilogueAt(i, j));
  }
  // The rest (under 12 rows): a full tile of A's rows in place, or a packed panel.
  for (int64_t i = paired_rows; i < m.rows; i += kMr) {
    const int tile_rows = static_cast<int>(std::min<int64_t>(kMr, m.rows - i));
    PrefetchShare(next, m.row_tiles(), i / kMr);
    const bool in_place = m.a.in_place != nullptr && tile_rows == kMr;
    const float* rows = in_place                   ? m.a.in_place + i * m.a.lda
                        : m.a.in_place != nullptr ? m.a.packed  // the partial last tile
                                                   : m.a.packed + i * m.depth;
    detail::SgemmTileOfPanelPairAvx512(m.depth, rows, in_place ? m.a.lda : 1, in_place ? 1 : kMr,
                                       tile_rows, left, right, m.c + i * m.ldc + j, m.ldc,
                                       right_columns, m.alpha, m.beta, m.EpilogueAt(i, j));
  }
}

// C[0:rows, 0:columns] = alpha * A block * packed B block + beta * C. B packed on the way
// goes a few panels at a time just before their first use, while they are hot in L1/L2, instead
// of in one pass over the whole block whose writes would go out to L3 and come back. A group is
// wide enough that each row of B is read in whole cache lines that the prefetcher can follow.
// Pre-packed B's next panels are fetched a share per row tile (NextPrepackedLines).
// `epilogue` (offset to this block; empty for partial sums) goes to every micro-tile.
void MacroKernel(int64_t rows, int64_t columns, int64_t depth, float alpha, const APanels& a,
                 const BPanels& b, float beta, float* c, int64_t ldc,
                 const Epilogue<float>& epilogue, bool wide_pairs) {
  constexpr int64_t kPanelsPerPackGroup = 8;  // even: a pair of panels is never split
  const MacroBlock block{rows, columns, depth, alpha, beta, a, c, ldc, epilogue, wide_pairs};
  for (int64_t j = 0; j < columns;) {
    const float* b_panel;
    if (b.to_pack != nullptr) {
      if (j % (kPanelsPerPackGroup * kNr) == 0) {
        PackB(b.to_pack->Offset(0, j), depth, std::min(kPanelsPerPackGroup * kNr, columns - j),
              b.buffer + j * depth);
      }
      b_panel = b.buffer + j * depth;
    } else {
      b_panel = b.ready + j * depth;
    }
    // AVX-512 takes two panels at a time where there are two.
    const int64_t panels = wide_pairs && j + kNr < columns ? 2 : 1;
    const NextLines next = NextPrepackedLines(b, j + panels * kNr, panels, columns, depth);
    if (panels == 2) {
      PanelPairTiles(block, j, b_panel, b_panel + kNr * depth, next);
    } else {
      PanelTiles(block, 0, j, b_panel, next);
    }
    j += panels * kNr;
  }
}

// Whether the micro-kernels read A's rows in place instead of packing them (A row-major; each
// row's stretch of a k block is one contiguous run). Packing A pays a copy of it for its reuse by
// every column panel: with the whole depth in one block the rows are read in place (MobileNet's
// 1x1 layers: the packing was ~5% of a perf profile of the network, in place ~2% faster at batch
// 1), and with several blocks when there are few column panels to reuse it (n <= 512: 32
// panels; deeper 1x1 layers 3-8% faster on 1 and 2 threads, the more so on 2 where each thread
// packed the same A for its columns).
bool ReadsARowsInPlace(const OperandView& a, int64_t n, int64_t k, int64_t kc_max) {
  constexpr int64_t kMaxColumnsInPlace = 512;
  return a.packed == nullptr && !a.transposed && (k <= kc_max || n <= kMaxColumnsInPlace);
}

// The packed GEMM on one thread: C[0:m, 0:n] = epilogue(alpha * op(A) op(B) + beta * C), k > 0.
// A pre-packed operand is read in place; a plain one is packed block by block (A's rows read in
// place where ReadsARowsInPlace).
void PackedSgemm(int64_t m, int64_t n, int64_t k, float alpha, const OperandView& a,
                 const OperandView& b, float beta, float* c, int64_t ldc,
                 const Epilogue<float>& epilogue, bool wide_pairs) {
  const int64_t kc_max = DepthBlock(k);
  const int64_t nc_max = ColumnBlock(n, kc_max);
  const int64_t mc_max = RowBlock(m, kc_max, std::min(nc_max, n));
  PackBuffers& buffers = ThreadPackBuffers();
  float* a_buffer = a.packed == nullptr ? buffers.a.Reserve(mc_max * kc_max) : nullptr;
  float* b_buffer = b.packed == nullptr ? buffers.b.Reserve(kc_max * nc_max) : nullptr;

  for (int64_t jc = 0; jc < n; jc += nc_max) {
    const int64_t nc = std::min(nc_max, n - jc);
    for (int64_t pc = 0; pc < k; pc += kc_max) {
      const int64_t kc = std::min(kc_max, k - pc);
      // Only the first k block applies the caller's beta; later ones accumulate.
      const float block_beta = pc == 0 ? beta : 1.0f;
      // Only the last one completes the sums, so only it applies the epilogue.
      const bool last_k_block = pc + kc == k;
      const OperandView b_block = b.packed != nullptr ? b : b.Offset(pc, jc);
      for (int64_t ic = 0; ic < m; ic += mc_max) {
        const int64_t mc = std::min(mc_max, m - ic);
        APanels a_panels;
        if (a.packed != nullptr) {
          a_panels.packed = a.PackedBlock(pc, kc, ic);
        } else if (ReadsARowsInPlace(a, n, k, kc_max)) {
          const OperandView block = a.Offset(ic, pc);
          a_panels.in_place = block.data;
          a_panels.lda = block.ld;
          a_panels.packed = a_buffer;  // the partial last tile, if any
          const int64_t full = mc / kMr * kMr;
          if (full < mc) PackA(block.Offset(full, 0), mc - full, kc, a_buffer);
        } else {
          PackA(a.Offset(ic, pc), mc, kc, a_buffer);
          a_panels.packed = a_buffer;
        }
        // The first row block packs a plain B as it goes; the others reuse the packed block.
        BPanels b_panels;
        if (b.packed != nullptr) {
          b_panels.ready = b.PackedBlock(pc, kc, jc);
          b_panels.prepacked = true;
          // The last row block moves on to the next k block (earlier ones reread this one).
          if (ic + mc >= m && pc + kc < k) {
            b_panels.fetch_after_depth = std::min(kc_max, k - pc - kc);
            b_panels.fetch_after = b.PackedBlock(pc + kc, b_panels.fetch_after_depth, jc);
          }
        } else if (ic == 0) {
          b_panels.to_pack = &b_block;
          b_panels.buffer = b_buffer;
        } else {
          b_panels.ready = b_buffer;
        }
        MacroKernel(mc, nc, kc, alpha, a_panels, b_panels, block_beta, c + ic * ldc + jc, ldc,
                    last_k_block ? epilogue.Offset(ic, jc) : Epilogue<float>{}, wide_pairs);
      }
    }
  }
}

// C (1 x n) = alpha * op(A) (1 x k) * op(B) + beta * C: a row vector times a matrix (e.g.
// FullyConnected at batch 1). Packing op(B) would copy the whole matrix to use each element once;
// this reads it once, in place. Columns go out in fixed blocks, each element summed by one thread
// in the same order whatever the thread count. A transposed B (FullyConnected's weight) is read
// four rows at a time: one stream at a time left long rows short of bandwidth (AlexNet's 9216 ->
// 4096 layer at batch 1: 13.2 ms one row at a time, 8.5 ms four at a time; the model 44 -> 35 ms).
void RowVectorTimesMatrix(int64_t n, int64_t k, float alpha, const OperandView& a,
                          const OperandView& b, float beta, float* c,
                          const Epilogue<float>& epilogue) {
  constexpr int64_t kColumnsPerTask = 64;
  // op(A)'s one row: contiguous unless A is stored as a k x 1 column.
  std::vector<float> gathered;
  const float* x = a.data;
  if (a.transposed && a.ld != 1) {
    gathered.resize(static_cast<size_t>(k));
    for (int64_t p = 0; p < k; ++p) gathered[p] = a.data[p * a.ld];
    x = gathered.data();
  }
  const int64_t tasks = CeilDiv(n, kColumnsPerTask);
  const auto finish = [alpha, beta, &epilogue, c](float sum, int64_t j) {
    const float value = beta == 0.0f ? alpha * sum : alpha * sum + beta * c[j];
    c[j] = epilogue.Apply(value, 0, j);
  };
  const auto run = [&](int64_t task) {
    const int64_t j0 = task * kColumnsPerTask, j1 = std::min(n, j0 + kColumnsPerTask);
    if (b.transposed) {  // column j of op(B) is row j of the stored matrix
      int64_t j = j0;
      for (; j + 4 <= j1; j += 4) {
        float sums[4];
        detail::Dot4Avx2(x, b.data + j * b.ld, b.ld, k, sums);
        for (int r = 0; r < 4; ++r) finish(sums[r], j + r);
      }
      for (; j < j1; ++j) finish(detail::DotAvx2(x, b.data + j * b.ld, k), j);
      return;
    }
    float sums[kColumnsPerTask] = {};
    for (int64_t p = 0; p < k; ++p) detail::AxpyAvx2(x[p], b.data + p * b.ld + j0, sums, j1 - j0);
    for (int64_t j = j0; j < j1; ++j) finish(sums[j - j0], j);
  };
  // Every element of op(B) is streamed from memory once for two flops: memory bandwidth, which
  // another core adds to, bounds the product long before the flop threshold of the packed path
  // would split it (FullyConnected 1280 -> 1000 at batch 1: 0.23 ms on one thread).
  const double streamed = static_cast<double>(n) * static_cast<double>(k);
  if (IntraOpThreads() == 1 || streamed < 2 * kMinStreamedElementsPerThread || tasks == 1) {
    for (int64_t task = 0; task < tasks; ++task) run(task);
    return;
  }
  ParallelFor(tasks, run);
}

#endif  // MXLITE_HAS_AVX2_KERNEL

// ------------------------------------------------------------------------------------------------
// Eigen reference path.
// ------------------------------------------------------------------------------------------------
using RowMajorMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrixMap = Eigen::Map<const RowMajorMatrix, Eigen::Unaligned, Eigen::OuterStride<>>;
using MatrixMap = Eigen::Map<RowMajorMatrix, Eigen::Unaligned, Eigen::OuterStride<>>;

template <typename OpA, typename OpB>
void EigenProduct(const OpA& a, const OpB& b, float alpha, float beta, MatrixMap& c) {
  if (beta == 0.0f) {
    c.noalias() = alpha * a * b;  // overwrites C without reading it
  } else {
    if (beta != 1.0f) c *= beta;
    c.noalias() += alpha * a * b;
  }
}

// Stored shape of op(X) (rows x columns): X itself, or X^T's transpose.
ConstMatrixMap StoredMatrix(const OperandView& x, int64_t rows, int64_t columns) {
  return x.transposed ? ConstMatrixMap(x.data, columns, rows, Eigen::OuterStride<>(x.ld))
                      : ConstMatrixMap(x.data, rows, columns, Eigen::OuterStride<>(x.ld));
}

void EigenSgemm(int64_t m, int64_t n, int64_t k, float alpha, const OperandView& a,
                const OperandView& b, float beta, float* c, int64_t ldc) {
  MatrixMap c_map(c, m, n, Eigen::OuterStride<>(ldc));
  const ConstMatrixMap a_map = StoredMatrix(a, m, k);
  const ConstMatrixMap b_map = StoredMatrix(b, k, n);
  if (!a.transposed && !b.transposed) {
    EigenProduct(a_map, b_map, alpha, beta, c_map);
  } else if (!a.transposed && b.transposed) {
    EigenProduct(a_map, b_map.transpose(), alpha, beta, c_map);
  } else if (a.transposed && !b.transposed) {
    EigenProduct(a_map.transpose(), b_map, alpha, beta, c_map);
  } else {
    EigenProduct(a_map.transpose(), b_map.transpose(), alpha, beta, c_map);
  }
}

// ------------------------------------------------------------------------------------------------
// Dispatch and threading.
// ------------------------------------------------------------------------------------------------

// C = beta * C, for products that contribute nothing (k == 0 or alpha == 0).
void ScaleC(int64_t m, int64_t n, float beta, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * ldc;
    if (beta == 0.0f) {
      std::fill(row, row + n, 0.0f);
    } else if (beta != 1.0f) {
      for (int64_t j = 0; j < n; ++j) row[j] *= beta;
    }
  }
}

// How C is cut into blocks, one per thread: grid_rows x grid_columns blocks of whole micro-tiles.
struct ThreadGrid {
  int64_t grid_rows = 1;
  int64_t grid_columns = 1;
};

// Picks the grid with the least work per thread, then the least packing per thread (each thread
// packs its own rows of A and columns of B, so square-ish blocks pack least).
ThreadGrid ChooseThreadGrid(int64_t m, int64_t n, int64_t k, int threads) {
  const double flops =
      2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const int64_t useful = std::max<int64_t>(1, static_cast<int64_t>(flops / kMinFlopsPerThread));
  threads = static_cast<int>(std::min<int64_t>(threads, useful));
  const int64_t row_tiles = CeilDiv(m, kMr);
  const int64_t column_tiles = CeilDiv(n, kNr);
  ThreadGrid best;
  int64_t best_work = INT64_MAX, best_surface = INT64_MAX;
  for (int64_t grid_rows = 1; grid_rows <= threads; ++grid_rows) {
    const int64_t grid_columns = threads / grid_rows;
    if (grid_rows > row_tiles || grid_columns > column_tiles) continue;
    const int64_t block_rows = std::min(m, CeilDiv(row_tiles, grid_rows) * kMr);
    const int64_t block_columns = std::min(n, CeilDiv(column_tiles, grid_columns) * kNr);
    const int64_t work = block_rows * block_columns;
    const int64_t surface = block_rows + block_columns;
    if (work < best_work || (work == best_work && surface < best_surface)) {
      best = {grid_rows, grid_columns};
      best_work = work;
      best_surface = surface;
    }
  }
  return best;
}

// Index range [begin, end) of block `index` when `tiles` tiles of `tile` elements (the last one may
// be partial; `total` elements) are dealt out evenly to `blocks` blocks.
std::pair<int64_t, int64_t> BlockRange(int64_t total, int64_t tile, int64_t blocks, int64_t index) {
  const int64_t tiles = CeilDiv(total, tile);
  const int64_t begin = std::min(total, tiles * index / blocks * tile);
  const int64_t end = std::min(total, tiles * (index + 1) / blocks * tile);
  return {begin, end};
}

// 512-bit FMAs over 256-bit ones in work per second on this CPU (0 without AVX-512F), measured
// once: full tiles go to the AVX-512 kernels where the wider registers do clearly more.
double Fma512To256RateHere() {
  static const double rate =
      CpuSupportsAvx512f() && CpuSupportsAvx2Fma() ? detail::Fma512To256Rate() : 0.0;
  return rate;
}
constexpr double kWideTilesPayFrom = 1.5;

// MXNET_CPU_GEMM_KERNEL, read once: kAuto unless it names a kernel.
GemmImplementation ImplementationFromSettings() {
  static const GemmImplementation chosen = [] {
    const std::string name = settings().GetString("MXNET_CPU_GEMM_KERNEL");
    const GemmImplementation kernel = name == "avx512" ? GemmImplementation::kAvx512
                                      : name == "avx2" ? GemmImplementation::kAvx2Fma
                                      : name == "eigen" ? GemmImplementation::kEigen
                                                        : GemmImplementation::kAuto;
    MX_CHECK(kernel != GemmImplementation::kAvx512 || (CpuSupportsAvx512f() && CpuSupportsAvx2Fma()))
        << "MXNET_CPU_GEMM_KERNEL=avx512: this CPU lacks avx512f, avx2 or fma (use auto, avx2 or "
           "eigen)";
    MX_CHECK(kernel != GemmImplementation::kAvx2Fma || CpuSupportsAvx2Fma())
        << "MXNET_CPU_GEMM_KERNEL=avx2: this CPU lacks avx2 or fma (use auto or eigen)";
    return kernel;
  }();
  return chosen;
}

GemmImplementation ResolveImplementation(GemmImplementation requested) {
  if (requested != GemmImplementation::kAuto) return requested;
  const GemmImplementation configured = ImplementationFromSettings();
  if (configured != GemmImplementation::kAuto) return configured;
  if (!CpuSupportsAvx2Fma()) return GemmImplementation::kEigen;
  return Fma512To256RateHere() >= kWideTilesPayFrom ? GemmImplementation::kAvx512
                                                    : GemmImplementation::kAvx2Fma;
}

// Whether `implementation` is mxlite's packed GEMM (AVX2 tiles, or AVX-512 blocks of them).
bool IsPackedGemm(GemmImplementation implementation) {
  return implementation == GemmImplementation::kAvx2Fma ||
         implementation == GemmImplementation::kAvx512;
}

void CheckArguments(Transpose trans_a, Transpose trans_b, int64_t m, int64_t n, int64_t k,
                    const float* a, int64_t lda, const float* b, int64_t ldb, const float* c,
                    int64_t ldc) {
  MX_CHECK(m >= 0 && n >= 0 && k >= 0)
      << "Sgemm: sizes must be >= 0, got m=" << m << " n=" << n << " k=" << k;
  const int64_t a_width = trans_a == Transpose::kNo ? k : m;
  const int64_t b_width = trans_b == Transpose::kNo ? n : k;
  MX_CHECK(lda >= std::max<int64_t>(1, a_width))
      << "Sgemm: lda must be >= " << std::max<int64_t>(1, a_width) << " (the stored row width of "
      << (trans_a == Transpose::kNo ? "A, k" : "A^T, m") << "), got " << lda;
  MX_CHECK(ldb >= std::max<int64_t>(1, b_width))
      << "Sgemm: ldb must be >= " << std::max<int64_t>(1, b_width) << " (the stored row width of "
      << (trans_b == Transpose::kNo ? "B, n" : "B^T, k") << "), got " << ldb;
  MX_CHECK(ldc >= std::max<int64_t>(1, n))
      << "Sgemm: ldc must be >= " << std::max<int64_t>(1, n) << " (n), got " << ldc;
  MX_CHECK(c != nullptr || m == 0 || n == 0) << "Sgemm: C is null for a " << m << "x" << n << " C";
  MX_CHECK((a != nullptr && b != nullptr) || m == 0 || n == 0 || k == 0)
      << "Sgemm: A or B is null with m=" << m << " n=" << n << " k=" << k;
}

// The view of a packed operand.
OperandView PackedView(const PackedGemmOperand& packed) {
  OperandView view;
  view.packed = packed.panels();
  view.packed_extent = packed.padded_extent();
  return view;
}

// A packed operand's plain op(X) (rows x columns, row-major) from its panels: for the Eigen path.
std::vector<float> UnpackOperand(const OperandView& view, bool side_a, int64_t rows,
                                 int64_t columns) {
  const int64_t extent = side_a ? rows : columns, depth = side_a ? columns : rows;
  const int64_t panel = side_a ? kMr : kNr;
  std::vector<float> plain(static_cast<size_t>(rows * columns));
  const int64_t kc_max = DepthBlock(depth);
  for (int64_t pc = 0; pc < depth; pc += kc_max) {
    const int64_t kc = std::min(kc_max, depth - pc);
    const float* block = view.PackedBlock(pc, kc, 0);
    for (int64_t x = 0; x < extent; ++x) {
      const float* line = block + x / panel * panel * kc + x % panel;
      for (int64_t p = 0; p < kc; ++p) {
        const float value = line[p * panel];
        if (side_a) {
          plain[x * columns + pc + p] = value;
        } else {
          plain[(pc + p) * columns + x] = value;
        }
      }
    }
  }
  return plain;
}

// C = epilogue(alpha * op(A) * op(B) + beta * C) on the implementation in force, split across the
// intra-op threads; arguments already checked.
void GemmProduct(int64_t m, int64_t n, int64_t k, float alpha, OperandView a_view,
                 OperandView b_view, float beta, float* c, int64_t ldc,
                 const Epilogue<float>& epilogue) {
  if (m == 0 || n == 0) return;
  if (k == 0 || alpha == 0.0f) {
    ScaleC(m, n, beta, c, ldc);
    ApplyEpilogue(epilogue, m, n, c, ldc);
    return;
  }
  const GemmImplementation implementation =
      ResolveImplementation(requested_implementation.load(std::memory_order_relaxed));
  std::vector<float> plain_a, plain_b;  // pre-packed operands, unpacked for Eigen
  if (implementation == GemmImplementation::kEigen) {
    if (a_view.packed != nullptr) {
      plain_a = UnpackOperand(a_view, /*side_a=*/true, m, k);
      a_view = OperandView{plain_a.data(), k, false};
    }
    if (b_view.packed != nullptr) {
      plain_b = UnpackOperand(b_view, /*side_a=*/false, k, n);
      b_view = OperandView{plain_b.data(), n, false};
    }
  }
  const auto run_block = [&](int64_t rows, int64_t columns, int64_t row0, int64_t column0) {
    const OperandView a_block = a_view.Offset(row0, 0);
    const OperandView b_block = b_view.Offset(0, column0);
    float* c_block = c + row0 * ldc + column0;
    const Epilogue<float> block_epilogue = epilogue.Offset(row0, column0);
#if MXLITE_HAS_AVX2_KERNEL
    if (IsPackedGemm(implementation)) {
      PackedSgemm(rows, columns, k, alpha, a_block, b_block, beta, c_block, ldc, block_epilogue,
                  implementation == GemmImplementation::kAvx512);
      return;
    }
#endif
    EigenSgemm(rows, columns, k, alpha, a_block, b_block, beta, c_block, ldc);
    ApplyEpilogue(block_epilogue, rows, columns, c_block, ldc);
  };

#if MXLITE_HAS_AVX2_KERNEL
  // A row vector reads op(B) in place; a pre-packed operand goes through the packed kernel.
  if (m == 1 && IsPackedGemm(implementation) && a_view.packed == nullptr &&
      b_view.packed == nullptr) {
    RowVectorTimesMatrix(n, k, alpha, a_view, b_view, beta, c, epilogue);
    return;
  }
#endif
  const ThreadGrid grid = ChooseThreadGrid(m, n, k, IntraOpThreads());
  if (grid.grid_rows * grid.grid_columns == 1) {
    run_block(m, n, 0, 0);
    return;
  }
  ParallelFor(grid.grid_rows * grid.grid_columns, [&](int64_t block) {
    const auto [row_begin, row_end] = BlockRange(m, kMr, grid.grid_rows, block / grid.grid_columns);
    const auto [column_begin, column_end] =
        BlockRange(n, kNr, grid.grid_columns, block % grid.grid_columns);
    if (row_end > row_begin && column_end > column_begin) {
      run_block(row_end - row_begin, column_end - column_begin, row_begin, column_begin);
    }
  });
}

}  // namespace

bool CpuSupportsAvx2Fma() {
#if MXLITE_HAS_AVX2_KERNEL
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return supported;
#else
  return false;
#endif
}

void SetGemmImplementation(GemmImplementation implementation) {
  MX_CHECK(implementation != GemmImplementation::kAvx2Fma || CpuSupportsAvx2Fma())
      << "SetGemmImplementation: the AVX2+FMA GEMM needs a CPU with avx2 and fma; this one lacks "
         "them (use kAuto or kEigen)";
  MX_CHECK(implementation != GemmImplementation::kAvx512 ||
           (CpuSupportsAvx512f() && CpuSupportsAvx2Fma()))
      << "SetGemmImplementation: the AVX-512 GEMM needs a CPU with avx512f, avx2 and fma; this "
         "one lacks them (use kAuto, kAvx2Fma or kEigen)";
  requested_implementation.store(implementation, std::memory_order_relaxed);
}

bool GemmUsesAvx512Tiles() {
  return ResolveImplementation(requested_implementation.load()) == GemmImplementation::kAvx512;
}

bool PackedOperandsReadInPlace() {
  return IsPackedGemm(
      ResolveImplementation(requested_implementation.load(std::memory_order_relaxed)));
}

GemmInfo ActiveGemm() {
  const GemmImplementation requested = requested_implementation.load(std::memory_order_relaxed);
  GemmInfo info;
  info.implementation = ResolveImplementation(requested);
  info.threads = IntraOpThreads();
  const char* cpu = CpuSupportsAvx2Fma() ? "cpu supports avx2, fma" : "cpu lacks avx2 or fma";
  const bool chosen_by_program = requested != GemmImplementation::kAuto;
  const bool chosen_by_setting =
      !chosen_by_program && ImplementationFromSettings() != GemmImplementation::kAuto;
  const bool automatic = !chosen_by_program && !chosen_by_setting;
  const std::string forced = chosen_by_program   ? "forced by SetGemmImplementation; "
                             : chosen_by_setting ? "MXNET_CPU_GEMM_KERNEL=" +
                                                       settings().GetString("MXNET_CPU_GEMM_KERNEL") +
                                                       "; "
                                                 : "";
  if (IsPackedGemm(info.implementation)) {
    info.name = info.implementation == GemmImplementation::kAvx512
                    ? "mxlite AVX-512 12x32 / AVX2+FMA 6x16 micro-kernels"
                    : "mxlite AVX2+FMA 6x16 micro-kernel";
    std::ostringstream blocking;
    blocking << "KC<=" << kMaxKc << ", MC x KC " << kABlockFloats * sizeof(float) / 1024
             << " KiB, KC x NC " << kBBlockFloats * sizeof(float) / (1024 * 1024) << " MiB";
    info.blocking = blocking.str();
    info.reason = forced + cpu;
    if (CpuSupportsAvx512f()) {
      std::ostringstream rate;
      rate << std::setprecision(2) << "; avx512f, 512-bit FMAs measured at "
           << Fma512To256RateHere() << "x the work of 256-bit ones"
           << (automatic
                   ? (info.implementation == GemmImplementation::kAvx512 ? " (>= 1.5: used)"
                                                                         : " (< 1.5: not used)")
                   : "");
      info.reason += rate.str();
    }
  } else {
    info.name = "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." +
                std::to_string(EIGEN_MAJOR_VERSION) + "." + std::to_string(EIGEN_MINOR_VERSION) +
                " GEMM (" + Eigen::SimdInstructionSetsInUse() + ")";
    info.reason =
        forced + cpu + (automatic ? "; portable fallback" : "");
  }
  return info;
}

std::string GemmInfo::ToString() const {
  std::ostringstream out;
  out << name;
  if (!blocking.empty()) out << ", " << blocking;
  out << ", " << threads << (threads == 1 ? " thread" : " threads") << " (" << reason << ")";
  return out.str();
}

void Sgemm(Transpose trans_a, Transpose trans_b, int64_t m, int64_t n, int64_t k, float alpha,
           const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
           int64_t ldc) {
  Sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, Epilogue<float>{});
}

void Sgemm(Transpose trans_a, Transpose trans_b, int64_t m, int64_t n, int64_t k, float alpha,
           const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
           int64_t ldc, const Epilogue<float>& epilogue) {
  CheckArguments(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc);
  GemmProduct(m, n, k, alpha, OperandView{a, lda, trans_a == Transpose::kYes},
              OperandView{b, ldb, trans_b == Transpose::kYes}, beta, c, ldc, epilogue);
}

void Sgemm(const PackedGemmOperand& a, Transpose trans_b, int64_t n, float alpha, const float* b,
           int64_t ldb, float beta, float* c, int64_t ldc, const Epilogue<float>& epilogue) {
  MX_CHECK(a.side() == PackedGemmOperand::Side::kA)
      << "Sgemm: the packed operand was packed as B, passed as A";
  const int64_t m = a.rows(), k = a.columns();
  CheckArguments(Transpose::kNo, trans_b, m, n, k, a.panels(), std::max<int64_t>(1, k), b, ldb, c,
                 ldc);
  GemmProduct(m, n, k, alpha, PackedView(a), OperandView{b, ldb, trans_b == Transpose::kYes}, beta,
              c, ldc, epilogue);
}

void Sgemm(Transpose trans_a, int64_t m, float alpha, const float* a, int64_t lda,
           const PackedGemmOperand& b, float beta, float* c, int64_t ldc,
           const Epilogue<float>& epilogue) {
  MX_CHECK(b.side() == PackedGemmOperand::Side::kB)
      << "Sgemm: the packed operand was packed as A, passed as B";
  const int64_t k = b.rows(), n = b.columns();
  CheckArguments(trans_a, Transpose::kNo, m, n, k, a, lda, b.panels(), std::max<int64_t>(1, n), c,
                 ldc);
  GemmProduct(m, n, k, alpha, OperandView{a, lda, trans_a == Transpose::kYes}, PackedView(b), beta,
              c, ldc, epilogue);
}

PackedGemmOperand PackedGemmOperand::Pack(Side side, Transpose trans, int64_t rows,
                                          int64_t columns, const float* x, int64_t ld) {
  const bool transposed = trans == Transpose::kYes;
  const char* name = side == Side::kA ? "A" : "B";
  MX_CHECK(rows >= 0 && columns >= 0) << "PackedGemmOperand::Pack: op(" << name
                                      << ") must have sizes >= 0, got " << rows << "x" << columns;
  const int64_t stored_width = transposed ? rows : columns;
  MX_CHECK(ld >= std::max<int64_t>(1, stored_width))
      << "PackedGemmOperand::Pack: ld must be >= " << std::max<int64_t>(1, stored_width)
      << " (the stored row width of " << name << (transposed ? "^T" : "") << "), got " << ld;
  MX_CHECK(x != nullptr || rows == 0 || columns == 0)
      << "PackedGemmOperand::Pack: " << name << " is null for a " << rows << "x" << columns
      << " operand";
  PackedGemmOperand packed;
  packed.side_ = side;
  packed.rows_ = rows;
  packed.columns_ = columns;
  // The panel axis (m of A, n of B) is padded to whole panels; k is cut as products cut it.
  const int64_t panel = side == Side::kA ? kMr : kNr;
  const int64_t extent = side == Side::kA ? rows : columns;
  const int64_t depth = side == Side::kA ? columns : rows;
  packed.padded_extent_ = RoundUp(extent, panel);
  const size_t floats = static_cast<size_t>(packed.padded_extent_ * depth);
  const size_t bytes = RoundUp(static_cast<int64_t>(std::max<size_t>(1, floats) * sizeof(float)),
                               static_cast<int64_t>(kBufferAlignment));
  void* memory = std::aligned_alloc(kBufferAlignment, bytes);
  if (memory == nullptr) throw std::bad_alloc();
  packed.panels_.reset(static_cast<float*>(memory));
  if (extent == 0 || depth == 0) return packed;
  const OperandView view{x, ld, transposed};
  const int64_t kc_max = DepthBlock(depth);
  for (int64_t pc = 0; pc < depth; pc += kc_max) {
    const int64_t kc = std::min(kc_max, depth - pc);
    float* block = packed.panels_.get() + pc * packed.padded_extent_;
    if (side == Side::kA) {
      PackA(view.Offset(0, pc), extent, kc, block);
    } else {
      PackB(view.Offset(pc, 0), kc, extent, block);
    }
  }
  return packed;
}

size_t PackedGemmOperand::bytes() const {
  const int64_t depth = side_ == Side::kA ? columns_ : rows_;
  return static_cast<size_t>(padded_extent_ * depth) * sizeof(float);
}

void PackedGemmOperand::Free::operator()(float* p) const { std::free(p); }

}  // namespace mxlite::cpu
