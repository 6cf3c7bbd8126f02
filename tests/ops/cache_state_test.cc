// Cache states for timing: flushing keeps every value (dirty lines are written back first),
// touching reads without writing, both cope with any range, and the evictor writes only its own
// buffer.
#include "ops/cpu/cache_state.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "ops/cpu/parallel.h"

namespace mxlite::cpu {
namespace {

const size_t kRanges[] = {0, 1, 63, 64, 65, 4097};

TEST(CacheState, FlushingKeepsEveryValueWrittenJustBefore) {
  std::vector<unsigned char> data(100003);
  for (size_t bytes : kRanges) {
    for (size_t offset : {size_t{0}, size_t{7}}) {  // aligned and unaligned starts
      for (size_t i = 0; i < bytes; ++i) data[offset + i] = static_cast<unsigned char>(i * 7 + 1);
      FlushFromCaches(data.data() + offset, bytes);
      for (size_t i = 0; i < bytes; ++i) {
        ASSERT_EQ(data[offset + i], static_cast<unsigned char>(i * 7 + 1)) << bytes << " " << i;
      }
    }
  }
  FlushFromCaches(nullptr, 4096);  // nothing to flush
}

TEST(CacheState, TouchingReadsAnyRangeOnAnyThreadCountAndWritesNothing) {
  std::vector<unsigned char> data(100003);
  std::iota(data.begin(), data.end(), 0);
  const std::vector<unsigned char> before = data;
  for (int threads : {1, 2, 3}) {
    ScopedIntraOpThreads scope(threads);
    for (size_t bytes : kRanges) {
      TouchForReading(data.data(), bytes);
      TouchForReading(data.data() + 7, bytes);  // unaligned start
    }
    TouchForReading(data.data(), data.size());
    TouchForReading(nullptr, 4096);  // nothing to read; the pool still runs its empty job
  }
  EXPECT_EQ(data, before);
}

TEST(CacheState, TheEvictorWritesOnlyItsOwnBuffer) {
  std::vector<unsigned char> neighbour(4096, 5);
  CacheEvictor evictor(size_t{1} << 20);
  EXPECT_EQ(evictor.bytes(), size_t{1} << 20);
  evictor.Evict();
  evictor.Evict();
  EXPECT_EQ(neighbour, std::vector<unsigned char>(4096, 5));
}

}  // namespace
}  // namespace mxlite::cpu
