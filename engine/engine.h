// The dependency engine: runs operations asynchronously in an order that respects their data
// dependencies, declared as engine variables (docs/design.md, Engine; after MXNet's src/engine/).
//
//   Engine& engine = Engine::Get();
//   VarHandle a = engine.NewVar(), b = engine.NewVar();
//   engine.PushSync([&](RunContext) { b_data = a_data + 1; }, Context::CPU(), {a}, {b},
//                   /*priority=*/0, "add_one");
//   engine.WaitForVar(b);                        // rethrows an error of the op that wrote b
//
// Dependencies. Each var keeps a FIFO of the operations that use it, in push order. Reads of a var
// run concurrently; a write waits for every earlier read and write; later reads and writes wait for
// the write. VarVersion() counts the completed writes of a var (failed and skipped writes
// complete too; a bulk segment counts each of its writing ops). A var listed several
// times, or both read and written, counts once (as written when written at all). An op's pending
// count starts at reads + writes + 1; the extra one is released after every dependency has been
// registered, so an op never fires half-registered.
//
// Errors. An exception thrown by an op (or passed to its completion callback) is stored on every
// var the op writes, wrapped in an mxlite::Error whose message names the op. Later ops that read or
// write a poisoned var are skipped; their written vars inherit the same error. WaitForVar rethrows
// the error of its var, WaitForAll the first error since the last WaitForAll. An error is reported
// once: rethrowing it clears it from every var that carries it, so the vars are usable again (the
// data they hold is whatever the failed op left). DeleteVariable and waits run on poisoned vars.
//
// Bulking. Between BeginBulk(n) and EndBulk() on one thread, consecutive synchronous kNormal ops
// with the same context are collected into a segment that is pushed as one engine op, with the
// union of their dependencies (a var read and written inside the segment counts as written), when
// it holds n ops, when an op of another kind or context is pushed, at a wait, or at EndBulk. Inside
// the segment the ops run in push order; errors and profiling stay per op, so results, errors and
// profiler events are the same as without bulking.
//
// Recorded segments. NewSegment records a fixed sequence of synchronous ops once; PushSegment
// pushes it as one engine op, any number of times, and behaves exactly like pushing the same ops
// inside a bulk (same order, dependencies, errors, versions and profiler events), without paying
// per op at every push (MXNet's cached segment operators, which an executor builds at bind
// time). A segment keeps its vars' handles, so they must outlive its pushes (like any op's vars:
// a push after DeleteVariable is an error while the var is still pending deletion, and undefined
// once it is freed).
//
// CUDA graphs. A GPU segment recorded with a replay key (executors give one with
// MXNET_ENABLE_CUDA_GRAPHS=1) runs its steps once under each new key, captures the work they queue
// on the stream the next time and from then on launches that graph instead of calling the steps,
// for as long as the key read at each run is the one the capture was made under
// (engine/segment_graph.h has the rules). Results, versions and dependencies are those of running
// the steps; a replayed segment's kernel errors are reported at its stream synchronisation, named
// after its last step. A push that profiles its steps, or that meets a var carrying an error, runs
// the steps.
//
// Waiting. A thread blocked in WaitForVar or WaitForAll on a threaded engine first runs ready CPU
// ops itself, as a worker would, while its wait is unmet (ONNX Runtime runs a whole inference on
// the caller's thread): a pass pushed and waited for then needs no worker to wake up for it and
// no wake-up of the waiter after it. Waiters included, no more CPU ops run at once than there are
// CPU workers (ThreadedEnginePerDevice: MXNET_CPU_WORKER_NTHREADS; ThreadedEngine's one pool:
// that plus MXNET_CPU_PRIORITY_NTHREADS). GPU ops, and on ThreadedEnginePerDevice CPU ops with
// priority > 0, run only on their workers. Such an op sees the waiting thread's
// thread-local state (ScopedIntraOpThreads in ops/cpu/parallel.h, for one).
//
// Ownership. The engine owns its vars: NewVar() returns a handle valid until the op pushed by
// DeleteVariable() has run; using a var after DeleteVariable() is an error. Op functions are moved
// into the engine and destroyed after they run.
//
// Thread safety. Every method may be called from any thread. Ops may push ops, but must not wait
// (WaitForVar, WaitForAll) and on NaiveEngine must not push an op that depends on what they
// write: either would block a worker on work queued behind it. Destroying an engine waits for all
// pushed work, then stops its threads.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/context.h"

namespace mxlite {

// Opaque engine variable; see the contract above.
class EngineVar;
using VarHandle = EngineVar*;

// Where an op runs. `stream` is the worker's cudaStream_t (cast it) for GPU ops, nullptr for CPU.
struct RunContext {
  Context ctx;
  void* stream = nullptr;
};

// Which worker runs an op. Copies between the CPU and a GPU go to that GPU's copy threads (the op's
// context is the GPU's); kNormal ops run on the context's workers.
enum class FnProperty : uint8_t { kNormal, kCopyToGpu, kCopyFromGpu };

// Who pushed an op, for MXNET_PROFILER_MODE: 0 records kExecutor ops only, 1 records every op.
enum class OpOrigin : uint8_t { kImperative, kExecutor };

// Completes an asynchronous op. Call it exactly once, from any thread; Fail() completes the op
// with an error. An AsyncFn that throws instead must not call it (the throw completes the op).
class CallbackOnComplete {
 public:
  void operator()() const { complete_(engine_, op_, nullptr); }
  void Fail(std::exception_ptr error) const { complete_(engine_, op_, std::move(error)); }

