// Internal to engine/: the dependency tracking shared by the three engines. The engines differ
// only in where a ready op runs (DependencyEngine::Dispatch). Not part of the public API.
//
// Life of an op: Push builds an OpBlock (deduplicated dependencies, pending = deps + 1), appends
// one Dependency per var to the var's queue, and releases the extra pending count; the op whose
// pending count reaches zero is dispatched. A worker Execute()s it (skipping it when an input is
// poisoned); completion releases its vars, which grants waiting ops access, and frees the block.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/engine.h"
#include "engine/profiler.h"
#include "engine/segment_graph.h"

namespace mxlite::engine_internal {

// One failed op's error, shared by every var it poisoned (directly or through skipped ops).
// `reported` flips once, when a wait rethrows it; from then on no var carries it.
struct ErrorRecord {
  std::exception_ptr exception;
  std::atomic<bool> reported{false};
};
using ErrorRef = std::shared_ptr<ErrorRecord>;

struct OpBlock;
class DeviceStreams;

// One use of a var by an op; doubles as the node of the var's waiting queue.
struct Dependency {
  EngineVar* var = nullptr;
  OpBlock* op = nullptr;
  bool write = false;
  // What the op's completion adds to the var's version: 1 for a write, the number of writing
  // steps for a bulk segment, 0 for a wait (which takes exclusive access but writes nothing).
  uint32_t version_increment = 0;
  Dependency* next = nullptr;  // GUARDED_BY(var->mutex_) while queued
};

// A bulked sequence of synchronous ops that runs as one engine op. Each var the segment uses is
// listed once (`vars`); steps refer to them by index, so building, submitting and running a
// segment take time linear in its steps' vars (a whole inference pass may be one segment).
struct BulkSegment {
  struct Var {
    EngineVar* var = nullptr;
    uint32_t writes = 0;  // steps that write it: the segment's version increment for it
  };
  struct Step {
    SyncFn fn;
    std::string name;
    bool profile = false;
    uint32_t first_ref = 0;  // its reads, then its writes, in var_refs
    uint32_t num_reads = 0;
    uint32_t num_writes = 0;
  };
  // Registers a step's vars (indices appended to var_refs).
  void AddVars(Step& step, const std::vector<EngineVar*>& reads,
               const std::vector<EngineVar*>& writes);

  std::vector<Step> steps;
  std::vector<Var> vars;
  std::vector<uint32_t> var_refs;
  std::unordered_map<EngineVar*, uint32_t> var_index;  // vars[var_index[v]].var == v
  Context ctx;
  // A recorded GPU segment's CUDA graph (MXNET_ENABLE_CUDA_GRAPHS), null otherwise.
  std::shared_ptr<SegmentGraph> graph;
  int priority = 0;  // a thread's bulk: the highest of its ops' (a recorded segment: unused)
};

struct OpBlock {
  // Counts dependencies not yet granted, plus one until registration ends; zero means ready.
  std::atomic<int> pending{0};
  SyncFn sync_fn;  // one of sync_fn, async_fn, segment is set (none for a bare delete)
  AsyncFn async_fn;
  std::shared_ptr<const BulkSegment> segment;  // a bulk, or a recorded segment pushed again
  bool profile_steps = false;  // a recorded segment: every step records (decided at push)
  Context ctx;
  int priority = 0;
  FnProperty property = FnProperty::kNormal;
  bool profile = false;           // decided at push: the profiler was on for this op's origin
  bool runs_on_poisoned = false;  // waits and deletes run even when a var carries an error
  bool run_inline = false;        // trivial internal ops run on the thread that readies them
  bool wait_only = false;         // WaitForVar: leaves the var's error and version alone
  std::string name;
  std::vector<Dependency> deps;  // reads first, then writes; each var once
  EngineVar* var_to_delete = nullptr;
  int64_t start_us = 0;
  struct CompletionSignal* done_signal = nullptr;  // set when the pusher waits for this op
};

// Blocks one thread until Notify().
struct CompletionSignal {
  void Notify();
  void Wait();
  bool Done();

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;  // GUARDED_BY(mutex_)
};

// Per-thread bulking state; owner == nullptr means no bulk is open on this thread.
struct BulkState {
  const void* owner = nullptr;
  int max_ops = 0;
  std::unique_ptr<BulkSegment> segment;
};

class DependencyEngine : public Engine {
 public:
  DependencyEngine();
  ~DependencyEngine() override;

  VarHandle NewVar() override;
  uint64_t VarVersion(VarHandle var) const override;
  void DeleteVariable(SyncFn on_delete, Context ctx, VarHandle var) override;
  void PushSync(SyncFn fn, Context ctx, const std::vector<VarHandle>& reads,
                const std::vector<VarHandle>& writes, int priority, std::string_view name,
                OpOptions options) override;
  void PushAsync(AsyncFn fn, Context ctx, const std::vector<VarHandle>& reads,
                 const std::vector<VarHandle>& writes, int priority, std::string_view name,
                 OpOptions options) override;
  void WaitForVar(VarHandle var) override;
  void WaitForAll() override;
  std::shared_ptr<const OpSegment> NewSegment(Context ctx, std::vector<SegmentStep> steps,
                                              SegmentReplayKey replay_key) override;
  GraphReplayCounts graph_replay_counts() const override;
  void PushSegment(const std::shared_ptr<const OpSegment>& segment, int priority,
                   OpOptions options) override;
  void BeginBulk(int max_ops) override;
  void EndBulk() override;

