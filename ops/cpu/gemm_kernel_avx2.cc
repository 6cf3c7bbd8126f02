#include "ops/cpu/gemm_kernel_avx2.h"

#include "core/error.h"

#include "ops/cpu/avx2_panel.h"
#include "ops/cpu/avx512.h"

#include <algorithm>
#include <chrono>

#if MXLITE_HAS_AVX2_KERNEL
#include <immintrin.h>

namespace mxlite::cpu::detail {
namespace {

constexpr int kMr = kAvx2KernelRows;
constexpr int kNr = kAvx2KernelColumns;

// Which of the tile's 16 columns exist: lanes of the left and right half. A full tile has every
// lane; a partial one (the matrix's last columns) loads and stores only the lanes it has, so C and
// the column bias are never touched past the matrix edge.
struct TileColumns {
  __m256i left, right;
};

MXLITE_AVX2 inline TileColumns ColumnLanes(int columns) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return {_mm256_cmpgt_epi32(_mm256_set1_epi32(columns), lane),
          _mm256_cmpgt_epi32(_mm256_set1_epi32(columns - 8), lane)};
}

// The epilogue's per-tile constants in registers: the clamp bounds and the column biases.
struct TileEpilogue {
  const Epilogue<float>* epilogue;
  bool clamps;
  __m256 low, high, column_bias0, column_bias1;
};

MXLITE_AVX2 inline TileEpilogue LoadTileEpilogue(const Epilogue<float>& epilogue,
                                                 const TileColumns& lanes) {
  TileEpilogue tile;
  tile.epilogue = &epilogue;
  tile.clamps = epilogue.clamps();
  tile.low = _mm256_set1_ps(epilogue.low);
  tile.high = _mm256_set1_ps(epilogue.high);
  tile.column_bias0 = tile.column_bias1 = _mm256_setzero_ps();
  if (epilogue.column_bias != nullptr) {
    tile.column_bias0 = _mm256_maskload_ps(epilogue.column_bias, lanes.left);
    tile.column_bias1 = _mm256_maskload_ps(epilogue.column_bias + 8, lanes.right);
  }
  return tile;
}

// Loads or stores the tile's columns of one row of C (all 16, or the lanes that exist).
template <bool kPartial>
MXLITE_AVX2 inline __m256 LoadHalf(const float* c, __m256i lanes) {
  return kPartial ? _mm256_maskload_ps(c, lanes) : _mm256_loadu_ps(c);
}
template <bool kPartial>
MXLITE_AVX2 inline void StoreHalf(float* c, __m256i lanes, __m256 value) {
  // Masked stores cost several times a plain one on some CPUs (AMD Zen): full tiles avoid them.
  if (kPartial) {
    _mm256_maskstore_ps(c, lanes, value);
  } else {
    _mm256_storeu_ps(c, value);
  }
}

// Row r of the tile: c_row = epilogue(alpha * acc + beta * c_row), without reading C when
// beta == 0. Full and partial tiles share this arithmetic, so an element gets the same bits
// wherever the tile edges fall.
template <bool kPartial>
MXLITE_AVX2 inline void StoreRow(float* c, __m256 acc0, __m256 acc1, __m256 alpha, float beta,
                                 const TileEpilogue& tile, int r, const TileColumns& lanes) {
  acc0 = _mm256_mul_ps(acc0, alpha);
  acc1 = _mm256_mul_ps(acc1, alpha);
  if (beta == 0.0f) {
    // Nothing; C is write-only.
  } else if (beta == 1.0f) {
    acc0 = _mm256_add_ps(acc0, LoadHalf<kPartial>(c, lanes.left));
    acc1 = _mm256_add_ps(acc1, LoadHalf<kPartial>(c + 8, lanes.right));
  } else {
    const __m256 beta_v = _mm256_set1_ps(beta);
    acc0 = _mm256_fmadd_ps(beta_v, LoadHalf<kPartial>(c, lanes.left), acc0);
    acc1 = _mm256_fmadd_ps(beta_v, LoadHalf<kPartial>(c + 8, lanes.right), acc1);
  }
  const Epilogue<float>& epilogue = *tile.epilogue;
  if (epilogue.row_bias != nullptr) {
    const __m256 bias = _mm256_set1_ps(epilogue.row_bias[r]);
    acc0 = _mm256_add_ps(acc0, bias);
    acc1 = _mm256_add_ps(acc1, bias);
  }
  if (epilogue.column_bias != nullptr) {
    acc0 = _mm256_add_ps(acc0, tile.column_bias0);
    acc1 = _mm256_add_ps(acc1, tile.column_bias1);
  }
  if (epilogue.residual != nullptr) {
    const float* residual = epilogue.residual + r * epilogue.residual_stride;
    acc0 = _mm256_add_ps(acc0, LoadHalf<kPartial>(residual, lanes.left));
    acc1 = _mm256_add_ps(acc1, LoadHalf<kPartial>(residual + 8, lanes.right));
  }
  if (tile.clamps) {  // bound first: max/min return their second operand when one is NaN
    acc0 = _mm256_min_ps(tile.high, _mm256_max_ps(tile.low, acc0));
    acc1 = _mm256_min_ps(tile.high, _mm256_max_ps(tile.low, acc1));
  }
  StoreHalf<kPartial>(c, lanes.left, acc0);
  StoreHalf<kPartial>(c + 8, lanes.right, acc1);
}

// Stores rows [0, rows) of a 6 x 16 accumulator tile (row-major in `tile`) into C.
MXLITE_AVX2 inline void StoreTile(const float* tile, float* c, int64_t ldc, int rows, int columns,
                                  float alpha, float beta, const Epilogue<float>& epilogue) {
  const TileColumns lanes = ColumnLanes(columns);
  const __m256 alpha_v = _mm256_set1_ps(alpha);
  const TileEpilogue tile_epilogue = LoadTileEpilogue(epilogue, lanes);
  for (int r = 0; r < rows; ++r) {
    const __m256 acc0 = _mm256_load_ps(tile + r * kNr), acc1 = _mm256_load_ps(tile + r * kNr + 8);
    if (columns == kNr) {
      StoreRow<false>(c + r * ldc, acc0, acc1, alpha_v, beta, tile_epilogue, r, lanes);
    } else {
      StoreRow<true>(c + r * ldc, acc0, acc1, alpha_v, beta, tile_epilogue, r, lanes);
    }
  }
}

// Tiles of at most 8 columns (the last panel of a matrix whose width is 1-8 past a multiple of 16,
// e.g. 49 or 196 output pixels, or 24 output channels) use only the left half of the B panel:
// half the FMAs of a full tile, where the full kernel would multiply zeros. kTiles = 2 runs row
// tiles i and i + 6 of the panel together: twelve independent accumulators instead of six, for one
// B load and twelve broadcasts per k step (the 144 -> 24 projection at 56x56, 3-4% faster). A's
// value of row r at step p is first[r * row_stride + p * step_stride] (second[...] for the second
// tile's rows): a packed panel (1, kMr) or rows read in place (lda, 1). Each lane sums its
// products in the same order as the full kernels (one FMA per k step), so a column gets the same
// bits in either. The tiles' right halves are zeroed (StoreTile reads them, stores none of them).
template <int kTiles>
MXLITE_AVX2 void NarrowTiles(int64_t kc, const float* first, const float* second,
                             int64_t row_stride, int64_t step_stride, const float* b,
                             float* first_tile, float* second_tile) {
  static_assert(kTiles == 1 || kTiles == 2);
  const int64_t s1 = row_stride, s2 = 2 * row_stride, s3 = 3 * row_stride, s4 = 4 * row_stride,
                s5 = 5 * row_stride;
  // Named accumulators: with an array GCC stores them back to the stack on every step.
  __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0, acc4 = acc0,
         acc5 = acc0, acc6 = acc0, acc7 = acc0, acc8 = acc0, acc9 = acc0, acc10 = acc0,
         acc11 = acc0;
  for (int64_t p = 0; p < kc; ++p, b += kNr, first += step_stride) {
    const __m256 b_step = _mm256_load_ps(b);
    acc0 = _mm256_fmadd_ps(b_step, _mm256_broadcast_ss(first), acc0);
    acc1 = _mm256_fmadd_ps(b_step, _mm256_broadcast_ss(first + s1), acc1);
    acc2 = _mm256_fmadd_ps(b_step, _mm256_broadcast_ss(first + s2), acc2);
    acc3 = _mm256_fmadd_ps(b_step, _mm256_broadcast_ss(first + s3), acc3);
    acc4 = _mm256_fmadd_ps(b_step, _mm256_broadcast_ss(first + s4), acc4);
    acc5 = _mm256_fmadd_ps(b_step, _mm256_broadcast_ss(first + s5), acc5);
    if constexpr (kTiles == 2) {
      acc6 = _mm256_fmadd_ps(b_step, _mm256_broadcast_ss(second), acc6);
      acc7 = _mm256_fmadd_ps(b_step, _mm256_broadcast_ss(second + s1), acc7);
      acc8 = _mm256_fmadd_ps(b_step, _mm256_broadcast_ss(second + s2), acc8);
      acc9 = _mm256_fmadd_ps(b_step, _mm256_broadcast_ss(second + s3), acc9);
      acc10 = _mm256_fmadd_ps(b_step, _mm256_broadcast_ss(second + s4), acc10);
      acc11 = _mm256_fmadd_ps(b_step, _mm256_broadcast_ss(second + s5), acc11);
      second += step_stride;
    }
  }
  _mm256_store_ps(first_tile + 0 * kNr, acc0);
  _mm256_store_ps(first_tile + 1 * kNr, acc1);
  _mm256_store_ps(first_tile + 2 * kNr, acc2);
  _mm256_store_ps(first_tile + 3 * kNr, acc3);
  _mm256_store_ps(first_tile + 4 * kNr, acc4);
  _mm256_store_ps(first_tile + 5 * kNr, acc5);
  for (int r = 0; r < kMr; ++r) _mm256_store_ps(first_tile + r * kNr + 8, _mm256_setzero_ps());
  if constexpr (kTiles == 2) {
    _mm256_store_ps(second_tile + 0 * kNr, acc6);
    _mm256_store_ps(second_tile + 1 * kNr, acc7);
    _mm256_store_ps(second_tile + 2 * kNr, acc8);
    _mm256_store_ps(second_tile + 3 * kNr, acc9);
    _mm256_store_ps(second_tile + 4 * kNr, acc10);
    _mm256_store_ps(second_tile + 5 * kNr, acc11);
    for (int r = 0; r < kMr; ++r) _mm256_store_ps(second_tile + r * kNr + 8, _mm256_setzero_ps());
  }
}

// One narrow tile.
MXLITE_AVX2 void NarrowTile(int64_t kc, const float* a, int64_t row_stride, int64_t step_stride,
                            const float* b, float* tile) {
  NarrowTiles<1>(kc, a, nullptr, row_stride, step_stride, b, tile, nullptr);
}

// Tiles of fewer than 6 rows (the last row tile of a matrix whose height is not a multiple of 6:
// 49 output pixels at 7x7 leave one row) multiply only the rows they have: 2 x kRows FMAs per k
// step where the full kernel would spend 12 on zero rows (one row: about a quarter of a full
// tile's time, bound by its three loads per step). Each element is summed in the same order as by
// the full kernel (one FMA per k step), so it gets the same bits. Named accumulators, as in
// NarrowTiles; rows past kRows are left as they are in `tile` (StoreTile reads only kRows rows).
template <int kRows>
MXLITE_AVX2 void ShortTile(int64_t kc, const float* a, const float* b, float* tile) {
  static_assert(kRows >= 1 && kRows < kMr);
  __m256 acc00 = _mm256_setzero_ps(), acc01 = acc00, acc10 = acc00, acc11 = acc00, acc20 = acc00,
         acc21 = acc00, acc30 = acc00, acc31 = acc00, acc40 = acc00, acc41 = acc00;
  for (int64_t p = 0; p < kc; ++p, a += kMr, b += kNr) {
    const __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
    __m256 a_value = _mm256_broadcast_ss(a + 0);
    acc00 = _mm256_fmadd_ps(b0, a_value, acc00);
    acc01 = _mm256_fmadd_ps(b1, a_value, acc01);
    if constexpr (kRows > 1) {
      a_value = _mm256_broadcast_ss(a + 1);
      acc10 = _mm256_fmadd_ps(b0, a_value, acc10);
      acc11 = _mm256_fmadd_ps(b1, a_value, acc11);
    }
    if constexpr (kRows > 2) {
      a_value = _mm256_broadcast_ss(a + 2);
      acc20 = _mm256_fmadd_ps(b0, a_value, acc20);
      acc21 = _mm256_fmadd_ps(b1, a_value, acc21);
    }
    if constexpr (kRows > 3) {
      a_value = _mm256_broadcast_ss(a + 3);
      acc30 = _mm256_fmadd_ps(b0, a_value, acc30);
      acc31 = _mm256_fmadd_ps(b1, a_value, acc31);
    }
    if constexpr (kRows > 4) {
      a_value = _mm256_broadcast_ss(a + 4);
      acc40 = _mm256_fmadd_ps(b0, a_value, acc40);
      acc41 = _mm256_fmadd_ps(b1, a_value, acc41);
    }
  }
  const __m256 rows[][2] = {
      {acc00, acc01}, {acc10, acc11}, {acc20, acc21}, {acc30, acc31}, {acc40, acc41}};
  for (int r = 0; r < kRows; ++r) {
    _mm256_store_ps(tile + r * kNr, rows[r][0]);
    _mm256_store_ps(tile + r * kNr + 8, rows[r][1]);
  }
}

// The tile of rows < kMr rows through ShortTile<rows>.
MXLITE_AVX2 void ShortTileOfRows(int rows, int64_t kc, const float* a, const float* b,
                                 float* tile) {
  switch (rows) {
    case 1:
      return ShortTile<1>(kc, a, b, tile);
    case 2:
      return ShortTile<2>(kc, a, b, tile);
    case 3:
      return ShortTile<3>(kc, a, b, tile);
    case 4:
      return ShortTile<4>(kc, a, b, tile);
    default:
      return ShortTile<5>(kc, a, b, tile);
  }
}

// Both micro-kernels' assembly starts by zeroing the 12 accumulators (ymm0-11) and ends by
// storing them, row-major 6 x 16, to %[tile].
#define MXLITE_ZERO_ACCUMULATORS                                   \
  "vxorps %%ymm0, %%ymm0, %%ymm0\n\t"                             \
  "vxorps %%ymm1, %%ymm1, %%ymm1\n\t"                             \
  "vxorps %%ymm2, %%ymm2, %%ymm2\n\t"                             \
  "vxorps %%ymm3, %%ymm3, %%ymm3\n\t"                             \
  "vxorps %%ymm4, %%ymm4, %%ymm4\n\t"                             \
  "vxorps %%ymm5, %%ymm5, %%ymm5\n\t"                             \
  "vxorps %%ymm6, %%ymm6, %%ymm6\n\t"                             \
  "vxorps %%ymm7, %%ymm7, %%ymm7\n\t"                             \
  "vxorps %%ymm8, %%ymm8, %%ymm8\n\t"                             \
  "vxorps %%ymm9, %%ymm9, %%ymm9\n\t"                             \
  "vxorps %%ymm10, %%ymm10, %%ymm10\n\t"                          \
  "vxorps %%ymm11, %%ymm11, %%ymm11\n\t"
#define MXLITE_STORE_ACCUMULATORS                                  \
  "vmovaps %%ymm0, 0(%[tile])\n\t"                                \
  "vmovaps %%ymm1, 32(%[tile])\n\t"                               \
  "vmovaps %%ymm2, 64(%[tile])\n\t"                               \
  "vmovaps %%ymm3, 96(%[tile])\n\t"                               \
  "vmovaps %%ymm4, 128(%[tile])\n\t"                              \
  "vmovaps %%ymm5, 160(%[tile])\n\t"                              \
  "vmovaps %%ymm6, 192(%[tile])\n\t"                              \
  "vmovaps %%ymm7, 224(%[tile])\n\t"                              \
  "vmovaps %%ymm8, 256(%[tile])\n\t"                              \
  "vmovaps %%ymm9, 288(%[tile])\n\t"                              \
  "vmovaps %%ymm10, 320(%[tile])\n\t"                             \
  "vmovaps %%ymm11, 352(%[tile])\n\t"

}  // namespace

