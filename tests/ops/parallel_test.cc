// The intra-op pool: every index runs exactly once, each thread starts on a contiguous share of
// its own and takes from the others' when done, errors come back to the caller, nested and
// concurrent calls complete, and thread-count overrides nest.
#include "ops/cpu/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
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

// Bounded wait (a failing test must not hang): spins until `done()` or about 10 s have passed.
template <typename Done>
void WaitUntil(Done done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done() && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
}

TEST(ParallelForTest, EachThreadStartsAtTheFrontOfItsOwnContiguousShare) {
  constexpr int kThreads = 4;
  constexpr int64_t kTasks = 40;  // shares [0, 10), [10, 20), [20, 30), [30, 40)
  ScopedIntraOpThreads scope(kThreads);
  std::mutex mutex;
  std::map<std::thread::id, int64_t> first_task;
  std::atomic<int> arrived{0};
  ParallelFor(kTasks, [&](int64_t i) {
    bool first = false;
    {
      std::lock_guard<std::mutex> lock(mutex);
      first = first_task.emplace(std::this_thread::get_id(), i).second;
    }
    // Every thread's first task waits for the others' first: nobody takes from another share
    // before its owner has started on it.
    if (first) {
      arrived.fetch_add(1);
      WaitUntil([&] { return arrived.load() == kThreads; });
    }
  });
  std::set<int64_t> firsts;
  for (const auto& [thread, task] : first_task) firsts.insert(task);
  EXPECT_EQ(firsts, (std::set<int64_t>{0, 10, 20, 30}));
}

TEST(ParallelForTest, AThreadHeldUpDoesNotHoldUpTheRestOfItsShare) {
  ScopedIntraOpThreads scope(2);
  std::atomic<int> done{0};
  int done_when_task_0_resumed = -1;
  // Task 0 (the front of the first share) waits until every other task has run: tasks 1-3 of
  // its own share must have been taken from the back by the other thread.
  ParallelFor(8, [&](int64_t i) {
    if (i == 0) {
      WaitUntil([&] { return done.load() == 7; });
      done_when_task_0_resumed = done.load();
      return;
    }
    done.fetch_add(1);
  });
  EXPECT_EQ(done_when_task_0_resumed, 7);
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
