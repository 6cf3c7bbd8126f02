// Sgemm against a naive double-precision reference: many shapes (tiny, odd, primes, tall and
// skinny, k = 0, crossing every cache block), all transposes, alpha/beta values, padded leading
// dimensions, both implementations, 1 and 2 threads.
#include "ops/cpu/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "ops/cpu/avx512.h"
#include "ops/cpu/parallel.h"

namespace mxlite::cpu {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

struct Shape {
  int64_t m, n, k;
};

struct GemmCase {
  Shape shape;
  Transpose trans_a = Transpose::kNo;
  Transpose trans_b = Transpose::kNo;
  float alpha = 1.0f;
  float beta = 0.0f;
  int64_t pad = 0;  // extra elements per stored row of A, B and C (never read, never written)
  // The epilogue (ops/cpu/epilogue.h): biases drawn at random when asked for, then the clamp.
  bool row_bias = false;
  bool column_bias = false;
  bool residual = false;  // a residual matrix (m x n, its own row stride) added before the clamp
  float low = -std::numeric_limits<float>::infinity();
  float high = std::numeric_limits<float>::infinity();

  std::string Describe() const {
    std::ostringstream out;
    out << "m=" << shape.m << " n=" << shape.n << " k=" << shape.k
        << " trans_a=" << (trans_a == Transpose::kYes)
        << " trans_b=" << (trans_b == Transpose::kYes) << " alpha=" << alpha << " beta=" << beta
        << " pad=" << pad << " row_bias=" << row_bias << " column_bias=" << column_bias
        << " residual=" << residual << " clamp=[" << low << ", " << high << "]";
    return out.str();
  }
};

// A row-major matrix stored with a padded stride; the padding holds NaN so reading it shows.
struct StoredMatrix {
  int64_t rows = 0, columns = 0, ld = 1;
  std::vector<float> data;

  StoredMatrix(int64_t rows_in, int64_t columns_in, int64_t pad, std::mt19937& rng)
      : rows(rows_in), columns(columns_in), ld(std::max<int64_t>(1, columns_in + pad)) {
    data.assign(std::max<int64_t>(1, rows * ld), kNaN);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < columns; ++j) data[i * ld + j] = dist(rng);
    }
  }
  float at(int64_t i, int64_t j) const { return data[i * ld + j]; }
};

// op(X)(i, j) of a stored matrix.
float OpAt(const StoredMatrix& x, Transpose trans, int64_t i, int64_t j) {
  return trans == Transpose::kNo ? x.at(i, j) : x.at(j, i);
}