MXLITE_AVX2 void SgemmMicroKernelAvx2Fma(int64_t kc, const float* a_panel, const float* b_panel,
                                         float* c, int64_t ldc, int rows, int columns, float alpha,
                                         float beta, const Epilogue<float>& epilogue) {
  if (columns <= kNr / 2 || rows < kMr) {
    alignas(32) float tile[kMr * kNr];
    if (columns <= kNr / 2) {
      NarrowTile(kc, a_panel, /*row_stride=*/1, /*step_stride=*/kMr, b_panel, tile);
    } else {
      ShortTileOfRows(rows, kc, a_panel, b_panel, tile);
    }
    StoreTile(tile, c, ldc, rows, columns, alpha, beta, epilogue);
    return;
  }
  // The C tile is needed right after the loop; start fetching it now.
  for (int r = 0; r < rows; ++r) {
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + kNr - 1), _MM_HINT_T0);
  }

  // The loop is assembly: it needs 15 of the 16 ymm registers (12 accumulators, 2 B vectors, a
  // broadcast A value), and compilers spill one of them to the stack inside the loop (~10% here).
  // Register map: ymm(2r + h) accumulates row r, columns [8h, 8h + 8); ymm12-13 hold a B step;
  // ymm14-15 broadcast A values. The accumulators end in `tile`, row-major 6 x 16.
  alignas(32) float tile[kMr * kNr];
  const float* a = a_panel;
  const float* b = b_panel;
  int64_t unrolled_steps = kc / 4;
  int64_t single_steps = kc % 4;
  __asm__ volatile(
      MXLITE_ZERO_ACCUMULATORS
      "test %[unrolled], %[unrolled]\n\t"
      "jz 2f\n\t"
      ".p2align 5\n"
      "1:\n\t"
      // The B panel stays in L1 across the micro-tiles of a macro-kernel; the A panel streams
      // from L2, so fetch it a few iterations ahead.
      "prefetcht0 384(%[a])\n\t"
      "vmovaps 0(%[b]), %%ymm12\n\t"
      "vmovaps 32(%[b]), %%ymm13\n\t"
      "vbroadcastss 0(%[a]), %%ymm14\n\t"
      "vbroadcastss 4(%[a]), %%ymm15\n\t"
      "vfmadd231ps %%ymm12, %%ymm14, %%ymm0\n\t"
      "vfmadd231ps %%ymm13, %%ymm14, %%ymm1\n\t"
      "vfmadd231ps %%ymm12, %%ymm15, %%ymm2\n\t"
      "vfmadd231ps %%ymm13, %%ymm15, %%ymm3\n\t"
      "vbroadcastss 8(%[a]), %%ymm14\n\t"
      "vbroadcastss 12(%[a]), %%ymm15\n\t"
      "vfmadd231ps %%ymm12, %%ymm14, %%ymm4\n\t"
      "vfmadd231ps %%ymm13, %%ymm14, %%ymm5\n\t"
      "vfmadd231ps %%ymm12, %%ymm15, %%ymm6\n\t"
      "vfmadd231ps %%ymm13, %%ymm15, %%ymm7\n\t"
      "vbroadcastss 16(%[a]), %%ymm14\n\t"
      "vbroadcastss 20(%[a]), %%ymm15\n\t"
      "vfmadd231ps %%ymm12, %%ymm14, %%ymm8\n\t"
      "vfmadd231ps %%ymm13, %%ymm14, %%ymm9\n\t"
      "vfmadd231ps %%ymm12, %%ymm15, %%ymm10\n\t"
      "vfmadd231ps %%ymm13, %%ymm15, %%ymm11\n\t"
      "vmovaps 64(%[b]), %%ymm12\n\t"
      "vmovaps 96(%[b]), %%ymm13\n\t"
      "vbroadcastss 24(%[a]), %%ymm14\n\t"
      "vbroadcastss 28(%[a]), %%ymm15\n\t"
      "vfmadd231ps %%ymm12, %%ymm14, %%ymm0\n\t"
      "vfmadd231ps %%ymm13, %%ymm14, %%ymm1\n\t"
      "vfmadd231ps %%ymm12, %%ymm15, %%ymm2\n\t"
      "vfmadd231ps %%ymm13, %%ymm15, %%ymm3\n\t"
      "vbroadcastss 32(%[a]), %%ymm14\n\t"
      "vbroadcastss 36(%[a]), %%ymm15\n\t"
      "vfmadd231ps %%ymm12, %%ymm14, %%ymm4\n\t"
      "vfmadd231ps %%ymm13, %%ymm14, %%ymm5\n\t"
      "vfmadd231ps %%ymm12, %%ymm15, %%ymm6\n\t"
      "vfmadd231ps %%ymm13, %%ymm15, %%ymm7\n\t"
      "vbroadcastss 40(%[a]), %%ymm14\n\t"
      "vbroadcastss 44(%[a]), %%ymm15\n\t"
      "vfmadd231ps %%ymm12, %%ymm14, %%ymm8\n\t"
      "vfmadd231ps %%ymm13, %%ymm14, %%ymm9\n\t"
      "vfmadd231ps %%ymm12, %%ymm15, %%ymm10\n\t"
      "vfmadd231ps %%ymm13, %%ymm15, %%ymm11\n\t"
      "vmovaps 128(%[b]), %%ymm12\n\t"
      "vmovaps 160(%[b]), %%ymm13\n\t"
      "vbroadcastss 48(%[a]), %%ymm14\n\t"
      "vbroadcastss 52(%[a]), %%ymm15\n\t"
      "vfmadd231ps %%ymm12, %%ymm14, %%ymm0\n\t"
      "vfmadd231ps %%ymm13, %%ymm14, %%ymm1\n\t"
      "vfmadd231ps %%ymm12, %%ymm15, %%ymm2\n\t"
      "vfmadd231ps %%ymm13, %%ymm15, %%ymm3\n\t"
      "vbroadcastss 56(%[a]), %%ymm14\n\t"
      "vbroadcastss 60(%[a]), %%ymm15\n\t"
      "vfmadd231ps %%ymm12, %%ymm14, %%ymm4\n\t"
      "vfmadd231ps %%ymm13, %%ymm14, %%ymm5\n\t"
      "vfmadd231ps %%ymm12, %%ymm15, %%ymm6\n\t"
      "vfmadd231ps %%ymm13, %%ymm15, %%ymm7\n\t"
      "vbroadcastss 64(%[a]), %%ymm14\n\t"
      "vbroadcastss 68(%[a]), %%ymm15\n\t"
      "vfmadd231ps %%ymm12, %%ymm14, %%ymm8\n\t"
      "vfmadd231ps %%ymm13, %%ymm14, %%ymm9\n\t"
      "vfmadd231ps %%ymm12, %%ymm15, %%ymm10\n\t"
      "vfmadd231ps %%ymm13, %%ymm15, %%ymm11\n\t"
      "vmovaps 192(%[b]), %%ymm12\n\t"
      "vmovaps 224(%[b]), %%ymm13\n\t"
      "vbroadcastss 72(%[a]), %%ymm14\n\t"
      "vbroadcastss 76(%[a]), %%ymm15\n\t"
      "vfmadd231ps %%ymm12, %%ymm14, %%ymm0\n\t"
      "vfmadd231ps %%ymm13, %%ymm14, %%ymm1\n\t"
      "vfmadd231ps %%ymm12, %%ymm15, %%ymm2\n\t"
      "vfmadd231ps %%ymm13, %%ymm15, %%ymm3\n\t"
      "vbroadcastss 80(%[a]), %%ymm14\n\t"
      "vbroadcastss 84(%[a]), %%ymm15\n\t"
      "vfmadd231ps %%ymm12, %%ymm14, %%ymm4\n\t"
      "vfmadd231ps %%ymm13, %%ymm14, %%ymm5\n\t"
      "vfmadd231ps %%ymm12, %%ymm15, %%ymm6\n\t"
      "vfmadd231ps %%ymm13, %%ymm15, %%ymm7\n\t"
      "vbroadcastss 88(%[a]), %%ymm14\n\t"
      "vbroadcastss 92(%[a]), %%ymm15\n\t"
      "vfmadd231ps %%ymm12, %%ymm14, %%ymm8\n\t"
      "vfmadd231ps %%ymm13, %%ymm14, %%ymm9\n\t"
      "vfmadd231ps %%ymm12, %%ymm15, %%ymm10\n\t"
      "vfmadd231ps %%ymm13, %%ymm15, %%ymm11\n\t"
      "add $96, %[a]\n\t"
      "add $256, %[b]\n\t"
      "dec %[unrolled]\n\t"
      "jnz 1b\n"
      "2:\n\t"
      "test %[single], %[single]\n\t"
      "jz 4f\n"
      "3:\n\t"
      "vmovaps 0(%[b]), %%ymm12\n\t"
      "vmovaps 32(%[b]), %%ymm13\n\t"
      "vbroadcastss 0(%[a]), %%ymm14\n\t"
      "vbroadcastss 4(%[a]), %%ymm15\n\t"
      "vfmadd231ps %%ymm12, %%ymm14, %%ymm0\n\t"
      "vfmadd231ps %%ymm13, %%ymm14, %%ymm1\n\t"
      "vfmadd231ps %%ymm12, %%ymm15, %%ymm2\n\t"
      "vfmadd231ps %%ymm13, %%ymm15, %%ymm3\n\t"
      "vbroadcastss 8(%[a]), %%ymm14\n\t"
      "vbroadcastss 12(%[a]), %%ymm15\n\t"
      "vfmadd231ps %%ymm12, %%ymm14, %%ymm4\n\t"
      "vfmadd231ps %%ymm13, %%ymm14, %%ymm5\n\t"
      "vfmadd231ps %%ymm12, %%ymm15, %%ymm6\n\t"
      "vfmadd231ps %%ymm13, %%ymm15, %%ymm7\n\t"
      "vbroadcastss 16(%[a]), %%ymm14\n\t"
      "vbroadcastss 20(%[a]), %%ymm15\n\t"
      "vfmadd231ps %%ymm12, %%ymm14, %%ymm8\n\t"
      "vfmadd231ps %%ymm13, %%ymm14, %%ymm9\n\t"
      "vfmadd231ps %%ymm12, %%ymm15, %%ymm10\n\t"
      "vfmadd231ps %%ymm13, %%ymm15, %%ymm11\n\t"
      "add $24, %[a]\n\t"
      "add $64, %[b]\n\t"
      "dec %[single]\n\t"
      "jnz 3b\n"
      "4:\n\t"
      MXLITE_STORE_ACCUMULATORS
      : [a] "+r"(a), [b] "+r"(b), [unrolled] "+r"(unrolled_steps), [single] "+r"(single_steps)
      : [tile] "r"(tile)
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "cc", "memory");

  StoreTile(tile, c, ldc, rows, columns, alpha, beta, epilogue);
}

