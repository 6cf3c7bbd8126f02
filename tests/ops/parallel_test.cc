// The intra-op pool: every index runs exactly once, errors come back to the caller, nested and
// concurrent calls complete, and thread-count overrides nest.
#include "ops/cpu/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/error.h"

namespace mxlite::cpu {
namespace {

TEST(ParallelForTest, EveryIndexRunsOnce) {
  for (int threads : {1, 2, 4}) {
    ScopedIntraOpThreads scope(threads);
    for (int64_t tasks : {0, 1, 2, 3, 17, 1000}) {
      std::vector<std::atomic<int>> counts(static_cast<size_t>(tasks));
      ParallelFor(tasks, [&](int64_t i) { counts[static_cast<size_t>(i)].fetch_add(1); });
      for (int64_t i = 0; i < tasks; ++i) ASSERT_EQ(counts[i].load(), 1) << "task " << i;
    }
  }
}

TEST(ParallelForTest, UsesSeveralThreadsWhenAsked) {
  ScopedIntraOpThreads scope(2);
  std::mutex mutex;
  std::set<std::thread::id> ids;
  std::atomic<int> arrived{0};
  // Each task waits (bounded) for the other, so both threads must take part to finish early.
  ParallelFor(2, [&](int64_t) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      ids.insert(std::this_thread::get_id());
    }
    arrived.fetch_add(1);
    for (int spin = 0; spin < 2000000 && arrived.load() < 2; ++spin) std::this_thread::yield();
  });
  EXPECT_EQ(ids.size(), 2u);
}

TEST(ParallelForTest, ExceptionReachesCallerAndPoolStaysUsable) {
  ScopedIntraOpThreads scope(2);
  EXPECT_THROW(ParallelFor(100,
                           [](int64_t i) {
                             if (i == 37) throw std::runtime_error("task 37 failed");
                           }),
               std::runtime_error);
  std::atomic<int64_t> sum{0};
  ParallelFor(100, [&](int64_t i) { sum.fetch_add(i); });
  EXPECT_EQ(sum.load(), 4950);
}

TEST(ParallelForTest, NestedAndConcurrentCallsComplete) {
  ScopedIntraOpThreads scope(2);
  std::atomic<int64_t> inner_runs{0};
  ParallelFor(4, [&](int64_t) { ParallelFor(10, [&](int64_t) { inner_runs.fetch_add(1); }); });
  EXPECT_EQ(inner_runs.load(), 40);

  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] {
      ScopedIntraOpThreads caller_scope(2);
      for (int repeat = 0; repeat < 50; ++repeat) {
        ParallelFor(8, [&](int64_t) { total.fetch_add(1); });
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  EXPECT_EQ(total.load(), 4 * 50 * 8);
}

TEST(ParallelForTest, ThreadCountOverridesNest) {
  SetIntraOpThreads(3);
  EXPECT_EQ(IntraOpThreads(), 3);
  {
    ScopedIntraOpThreads outer(2);
    EXPECT_EQ(IntraOpThreads(), 2);
    {
      ScopedIntraOpThreads inner(1);
      EXPECT_EQ(IntraOpThreads(), 1);
    }
    EXPECT_EQ(IntraOpThreads(), 2);
  }
  EXPECT_EQ(IntraOpThreads(), 3);
  SetIntraOpThreads(0);
  EXPECT_GE(IntraOpThreads(), 1);
  EXPECT_THROW(SetIntraOpThreads(-1), mxlite::Error);
  EXPECT_THROW(ScopedIntraOpThreads(0), mxlite::Error);
}

}  // namespace
}  // namespace mxlite::cpu