// Runs one case with the current implementation and thread count; checks every element of C
// against the double reference within a bound proportional to k, and that C's padding is untouched.
// Returns C for comparisons between runs.
std::vector<float> RunAndCheck(const GemmCase& test, bool nan_in_c = false) {
  SCOPED_TRACE(test.Describe());
  const auto [m, n, k] = test.shape;
  std::mt19937 rng(static_cast<uint32_t>(m * 7919 + n * 104729 + k * 31 + test.pad));
  const bool ta = test.trans_a == Transpose::kYes, tb = test.trans_b == Transpose::kYes;
  const StoredMatrix a(ta ? k : m, ta ? m : k, test.pad, rng);
  const StoredMatrix b(tb ? n : k, tb ? k : n, test.pad, rng);
  StoredMatrix c(m, n, test.pad, rng);
  if (nan_in_c) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) c.data[i * c.ld + j] = kNaN;
    }
  }
  const StoredMatrix c_before = c;
  const StoredMatrix row_bias(1, m, 0, rng), column_bias(1, n, 0, rng);
  const StoredMatrix residual(m, n, test.pad + 3, rng);
  Epilogue<float> epilogue;
  if (test.residual) {
    epilogue.residual = residual.data.data();
    epilogue.residual_stride = residual.ld;
  }
  if (test.row_bias) epilogue.row_bias = row_bias.data.data();
  if (test.column_bias) epilogue.column_bias = column_bias.data.data();
  epilogue.low = test.low;
  epilogue.high = test.high;

  Sgemm(test.trans_a, test.trans_b, m, n, k, test.alpha, a.data.data(), a.ld, b.data.data(), b.ld,
        test.beta, c.data.data(), c.ld, epilogue);

  int failures = 0;
  for (int64_t i = 0; i < m && failures < 5; ++i) {
    for (int64_t j = 0; j < n && failures < 5; ++j) {
      double sum = 0.0, magnitude = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        const double product =
            static_cast<double>(OpAt(a, test.trans_a, i, p)) * OpAt(b, test.trans_b, p, j);
        sum += product;
        magnitude += std::abs(product);
      }
      double expected = test.alpha * sum;
      magnitude = std::abs(test.alpha) * magnitude;
      if (test.beta != 0.0f) {
        expected += static_cast<double>(test.beta) * c_before.at(i, j);
        magnitude += std::abs(test.beta * c_before.at(i, j));
      }
      if (test.row_bias) expected += row_bias.at(0, i), magnitude += std::abs(row_bias.at(0, i));
      if (test.column_bias) {
        expected += column_bias.at(0, j);
        magnitude += std::abs(column_bias.at(0, j));
      }
      if (test.residual) {
        expected += residual.at(i, j);
        magnitude += std::abs(residual.at(i, j));
      }
      expected = std::min(std::max(expected, static_cast<double>(test.low)),
                          static_cast<double>(test.high));
      const double tolerance = 1e-6 * static_cast<double>(k + 4) * (magnitude + 1e-30);
      const float actual = c.at(i, j);
      if (!(std::abs(actual - expected) <= tolerance)) {
        ADD_FAILURE() << "C(" << i << "," << j << ") = " << actual << ", expected " << expected
                      << " (tolerance " << tolerance << ")";
        ++failures;
      }
    }
  }
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = n; j < c.ld; ++j) {
      EXPECT_TRUE(std::isnan(c.at(i, j))) << "padding of C written at (" << i << "," << j << ")";
    }
  }
  std::vector<float> result;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) result.push_back(c.at(i, j));
  }
  return result;
}

// Every implementation this CPU can run; restores kAuto when it goes out of scope.
class GemmImplementations {
 public:
  GemmImplementations() {
    if (CpuSupportsAvx2Fma()) list_.push_back(GemmImplementation::kAvx2Fma);
    if (CpuSupportsAvx2Fma() && CpuSupportsAvx512f()) {
      list_.push_back(GemmImplementation::kAvx512);
    }
    list_.push_back(GemmImplementation::kEigen);
  }
  ~GemmImplementations() { SetGemmImplementation(GemmImplementation::kAuto); }
  const std::vector<GemmImplementation>& list() const { return list_; }

 private:
  std::vector<GemmImplementation> list_;
};

const char* Name(GemmImplementation implementation) {
  return implementation == GemmImplementation::kAvx2Fma  ? "avx2_fma"
         : implementation == GemmImplementation::kAvx512 ? "avx512"
                                                         : "eigen";
}

constexpr Transpose kBothTransposes[] = {Transpose::kNo, Transpose::kYes};

TEST(GemmTest, ManyShapesAllTransposes) {
  // Tiny, odd, primes, one row or column, and sizes just past the micro-tile (6x16) and the cache
  // blocks (k blocks of at most 1024; A blocks of 144 KiB: 144 rows at depth 256, 60 at 600;
  // A read in place at n <= 512 across k blocks, packed beyond).
  const Shape shapes[] = {{1, 1, 1},      {1, 1, 7},      {2, 3, 4},     {5, 7, 3},
                          {6, 16, 1},     {6, 16, 8},     {7, 17, 9},    {12, 32, 5},
                          {13, 31, 29},   {1, 53, 19},    {53, 1, 19},   {1, 64, 300},
                          {97, 101, 103}, {300, 3, 17},   {3, 300, 17},  {145, 40, 257},
                          {150, 33, 520}, {67, 40, 1031}, {61, 30, 600}, {13, 530, 1100}};
  GemmImplementations implementations;
  for (GemmImplementation implementation : implementations.list()) {
    SCOPED_TRACE(Name(implementation));
    SetGemmImplementation(implementation);
    for (const Shape& shape : shapes) {
      for (Transpose trans_a : kBothTransposes) {
        for (Transpose trans_b : kBothTransposes) {
          RunAndCheck({shape, trans_a, trans_b, 1.0f, 0.0f, 0});
        }
      }
    }
  }
}