MXLITE_AVX2 void SgemmNarrowTilePairAvx2Fma(int64_t kc, const float* a_first, const float* a_second,
                                            int64_t row_stride, int64_t step_stride,
                                            const float* b_panel, float* c, int64_t ldc,
                                            int columns, float alpha, float beta,
                                            const Epilogue<float>& epilogue) {
  alignas(32) float first_tile[kMr * kNr];
  alignas(32) float second_tile[kMr * kNr];
  NarrowTiles<2>(kc, a_first, a_second, row_stride, step_stride, b_panel, first_tile, second_tile);
  StoreTile(first_tile, c, ldc, kMr, columns, alpha, beta, epilogue);
  StoreTile(second_tile, c + kMr * ldc, ldc, kMr, columns, alpha, beta,
            epilogue.empty() ? epilogue : epilogue.Offset(kMr, 0));
}

namespace {

// Stores rows of 16 columns straight from AVX-512 accumulators: the AVX2 tiles' arithmetic
// (StoreRow: alpha, beta, row bias, column bias, residual, clamp, in that order) on one 512-bit
// register per row, so an element gets the same bits, without going through a tile in memory
// (a 512-bit store read back as two 256-bit halves waits for the store to retire: the
// round trip cost a 12 x 32 block as much as 40 of its k steps).
class WideRowStore {
 public:
  // For the block of C whose first column `epilogue` is offset to; `columns` (1..16) exist.
  // Keeps a reference to `epilogue`: no temporary.
  WideRowStore(Epilogue<float>&&, int, float, float) = delete;
  MXLITE_AVX512 WideRowStore(const Epilogue<float>& epilogue, int columns, float alpha, float beta)
      : epilogue_(epilogue),
        lanes_(static_cast<__mmask16>((1u << columns) - 1u)),
        beta_(beta),
        clamps_(epilogue.clamps()),
        alpha_(_mm512_set1_ps(alpha)),
        low_(_mm512_set1_ps(epilogue.low)),
        high_(_mm512_set1_ps(epilogue.high)),
        column_bias_(epilogue.column_bias != nullptr
                         ? _mm512_maskz_loadu_ps(lanes_, epilogue.column_bias)
                         : _mm512_setzero_ps()) {}

