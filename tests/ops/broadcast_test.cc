#include "ops/cpu/broadcast.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ops/broadcast.h"
#include "ops/cpu/parallel.h"
#include "tests/ops/reference.h"

namespace mxlite::cpu {
namespace {

TEST(BroadcastShapesTest, NumPyRules) {
  EXPECT_EQ(*BroadcastShapes({3, 1, 5}, {4, 1}), (Shape{3, 4, 5}));
  EXPECT_EQ(*BroadcastShapes({}, {2, 3}), (Shape{2, 3}));
  EXPECT_EQ(*BroadcastShapes({0, 1}, {1, 4}), (Shape{0, 4}));  // 1 stretches to 0
  EXPECT_FALSE(BroadcastShapes({3, 4}, {2, 4}).has_value());
  EXPECT_FALSE(BroadcastShapes({0}, {3}).has_value());
  EXPECT_TRUE(BroadcastsTo({1, 4}, {3, 4}));
  EXPECT_FALSE(BroadcastsTo({3, 1}, {1, 4}));  // both would grow
}

TEST(BroadcastLayoutTest, MergesAxesWithTheSamePattern) {
  // A channel bias on NCHW: (N, C, H*W) with the bias constant along N and H*W.
  BroadcastLayout channel = MakeBroadcastLayout({2, 3, 4, 5}, {{2, 3, 4, 5}, {1, 3, 1, 1}});
  ASSERT_EQ(channel.ndim, 3);
  EXPECT_EQ(channel.extents[0], 2);
  EXPECT_EQ(channel.extents[1], 3);
  EXPECT_EQ(channel.extents[2], 20);
  EXPECT_EQ(channel.strides[0][0], 60);
  EXPECT_EQ(channel.strides[1][0], 0);
  EXPECT_EQ(channel.strides[1][1], 1);
  EXPECT_EQ(channel.strides[1][2], 0);
  // Same shapes: one flat row, whatever the rank.
  BroadcastLayout same = MakeBroadcastLayout({2, 3, 4}, {{2, 3, 4}, {2, 3, 4}});
  ASSERT_EQ(same.ndim, 1);
  EXPECT_EQ(same.extents[0], 24);
  // One element: a single row of length 1.
  BroadcastLayout scalar = MakeBroadcastLayout({1, 1}, {{}, {1}});
  ASSERT_EQ(scalar.ndim, 1);
  EXPECT_EQ(scalar.size(), 1);
  EXPECT_THROW(MakeBroadcastLayout({3, 4}, {{2, 4}}), Error);
}

std::vector<double> NaiveReduce(const std::vector<double>& src, const Shape& src_shape,
                                const Shape& dst_shape) {
  std::vector<double> dst(dst_shape.size(), 0.0);
  for (int64_t i = 0; i < src_shape.size(); ++i) {
    dst[testing::BroadcastIndex(testing::Unravel(i, src_shape), dst_shape)] += src[i];
  }
  return dst;
}

struct ReduceCase {
  Shape src, dst;
};

class ReduceToShapeTest : public ::testing::TestWithParam<ReduceCase> {};

TEST_P(ReduceToShapeTest, MatchesNaiveSumsWithAnyThreadCount) {
  const ReduceCase reduce = GetParam();
  std::vector<double> src(reduce.src.size());
  for (size_t i = 0; i < src.size(); ++i) src[i] = std::cos(0.37 * static_cast<double>(i));
  std::vector<double> want = NaiveReduce(src, reduce.src, reduce.dst);
  std::vector<double> one_thread(want.size()), two_threads(want.size());
  for (const auto& [threads, dst] : {std::pair{1, &one_thread}, std::pair{2, &two_threads}}) {
    ScopedIntraOpThreads scoped(threads);
    ScratchSpace scratch(Context::CPU());
    ReduceToShape<double>(src.data(), reduce.src, dst->data(), reduce.dst, -0.5, &scratch);
  }
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(one_thread[i], -0.5 * want[i], 1e-9 * std::max(1.0, std::abs(want[i]))) << i;
  }
  EXPECT_EQ(one_thread, two_threads) << "the result depends on the thread count";
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ReduceToShapeTest,
    ::testing::Values(ReduceCase{{2, 3, 4, 5}, {1, 3, 1, 1}}, ReduceCase{{2, 3, 4, 5}, {3, 1, 1}},
                      ReduceCase{{2, 3, 4, 5}, {}}, ReduceCase{{2, 3, 4, 5}, {4, 1}},
                      ReduceCase{{2, 3, 4, 5}, {2, 1, 4, 1}},
                      ReduceCase{{2, 3, 4, 5}, {2, 3, 4, 5}}, ReduceCase{{7, 1, 3}, {1, 1, 3}},
                      ReduceCase{{0, 3}, {1, 3}},
                      ReduceCase{{40000, 8}, {8}},           // few units: partial sums
                      ReduceCase{{8, 40000}, {8, 1}},        // row sums
                      ReduceCase{{300, 2, 300}, {1, 2, 1}},  // two units, summed in slices
                      ReduceCase{{200000}, {1}}));

TEST(BroadcastBinaryKernelTest, WritesOverItsOwnSameShapeOperand) {
  std::vector<float> a{1, 2, 3, 4, 5, 6}, b{10, 20, 30};
  BroadcastBinary([](const auto& x, const auto& y) { return x * y; }, a.data(), Shape{2, 3},
                  b.data(), Shape{3}, a.data(), Shape{2, 3});
  EXPECT_EQ(a, (std::vector<float>{10, 40, 90, 40, 100, 180}));
}

}  // namespace
}  // namespace mxlite::cpu