TEST(GemmTest, AlphaBetaValues) {
  const float alpha_beta[][2] = {{1.0f, 1.0f}, {-0.5f, 0.25f}, {2.0f, -1.0f},
                                 {0.0f, 0.5f}, {0.0f, 0.0f},   {1.5f, 0.0f}};
  GemmImplementations implementations;
  for (GemmImplementation implementation : implementations.list()) {
    SCOPED_TRACE(Name(implementation));
    SetGemmImplementation(implementation);
    for (const auto& [alpha, beta] : alpha_beta) {
      for (const Shape& shape : {Shape{7, 19, 11}, Shape{30, 40, 300}}) {
        RunAndCheck({shape, Transpose::kNo, Transpose::kYes, alpha, beta, 0});
        RunAndCheck({shape, Transpose::kYes, Transpose::kNo, alpha, beta, 3});
      }
    }
  }
}

TEST(GemmTest, BetaZeroOverwritesNaN) {
  GemmImplementations implementations;
  for (GemmImplementation implementation : implementations.list()) {
    SCOPED_TRACE(Name(implementation));
    SetGemmImplementation(implementation);
    for (const Shape& shape :
         {Shape{1, 1, 1}, Shape{5, 13, 7}, Shape{20, 48, 260}, Shape{4, 9, 0}}) {
      for (float alpha : {1.0f, 0.0f}) {
        const std::vector<float> c =
            RunAndCheck({shape, Transpose::kNo, Transpose::kNo, alpha, 0.0f, 2}, true);
        for (float value : c) ASSERT_FALSE(std::isnan(value));
      }
    }
  }
}

TEST(GemmTest, ZeroDepthScalesC) {
  GemmImplementations implementations;
  for (GemmImplementation implementation : implementations.list()) {
    SCOPED_TRACE(Name(implementation));
    SetGemmImplementation(implementation);
    for (float beta : {0.0f, 1.0f, -2.0f}) {
      RunAndCheck({{9, 21, 0}, Transpose::kYes, Transpose::kYes, 1.0f, beta, 1});
    }
  }
  // Empty C: nothing to do, pointers may be null.
  Sgemm(Transpose::kNo, Transpose::kNo, 0, 5, 3, 1.0f, nullptr, 3, nullptr, 5, 0.0f, nullptr, 5);
  Sgemm(Transpose::kNo, Transpose::kNo, 4, 0, 3, 1.0f, nullptr, 3, nullptr, 1, 0.0f, nullptr, 1);
}

TEST(GemmTest, LeadingDimensionsLargerThanWidth) {
  GemmImplementations implementations;
  for (GemmImplementation implementation : implementations.list()) {
    SCOPED_TRACE(Name(implementation));
    SetGemmImplementation(implementation);
    for (Transpose trans_a : kBothTransposes) {
      for (Transpose trans_b : kBothTransposes) {
        RunAndCheck({{23, 37, 41}, trans_a, trans_b, 1.0f, 0.5f, 5});
        RunAndCheck({{1, 70, 3}, trans_a, trans_b, 1.0f, 0.0f, 17});
      }
    }
  }
}

// Crosses the NC block (3072 columns) and several MC and KC blocks, and is big enough to be split
// between threads.
TEST(GemmTest, LargeShapeAcrossAllBlocks) {
  GemmImplementations implementations;
  for (GemmImplementation implementation : implementations.list()) {
    SCOPED_TRACE(Name(implementation));
    SetGemmImplementation(implementation);
    RunAndCheck({{150, 3100, 260}, Transpose::kNo, Transpose::kNo, 1.0f, 0.0f, 0});
    RunAndCheck({{300, 70, 600}, Transpose::kYes, Transpose::kYes, -1.0f, 1.0f, 1});
  }
}