  using CompleteFn = void (*)(void* engine, void* op, std::exception_ptr error);
  CallbackOnComplete(CompleteFn complete, void* engine, void* op)
      : complete_(complete), engine_(engine), op_(op) {}

 private:
  CompleteFn complete_;
  void* engine_;
  void* op_;
};

using SyncFn = std::function<void(RunContext)>;
using AsyncFn = std::function<void(RunContext, CallbackOnComplete)>;

// Flags of a pushed op beyond its dependencies.
struct OpOptions {
  FnProperty property = FnProperty::kNormal;
  OpOrigin origin = OpOrigin::kImperative;
};

// One op of a recorded segment (Engine::NewSegment).
struct SegmentStep {
  SyncFn fn;
  std::vector<VarHandle> reads, writes;
  std::string name;
};
// A recorded segment; immutable, shared by the pushes that run it.
class OpSegment;

// Read when a recorded GPU segment runs (see "CUDA graphs" above): it must change whenever a step
// would queue different work, e.g. a workspace moved or a weight a step derives something from.
using SegmentReplayKey = std::function<std::vector<uint64_t>()>;

// Runs of recorded segments through CUDA graphs so far (an engine's total, for reports and tests).
struct GraphReplayCounts {
  uint64_t captures = 0;         // steps captured into a graph and the graph launched
  uint64_t replays = 0;          // a graph captured earlier launched instead of the steps
  uint64_t failed_captures = 0;  // captures dropped; those segments run their steps from then on
};

enum class EngineType { kNaive, kThreaded, kThreadedPerDevice };

// "NaiveEngine", "ThreadedEngine", "ThreadedEnginePerDevice" (the MXNET_ENGINE_TYPE values).
const char* EngineTypeName(EngineType type);
EngineType ParseEngineType(std::string_view name);

class Engine {
 public:
  // The process-wide engine, of the type MXNET_ENGINE_TYPE names, created on first use and shut
  // down at exit (after the last GetShared() reference is dropped).
  static Engine& Get();
  static std::shared_ptr<Engine> GetShared();

  virtual ~Engine() = default;
  virtual EngineType type() const = 0;

  virtual VarHandle NewVar() = 0;
  // Completed writes of `var` so far. Reading it races with pending writes unless waited for.
  virtual uint64_t VarVersion(VarHandle var) const = 0;
  // Pushes a write of `var` that runs `on_delete` (may be empty) after every earlier use of the
  // var and then frees it.
  virtual void DeleteVariable(SyncFn on_delete, Context ctx, VarHandle var) = 0;

  // Pushes `fn`, which completes when it returns (GPU ops: after its stream is synchronised).
  virtual void PushSync(SyncFn fn, Context ctx, const std::vector<VarHandle>& reads,
                        const std::vector<VarHandle>& writes, int priority = 0,
                        std::string_view name = "op", OpOptions options = {}) = 0;
  // Pushes `fn`, which completes when it calls its CallbackOnComplete (or throws).
  virtual void PushAsync(AsyncFn fn, Context ctx, const std::vector<VarHandle>& reads,
                         const std::vector<VarHandle>& writes, int priority = 0,
                         std::string_view name = "op", OpOptions options = {}) = 0;

  // Blocks until every op pushed before this call that uses `var` has completed; rethrows the
  // var's error once.
  virtual void WaitForVar(VarHandle var) = 0;
  // Blocks until every pushed op has completed; rethrows the first unreported error.
  virtual void WaitForAll() = 0;

  // Records `steps` (at least one; synchronous, kNormal, all in `ctx`) as one segment. With a
  // `replay_key`, a GPU segment runs as a CUDA graph when it can (see above).
  virtual std::shared_ptr<const OpSegment> NewSegment(Context ctx, std::vector<SegmentStep> steps,
                                                      SegmentReplayKey replay_key = nullptr) = 0;
  // Pushes a recorded segment as one op (after any bulk open on this thread is flushed).
  virtual void PushSegment(const std::shared_ptr<const OpSegment>& segment, int priority = 0,
                           OpOptions options = {}) = 0;

  virtual GraphReplayCounts graph_replay_counts() const = 0;

  // Bulking on the calling thread (see above). max_ops >= 1; nesting is not allowed.
  virtual void BeginBulk(int max_ops) = 0;
  virtual void EndBulk() = 0;
};

// A new engine of the given type; threads and GPU pools are sized from the settings registry.
std::unique_ptr<Engine> CreateEngine(EngineType type);

// Segment size the executor should bulk with, from MXNET_EXEC_BULK_EXEC_*: for inference the whole
// graph (a very large number) when MXNET_EXEC_BULK_EXEC_INFERENCE is on, for training
// MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN when MXNET_EXEC_BULK_EXEC_TRAIN is on; 0 means no bulking.
int BulkSizeFromSettings(bool training);

// BeginBulk on construction and EndBulk on destruction, unless max_ops is 0.
class BulkScope {
 public:
  BulkScope(Engine& engine, int max_ops) : engine_(max_ops > 0 ? &engine : nullptr) {
    if (engine_ != nullptr) engine_->BeginBulk(max_ops);
  }
  ~BulkScope() {
    if (engine_ != nullptr) engine_->EndBulk();
  }
  BulkScope(const BulkScope&) = delete;
  BulkScope& operator=(const BulkScope&) = delete;

 private:
  Engine* engine_;
};

}  // namespace mxlite
