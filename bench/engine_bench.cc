// Engine overhead: push-to-completion cost of empty ops, and throughput of a dependency chain and
// of independent ops, for each engine. Thread counts come from the settings
// (MXNET_CPU_WORKER_NTHREADS etc.), so run with the environment you want to measure.
//
//   build/bin/engine_bench --benchmark_min_time=0.2
//
// us_per_op is wall time per op; the engine argument is 0 NaiveEngine, 1 ThreadedEngine,
// 2 ThreadedEnginePerDevice. BM_ParallelForRoundTrip/<spin iterations> is the intra-op pool's
// (ops/cpu/parallel.h) cost for a kernel: one back-to-back ParallelFor of two tasks on two
// threads, each spinning that many iterations (0: empty tasks), wall time per call.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "engine/engine.h"
#include "ops/cpu/parallel.h"

namespace mxlite {
namespace {

constexpr int kOpsPerBatch = 1000;

Engine& EngineOfType(int64_t index) {
  static std::unique_ptr<Engine> engines[3];
  auto type = static_cast<EngineType>(index);
  if (!engines[index]) engines[index] = CreateEngine(type);
  return *engines[index];
}

void SetLabels(benchmark::State& state, Engine& engine, int64_t ops_per_iteration) {
  state.SetLabel(EngineTypeName(engine.type()));
  state.SetItemsProcessed(state.iterations() * ops_per_iteration);
  state.counters["us_per_op"] =
      benchmark::Counter(static_cast<double>(state.iterations() * ops_per_iteration) * 1e-6,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// One empty op, pushed and waited for: the full round trip through a worker.
void BM_EmptyOpRoundTrip(benchmark::State& state) {
  Engine& engine = EngineOfType(state.range(0));
  VarHandle var = engine.NewVar();
  for (auto _ : state) {
    engine.PushSync([](RunContext) {}, Context::CPU(), {}, {var}, 0, "empty");
    engine.WaitForVar(var);
  }
  SetLabels(state, engine, 1);
  engine.DeleteVariable({}, Context::CPU(), var);
  engine.WaitForAll();
}

// A batch of empty ops on distinct vars, then WaitForAll: push-to-completion cost per op when
// the engine is kept busy.
void BM_IndependentEmptyOps(benchmark::State& state) {
  Engine& engine = EngineOfType(state.range(0));
  std::vector<VarHandle> vars(kOpsPerBatch);
  for (VarHandle& var : vars) var = engine.NewVar();
  for (auto _ : state) {
    for (VarHandle var : vars) engine.PushSync([](RunContext) {}, Context::CPU(), {}, {var});
    engine.WaitForAll();
  }
  SetLabels(state, engine, kOpsPerBatch);
  for (VarHandle var : vars) engine.DeleteVariable({}, Context::CPU(), var);
  engine.WaitForAll();
}

// A chain: every op reads the previous op's output and writes the next var.
void BM_DependencyChain(benchmark::State& state) {
  Engine& engine = EngineOfType(state.range(0));
  std::vector<VarHandle> vars(kOpsPerBatch + 1);
  for (VarHandle& var : vars) var = engine.NewVar();
  for (auto _ : state) {
    for (int i = 0; i < kOpsPerBatch; ++i) {
      engine.PushSync([](RunContext) {}, Context::CPU(), {vars[i]}, {vars[i + 1]});
    }
    engine.WaitForAll();
  }
  SetLabels(state, engine, kOpsPerBatch);
  for (VarHandle var : vars) engine.DeleteVariable({}, Context::CPU(), var);
  engine.WaitForAll();
}

// The chain again, bulked in segments of 15 (MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN's default).
void BM_DependencyChainBulked(benchmark::State& state) {
  Engine& engine = EngineOfType(state.range(0));
  std::vector<VarHandle> vars(kOpsPerBatch + 1);
  for (VarHandle& var : vars) var = engine.NewVar();
  for (auto _ : state) {
    {
      BulkScope bulk(engine, 15);
      for (int i = 0; i < kOpsPerBatch; ++i) {
        engine.PushSync([](RunContext) {}, Context::CPU(), {vars[i]}, {vars[i + 1]});
      }
    }
    engine.WaitForAll();
  }
  SetLabels(state, engine, kOpsPerBatch);
  for (VarHandle var : vars) engine.DeleteVariable({}, Context::CPU(), var);
  engine.WaitForAll();
}

// The chain again, recorded once as segments of 15 (Engine::NewSegment) and pushed every
// iteration, as an executor pushes its passes.
void BM_DependencyChainRecorded(benchmark::State& state) {
  Engine& engine = EngineOfType(state.range(0));
  std::vector<VarHandle> vars(kOpsPerBatch + 1);
  for (VarHandle& var : vars) var = engine.NewVar();
  std::vector<std::shared_ptr<const OpSegment>> segments;
  std::vector<SegmentStep> chunk;
  for (int i = 0; i < kOpsPerBatch; ++i) {
    chunk.push_back({[](RunContext) {}, {vars[i]}, {vars[i + 1]}, "op"});
    if (chunk.size() == 15 || i + 1 == kOpsPerBatch) {
      segments.push_back(engine.NewSegment(Context::CPU(), std::move(chunk)));
      chunk.clear();
    }
  }
  for (auto _ : state) {
    for (const auto& segment : segments) engine.PushSegment(segment);
    engine.WaitForAll();
  }
  SetLabels(state, engine, kOpsPerBatch);
  segments.clear();
  for (VarHandle var : vars) engine.DeleteVariable({}, Context::CPU(), var);
  engine.WaitForAll();
}

// Two tasks on two intra-op threads, back to back: what a small kernel pays to use both cores.
void BM_ParallelForRoundTrip(benchmark::State& state) {
  cpu::ScopedIntraOpThreads threads(2);
  const int64_t spins = state.range(0);
  int64_t sink[2] = {0, 0};
  for (auto _ : state) {
    cpu::ParallelFor(2, [&](int64_t task) {
      int64_t sum = 0;
      for (int64_t i = 0; i < spins; ++i) benchmark::DoNotOptimize(sum += i ^ task);
      sink[task] = sum;
    });
  }
  benchmark::DoNotOptimize(sink);
}

BENCHMARK(BM_EmptyOpRoundTrip)->DenseRange(0, 2)->UseRealTime();
BENCHMARK(BM_IndependentEmptyOps)->DenseRange(0, 2)->UseRealTime();
BENCHMARK(BM_DependencyChain)->DenseRange(0, 2)->UseRealTime();
BENCHMARK(BM_DependencyChainBulked)->DenseRange(0, 2)->UseRealTime();
BENCHMARK(BM_DependencyChainRecorded)->DenseRange(0, 2)->UseRealTime();
BENCHMARK(BM_ParallelForRoundTrip)->Arg(0)->Arg(2000)->Arg(20000)->UseRealTime();

}  // namespace
}  // namespace mxlite

BENCHMARK_MAIN();