// The last row tile of a matrix whose height is not a multiple of the micro-tile's 6 rows
// multiplies only its rows (1-5), and each of them gets the bits it gets inside a full tile: the
// last rows of a 49-row product against the same rows as the bottom of a 6-row one, with full
// (16) and partial (13) column panels and two k blocks.
TEST(GemmTest, ShortRowTilesHaveFullTileBits) {
  if (!CpuSupportsAvx2Fma()) GTEST_SKIP() << "the AVX2 kernel needs avx2 and fma";
  SetGemmImplementation(GemmImplementation::kAvx2Fma);
  ScopedIntraOpThreads threads(1);
  std::mt19937 rng(11);
  for (int64_t m : {49, 50, 51, 52, 53}) {
    for (int64_t n : {16, 29}) {
      for (int64_t k : {7, 1100}) {
        const StoredMatrix a(m, k, 0, rng), b(k, n, 0, rng);
        std::vector<float> whole(m * n), bottom(6 * n);
        Sgemm(Transpose::kNo, Transpose::kNo, m, n, k, 1.0f, a.data.data(), k, b.data.data(), n,
              0.0f, whole.data(), n);
        Sgemm(Transpose::kNo, Transpose::kNo, 6, n, k, 1.0f, a.data.data() + (m - 6) * k, k,
              b.data.data(), n, 0.0f, bottom.data(), n);
        const int64_t short_rows = m % 6;
        for (int64_t i = m - short_rows; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            ASSERT_EQ(whole[i * n + j], bottom[(i - (m - 6)) * n + j])
                << "m=" << m << " n=" << n << " k=" << k << " C(" << i << ", " << j << ")";
          }
        }
      }
    }
  }
  SetGemmImplementation(GemmImplementation::kAuto);
}

// A product whose block of B outgrows L2 (a large weight) takes all its rows in one block instead
// of blocks of 144 KiB, so B is read once: each row keeps its bits (those of a product of its own
// rows, which fits one block either way), with B plain or pre-packed, one or two k blocks (A read
// in place, then packed), 1 and 2 threads; and the values are right.
TEST(GemmTest, RowsTakenInOneBlockWhenBOutgrowsL2) {
  std::mt19937 rng(23);
  GemmImplementations implementations;
  for (GemmImplementation implementation : implementations.list()) {
    if (implementation == GemmImplementation::kEigen) continue;  // its own blocking
    SCOPED_TRACE(Name(implementation));
    SetGemmImplementation(implementation);
    for (const Shape& shape : {Shape{197, 1100, 768}, Shape{130, 700, 1500}}) {
      const auto [m, n, k] = shape;
      RunAndCheck({shape, Transpose::kNo, Transpose::kNo, 1.0f, 0.0f, 0});
      const StoredMatrix a(m, k, 0, rng), b(k, n, 0, rng);
      const PackedGemmOperand packed_b = PackedGemmOperand::Pack(
          PackedGemmOperand::Side::kB, Transpose::kNo, k, n, b.data.data(), n);
      constexpr int64_t kBottom = 40;
      std::vector<float> bottom(kBottom * n);
      Sgemm(Transpose::kNo, Transpose::kNo, kBottom, n, k, 1.0f, a.data.data() + (m - kBottom) * k,
            k, b.data.data(), n, 0.0f, bottom.data(), n);
      for (int threads : {1, 2}) {
        ScopedIntraOpThreads scoped(threads);
        std::vector<float> whole(m * n), from_packed(m * n);
        Sgemm(Transpose::kNo, Transpose::kNo, m, n, k, 1.0f, a.data.data(), k, b.data.data(), n,
              0.0f, whole.data(), n);
        Sgemm(Transpose::kNo, m, 1.0f, a.data.data(), k, packed_b, 0.0f, from_packed.data(), n);
        for (int64_t i = m - kBottom; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            ASSERT_EQ(whole[i * n + j], bottom[(i - (m - kBottom)) * n + j])
                << "m=" << m << " n=" << n << " k=" << k << " threads=" << threads << " C(" << i
                << ", " << j << ")";
          }
        }
        ASSERT_EQ(whole, from_packed)
            << "m=" << m << " n=" << n << " k=" << k << " threads=" << threads;
      }
    }
  }
  SetGemmImplementation(GemmImplementation::kAuto);
}

