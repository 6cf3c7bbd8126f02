// The engine conformance suite: every test runs on NaiveEngine, ThreadedEngine and
// ThreadedEnginePerDevice. Buffers are plain (non-atomic) integers, so a dependency the engine
// fails to respect is a wrong result here and a data race under the thread sanitizer.
#include "engine/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/settings.h"
#include "tests/engine/test_util.h"

namespace mxlite {
namespace {

using testing_util::Completer;

// A random op over `kVars` vars: reads and writes by index, possibly repeated and overlapping.
struct RandomOp {
  std::vector<int> reads;
  std::vector<int> writes;
  bool async = false;
  int priority = 0;
};

uint64_t Mix(uint64_t h, uint64_t value) {
  h ^= value + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

// What an op does to the buffers: every write var becomes a hash of the op's id, everything it
// reads and the write var's old value. Order-sensitive, so any reordering changes the result.
void ApplyOp(int id, const RandomOp& op, std::vector<uint64_t>& values) {
  uint64_t h = static_cast<uint64_t>(id);
  for (int r : op.reads) h = Mix(h, values[r]);
  for (int w : op.writes) h = Mix(h, values[w]);
  for (int w : op.writes) values[w] = Mix(h, static_cast<uint64_t>(w));
}

std::vector<RandomOp> RandomWorkload(int num_ops, int num_vars, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> var(0, num_vars - 1);
  std::uniform_int_distribution<int> count(0, 3);
  std::vector<RandomOp> ops(num_ops);
  for (RandomOp& op : ops) {
    int reads = count(rng);
    int writes = 1 + count(rng) % 2;
    for (int i = 0; i < reads; ++i) op.reads.push_back(var(rng));
    for (int i = 0; i < writes; ++i) op.writes.push_back(var(rng));
    if (rng() % 8 == 0) op.reads.push_back(op.writes[0]);   // read and written
    if (rng() % 8 == 0) op.writes.push_back(op.writes[0]);  // written twice
    op.async = rng() % 5 == 0;
    op.priority = rng() % 6 == 0 ? 1 : 0;
  }
  return ops;
}

std::vector<uint64_t> SerialResult(const std::vector<RandomOp>& ops, int num_vars) {
  std::vector<uint64_t> values(num_vars, 0);
  for (size_t i = 0; i < ops.size(); ++i) ApplyOp(static_cast<int>(i), ops[i], values);
  return values;
}

std::vector<uint64_t> ExpectedVersions(const std::vector<RandomOp>& ops, int num_vars) {
  std::vector<uint64_t> versions(num_vars, 0);
  for (const RandomOp& op : ops) {
    std::vector<int> writes = op.writes;
    std::sort(writes.begin(), writes.end());
    writes.erase(std::unique(writes.begin(), writes.end()), writes.end());
    for (int w : writes) ++versions[w];
  }
  return versions;
}

class EngineConformance : public ::testing::TestWithParam<EngineType> {
 protected:
  void SetUp() override {
    // Several workers per pool, so the threaded engines really run ops concurrently.
    settings().Set("MXNET_CPU_WORKER_NTHREADS", "3");
    settings().Set("MXNET_CPU_PRIORITY_NTHREADS", "2");
    engine_ = CreateEngine(GetParam());
    settings().Reset("MXNET_CPU_WORKER_NTHREADS");
    settings().Reset("MXNET_CPU_PRIORITY_NTHREADS");
  }

  std::vector<VarHandle> NewVars(int n) {
    std::vector<VarHandle> vars(n);
    for (VarHandle& var : vars) var = engine_->NewVar();
    return vars;
  }

  // Pushes the workload over `vars`/`values`; async ops do their work on `completer`.
  void PushWorkload(const std::vector<RandomOp>& ops, const std::vector<VarHandle>& vars,
                    std::vector<uint64_t>& values, Completer& completer, int id_offset = 0) {
    for (size_t i = 0; i < ops.size(); ++i) {
      const RandomOp& op = ops[i];
      std::vector<VarHandle> reads, writes;
      for (int r : op.reads) reads.push_back(vars[r]);
      for (int w : op.writes) writes.push_back(vars[w]);
      int id = static_cast<int>(i) + id_offset;
      std::string name = "op" + std::to_string(id);
      if (op.async) {
        engine_->PushAsync(
            [&values, &op, &completer, id](RunContext, CallbackOnComplete done) {
              completer.Post([&values, &op, id, done] {
                ApplyOp(id, op, values);
                done();
              });
            },
            Context::CPU(), reads, writes, op.priority, name);
      } else {
        engine_->PushSync([&values, &op, id](RunContext) { ApplyOp(id, op, values); },
                          Context::CPU(), reads, writes, op.priority, name);
      }
    }
  }

  std::unique_ptr<Engine> engine_;
};

constexpr int kVars = 100;
constexpr int kOps = 3000;

TEST_P(EngineConformance, RandomWorkloadMatchesSerialResult) {
  std::vector<RandomOp> ops = RandomWorkload(kOps, kVars, 1234);
  std::vector<VarHandle> vars = NewVars(kVars);
  std::vector<uint64_t> values(kVars, 0);
  {
    Completer completer;
    PushWorkload(ops, vars, values, completer);
    engine_->WaitForAll();
  }
  EXPECT_EQ(values, SerialResult(ops, kVars));
  std::vector<uint64_t> versions = ExpectedVersions(ops, kVars);
  for (int v = 0; v < kVars; ++v) EXPECT_EQ(engine_->VarVersion(vars[v]), versions[v]) << v;
}

TEST_P(EngineConformance, BulkingGivesTheSameResult) {
  std::vector<RandomOp> ops = RandomWorkload(kOps, kVars, 99);
  for (int bulk_size : {1, 4, 15}) {
    std::vector<VarHandle> vars = NewVars(kVars);
    std::vector<uint64_t> values(kVars, 0);
    {
      Completer completer;
      BulkScope bulk(*engine_, bulk_size);
      PushWorkload(ops, vars, values, completer);
      engine_->WaitForAll();
    }
    EXPECT_EQ(values, SerialResult(ops, kVars)) << "bulk size " << bulk_size;
    std::vector<uint64_t> versions = ExpectedVersions(ops, kVars);
    for (int v = 0; v < kVars; ++v) EXPECT_EQ(engine_->VarVersion(vars[v]), versions[v]) << v;
  }
}

TEST_P(EngineConformance, WaitForVarSeesEveryEarlierWrite) {
  std::vector<RandomOp> ops = RandomWorkload(kOps, kVars, 7);
  std::vector<VarHandle> vars = NewVars(kVars);
  std::vector<uint64_t> values(kVars, 0);
  Completer completer;
  PushWorkload(ops, vars, values, completer);
  std::vector<uint64_t> expected = SerialResult(ops, kVars);
  for (int v = 0; v < kVars; v += 7) {
    engine_->WaitForVar(vars[v]);
    EXPECT_EQ(values[v], expected[v]) << v;
  }
  engine_->WaitForAll();
}

TEST_P(EngineConformance, PushesFromSeveralThreads) {
  // Each thread owns a slice of the vars it writes and reads a shared read-only slice; a counter
  // var is incremented by every thread.
  constexpr int kThreads = 4, kOwned = 20, kShared = 10, kPerThread = 500;
  std::vector<VarHandle> vars = NewVars(kThreads * kOwned + kShared);
  VarHandle counter_var = engine_->NewVar();
  std::vector<uint64_t> values(vars.size(), 0);
  for (int s = 0; s < kShared; ++s) values[kThreads * kOwned + s] = 1000 + s;
  int64_t counter = 0;
  std::vector<std::vector<RandomOp>> workloads(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    workloads[t] = RandomWorkload(kPerThread, kOwned, 50 + t);
    for (RandomOp& op : workloads[t]) {
      for (int& w : op.writes) w += t * kOwned;
      for (int& r : op.reads) r = r % 3 == 0 ? kThreads * kOwned + r % kShared : r + t * kOwned;
      op.async = false;
    }
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const RandomOp& op = workloads[t][i];
        std::vector<VarHandle> reads, writes;
        for (int r : op.reads) reads.push_back(vars[r]);
        for (int w : op.writes) writes.push_back(vars[w]);
        int id = t * kPerThread + i;
        engine_->PushSync([&values, &op, id](RunContext) { ApplyOp(id, op, values); },
                          Context::CPU(), reads, writes, op.priority, "thread_op");
        engine_->PushSync([&counter](RunContext) { ++counter; }, Context::CPU(), {}, {counter_var},
                          0, "count");
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  engine_->WaitForAll();
  std::vector<uint64_t> expected(vars.size(), 0);
  for (int s = 0; s < kShared; ++s) expected[kThreads * kOwned + s] = 1000 + s;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPerThread; ++i) ApplyOp(t * kPerThread + i, workloads[t][i], expected);
  }
  EXPECT_EQ(values, expected);
  EXPECT_EQ(counter, kThreads * kPerThread);
  EXPECT_EQ(engine_->VarVersion(counter_var), static_cast<uint64_t>(kThreads * kPerThread));
}

TEST_P(EngineConformance, VersionsCountCompletedWritesOnce) {
  VarHandle a = engine_->NewVar(), b = engine_->NewVar();
  EXPECT_EQ(engine_->VarVersion(a), 0u);
  std::atomic<int> runs{0};  // "dup" and "read" may run concurrently: both only read a
  engine_->PushSync([&](RunContext) { ++runs; }, Context::CPU(), {a, a, b}, {b, b}, 0, "dup");
  engine_->PushSync([&](RunContext) { ++runs; }, Context::CPU(), {a}, {}, 0, "read");
  engine_->PushSync([&](RunContext) { ++runs; }, Context::CPU(), {}, {a}, 0, "write");
  engine_->WaitForAll();
  EXPECT_EQ(runs.load(), 3);
  EXPECT_EQ(engine_->VarVersion(a), 1u);
  EXPECT_EQ(engine_->VarVersion(b), 1u);
}

TEST_P(EngineConformance, BulkedVersionsCountEachWritingOpOnce) {
  VarHandle a = engine_->NewVar(), b = engine_->NewVar(), c = engine_->NewVar();
  std::vector<std::string> order;
  {
    BulkScope bulk(*engine_, 100);
    engine_->PushSync([&](RunContext) { order.push_back("dup"); }, Context::CPU(), {a, a, b},
                      {b, b}, 0, "dup");
    engine_->PushSync([&](RunContext) { order.push_back("read"); }, Context::CPU(), {a}, {}, 0,
                      "read");
    engine_->PushSync([&](RunContext) { order.push_back("write"); }, Context::CPU(), {b}, {a, c, a},
                      0, "write");
    engine_->PushSync([&](RunContext) { order.push_back("again"); }, Context::CPU(), {c}, {b}, 0,
                      "again");
  }
  engine_->WaitForAll();
  EXPECT_EQ(order, (std::vector<std::string>{"dup", "read", "write", "again"}));
  EXPECT_EQ(engine_->VarVersion(a), 1u);
  EXPECT_EQ(engine_->VarVersion(b), 2u);
  EXPECT_EQ(engine_->VarVersion(c), 1u);
}

TEST_P(EngineConformance, WaitForVarWithOnlyReaders) {
  VarHandle var = engine_->NewVar();
  VarHandle unused = engine_->NewVar();
  engine_->WaitForVar(unused);  // no op ever used it
  std::atomic<int> finished{0};
  constexpr int kReaders = 8;
  for (int i = 0; i < kReaders; ++i) {
    engine_->PushSync(
        [&](RunContext) {
          std::this_thread::yield();  // widen the window in which a reader is still running
          finished.fetch_add(1);
        },
        Context::CPU(), {var}, {}, 0, "reader");
  }
  engine_->WaitForVar(var);
  EXPECT_EQ(finished.load(), kReaders);
  EXPECT_EQ(engine_->VarVersion(var), 0u);
  engine_->WaitForAll();
}

TEST_P(EngineConformance, ReadersRunConcurrentlyBetweenWrites) {
  // Readers pushed between two writes all see the first write and none sees the second.
  VarHandle var = engine_->NewVar();
  int value = 0;
  std::atomic<int> saw_first{0};
  engine_->PushSync([&](RunContext) { value = 1; }, Context::CPU(), {}, {var}, 0, "first");
  for (int i = 0; i < 16; ++i) {
    engine_->PushSync([&](RunContext) { saw_first += value == 1; }, Context::CPU(), {var}, {}, 0,
                      "reader");
  }
  engine_->PushSync([&](RunContext) { value = 2; }, Context::CPU(), {}, {var}, 0, "second");
  engine_->WaitForVar(var);
  EXPECT_EQ(saw_first.load(), 16);
  EXPECT_EQ(value, 2);
}

TEST_P(EngineConformance, DeleteRunsAfterEveryEarlierUse) {
  VarHandle var = engine_->NewVar();
  std::mutex mutex;
  std::vector<std::string> log;
  auto record = [&](std::string entry) {
    std::lock_guard<std::mutex> lock(mutex);
    log.push_back(std::move(entry));
  };
  Completer completer;
  engine_->PushSync([&](RunContext) { record("write"); }, Context::CPU(), {}, {var}, 0, "w");
  for (int i = 0; i < 4; ++i) {
    engine_->PushSync([&](RunContext) { record("read"); }, Context::CPU(), {var}, {}, 0, "r");
  }
  engine_->PushAsync(
      [&](RunContext, CallbackOnComplete done) {
        completer.Post([&, done] {
          record("async read");
          done();
        });
      },
      Context::CPU(), {var}, {}, 0, "async_r");
  engine_->DeleteVariable([&](RunContext) { record("delete"); }, Context::CPU(), var);
  engine_->WaitForAll();
  ASSERT_EQ(log.size(), 7u);
  EXPECT_EQ(log.front(), "write");
  EXPECT_EQ(log.back(), "delete");
  EXPECT_EQ(std::count(log.begin(), log.end(), "read"), 4);
}

TEST_P(EngineConformance, ErrorPoisonsDownstreamAndIsReportedOnce) {
  VarHandle x = engine_->NewVar(), y = engine_->NewVar(), z = engine_->NewVar();
  VarHandle independent = engine_->NewVar();
  bool downstream_ran = false, independent_ran = false;
  engine_->PushSync([](RunContext) { throw std::runtime_error("boom"); }, Context::CPU(), {}, {x},
                    0, "failing_op");
  engine_->PushSync([&](RunContext) { downstream_ran = true; }, Context::CPU(), {x}, {y}, 0,
                    "reader_of_x");
  engine_->PushSync([&](RunContext) { downstream_ran = true; }, Context::CPU(), {}, {y, z}, 0,
                    "writer_of_y");
  engine_->PushSync([&](RunContext) { independent_ran = true; }, Context::CPU(), {}, {independent},
                    0, "independent");
  try {
    engine_->WaitForVar(z);
    ADD_FAILURE() << "WaitForVar(z) did not rethrow";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("engine op 'failing_op' failed: boom"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(downstream_ran);
  EXPECT_NO_THROW(engine_->WaitForVar(x));  // the same error: already reported
  EXPECT_NO_THROW(engine_->WaitForVar(y));
  EXPECT_NO_THROW(engine_->WaitForAll());
  EXPECT_TRUE(independent_ran);
  EXPECT_EQ(engine_->VarVersion(x), 1u);  // a failed write still completes

  // Recovery: the vars work again.
  int value = 0;
  engine_->PushSync([&](RunContext) { value = 5; }, Context::CPU(), {x}, {y}, 0, "after");
  EXPECT_NO_THROW(engine_->WaitForVar(y));
  EXPECT_EQ(value, 5);
}

TEST_P(EngineConformance, WaitForAllRethrowsTheFirstError) {
  VarHandle a = engine_->NewVar(), c = engine_->NewVar();
  // "second" writes c, which "first" reads, so it runs after "first" without inheriting its error.
  engine_->PushSync([](RunContext) { throw Error("first failure"); }, Context::CPU(), {c}, {a}, 0,
                    "first");
  engine_->PushSync([](RunContext) { throw Error("second failure"); }, Context::CPU(), {}, {c}, 0,
                    "second");
  try {
    engine_->WaitForAll();
    ADD_FAILURE() << "WaitForAll did not rethrow";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("first failure"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(engine_->WaitForAll());
  EXPECT_NO_THROW(engine_->WaitForVar(c));
  EXPECT_NO_THROW(engine_->WaitForVar(a));
}

TEST_P(EngineConformance, AsyncErrorsFromCallbackAndThrow) {
  VarHandle a = engine_->NewVar(), b = engine_->NewVar();
  Completer completer;
  engine_->PushAsync(
      [&](RunContext, CallbackOnComplete done) {
        completer.Post([done] { done.Fail(std::make_exception_ptr(Error("device lost"))); });
      },
      Context::CPU(), {}, {a}, 0, "async_fail");
  engine_->PushAsync([](RunContext, CallbackOnComplete) { throw Error("no launch"); },
                     Context::CPU(), {}, {b}, 0, "async_throw");
  EXPECT_THROW(
      {
        try {
          engine_->WaitForVar(a);
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("'async_fail' failed: device lost"),
                    std::string::npos);
          throw;
        }
      },
      Error);
  EXPECT_THROW(engine_->WaitForVar(b), Error);
  EXPECT_NO_THROW(engine_->WaitForAll());
}

TEST_P(EngineConformance, ErrorsInsideABulkStayPerOp) {
  VarHandle a = engine_->NewVar(), b = engine_->NewVar(), c = engine_->NewVar(),
            d = engine_->NewVar();
  int a_value = 0, c_value = 0, d_value = 0;
  {
    BulkScope bulk(*engine_, 10);
    engine_->PushSync([&](RunContext) { a_value = 1; }, Context::CPU(), {}, {a}, 0, "s1");
    engine_->PushSync([](RunContext) { throw Error("bad step"); }, Context::CPU(), {a}, {b}, 0,
                      "s2");
    engine_->PushSync([&](RunContext) { c_value = 1; }, Context::CPU(), {b}, {c}, 0, "s3");
    engine_->PushSync([&](RunContext) { d_value = a_value + 1; }, Context::CPU(), {a}, {d}, 0,
                      "s4");
  }
  try {
    engine_->WaitForVar(c);
    ADD_FAILURE() << "WaitForVar(c) did not rethrow";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'s2' failed: bad step"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(engine_->WaitForAll());
  EXPECT_EQ(a_value, 1);
  EXPECT_EQ(c_value, 0);
  EXPECT_EQ(d_value, 2);
  EXPECT_EQ(engine_->VarVersion(c), 1u);
}

// A recorded segment pushed several times runs its steps in order each time, interleaved
// correctly with ops pushed around it, and counts each writing step once per push.
TEST_P(EngineConformance, RecordedSegmentRunsLikeItsOps) {
  VarHandle a = engine_->NewVar(), b = engine_->NewVar(), c = engine_->NewVar();
  int a_value = 1, b_value = 0, c_value = 0;
  std::vector<SegmentStep> steps;
  steps.push_back({[&](RunContext) { b_value = a_value * 10; }, {a}, {b}, "ten"});
  steps.push_back({[&](RunContext) { c_value = b_value + a_value; }, {a, b}, {c, c}, "sum"});
  steps.push_back({[&](RunContext) { b_value += 1; }, {b}, {b}, "bump"});
  const std::shared_ptr<const OpSegment> segment = engine_->NewSegment(Context::CPU(), steps);
  std::vector<int> seen;
  for (int push = 0; push < 3; ++push) {
    engine_->PushSync([&](RunContext) { a_value += 1; }, Context::CPU(), {}, {a}, 0, "set a");
    engine_->PushSegment(segment, push % 2, {FnProperty::kNormal, OpOrigin::kExecutor});
    engine_->PushSync([&](RunContext) { seen.push_back(c_value * 1000 + b_value); }, Context::CPU(),
                      {b, c}, {}, 0, "observe");
  }
  engine_->WaitForAll();
  EXPECT_EQ(seen, (std::vector<int>{22021, 33031, 44041}));
  EXPECT_EQ(engine_->VarVersion(a), 3u);
  EXPECT_EQ(engine_->VarVersion(b), 6u);  // "ten" and "bump", three times
  EXPECT_EQ(engine_->VarVersion(c), 3u);
}

// A step that throws inside a recorded segment poisons what it writes only; the segment runs
// again once the error was reported.
TEST_P(EngineConformance, ErrorsInsideARecordedSegmentStayPerOp) {
  VarHandle a = engine_->NewVar(), b = engine_->NewVar(), c = engine_->NewVar();
  int c_value = 0;
  bool fail = true;
  std::vector<SegmentStep> steps;
  steps.push_back({[&](RunContext) {
                     if (fail) throw Error("bad step");
                   },
                   {a},
                   {b},
                   "may fail"});
  steps.push_back({[&](RunContext) { c_value += 1; }, {b}, {c}, "after"});
  steps.push_back({[&](RunContext) {}, {a}, {a}, "independent"});
  const auto segment = engine_->NewSegment(Context::CPU(), std::move(steps));
  engine_->PushSegment(segment);
  try {
    engine_->WaitForVar(c);
    ADD_FAILURE() << "WaitForVar(c) did not rethrow";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'may fail' failed: bad step"), std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(engine_->WaitForVar(a));
  EXPECT_EQ(c_value, 0);
  fail = false;
  engine_->PushSegment(segment);
  EXPECT_NO_THROW(engine_->WaitForAll());
  EXPECT_EQ(c_value, 1);
}

TEST_P(EngineConformance, RecordedSegmentRejectsBadInput) {
  EXPECT_THROW(engine_->NewSegment(Context::CPU(), {}), Error);
  EXPECT_THROW(engine_->NewSegment(Context::CPU(), {{[](RunContext) {}, {nullptr}, {}, "null"}}),
               Error);
  EXPECT_THROW(engine_->PushSegment(nullptr), Error);
  EXPECT_NO_THROW(engine_->WaitForAll());
}

TEST_P(EngineConformance, DestructionWaitsForPendingWork) {
  std::atomic<int> done{0};
  {
    Completer completer;  // outlives the engine: the async op may start during its shutdown
    std::unique_ptr<Engine> engine = CreateEngine(GetParam());
    VarHandle var = engine->NewVar();
    for (int i = 0; i < 200; ++i) {
      engine->PushSync([&](RunContext) { done.fetch_add(1); }, Context::CPU(), {}, {var}, 0, "w");
    }
    engine->PushAsync(
        [&](RunContext, CallbackOnComplete on_complete) {
          completer.Post([&, on_complete] {
            done.fetch_add(1);
            on_complete();
          });
        },
        Context::CPU(), {var}, {}, 0, "async");
    engine->DeleteVariable({}, Context::CPU(), var);
  }
  EXPECT_EQ(done.load(), 201);
}

TEST_P(EngineConformance, PushRejectsBadInput) {
  EXPECT_THROW(engine_->PushSync([](RunContext) {}, Context::CPU(), {nullptr}, {}, 0, "null"),
               Error);
  EXPECT_THROW(engine_->BeginBulk(0), Error);
  EXPECT_THROW(engine_->EndBulk(), Error);
  engine_->BeginBulk(2);
  EXPECT_THROW(engine_->BeginBulk(2), Error);
  engine_->EndBulk();
}

INSTANTIATE_TEST_SUITE_P(AllEngines, EngineConformance,
                         ::testing::Values(EngineType::kNaive, EngineType::kThreaded,
                                           EngineType::kThreadedPerDevice),
                         [](const ::testing::TestParamInfo<EngineType>& info) {
                           return std::string(EngineTypeName(info.param));
                         });

TEST(EngineFactory, ParsesTypeNames) {
  for (EngineType type :
       {EngineType::kNaive, EngineType::kThreaded, EngineType::kThreadedPerDevice}) {
    EXPECT_EQ(ParseEngineType(EngineTypeName(type)), type);
  }
  EXPECT_THROW(ParseEngineType("Foo"), Error);
}

TEST(EngineFactory, GlobalEngineFollowsSettingAndShutsDownAtExit) {
  Engine& engine = Engine::Get();
  EXPECT_EQ(EngineTypeName(engine.type()), settings().GetString("MXNET_ENGINE_TYPE"));
  EXPECT_EQ(&engine, Engine::GetShared().get());
  // Left pending on purpose: process exit must drain it and join the workers without hanging.
  VarHandle var = engine.NewVar();
  for (int i = 0; i < 100; ++i) {
    engine.PushSync([](RunContext) { std::this_thread::yield(); }, Context::CPU(), {}, {var}, 0,
                    "left_at_exit");
  }
}

TEST(EngineFactory, BulkSizeFollowsSettings) {
  settings().Set("MXNET_EXEC_BULK_EXEC_TRAIN", "1");
  settings().Set("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN", "9");
  EXPECT_EQ(BulkSizeFromSettings(true), 9);
  settings().Set("MXNET_EXEC_BULK_EXEC_TRAIN", "0");
  EXPECT_EQ(BulkSizeFromSettings(true), 0);
  settings().Set("MXNET_EXEC_BULK_EXEC_INFERENCE", "0");
  EXPECT_EQ(BulkSizeFromSettings(false), 0);
  settings().Set("MXNET_EXEC_BULK_EXEC_INFERENCE", "1");
  EXPECT_GT(BulkSizeFromSettings(false), 1000);
  for (const char* name : {"MXNET_EXEC_BULK_EXEC_TRAIN", "MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN",
                           "MXNET_EXEC_BULK_EXEC_INFERENCE"}) {
    settings().Reset(name);
  }
}

// ------------------------------------------------------------------------------------------------
// Waiting threads run ready CPU ops (engine.h, "Waiting"): the threaded engines only.
// ------------------------------------------------------------------------------------------------

class WaiterHelps : public ::testing::TestWithParam<EngineType> {
 protected:
  void SetUp() override {
    settings().Set("MXNET_CPU_WORKER_NTHREADS", "1");
    settings().Set("MXNET_CPU_PRIORITY_NTHREADS", "1");
    engine_ = CreateEngine(GetParam());
    settings().Reset("MXNET_CPU_WORKER_NTHREADS");
    settings().Reset("MXNET_CPU_PRIORITY_NTHREADS");
  }
  std::unique_ptr<Engine> engine_;
};

TEST_P(WaiterHelps, WaitingThreadRunsReadyCpuOps) {
  // The test pauses before each push, so the worker has stopped spinning and blocks; the push
  // then has to wake it, and the waiter, already awake, usually finds the op still queued and
  // runs it. A worker that wakes first may take one now and then (often, under a sanitizer), so
  // the rounds go on until the waiter has run one, up to a bound no scheduler should reach.
  VarHandle var = engine_->NewVar();
  const std::thread::id waiter = std::this_thread::get_id();
  int ran = 0;
  int ran_by_waiter = 0;
  int rounds = 0;
  for (; rounds < 2000 && ran_by_waiter < 5; ++rounds) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    engine_->PushSync(
        [&](RunContext) {
          ++ran;
          ran_by_waiter += std::this_thread::get_id() == waiter;
        },
        Context::CPU(), {}, {var}, 0, "round_trip");
    engine_->WaitForVar(var);
  }
  EXPECT_EQ(ran, rounds);
  EXPECT_GT(ran_by_waiter, 0) << "in " << rounds << " round trips";
  engine_->WaitForAll();
}

TEST_P(WaiterHelps, WaitersStayWithinTheWorkerLimit) {
  // Every CPU worker runs a held op (ThreadedEngine's one pool also has the priority thread);
  // a waiter must then leave `next` queued until a worker is free, not run it alongside them.
  const int workers = GetParam() == EngineType::kThreaded ? 2 : 1;
  std::mutex mutex;
  std::condition_variable cv;
  int started = 0;
  bool released = false;  // GUARDED_BY(mutex)
  std::atomic<bool> release_sent{false};
  for (int i = 0; i < workers; ++i) {
    engine_->PushSync(
        [&](RunContext) {
          std::unique_lock<std::mutex> lock(mutex);
          ++started;
          cv.notify_all();
          cv.wait(lock, [&] { return released; });
        },
        Context::CPU(), {}, {engine_->NewVar()}, 0, "held");
  }
  {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return started == workers; });
  }
  VarHandle next_var = engine_->NewVar();
  bool ran_while_held = false;
  engine_->PushSync([&](RunContext) { ran_while_held = !release_sent.load(); }, Context::CPU(), {},
                    {next_var}, 0, "next");
  std::thread releaser([&] {
    // Long enough for the waiter to reach its help loop; an unlimited waiter would run `next` now.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    release_sent = true;
    std::lock_guard<std::mutex> lock(mutex);
    released = true;
    cv.notify_all();
  });
  engine_->WaitForVar(next_var);
  releaser.join();
  EXPECT_FALSE(ran_while_held);
  engine_->WaitForAll();
}

TEST_P(WaiterHelps, OpsRunByAWaiterDoNotJoinItsBulk) {
  // An op pushed from an op runs on its own even when a waiter with an open bulk ran the pusher.
  VarHandle outer = engine_->NewVar();
  VarHandle inner = engine_->NewVar();
  engine_->BeginBulk(100);
  for (int i = 0; i < 50; ++i) {
    const uint64_t version = engine_->VarVersion(inner);
    engine_->PushSync(
        [&](RunContext) {
          engine_->PushSync([](RunContext) {}, Context::CPU(), {}, {inner}, 0, "inner");
        },
        Context::CPU(), {}, {outer}, 0, "outer");
    engine_->WaitForVar(outer);
    // No flush from here on: `inner` completes only if it was pushed as an op of its own.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (engine_->VarVersion(inner) == version && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::yield();
    }
    ASSERT_EQ(engine_->VarVersion(inner), version + 1) << "round " << i;
  }
  engine_->EndBulk();
  engine_->WaitForAll();
}

INSTANTIATE_TEST_SUITE_P(ThreadedEngines, WaiterHelps,
                         ::testing::Values(EngineType::kThreaded, EngineType::kThreadedPerDevice),
                         [](const ::testing::TestParamInfo<EngineType>& info) {
                           return std::string(EngineTypeName(info.param));
                         });

// ThreadedEnginePerDevice runs priority CPU ops on their own pool, never on a waiter.
TEST(WaiterHelpsPerDevice, PriorityOpsRunOnlyOnTheirWorkers) {
  std::unique_ptr<Engine> engine = CreateEngine(EngineType::kThreadedPerDevice);
  VarHandle var = engine->NewVar();
  const std::thread::id waiter = std::this_thread::get_id();
  int ran_by_waiter = 0;
  for (int i = 0; i < 100; ++i) {
    engine->PushSync([&](RunContext) { ran_by_waiter += std::this_thread::get_id() == waiter; },
                     Context::CPU(), {}, {var}, /*priority=*/1, "priority");
    engine->WaitForVar(var);
  }
  EXPECT_EQ(ran_by_waiter, 0);
}

}  // namespace
}  // namespace mxlite