  // Row r of the block (r counts from the epilogue's first row), at c_row.
  MXLITE_AVX512 void operator()(float* c_row, int64_t r, __m512 acc) const {
    const bool partial = lanes_ != 0xFFFF;
    acc = _mm512_mul_ps(acc, alpha_);
    if (beta_ == 0.0f) {
      // Nothing; C is write-only.
    } else if (beta_ == 1.0f) {
      acc = _mm512_add_ps(acc, Load(c_row, partial));
    } else {
      acc = _mm512_fmadd_ps(_mm512_set1_ps(beta_), Load(c_row, partial), acc);
    }
    if (epilogue_.row_bias != nullptr)
      acc = _mm512_add_ps(acc, _mm512_set1_ps(epilogue_.row_bias[r]));
    if (epilogue_.column_bias != nullptr) acc = _mm512_add_ps(acc, column_bias_);
    if (epilogue_.residual != nullptr) {
      acc = _mm512_add_ps(acc, Load(epilogue_.residual + r * epilogue_.residual_stride, partial));
    }
    if (clamps_) acc = Min16(high_, Max16(low_, acc));  // as StoreRow: NaN kept
    // Masked stores cost more than plain ones on some CPUs: full rows use plain ones.
    if (partial) {
      _mm512_mask_storeu_ps(c_row, lanes_, acc);
    } else {
      _mm512_storeu_ps(c_row, acc);
    }
  }

