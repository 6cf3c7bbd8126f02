// CPU copies (ops/cpu/copy.h) honour MXNET_CPU_PARALLEL_COPY_SIZE: below it a copy runs in one
// part on the calling thread, from it on in one part per intra-op thread; both copy every byte,
// for any element size, and a copy onto itself does nothing.
#include "ops/cpu/copy.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "core/settings.h"
#include "ops/cpu/parallel.h"

namespace mxlite::cpu {
namespace {

class CopyTest : public ::testing::Test {
 protected:
  void TearDown() override { settings().Reset("MXNET_CPU_PARALLEL_COPY_SIZE"); }
};

TEST_F(CopyTest, TheSettingDecidesWhenACopyIsSplitAmongTheThreads) {
  ScopedIntraOpThreads threads(2);
  EXPECT_EQ(CopyParts(199999), 1);  // MXNet's default threshold: 200000 elements
  EXPECT_EQ(CopyParts(200000), 2);
  settings().Set("MXNET_CPU_PARALLEL_COPY_SIZE", "1000");
  EXPECT_EQ(CopyParts(999), 1);
  EXPECT_EQ(CopyParts(1000), 2);
  ScopedIntraOpThreads one(1);
  EXPECT_EQ(CopyParts(1000000), 1);
}

TEST_F(CopyTest, BothWaysCopyEveryElement) {
  ScopedIntraOpThreads threads(2);
  settings().Set("MXNET_CPU_PARALLEL_COPY_SIZE", "100");
  for (int64_t count : {int64_t{7}, int64_t{99}, int64_t{100}, int64_t{101}, int64_t{12345}}) {
    std::vector<double> from(static_cast<size_t>(count)), to(from.size(), -1.0);
    std::iota(from.begin(), from.end(), 0.5);
    CopyElements(from.data(), to.data(), count, sizeof(double));
    EXPECT_EQ(to, from) << count << " elements";
    std::vector<uint16_t> half(static_cast<size_t>(count), 7), half_to(half.size(), 0);
    CopyElements(half.data(), half_to.data(), count, sizeof(uint16_t));
    EXPECT_EQ(half_to, half) << count << " 2-byte elements";
  }
  std::vector<float> same = {1, 2, 3};
  CopyElements(same.data(), same.data(), 3, sizeof(float));
  EXPECT_EQ(same, (std::vector<float>{1, 2, 3}));
}

}  // namespace
}  // namespace mxlite::cpu