// The AVX-512 kernels (two full tiles of one panel, or of two adjacent panels: 12 x 32 blocks)
// sum each element in the AVX2 kernels' order and store it through the same path: the same bits,
// for every operand form (packed A or rows in place, plain or pre-packed B), partial and narrow
// right panels, an odd panel left over, row tiles around the blocks, k blocks, alpha, beta and
// every part of the epilogue.
TEST(GemmTest, Avx512TilesHaveTheBitsOfAvx2Tiles) {
  if (!CpuSupportsAvx2Fma() || !CpuSupportsAvx512f()) {
    GTEST_SKIP() << "the AVX-512 kernels need avx512f, avx2 and fma";
  }
  const GemmCase cases[] = {
      {{12, 16, 5}},
      {{64, 784, 576}},                                           // A in place, one k block
      {{30, 900, 1100}},                                          // two k blocks, A packed
      {{61, 333, 207}, Transpose::kYes, Transpose::kYes, 0.5f, 1.0f, 3},
      {{49, 29, 300}, Transpose::kNo, Transpose::kYes, 1.0f, 0.0f, 0, true, true, true, 0.0f,
       6.0f},                                                     // the whole epilogue
      {{150, 200, 64}, Transpose::kYes, Transpose::kNo, 2.0f, 0.5f, 1, false, true, false},
      {{37, 40, 70}},                                    // a pair, then a narrow panel alone
      {{25, 24, 1100}, Transpose::kYes, Transpose::kNo},  // a pair whose right panel is narrow
      {{47, 40, 200}},  // 11 rows under the blocks: a full tile of A in place, then 5 packed
  };
  ScopedIntraOpThreads threads(1);
  for (const GemmCase& test : cases) {
    SetGemmImplementation(GemmImplementation::kAvx2Fma);
    const std::vector<float> avx2 = RunAndCheck(test);
    SetGemmImplementation(GemmImplementation::kAvx512);
    const std::vector<float> avx512 = RunAndCheck(test);
    ASSERT_EQ(avx2.size(), avx512.size());
    for (size_t i = 0; i < avx2.size(); ++i) {
      ASSERT_EQ(avx2[i], avx512[i]) << "element " << i << " of " << test.Describe();
    }
  }
  SetGemmImplementation(GemmImplementation::kAuto);
}

TEST(GemmTest, OneAndTwoThreadsAgree) {
  const GemmCase cases[] = {
      {{64, 784, 576}, Transpose::kNo, Transpose::kNo, 1.0f, 0.0f, 0},   // a ResNet conv, scaled
      {{256, 49, 1024}, Transpose::kNo, Transpose::kNo, 1.0f, 0.0f, 0},  // split along M
      // Two k blocks; A packed on one thread, read in place by two (450 columns each).
      {{30, 900, 1100}, Transpose::kNo, Transpose::kNo, 1.0f, 0.0f, 0},
      {{61, 333, 207}, Transpose::kYes, Transpose::kYes, 0.5f, 1.0f, 3},
      {{1, 1000, 1280}, Transpose::kNo, Transpose::kYes, 1.0f, 1.0f, 0},  // one row, unpacked
      {{1, 1000, 1280}, Transpose::kNo, Transpose::kNo, 1.0f, 1.0f, 0},
      {{1, 1000, 1280}, Transpose::kYes, Transpose::kYes, 1.0f, 1.0f, 0},
      {{1, 1000, 1280}, Transpose::kYes, Transpose::kNo, 1.0f, 1.0f, 0},
  };
  GemmImplementations implementations;
  for (GemmImplementation implementation : implementations.list()) {
    SCOPED_TRACE(Name(implementation));
    SetGemmImplementation(implementation);
    for (const GemmCase& test : cases) {
      std::vector<float> one, two;
      {
        ScopedIntraOpThreads threads(1);
        one = RunAndCheck(test);
      }
      {
        ScopedIntraOpThreads threads(2);
        two = RunAndCheck(test);
      }
      ASSERT_EQ(one.size(), two.size());
      for (size_t i = 0; i < one.size(); ++i) {
        if (implementation != GemmImplementation::kEigen) {
          // Each element is summed in the same order whatever the thread count.
          ASSERT_EQ(one[i], two[i]) << "element " << i << " of " << test.Describe();
        } else {
          ASSERT_NEAR(one[i], two[i], 1e-4f * (1.0f + std::abs(one[i]))) << test.Describe();
        }
      }
    }
  }
}