 private:
  MXLITE_AVX512 __m512 Load(const float* row, bool partial) const {
    return partial ? _mm512_maskz_loadu_ps(lanes_, row) : _mm512_loadu_ps(row);
  }

  const Epilogue<float>& epilogue_;
  __mmask16 lanes_;
  float beta_;
  bool clamps_;
  __m512 alpha_, low_, high_, column_bias_;
};

}  // namespace

// Two full tiles (rows i and i + 6) of a full panel, each row's 16 columns in one AVX-512
// register: twelve accumulators, one B load and twelve broadcasts per k step. On CPUs with two
// 512-bit FMA ports (Intel Xeon) this does twice the work per instruction of the AVX2 kernel; on
// Zen 4 (512-bit FMAs at the rate of two 256-bit ones) as much. Each element is summed in the
// same order as by the AVX2 kernels (one FMA per k step), so it gets the same bits; the tiles go
// out through the same store (alpha, beta, epilogue).
MXLITE_AVX512 void SgemmTilePairAvx512(int64_t kc, const float* first, const float* second,
                                       int64_t row_stride, int64_t step_stride, const float* b,
                                       float* c, int64_t ldc, int columns, float alpha,
                                       float beta, const Epilogue<float>& epilogue) {
  const int64_t s1 = row_stride, s2 = 2 * row_stride, s3 = 3 * row_stride, s4 = 4 * row_stride,
                s5 = 5 * row_stride;
  // Named accumulators, as in NarrowTiles.
  __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0, acc4 = acc0,
         acc5 = acc0, acc6 = acc0, acc7 = acc0, acc8 = acc0, acc9 = acc0, acc10 = acc0,
         acc11 = acc0;
  for (int64_t p = 0; p < kc; ++p, b += kNr, first += step_stride, second += step_stride) {
    const __m512 b_step = _mm512_loadu_ps(b);
    acc0 = _mm512_fmadd_ps(b_step, _mm512_set1_ps(first[0]), acc0);
    acc1 = _mm512_fmadd_ps(b_step, _mm512_set1_ps(first[s1]), acc1);
    acc2 = _mm512_fmadd_ps(b_step, _mm512_set1_ps(first[s2]), acc2);
    acc3 = _mm512_fmadd_ps(b_step, _mm512_set1_ps(first[s3]), acc3);
    acc4 = _mm512_fmadd_ps(b_step, _mm512_set1_ps(first[s4]), acc4);
    acc5 = _mm512_fmadd_ps(b_step, _mm512_set1_ps(first[s5]), acc5);
    acc6 = _mm512_fmadd_ps(b_step, _mm512_set1_ps(second[0]), acc6);
    acc7 = _mm512_fmadd_ps(b_step, _mm512_set1_ps(second[s1]), acc7);
    acc8 = _mm512_fmadd_ps(b_step, _mm512_set1_ps(second[s2]), acc8);
    acc9 = _mm512_fmadd_ps(b_step, _mm512_set1_ps(second[s3]), acc9);
    acc10 = _mm512_fmadd_ps(b_step, _mm512_set1_ps(second[s4]), acc10);
    acc11 = _mm512_fmadd_ps(b_step, _mm512_set1_ps(second[s5]), acc11);
  }
  const WideRowStore store(epilogue, columns, alpha, beta);
  store(c, 0, acc0);
  store(c + ldc, 1, acc1);
  store(c + 2 * ldc, 2, acc2);
  store(c + 3 * ldc, 3, acc3);
  store(c + 4 * ldc, 4, acc4);
  store(c + 5 * ldc, 5, acc5);
  store(c + 6 * ldc, 6, acc6);
  store(c + 7 * ldc, 7, acc7);
  store(c + 8 * ldc, 8, acc8);
  store(c + 9 * ldc, 9, acc9);
  store(c + 10 * ldc, 10, acc10);
  store(c + 11 * ldc, 11, acc11);
}