  // Runs a dispatched op on the calling worker, with the worker's streams.
  void Execute(OpBlock* op, DeviceStreams& streams);

 protected:
  // Hands a ready op to a worker (or runs it).
  virtual void Dispatch(OpBlock* op) = 0;
  // NaiveEngine: every push returns only after its op has completed.
  virtual bool PushWaitsForCompletion() const { return false; }
  // Runs one ready op on the calling thread, which is waiting on the engine, when the engine
  // has one such a thread may run (a CPU op within the worker limit); returns whether it ran one.
  virtual bool RunOneForWaiter() { return false; }
  // Blocks until no op is pending; derived destructors call it before stopping their workers.
  void WaitUntilIdle();

 private:
  OpBlock* NewOp(Context ctx, const std::vector<VarHandle>& reads,
                 const std::vector<VarHandle>& writes, int priority, std::string_view name,
                 OpOptions options);
  void Submit(OpBlock* op);
  void Ready(OpBlock* op);
  // Runs ready ops on this waiting thread (RunOneForWaiter) while `waiting()` and there are some.
  template <typename Waiting>
  void HelpWhile(Waiting waiting);
  void ExecuteSegment(OpBlock* op, RunContext run_context);
  // Runs a recorded segment through its CUDA graph when it can (engine/segment_graph.h); false
  // when the steps must run as usual.
  bool RunAsGraph(const OpBlock& op, RunContext run_context, const std::vector<ErrorRef>& carried);
  void RunStep(const SyncFn& fn, bool profile, const std::string& name, RunContext run_context);
  static void OnAsyncComplete(void* engine, void* op, std::exception_ptr error);
  // Stores the op's outcome on its written vars and completes it.
  void OnOpDone(OpBlock* op, std::exception_ptr error);
  void FinishOp(OpBlock* op);
  ErrorRef RecordError(std::exception_ptr error, const std::string& op_name);
  bool BulkOpenHere() const;
  void FlushBulk();
  // Submits a segment as one op: each of its vars once, as a write (incremented by the number of
  // steps that write it) when any step writes it, else as a read.
  void SubmitSegment(std::shared_ptr<const BulkSegment> segment, int priority, bool profile_steps);
  void AddToBulk(SyncFn fn, Context ctx, const std::vector<VarHandle>& reads,
                 const std::vector<VarHandle>& writes, int priority, std::string_view name,
                 OpOptions options);

  Profiler& profiler_;
  // Ops pushed and not yet finished (internal wait ops included).
  std::atomic<int64_t> pending_ops_{0};
  std::mutex idle_mutex_;
  std::condition_variable idle_cv_;  // notified (under idle_mutex_) when pending_ops_ hits 0
  std::atomic<uint64_t> graph_captures_{0}, graph_replays_{0}, graph_failed_captures_{0};
  std::mutex errors_mutex_;
  std::vector<ErrorRef> unreported_errors_;  // GUARDED_BY(errors_mutex_); failure order
};

// The engines (engine/naive_engine.cc, engine/threaded_engine.cc).
std::unique_ptr<Engine> NewNaiveEngine();
std::unique_ptr<Engine> NewThreadedEngine();
std::unique_ptr<Engine> NewThreadedEnginePerDevice();

}  // namespace mxlite::engine_internal

namespace mxlite {

// A var's FIFO of users. Access is granted in push order: any number of concurrent readers, or
// one writer. Invariant (under mutex_): when the queue is non-empty its head is blocked: a write
// waits for running reads or a running write, a read waits for a running write.
class EngineVar {
 public:
  using Dependency = engine_internal::Dependency;

  // Append a use; true when access is granted at once (the dependency is then not queued).
  bool AppendRead(Dependency* dependency);
  bool AppendWrite(Dependency* dependency);
  // Release a granted use. Dependencies granted as a result are returned as a list through
  // Dependency::next, in grant order.
  Dependency* CompleteRead();
  Dependency* CompleteWrite(uint32_t version_increment);

  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  bool delete_pushed() const { return delete_pushed_.load(std::memory_order_relaxed); }
  bool MarkDeletePushed() { return !delete_pushed_.exchange(true, std::memory_order_relaxed); }

  // The unreported error this var carries, or null. Written only by the op holding write access;
  // read by ops holding access (the var's handoff orders them).
  engine_internal::ErrorRef error;
  engine_internal::ErrorRef ActiveError() const {
    return error && !error->reported.load(std::memory_order_acquire) ? error : nullptr;
  }

 private:
  Dependency* GrantWaiting();            // REQUIRES(mutex_)
  void Enqueue(Dependency* dependency);  // REQUIRES(mutex_)

  std::mutex mutex_;
  int running_reads_ = 0;             // GUARDED_BY(mutex_)
  bool write_running_ = false;        // GUARDED_BY(mutex_)
  Dependency* head_ = nullptr;        // GUARDED_BY(mutex_); waiting uses, oldest first
  Dependency* tail_ = nullptr;        // GUARDED_BY(mutex_)
  std::atomic<uint64_t> version_{0};  // written under mutex_
  std::atomic<bool> delete_pushed_{false};
};

}  // namespace mxlite

namespace mxlite {

// Engine::NewSegment's result: a bulk segment built once (its steps record no profile flag of
// their own; the push decides).
class OpSegment : public engine_internal::BulkSegment {};

}  // namespace mxlite
