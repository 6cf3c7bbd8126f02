// Cache states for timing: the eviction size follows the machine's caches, touching reads without
// writing and copes with any range, and the CPU tuner's candidates set the caches before each run.
#include "ops/cpu/cache_state.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <numeric>
#include <vector>

#include "ops/cpu/parallel.h"

namespace mxlite::cpu {
namespace {

TEST(CacheState, ParsesSysfsCacheSizes) {
  EXPECT_EQ(ParseCacheSizeText("32768K"), size_t{32} << 20);
  EXPECT_EQ(ParseCacheSizeText("1M"), size_t{1} << 20);
  EXPECT_EQ(ParseCacheSizeText("512"), size_t{512});
  EXPECT_EQ(ParseCacheSizeText(""), size_t{0});
  EXPECT_EQ(ParseCacheSizeText("K"), size_t{0});
  EXPECT_EQ(ParseCacheSizeText("12Q"), size_t{0});
  EXPECT_EQ(ParseCacheSizeText("99999999999999999999K"), size_t{0});  // not a size, no throw
}

TEST(CacheState, TheEvictionCoversTwiceTheLargestCacheAndAtLeast16MiB) {
  const size_t bytes = CacheEvictor::DefaultBytes();
  EXPECT_GE(bytes, size_t{16} << 20);
  for (int index = 0; index < 8; ++index) {
    std::ifstream file("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) +
                       "/size");
    std::string text;
    if (file >> text) {
      EXPECT_GE(bytes, 2 * ParseCacheSizeText(text)) << "cache index" << index;
    }
  }
  CacheEvictor evictor(size_t{1} << 20);
  EXPECT_EQ(evictor.bytes(), size_t{1} << 20);
  evictor.Evict();
  evictor.Evict();
}

TEST(CacheState, TouchingReadsAnyRangeOnAnyThreadCountAndWritesNothing) {
  std::vector<unsigned char> data(100003);
  std::iota(data.begin(), data.end(), 0);
  const std::vector<unsigned char> before = data;
  for (int threads : {1, 2, 3}) {
    ScopedIntraOpThreads scope(threads);
    for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, data.size()}) {
      TouchForReading(data.data(), bytes);
      TouchForReading(data.data() + 7, bytes > 7 ? bytes - 7 : 0);  // unaligned start
    }
    TouchForReading(nullptr, 4096);  // nothing to read; the pool still runs its empty job
  }
  EXPECT_EQ(data, before);
}

}  // namespace
}  // namespace mxlite::cpu