// Two full tiles (rows i and i + 6) of two adjacent panels (columns j and j + 16): 24
// accumulators, two B loads and twelve broadcasts per k step, against one load and twelve
// broadcasts per twelve FMAs in the pair kernel, so the loads stop limiting the FMA ports. Same
// order of sums per element (same bits); the four tiles go out through the same store.
MXLITE_AVX512 void SgemmTileQuadAvx512(int64_t kc, const float* first, const float* second,
                                       int64_t row_stride, int64_t step_stride,
                                       const float* b_left, const float* b_right, float* c,
                                       int64_t ldc, int right_columns, float alpha, float beta,
                                       const Epilogue<float>& epilogue) {
  const int64_t s1 = row_stride, s2 = 2 * row_stride, s3 = 3 * row_stride, s4 = 4 * row_stride,
                s5 = 5 * row_stride;
  // Named accumulators (l = left panel, r = right panel; 0-5 first tile, 6-11 second).
  __m512 l0 = _mm512_setzero_ps(), l1 = l0, l2 = l0, l3 = l0, l4 = l0, l5 = l0, l6 = l0, l7 = l0,
         l8 = l0, l9 = l0, l10 = l0, l11 = l0;
  __m512 r0 = l0, r1 = l0, r2 = l0, r3 = l0, r4 = l0, r5 = l0, r6 = l0, r7 = l0, r8 = l0, r9 = l0,
         r10 = l0, r11 = l0;
  for (int64_t p = 0; p < kc;
       ++p, b_left += kNr, b_right += kNr, first += step_stride, second += step_stride) {
    const __m512 bl = _mm512_loadu_ps(b_left), br = _mm512_loadu_ps(b_right);
    __m512 a = _mm512_set1_ps(first[0]);
    l0 = _mm512_fmadd_ps(bl, a, l0), r0 = _mm512_fmadd_ps(br, a, r0);
    a = _mm512_set1_ps(first[s1]);
    l1 = _mm512_fmadd_ps(bl, a, l1), r1 = _mm512_fmadd_ps(br, a, r1);
    a = _mm512_set1_ps(first[s2]);
    l2 = _mm512_fmadd_ps(bl, a, l2), r2 = _mm512_fmadd_ps(br, a, r2);
    a = _mm512_set1_ps(first[s3]);
    l3 = _mm512_fmadd_ps(bl, a, l3), r3 = _mm512_fmadd_ps(br, a, r3);
    a = _mm512_set1_ps(first[s4]);
    l4 = _mm512_fmadd_ps(bl, a, l4), r4 = _mm512_fmadd_ps(br, a, r4);
    a = _mm512_set1_ps(first[s5]);
    l5 = _mm512_fmadd_ps(bl, a, l5), r5 = _mm512_fmadd_ps(br, a, r5);
    a = _mm512_set1_ps(second[0]);
    l6 = _mm512_fmadd_ps(bl, a, l6), r6 = _mm512_fmadd_ps(br, a, r6);
    a = _mm512_set1_ps(second[s1]);
    l7 = _mm512_fmadd_ps(bl, a, l7), r7 = _mm512_fmadd_ps(br, a, r7);
    a = _mm512_set1_ps(second[s2]);
    l8 = _mm512_fmadd_ps(bl, a, l8), r8 = _mm512_fmadd_ps(br, a, r8);
    a = _mm512_set1_ps(second[s3]);
    l9 = _mm512_fmadd_ps(bl, a, l9), r9 = _mm512_fmadd_ps(br, a, r9);
    a = _mm512_set1_ps(second[s4]);
    l10 = _mm512_fmadd_ps(bl, a, l10), r10 = _mm512_fmadd_ps(br, a, r10);
    a = _mm512_set1_ps(second[s5]);
    l11 = _mm512_fmadd_ps(bl, a, l11), r11 = _mm512_fmadd_ps(br, a, r11);
  }
  const WideRowStore left(epilogue, kNr, alpha, beta);
  const Epilogue<float> right_epilogue = epilogue.empty() ? epilogue : epilogue.Offset(0, kNr);
  const WideRowStore right(right_epilogue, right_columns, alpha, beta);
  float* const c_right = c + kNr;
  left(c, 0, l0), right(c_right, 0, r0);
  left(c + ldc, 1, l1), right(c_right + ldc, 1, r1);
  left(c + 2 * ldc, 2, l2), right(c_right + 2 * ldc, 2, r2);
  left(c + 3 * ldc, 3, l3), right(c_right + 3 * ldc, 3, r3);
  left(c + 4 * ldc, 4, l4), right(c_right + 4 * ldc, 4, r4);
  left(c + 5 * ldc, 5, l5), right(c_right + 5 * ldc, 5, r5);
  left(c + 6 * ldc, 6, l6), right(c_right + 6 * ldc, 6, r6);
  left(c + 7 * ldc, 7, l7), right(c_right + 7 * ldc, 7, r7);
  left(c + 8 * ldc, 8, l8), right(c_right + 8 * ldc, 8, r8);
  left(c + 9 * ldc, 9, l9), right(c_right + 9 * ldc, 9, r9);
  left(c + 10 * ldc, 10, l10), right(c_right + 10 * ldc, 10, r10);
  left(c + 11 * ldc, 11, l11), right(c_right + 11 * ldc, 11, r11);
}

namespace {

// One tile of kRows (<= MR) rows of two adjacent panels, stored into C as it is summed. The loops
// over rows unroll, so the accumulators stay in registers.
template <int kRows>
MXLITE_AVX512 void ShortTileOfPanelPair(int64_t kc, const float* a, int64_t row_stride,
                                        int64_t step_stride, const float* b_left,
                                        const float* b_right, float* c, int64_t ldc,
                                        const WideRowStore& left_store,
                                        const WideRowStore& right_store) {
  __m512 left[kRows], right[kRows];
#pragma GCC unroll 6
  for (int r = 0; r < kRows; ++r) left[r] = right[r] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; ++p, b_left += kNr, b_right += kNr, a += step_stride) {
    const __m512 bl = _mm512_loadu_ps(b_left), br = _mm512_loadu_ps(b_right);
#pragma GCC unroll 6
    for (int r = 0; r < kRows; ++r) {
      const __m512 x = _mm512_set1_ps(a[r * row_stride]);
      left[r] = _mm512_fmadd_ps(bl, x, left[r]);
      right[r] = _mm512_fmadd_ps(br, x, right[r]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < kRows; ++r) {
    left_store(c + r * ldc, r, left[r]);
    right_store(c + r * ldc + kNr, r, right[r]);
  }
}

}  // namespace

MXLITE_AVX512 void SgemmTileOfPanelPairAvx512(int64_t kc, const float* a, int64_t row_stride,
                                              int64_t step_stride, int rows,
                                              const float* b_left, const float* b_right,
                                              float* c, int64_t ldc, int right_columns,
                                              float alpha, float beta,
                                              const Epilogue<float>& epilogue) {
  const WideRowStore left(epilogue, kNr, alpha, beta);
  const Epilogue<float> right_epilogue = epilogue.empty() ? epilogue : epilogue.Offset(0, kNr);
  const WideRowStore right(right_epilogue, right_columns, alpha, beta);
  using ShortTile = void (*)(int64_t, const float*, int64_t, int64_t, const float*, const float*,
                             float*, int64_t, const WideRowStore&, const WideRowStore&);
  static_assert(kMr == 6, "one short tile per row count");
  static constexpr ShortTile kShortTiles[kMr] = {ShortTileOfPanelPair<1>, ShortTileOfPanelPair<2>,
                                                 ShortTileOfPanelPair<3>, ShortTileOfPanelPair<4>,
                                                 ShortTileOfPanelPair<5>, ShortTileOfPanelPair<6>};
  MX_CHECK(rows >= 1 && rows <= kMr) << "SgemmTileOfPanelPairAvx512: rows " << rows;
  kShortTiles[rows - 1](kc, a, row_stride, step_stride, b_left, b_right, c, ldc, left, right);
}

namespace {

// Seconds for `rounds` steps of twelve independent FMA chains, in 512-bit and in 256-bit
// registers (written twice: a target attribute does not reach a template or a lambda). The sums
// go to a volatile so that the loops stay.
MXLITE_AVX512 double Fma512Seconds(int64_t rounds) {
  const __m512 start = _mm512_set1_ps(0.999f), m = start;
  __m512 a0 = start, a1 = start, a2 = start, a3 = start, a4 = start, a5 = start, a6 = start,
         a7 = start, a8 = start, a9 = start, a10 = start, a11 = start;
  const auto begin = std::chrono::steady_clock::now();
  for (int64_t round = 0; round < rounds; ++round) {
    a0 = _mm512_fmadd_ps(a0, m, start), a1 = _mm512_fmadd_ps(a1, m, start);
    a2 = _mm512_fmadd_ps(a2, m, start), a3 = _mm512_fmadd_ps(a3, m, start);
    a4 = _mm512_fmadd_ps(a4, m, start), a5 = _mm512_fmadd_ps(a5, m, start);
    a6 = _mm512_fmadd_ps(a6, m, start), a7 = _mm512_fmadd_ps(a7, m, start);
    a8 = _mm512_fmadd_ps(a8, m, start), a9 = _mm512_fmadd_ps(a9, m, start);
    a10 = _mm512_fmadd_ps(a10, m, start), a11 = _mm512_fmadd_ps(a11, m, start);
  }
  const auto end = std::chrono::steady_clock::now();
  const __m512 sum = _mm512_add_ps(
      _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                    _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7))),
      _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
  // Stored rather than reduced: GCC 12's _mm512_reduce_add_ps warns inside its own header.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  volatile float sink = lanes[0] + lanes[15];
  (void)sink;
  return std::chrono::duration<double>(end - begin).count();
}