// The epilogue (row / column biases, clamp) on every path: full and partial micro-tiles, narrow
// edge tiles, several k blocks (applied once, after the last), the one-row path, k = 0, both
// implementations, 1 and 2 threads; the clamp bounds cut both tails of these sums.
TEST(GemmTest, EpilogueBiasesAndClamp) {
  const Shape shapes[] = {{6, 16, 8},   {7, 17, 9},  {13, 20, 300}, {145, 40, 520},
                          {1, 64, 300}, {1, 5, 7},   {64, 784, 27}, {5, 3, 0}};
  struct Flavour {
    bool row_bias, column_bias, residual;
    float low, high;
  };
  const float inf = std::numeric_limits<float>::infinity();
  const Flavour flavours[] = {{true, false, false, -inf, inf},  {false, true, false, -inf, inf},
                              {true, true, false, -0.5f, 0.7f}, {false, false, false, 0.0f, inf},
                              {false, true, false, 0.0f, 0.6f}, {false, false, true, -inf, inf},
                              {true, false, true, 0.0f, inf},   {false, true, true, -0.5f, 0.7f}};
  GemmImplementations implementations;
  for (GemmImplementation implementation : implementations.list()) {
    SCOPED_TRACE(Name(implementation));
    SetGemmImplementation(implementation);
    for (int threads : {1, 2}) {
      ScopedIntraOpThreads scoped(threads);
      for (const Shape& shape : shapes) {
        for (const Flavour& flavour : flavours) {
          for (float beta : {0.0f, 1.0f}) {
            GemmCase test{shape, Transpose::kNo, Transpose::kYes, 1.0f, beta, 1};
            test.row_bias = flavour.row_bias;
            test.column_bias = flavour.column_bias;
            test.residual = flavour.residual;
            test.low = flavour.low;
            test.high = flavour.high;
            RunAndCheck(test);
            test.trans_a = Transpose::kYes;
            test.trans_b = Transpose::kNo;
            RunAndCheck(test);
          }
        }
      }
    }
  }
}

// A last panel of at most 8 columns runs a narrower kernel (A packed, or its rows read in place);
// a column must come out with the same bits whether it falls in such a narrow tile (n = 20:
// columns 16-19) or in a full one (n = 30): one k block and two, A plain (rows in place) and
// transposed (packed), 13 rows (two full tiles and a short one).
TEST(GemmTest, NarrowEdgeTilesSumLikeFullTiles) {
  if (!CpuSupportsAvx2Fma()) GTEST_SKIP() << "the AVX2+FMA GEMM needs avx2 and fma";
  GemmImplementations implementations;
  SetGemmImplementation(GemmImplementation::kAvx2Fma);
  ScopedIntraOpThreads threads(1);
  constexpr int64_t m = 31, wide = 30, narrow = 20;  // row tiles: two pairs, one single, one short
  std::mt19937 rng(7);
  for (int64_t k : {300, 1100}) {
    for (Transpose trans_a : kBothTransposes) {
      const bool t = trans_a == Transpose::kYes;
      const StoredMatrix a(t ? k : m, t ? m : k, 0, rng);
      const StoredMatrix b(k, wide, 0, rng);
      std::vector<float> c_wide(m * wide), c_narrow(m * narrow);
      Sgemm(trans_a, Transpose::kNo, m, wide, k, 1.0f, a.data.data(), a.ld, b.data.data(), wide,
            0.0f, c_wide.data(), wide);
      // The first `narrow` columns of B, read through B's own stride.
      Sgemm(trans_a, Transpose::kNo, m, narrow, k, 1.0f, a.data.data(), a.ld, b.data.data(), wide,
            0.0f, c_narrow.data(), narrow);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < narrow; ++j) {
          ASSERT_EQ(c_narrow[i * narrow + j], c_wide[i * wide + j])
              << "k=" << k << (t ? " A^T" : " A") << " C(" << i << "," << j << ")";
        }
      }
    }
  }
}

// One row of C (FullyConnected at batch 1) takes its own unpacked path: every transpose, alpha and
// beta, padded strides, garbage in C with beta = 0. (OneAndTwoThreadsAgree covers its threads.)
TEST(GemmTest, RowVectorTimesMatrix) {
  GemmImplementations implementations;
  for (GemmImplementation implementation : implementations.list()) {
    SCOPED_TRACE(Name(implementation));
    SetGemmImplementation(implementation);
    for (Transpose trans_a : kBothTransposes) {
      for (Transpose trans_b : kBothTransposes) {
        RunAndCheck({{1, 1000, 1280}, trans_a, trans_b, 1.0f, 0.0f, 3});
        RunAndCheck({{1, 77, 45}, trans_a, trans_b, -0.5f, 2.0f, 1});
      }
    }
    const std::vector<float> c =
        RunAndCheck({{1, 37, 19}, Transpose::kNo, Transpose::kYes, 1.0f, 0.0f, 2}, true);
    for (float value : c) ASSERT_FALSE(std::isnan(value));
  }
}