MXLITE_AVX2 double Fma256Seconds(int64_t rounds) {
  const __m256 start = _mm256_set1_ps(0.999f), m = start;
  __m256 a0 = start, a1 = start, a2 = start, a3 = start, a4 = start, a5 = start, a6 = start,
         a7 = start, a8 = start, a9 = start, a10 = start, a11 = start;
  const auto begin = std::chrono::steady_clock::now();
  for (int64_t round = 0; round < rounds; ++round) {
    a0 = _mm256_fmadd_ps(a0, m, start), a1 = _mm256_fmadd_ps(a1, m, start);
    a2 = _mm256_fmadd_ps(a2, m, start), a3 = _mm256_fmadd_ps(a3, m, start);
    a4 = _mm256_fmadd_ps(a4, m, start), a5 = _mm256_fmadd_ps(a5, m, start);
    a6 = _mm256_fmadd_ps(a6, m, start), a7 = _mm256_fmadd_ps(a7, m, start);
    a8 = _mm256_fmadd_ps(a8, m, start), a9 = _mm256_fmadd_ps(a9, m, start);
    a10 = _mm256_fmadd_ps(a10, m, start), a11 = _mm256_fmadd_ps(a11, m, start);
  }
  const auto end = std::chrono::steady_clock::now();
  const __m256 sum = _mm256_add_ps(
      _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                    _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7))),
      _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  volatile float sink = lanes[0];
  (void)sink;
  return std::chrono::duration<double>(end - begin).count();
}

}  // namespace

double Fma512To256Rate() {
  constexpr int64_t kRounds = 20000;  // 240,000 FMAs a run, tens of microseconds
  double best_512 = 1e9, best_256 = 1e9;
  for (int run = 0; run < 7; ++run) {  // interleaved: a slow moment weighs on both
    best_256 = std::min(best_256, Fma256Seconds(kRounds));
    best_512 = std::min(best_512, Fma512Seconds(kRounds));
  }
  return (16.0 / best_512) / (8.0 / best_256);
}

// One k step of the in-place kernel: B step `step` (two vectors at byte offset 64 * step of the
// panel), the six rows' element at byte offset 4 * step from their row pointers (rows 0-2 from
// %[a0], rows 3-5 from %[a3], %[lda] bytes apart).
#define MXLITE_IN_PLACE_STEP(b_offset, a_offset)                  \
  "vmovaps " #b_offset "(%[b]), %%ymm12\n\t"                     \
  "vmovaps 32+" #b_offset "(%[b]), %%ymm13\n\t"                  \
  "vbroadcastss " #a_offset "(%[a0]), %%ymm14\n\t"               \
  "vbroadcastss " #a_offset "(%[a0],%[lda],1), %%ymm15\n\t"      \
  "vfmadd231ps %%ymm12, %%ymm14, %%ymm0\n\t"                     \
  "vfmadd231ps %%ymm13, %%ymm14, %%ymm1\n\t"                     \
  "vfmadd231ps %%ymm12, %%ymm15, %%ymm2\n\t"                     \
  "vfmadd231ps %%ymm13, %%ymm15, %%ymm3\n\t"                     \
  "vbroadcastss " #a_offset "(%[a0],%[lda],2), %%ymm14\n\t"      \
  "vbroadcastss " #a_offset "(%[a3]), %%ymm15\n\t"               \
  "vfmadd231ps %%ymm12, %%ymm14, %%ymm4\n\t"                     \
  "vfmadd231ps %%ymm13, %%ymm14, %%ymm5\n\t"                     \
  "vfmadd231ps %%ymm12, %%ymm15, %%ymm6\n\t"                     \
  "vfmadd231ps %%ymm13, %%ymm15, %%ymm7\n\t"                     \
  "vbroadcastss " #a_offset "(%[a3],%[lda],1), %%ymm14\n\t"      \
  "vbroadcastss " #a_offset "(%[a3],%[lda],2), %%ymm15\n\t"      \
  "vfmadd231ps %%ymm12, %%ymm14, %%ymm8\n\t"                     \
  "vfmadd231ps %%ymm13, %%ymm14, %%ymm9\n\t"                     \
  "vfmadd231ps %%ymm12, %%ymm15, %%ymm10\n\t"                    \
  "vfmadd231ps %%ymm13, %%ymm15, %%ymm11\n\t"

// Four steps, then A's rows and the B panel moved past them.
#define MXLITE_IN_PLACE_FOUR_STEPS \
  MXLITE_IN_PLACE_STEP(0, 0)       \
  MXLITE_IN_PLACE_STEP(64, 4)      \
  MXLITE_IN_PLACE_STEP(128, 8)     \
  MXLITE_IN_PLACE_STEP(192, 12)    \
  "add $16, %[a0]\n\t"             \
  "add $16, %[a3]\n\t"             \
  "add $256, %[b]\n\t"