TEST(GemmTest, BadArgumentsNameTheArgument) {
  std::vector<float> buffer(100, 0.0f);
  float* p = buffer.data();
  const auto message_of = [](auto&& call) -> std::string {
    try {
      call();
    } catch (const mxlite::Error& error) {
      return error.what();
    }
    return "(no error)";
  };
  EXPECT_NE(message_of([&] {
              Sgemm(Transpose::kNo, Transpose::kNo, -1, 2, 2, 1, p, 2, p, 2, 0, p, 2);
            }).find("sizes must be >= 0"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              Sgemm(Transpose::kNo, Transpose::kNo, 3, 4, 5, 1, p, 4, p, 4, 0, p, 4);
            }).find("lda must be >= 5"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              Sgemm(Transpose::kYes, Transpose::kNo, 3, 4, 5, 1, p, 2, p, 4, 0, p, 4);
            }).find("lda must be >= 3"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              Sgemm(Transpose::kNo, Transpose::kYes, 3, 4, 5, 1, p, 5, p, 4, 0, p, 4);
            }).find("ldb must be >= 5"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              Sgemm(Transpose::kNo, Transpose::kNo, 3, 4, 5, 1, p, 5, p, 4, 0, p, 3);
            }).find("ldc must be >= 4"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              Sgemm(Transpose::kNo, Transpose::kNo, 3, 4, 5, 1, nullptr, 5, p, 4, 0, p, 4);
            }).find("A or B is null"),
            std::string::npos);
}

TEST(GemmTest, ActiveGemmSaysWhichAndWhy) {
  GemmImplementations implementations;
  const GemmInfo automatic = ActiveGemm();
  EXPECT_NE(automatic.implementation, GemmImplementation::kAuto);
  EXPECT_EQ(automatic.implementation == GemmImplementation::kAvx2Fma ||
                automatic.implementation == GemmImplementation::kAvx512,
            CpuSupportsAvx2Fma());
  if (automatic.implementation == GemmImplementation::kAvx512) {
    EXPECT_NE(automatic.reason.find("512-bit FMAs measured at"), std::string::npos)
        << automatic.reason;
  }
  EXPECT_FALSE(automatic.name.empty());
  EXPECT_NE(automatic.ToString().find(automatic.reason), std::string::npos);

  SetGemmImplementation(GemmImplementation::kEigen);
  const GemmInfo forced = ActiveGemm();
  EXPECT_EQ(forced.implementation, GemmImplementation::kEigen);
  EXPECT_NE(forced.name.find("Eigen"), std::string::npos);
  EXPECT_NE(forced.reason.find("forced"), std::string::npos);
  {
    ScopedIntraOpThreads threads(3);
    EXPECT_EQ(ActiveGemm().threads, 3);
  }
  if (!CpuSupportsAvx2Fma()) {
    EXPECT_THROW(SetGemmImplementation(GemmImplementation::kAvx2Fma), mxlite::Error);
  }
}