MXLITE_AVX2 void SgemmMicroKernelAvx2FmaRowsInPlace(int64_t kc, const float* a, int64_t lda,
                                                    const float* b_panel, float* c, int64_t ldc,
                                                    int columns, float alpha, float beta,
                                                    const Epilogue<float>& epilogue,
                                                    LinePrefetch prefetch) {
  if (columns <= kNr / 2) {
    alignas(32) float tile[kMr * kNr];
    NarrowTile(kc, a, /*row_stride=*/lda, /*step_stride=*/1, b_panel, tile);
    StoreTile(tile, c, ldc, kMr, columns, alpha, beta, epilogue);
    return;
  }
  for (int r = 0; r < kMr; ++r) {
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + kNr - 1), _MM_HINT_T0);
  }
  // Register map as in SgemmMicroKernelAvx2Fma; the A rows are addressed from two pointers and the
  // row stride, so the loop needs no more general registers than the packed one.
  alignas(32) float tile[kMr * kNr];
  const float* a0 = a;
  const float* a3 = a + 3 * lda;
  const float* b = b_panel;
  const int64_t lda_bytes = lda * static_cast<int64_t>(sizeof(float));
  int64_t unrolled_steps = kc / 4;
  int64_t single_steps = kc % 4;
  // The first `fetching` unrolled steps each fetch one line of `prefetch`.
  int64_t fetching = std::min(unrolled_steps, prefetch.lines);
  unrolled_steps -= fetching;
  const char* fetch = prefetch.first;
  __asm__ volatile(
      MXLITE_ZERO_ACCUMULATORS
      "test %[fetching], %[fetching]\n\t"
      "jz 5f\n\t"
      ".p2align 5\n"
      "6:\n\t"
      "prefetcht0 (%[fetch])\n\t"
      MXLITE_IN_PLACE_FOUR_STEPS
      "add $64, %[fetch]\n\t"
      "dec %[fetching]\n\t"
      "jnz 6b\n"
      "5:\n\t"
      "test %[unrolled], %[unrolled]\n\t"
      "jz 2f\n\t"
      ".p2align 5\n"
      "1:\n\t"
      MXLITE_IN_PLACE_FOUR_STEPS
      "dec %[unrolled]\n\t"
      "jnz 1b\n"
      "2:\n\t"
      "test %[single], %[single]\n\t"
      "jz 4f\n"
      "3:\n\t"
      MXLITE_IN_PLACE_STEP(0, 0)
      "add $4, %[a0]\n\t"
      "add $4, %[a3]\n\t"
      "add $64, %[b]\n\t"
      "dec %[single]\n\t"
      "jnz 3b\n"
      "4:\n\t"
      MXLITE_STORE_ACCUMULATORS
      : [a0] "+r"(a0), [a3] "+r"(a3), [b] "+r"(b), [unrolled] "+r"(unrolled_steps),
        [single] "+r"(single_steps), [fetching] "+r"(fetching), [fetch] "+r"(fetch)
      : [tile] "r"(tile), [lda] "r"(lda_bytes)
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "cc", "memory");
  StoreTile(tile, c, ldc, kMr, columns, alpha, beta, epilogue);
}

#undef MXLITE_IN_PLACE_FOUR_STEPS
#undef MXLITE_IN_PLACE_STEP
#undef MXLITE_ZERO_ACCUMULATORS
#undef MXLITE_STORE_ACCUMULATORS

MXLITE_AVX2 void PackRowPanelAvx2(const float* a, int64_t lda, int64_t depth, float* packed) {
  int64_t p = 0;
  // Each group stores 8 floats per step, 2 past the step's 6; the next step overwrites them, so
  // vector groups stop while a later step (vector or scalar) remains inside the panel.
  for (; p + 8 < depth; p += 8) {
    const __m256 r0 = _mm256_loadu_ps(a + p), r1 = _mm256_loadu_ps(a + lda + p),
                 r2 = _mm256_loadu_ps(a + 2 * lda + p), r3 = _mm256_loadu_ps(a + 3 * lda + p),
                 r4 = _mm256_loadu_ps(a + 4 * lda + p), r5 = _mm256_loadu_ps(a + 5 * lda + p);
    StoreRowsAsPanelSteps(r0, r1, r2, r3, r4, r5, packed + p * kMr);
  }
  for (; p < depth; ++p) {
    for (int r = 0; r < kMr; ++r) packed[p * kMr + r] = a[r * lda + p];
  }
}

MXLITE_AVX2 void PackColumnPanelAvx2(const float* b, int64_t ldb, int64_t depth, float* packed) {
  static_assert(kNr == 16, "two 8x8 transposes per 8 steps");
  int64_t p = 0;
  for (; p + 8 <= depth; p += 8) {
    for (int half = 0; half < 2; ++half) {
      const float* lines = b + half * 8 * ldb + p;
      __m256 r[8];
      for (int x = 0; x < 8; ++x) r[x] = _mm256_loadu_ps(lines + x * ldb);
      Transpose8x8(r);
      for (int step = 0; step < 8; ++step) {
        _mm256_storeu_ps(packed + (p + step) * kNr + half * 8, r[step]);
      }
    }
  }
  for (; p < depth; ++p) {
    for (int x = 0; x < kNr; ++x) packed[p * kNr + x] = b[x * ldb + p];
  }
}

MXLITE_AVX2 float DotAvx2(const float* x, const float* y, int64_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8), s1);
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 16), _mm256_loadu_ps(y + i + 16), s2);
    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 24), _mm256_loadu_ps(y + i + 24), s3);
  }
  for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), s0);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  float sum = 0.0f;
  for (float lane : lanes) sum += lane;
  for (; i < n; ++i) sum += x[i] * y[i];
  return sum;
}

MXLITE_AVX2 void Dot4Avx2(const float* x, const float* y, int64_t ld, int64_t n, float* out) {
  const float* y0 = y;
  const float* y1 = y + ld;
  const float* y2 = y + 2 * ld;
  const float* y3 = y + 3 * ld;
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  __m256 b0 = a0, b1 = a0, b2 = a0, b3 = a0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 x0 = _mm256_loadu_ps(x + i), x1 = _mm256_loadu_ps(x + i + 8);
    a0 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(y0 + i), a0);
    a1 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(y1 + i), a1);
    a2 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(y2 + i), a2);
    a3 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(y3 + i), a3);
    b0 = _mm256_fmadd_ps(x1, _mm256_loadu_ps(y0 + i + 8), b0);
    b1 = _mm256_fmadd_ps(x1, _mm256_loadu_ps(y1 + i + 8), b1);
    b2 = _mm256_fmadd_ps(x1, _mm256_loadu_ps(y2 + i + 8), b2);
    b3 = _mm256_fmadd_ps(x1, _mm256_loadu_ps(y3 + i + 8), b3);
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 x0 = _mm256_loadu_ps(x + i);
    a0 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(y0 + i), a0);
    a1 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(y1 + i), a1);
    a2 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(y2 + i), a2);
    a3 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(y3 + i), a3);
  }
  const __m256 sums[4] = {_mm256_add_ps(a0, b0), _mm256_add_ps(a1, b1), _mm256_add_ps(a2, b2),
                          _mm256_add_ps(a3, b3)};
  const float* rows[4] = {y0, y1, y2, y3};
  for (int r = 0; r < 4; ++r) {
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, sums[r]);
    float sum = 0.0f;
    for (float lane : lanes) sum += lane;
    for (int64_t t = i; t < n; ++t) sum += x[t] * rows[r][t];
    out[r] = sum;
  }
}

MXLITE_AVX2 void AxpyAvx2(float s, const float* row, float* acc, int64_t n) {
  const __m256 scale = _mm256_set1_ps(s);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(acc + i, _mm256_fmadd_ps(scale, _mm256_loadu_ps(row + i),
                                              _mm256_loadu_ps(acc + i)));
  }
  for (; i < n; ++i) acc[i] += s * row[i];
}

}  // namespace mxlite::cpu::detail

#endif  // MXLITE_HAS_AVX2_KERNEL