// A pre-packed operand (PackedGemmOperand) gives the bits of the same product on the plain
// operand: either side, both transposes, shapes with partial panels and several k blocks, beta 0
// and 1 with an epilogue, 1 and 2 threads. Under Eigen (which multiplies an unpacked copy) and for
// one-row products (whose plain path reads op(B) in place), equal within rounding.
TEST(GemmTest, PackedOperandMatchesPlainBitwise) {
  const Shape shapes[] = {{1, 24, 16},  {7, 17, 9},     {49, 320, 960}, {3136, 24, 144},
                          {13, 1, 300}, {145, 40, 520}, {64, 100, 27},  {20, 40, 1100}};
  const auto describe = [](const Shape& shape, bool side_a, Transpose trans, float beta,
                           int threads) {
    std::ostringstream out;
    out << "m=" << shape.m << " n=" << shape.n << " k=" << shape.k << " packed "
        << (side_a ? "A" : "B") << (trans == Transpose::kYes ? "^T" : "") << " beta=" << beta
        << " threads=" << threads;
    return out.str();
  };
  GemmImplementations implementations;
  for (GemmImplementation implementation : implementations.list()) {
    SCOPED_TRACE(Name(implementation));
    SetGemmImplementation(implementation);
    for (const Shape& shape : shapes) {
      const auto [m, n, k] = shape;
      std::mt19937 rng(static_cast<uint32_t>(m * 31 + n * 7 + k));
      for (bool side_a : {true, false}) {
        for (Transpose trans : {Transpose::kNo, Transpose::kYes}) {
          const bool t = trans == Transpose::kYes;
          // The packed operand as stored (padded stride), the other plain and untransposed.
          const StoredMatrix x = side_a ? StoredMatrix(t ? k : m, t ? m : k, 2, rng)
                                        : StoredMatrix(t ? n : k, t ? k : n, 2, rng);
          const StoredMatrix other = side_a ? StoredMatrix(k, n, 1, rng) : StoredMatrix(m, k, 1, rng);
          const StoredMatrix c0(m, n, 0, rng), bias(1, side_a ? m : n, 0, rng);
          Epilogue<float> epilogue = Epilogue<float>::Clamp(-1.5f, 2.0f);
          (side_a ? epilogue.row_bias : epilogue.column_bias) = bias.data.data();
          const PackedGemmOperand packed = PackedGemmOperand::Pack(
              side_a ? PackedGemmOperand::Side::kA : PackedGemmOperand::Side::kB, trans,
              side_a ? m : k, side_a ? k : n, x.data.data(), x.ld);
          EXPECT_EQ(packed.rows(), side_a ? m : k);
          EXPECT_EQ(packed.columns(), side_a ? k : n);
          for (float beta : {0.0f, 1.0f}) {
            for (int threads : {1, 2}) {
              SCOPED_TRACE(describe(shape, side_a, trans, beta, threads));
              ScopedIntraOpThreads scoped(threads);
              std::vector<float> plain = c0.data, from_packed = c0.data;
              if (side_a) {
                Sgemm(trans, Transpose::kNo, m, n, k, 0.5f, x.data.data(), x.ld,
                      other.data.data(), other.ld, beta, plain.data(), n, epilogue);
                Sgemm(packed, Transpose::kNo, n, 0.5f, other.data.data(), other.ld, beta,
                      from_packed.data(), n, epilogue);
              } else {
                Sgemm(Transpose::kNo, trans, m, n, k, 0.5f, other.data.data(), other.ld,
                      x.data.data(), x.ld, beta, plain.data(), n, epilogue);
                Sgemm(Transpose::kNo, m, 0.5f, other.data.data(), other.ld, packed, beta,
                      from_packed.data(), n, epilogue);
              }
              ASSERT_EQ(plain.size(), from_packed.size());
              for (size_t i = 0; i < plain.size(); ++i) {
                if (implementation == GemmImplementation::kEigen ||
                    m == 1) {
                  // Eigen multiplies the unpacked copy, stored otherwise than the plain operand,
                  // and the plain one-row product reads op(B) in place: other summation orders.
                  ASSERT_NEAR(plain[i], from_packed[i], 1e-4f * (1.0f + std::abs(plain[i])));
                } else {
                  ASSERT_EQ(plain[i], from_packed[i]) << "element " << i;
                }
              }
            }
          }
        }
      }
    }
  }
}

TEST(GemmTest, PackedOperandErrorsNameTheArgument) {
  std::vector<float> x(12, 1.0f), c(12);
  EXPECT_THROW(
      {
        try {
          PackedGemmOperand::Pack(PackedGemmOperand::Side::kB, Transpose::kNo, 3, 4, x.data(), 2);
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("ld must be >= 4"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
  EXPECT_THROW(PackedGemmOperand::Pack(PackedGemmOperand::Side::kA, Transpose::kNo, 3, 4, nullptr, 4),
               Error);
  const PackedGemmOperand b =
      PackedGemmOperand::Pack(PackedGemmOperand::Side::kB, Transpose::kNo, 3, 4, x.data(), 4);
  EXPECT_GE(b.bytes(), size_t{3 * 4 * sizeof(float)});
  // Passed as the wrong side.
  EXPECT_THROW(Sgemm(b, Transpose::kNo, 4, 1.0f, x.data(), 4, 0.0f, c.data(), 4), Error);
}

}  // namespace
}  // namespace mxlite::cpu
