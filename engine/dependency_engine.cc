#include "engine/dependency_engine.h"

#include <algorithm>
#include <utility>

#include "core/build_info.h"
#include "core/error.h"
#include "core/logging.h"
#include "engine/device_streams.h"

namespace mxlite {

// ------------------------------------------------------------------------------------------------
// EngineVar
// ------------------------------------------------------------------------------------------------

void EngineVar::Enqueue(Dependency* dependency) {
  dependency->next = nullptr;
  if (tail_ == nullptr) {
    head_ = tail_ = dependency;
  } else {
    tail_->next = dependency;
    tail_ = dependency;
  }
}

bool EngineVar::AppendRead(Dependency* dependency) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!write_running_ && head_ == nullptr) {
    ++running_reads_;
    return true;
  }
  Enqueue(dependency);
  return false;
}

bool EngineVar::AppendWrite(Dependency* dependency) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!write_running_ && running_reads_ == 0 && head_ == nullptr) {
    write_running_ = true;
    return true;
  }
  Enqueue(dependency);
  return false;
}

EngineVar::Dependency* EngineVar::GrantWaiting() {
  Dependency* granted_head = nullptr;
  Dependency* granted_tail = nullptr;
  auto grant = [&](Dependency* dependency) {
    head_ = dependency->next;
    if (head_ == nullptr) tail_ = nullptr;
    dependency->next = nullptr;
    if (granted_tail == nullptr) {
      granted_head = granted_tail = dependency;
    } else {
      granted_tail->next = dependency;
      granted_tail = dependency;
    }
  };
  if (head_ != nullptr && head_->write) {
    if (running_reads_ == 0) {
      write_running_ = true;
      grant(head_);
    }
    return granted_head;
  }
  while (head_ != nullptr && !head_->write) {
    ++running_reads_;
    grant(head_);
  }
  return granted_head;
}

EngineVar::Dependency* EngineVar::CompleteRead() {
  std::lock_guard<std::mutex> lock(mutex_);
  --running_reads_;
  return running_reads_ == 0 ? GrantWaiting() : nullptr;
}

EngineVar::Dependency* EngineVar::CompleteWrite(uint32_t version_increment) {
  std::lock_guard<std::mutex> lock(mutex_);
  write_running_ = false;
  version_.store(version_.load(std::memory_order_relaxed) + version_increment,
                 std::memory_order_release);
  return GrantWaiting();
}

namespace engine_internal {

namespace {

// The calling thread's bulk. One per thread: a thread bulks into one engine at a time.
thread_local BulkState tls_bulk;

// Sorted, duplicate-free reads and writes; a var both read and written is a write only.
void DeduplicateVars(std::vector<EngineVar*>& reads, std::vector<EngineVar*>& writes) {
  std::sort(writes.begin(), writes.end());
  writes.erase(std::unique(writes.begin(), writes.end()), writes.end());
  std::sort(reads.begin(), reads.end());
  reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
  reads.erase(std::remove_if(reads.begin(), reads.end(),
                             [&](EngineVar* var) {
                               return std::binary_search(writes.begin(), writes.end(), var);
                             }),
              reads.end());
}

void CheckUsable(const std::vector<VarHandle>& vars, std::string_view op_name) {
  for (VarHandle var : vars) {
    MX_CHECK(var != nullptr) << "op '" << op_name << "' uses a null var";
    MX_CHECK(!var->delete_pushed()) << "op '" << op_name << "' uses a var after DeleteVariable";
  }
}

void CheckContext(Context ctx, std::string_view op_name) {
  if (!ctx.is_gpu()) return;  // cpu and cpu_pinned ops run on CPU workers
  MX_CHECK(ctx.device_id >= 0 && ctx.device_id < VisibleGpuCount())
      << "op '" << op_name << "' pushed to " << ctx << " but " << VisibleGpuCount()
      << " GPU(s) are visible";
}

const char* CategoryOf(FnProperty property) {
  return property == FnProperty::kNormal ? "operator" : "copy";
}

// The first unreported error carried by a var the op uses, or null.
ErrorRef FirstActiveError(const std::vector<Dependency>& deps) {
  for (const Dependency& dependency : deps) {
    if (ErrorRef error = dependency.var->ActiveError()) return error;
  }
  return nullptr;
}

std::exception_ptr NameFailedOp(std::exception_ptr error, const std::string& op_name) {
  std::string prefix = "engine op '" + op_name + "' failed: ";
  try {
    std::rethrow_exception(error);
  } catch (const OutOfMemoryError& e) {
    return std::make_exception_ptr(OutOfMemoryError(prefix + e.what()));
  } catch (const std::exception& e) {
    return std::make_exception_ptr(Error(prefix + e.what()));
  } catch (...) {
    return std::make_exception_ptr(Error(prefix + "unknown exception"));
  }
}

}  // namespace

void CompletionSignal::Notify() {
  std::lock_guard<std::mutex> lock(mutex_);
  done_ = true;
  cv_.notify_all();  // under the lock: the waiter may destroy *this as soon as it sees done_
}

void CompletionSignal::Wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return done_; });
}

bool CompletionSignal::Done() {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

// ------------------------------------------------------------------------------------------------
// DependencyEngine: pushing
// ------------------------------------------------------------------------------------------------

DependencyEngine::DependencyEngine() : profiler_(Profiler::Get()) {}

DependencyEngine::~DependencyEngine() = default;

VarHandle DependencyEngine::NewVar() { return new EngineVar(); }

uint64_t DependencyEngine::VarVersion(VarHandle var) const { return var->version(); }

OpBlock* DependencyEngine::NewOp(Context ctx, const std::vector<VarHandle>& reads,
                                 const std::vector<VarHandle>& writes, int priority,
                                 std::string_view name, OpOptions options) {
  CheckUsable(reads, name);
  CheckUsable(writes, name);
  CheckContext(ctx, name);
  std::vector<EngineVar*> unique_reads(reads.begin(), reads.end());
  std::vector<EngineVar*> unique_writes(writes.begin(), writes.end());
  DeduplicateVars(unique_reads, unique_writes);

  auto* op = new OpBlock();
  op->ctx = ctx;
  op->priority = priority;
  op->property = options.property;
  op->profile = profiler_.ShouldRecord(options.origin == OpOrigin::kExecutor);
  op->name = name;
  op->deps.resize(unique_reads.size() + unique_writes.size());
  size_t index = 0;
  for (EngineVar* var : unique_reads) op->deps[index++] = {var, op, false, 0, nullptr};
  for (EngineVar* var : unique_writes) op->deps[index++] = {var, op, true, 1, nullptr};
  return op;
}

void DependencyEngine::Submit(OpBlock* op) {
  CompletionSignal signal;
  bool wait_for_completion = PushWaitsForCompletion() && !op->run_inline;
  if (wait_for_completion) op->done_signal = &signal;
  pending_ops_.fetch_add(1, std::memory_order_relaxed);
  const int total = static_cast<int>(op->deps.size()) + 1;
  op->pending.store(total, std::memory_order_relaxed);
  int granted = 1;  // the registration guard
  for (Dependency& dependency : op->deps) {
    bool now = dependency.write ? dependency.var->AppendWrite(&dependency)
                                : dependency.var->AppendRead(&dependency);
    if (now) ++granted;
  }
  if (op->pending.fetch_sub(granted, std::memory_order_acq_rel) == granted) Ready(op);
  if (wait_for_completion) signal.Wait();
}

void DependencyEngine::Ready(OpBlock* op) {
  if (op->run_inline) {
    DeviceStreams no_streams;  // inline ops are internal CPU ops
    Execute(op, no_streams);
  } else {
    Dispatch(op);
  }
}

void DependencyEngine::PushSync(SyncFn fn, Context ctx, const std::vector<VarHandle>& reads,
                                const std::vector<VarHandle>& writes, int priority,
                                std::string_view name, OpOptions options) {
  if (BulkOpenHere() && options.property == FnProperty::kNormal) {
    AddToBulk(std::move(fn), ctx, reads, writes, priority, name, options);
    return;
  }
  FlushBulk();
  OpBlock* op = NewOp(ctx, reads, writes, priority, name, options);
  op->sync_fn = std::move(fn);
  Submit(op);
}

void DependencyEngine::PushAsync(AsyncFn fn, Context ctx, const std::vector<VarHandle>& reads,
                                 const std::vector<VarHandle>& writes, int priority,
                                 std::string_view name, OpOptions options) {
  FlushBulk();
  OpBlock* op = NewOp(ctx, reads, writes, priority, name, options);
  op->async_fn = std::move(fn);
  Submit(op);
}

void DependencyEngine::DeleteVariable(SyncFn on_delete, Context ctx, VarHandle var) {
  FlushBulk();
  MX_CHECK(var != nullptr) << "DeleteVariable of a null var";
  CheckContext(ctx, "DeleteVariable");
  MX_CHECK(var->MarkDeletePushed()) << "DeleteVariable called twice on one var";
  auto* op = new OpBlock();
  op->ctx = on_delete ? ctx : Context::CPU();  // a bare delete needs no stream
  op->name = "DeleteVariable";
  op->runs_on_poisoned = true;
  op->run_inline = !on_delete;
  op->sync_fn = std::move(on_delete);
  op->var_to_delete = var;
  op->deps.push_back({var, op, true, 1, nullptr});
  Submit(op);
}

// ------------------------------------------------------------------------------------------------
// Waiting
// ------------------------------------------------------------------------------------------------

// The waiting thread runs ops the way a worker does: they must not join the bulk this thread
// may have open (a worker has none), so the bulk is set aside while they run.
template <typename Waiting>
void DependencyEngine::HelpWhile(Waiting waiting) {
  const void* const bulk_owner = std::exchange(tls_bulk.owner, nullptr);  // flushed: no segment
  while (waiting() && RunOneForWaiter()) {
  }
  tls_bulk.owner = bulk_owner;
}

void DependencyEngine::WaitForVar(VarHandle var) {
  FlushBulk();
  MX_CHECK(var != nullptr && !var->delete_pushed()) << "WaitForVar on a deleted or null var";
  CompletionSignal signal;
  ErrorRef error;  // written by the wait op before it signals
  auto* op = new OpBlock();
  op->ctx = Context::CPU();
  op->name = "WaitForVar";
  op->runs_on_poisoned = true;
  op->run_inline = true;
  op->wait_only = true;
  op->sync_fn = [&signal, &error, var](RunContext) {
    error = var->ActiveError();
    signal.Notify();
  };
  // Exclusive access, so the wait also follows earlier readers of the var.
  op->deps.push_back({var, op, true, 0, nullptr});
  Submit(op);
  HelpWhile([&] { return !signal.Done(); });
  signal.Wait();
  if (error && !error->reported.exchange(true, std::memory_order_acq_rel)) {
    std::rethrow_exception(error->exception);
  }
}

void DependencyEngine::WaitUntilIdle() {
  std::unique_lock<std::mutex> lock(idle_mutex_);
  idle_cv_.wait(lock, [&] { return pending_ops_.load(std::memory_order_acquire) == 0; });
}

void DependencyEngine::WaitForAll() {
  FlushBulk();
  HelpWhile([&] { return pending_ops_.load(std::memory_order_acquire) != 0; });
  WaitUntilIdle();
  std::vector<ErrorRef> errors;
  {
    std::lock_guard<std::mutex> lock(errors_mutex_);
    errors.swap(unreported_errors_);
  }
  std::exception_ptr first;
  for (const ErrorRef& error : errors) {
    if (error->reported.exchange(true, std::memory_order_acq_rel)) continue;
    if (!first) {
      first = error->exception;
      continue;
    }
    try {
      std::rethrow_exception(error->exception);
    } catch (const std::exception& e) {
      MX_LOG(WARNING) << "WaitForAll reports only the first engine error; also: " << e.what();
    }
  }
  if (first) std::rethrow_exception(first);
}

// ------------------------------------------------------------------------------------------------
// Running and completing
// ------------------------------------------------------------------------------------------------

void DependencyEngine::Execute(OpBlock* op, DeviceStreams& streams) {
  RunContext run_context{op->ctx, nullptr};
  if (op->segment) {
    try {
      run_context.stream = streams.ForContext(op->ctx);
    } catch (...) {
      OnOpDone(op, std::current_exception());
      return;
    }
    ExecuteSegment(op, run_context);
    return;
  }
  if (op->wait_only) {
    op->sync_fn(run_context);
    FinishOp(op);
    return;
  }
  if (!op->runs_on_poisoned) {
    if (ErrorRef inherited = FirstActiveError(op->deps)) {
      for (Dependency& dependency : op->deps) {
        if (dependency.write) dependency.var->error = inherited;
      }
      FinishOp(op);
      return;
    }
  }
  if (op->profile) op->start_us = profiler_.NowMicros();
  if (op->async_fn) {
    try {
      run_context.stream = streams.ForContext(op->ctx);
      op->async_fn(run_context, CallbackOnComplete(&OnAsyncComplete, this, op));
    } catch (...) {
      OnOpDone(op, std::current_exception());  // the op did not call its callback (contract)
    }
    return;
  }
  std::exception_ptr error;
  try {
    run_context.stream = streams.ForContext(op->ctx);
    if (op->sync_fn) op->sync_fn(run_context);
    if (run_context.stream != nullptr)
      DeviceStreams::Synchronize(run_context.stream, op->name.c_str());
  } catch (...) {
    error = std::current_exception();
  }
  OnOpDone(op, std::move(error));
}

void DependencyEngine::OnAsyncComplete(void* engine, void* op, std::exception_ptr error) {
  static_cast<DependencyEngine*>(engine)->OnOpDone(static_cast<OpBlock*>(op), std::move(error));
}

void DependencyEngine::RunStep(const SyncFn& fn, bool profile, const std::string& name,
                               RunContext run_context) {
  if (!profile) {
    fn(run_context);
    return;
  }
  int64_t start_us = profiler_.NowMicros();
  auto record = [&] {
    profiler_.RecordOp(name, "operator", run_context.ctx, start_us, profiler_.NowMicros());
  };
  try {
    fn(run_context);
    // Profiled GPU steps are synchronised one by one so that their durations are real.
    if (run_context.stream != nullptr) DeviceStreams::Synchronize(run_context.stream, name.c_str());
  } catch (...) {
    record();
    throw;
  }
  record();
}

// Runs the steps in order with the same error rules as separate ops: `carried` holds, per var of
// the segment (BulkSegment::vars), the error it carries as the steps proceed.
void DependencyEngine::ExecuteSegment(OpBlock* op, RunContext run_context) {
  const BulkSegment& segment = *op->segment;
  std::vector<ErrorRef> carried;
  carried.reserve(segment.vars.size());
  for (const BulkSegment::Var& var : segment.vars) carried.push_back(var.var->ActiveError());
  const bool ran_as_graph = RunAsGraph(*op, run_context, carried);
  for (const BulkSegment::Step& step : segment.steps) {
    if (ran_as_graph) break;
    const uint32_t* refs = segment.var_refs.data() + step.first_ref;
    ErrorRef outcome;
    for (uint32_t i = 0; i < step.num_reads + step.num_writes && !outcome; ++i) {
      outcome = carried[refs[i]];
    }
    if (!outcome) {
      try {
        RunStep(step.fn, step.profile || op->profile_steps, step.name, run_context);
      } catch (...) {
        outcome = RecordError(std::current_exception(), step.name);
      }
    }
    for (uint32_t i = step.num_reads; i < step.num_reads + step.num_writes; ++i) {
      carried[refs[i]] = outcome;
    }
  }
  ErrorRef stream_error;
  if (run_context.stream != nullptr) {
    try {
      DeviceStreams::Synchronize(run_context.stream, segment.steps.back().name.c_str());
    } catch (...) {
      stream_error = RecordError(std::current_exception(), segment.steps.back().name);
    }
  }
  for (size_t i = 0; i < segment.vars.size(); ++i) {
    if (segment.vars[i].writes == 0) continue;
    segment.vars[i].var->error = carried[i] ? carried[i] : stream_error;
  }
  FinishOp(op);
}

bool DependencyEngine::RunAsGraph(const OpBlock& op, RunContext run_context,
                                  const std::vector<ErrorRef>& carried) {
  const BulkSegment& segment = *op.segment;
  if (segment.graph == nullptr || run_context.stream == nullptr || op.profile_steps) return false;
  for (const ErrorRef& error : carried) {
    if (error) return false;  // the steps decide which of them are skipped
  }
  GraphRun outcome = GraphRun::kRunSteps;
  try {
    outcome = segment.graph->Run(run_context.stream, [&] {
      for (const BulkSegment::Step& step : segment.steps) step.fn(run_context);
    });
  } catch (...) {
    return false;  // a launch failed: the steps run, and report an error of their own
  }
  switch (outcome) {
    case GraphRun::kCaptured:
      graph_captures_.fetch_add(1, std::memory_order_relaxed);
      return true;
    case GraphRun::kReplayed:
      graph_replays_.fetch_add(1, std::memory_order_relaxed);
      return true;
    case GraphRun::kCaptureFailed:
      graph_failed_captures_.fetch_add(1, std::memory_order_relaxed);
      return false;
    case GraphRun::kRunSteps:
      return false;
  }
  return false;
}

GraphReplayCounts DependencyEngine::graph_replay_counts() const {
  GraphReplayCounts counts;
  counts.captures = graph_captures_.load(std::memory_order_relaxed);
  counts.replays = graph_replays_.load(std::memory_order_relaxed);
  counts.failed_captures = graph_failed_captures_.load(std::memory_order_relaxed);
  return counts;
}

ErrorRef DependencyEngine::RecordError(std::exception_ptr error, const std::string& op_name) {
  auto record = std::make_shared<ErrorRecord>();
  record->exception = NameFailedOp(std::move(error), op_name);
  std::lock_guard<std::mutex> lock(errors_mutex_);
  unreported_errors_.push_back(record);
  return record;
}

void DependencyEngine::OnOpDone(OpBlock* op, std::exception_ptr error) {
  if (op->profile) {
    profiler_.RecordOp(op->name, CategoryOf(op->property), op->ctx, op->start_us,
                       profiler_.NowMicros());
  }
  ErrorRef outcome = error ? RecordError(std::move(error), op->name) : nullptr;
  for (Dependency& dependency : op->deps) {
    if (dependency.write) dependency.var->error = outcome;
  }
  FinishOp(op);
}

void DependencyEngine::FinishOp(OpBlock* op) {
  for (Dependency& dependency : op->deps) {
    EngineVar* var = dependency.var;
    Dependency* granted =
        dependency.write ? var->CompleteWrite(dependency.version_increment) : var->CompleteRead();
    while (granted != nullptr) {
      Dependency* next = granted->next;  // the granted op may run and free itself at once
      OpBlock* waiting = granted->op;
      if (waiting->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) Ready(waiting);
      granted = next;
    }
  }
  delete op->var_to_delete;
  if (op->done_signal != nullptr) op->done_signal->Notify();
  delete op;
  if (pending_ops_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    std::lock_guard<std::mutex> lock(idle_mutex_);
    idle_cv_.notify_all();
  }
}

// ------------------------------------------------------------------------------------------------
// Bulking
// ------------------------------------------------------------------------------------------------

bool DependencyEngine::BulkOpenHere() const { return tls_bulk.owner == this; }

void DependencyEngine::BeginBulk(int max_ops) {
  MX_CHECK_GE(max_ops, 1) << "BeginBulk needs a segment size";
  MX_CHECK(tls_bulk.owner == nullptr) << "BeginBulk while a bulk is already open on this thread";
  tls_bulk.owner = this;
  tls_bulk.max_ops = max_ops;
}

void DependencyEngine::EndBulk() {
  MX_CHECK(BulkOpenHere()) << "EndBulk without BeginBulk on this thread";
  FlushBulk();
  tls_bulk.owner = nullptr;
}

void BulkSegment::AddVars(Step& step, const std::vector<EngineVar*>& reads,
                          const std::vector<EngineVar*>& writes) {
  step.first_ref = static_cast<uint32_t>(var_refs.size());
  step.num_reads = static_cast<uint32_t>(reads.size());
  step.num_writes = static_cast<uint32_t>(writes.size());
  auto add = [&](EngineVar* var) -> uint32_t {
    auto [it, inserted] = var_index.try_emplace(var, static_cast<uint32_t>(vars.size()));
    if (inserted) vars.push_back({var, 0});
    var_refs.push_back(it->second);
    return it->second;
  };
  for (EngineVar* var : reads) add(var);
  const size_t first_write = var_refs.size();
  for (EngineVar* var : writes) {
    const uint32_t index = add(var);
    // A step counts once per var it writes, however often it lists it (as an op does).
    const auto step_writes_begin = var_refs.begin() + static_cast<std::ptrdiff_t>(first_write);
    if (std::find(step_writes_begin, var_refs.end() - 1, index) == var_refs.end() - 1) {
      ++vars[index].writes;
    }
  }
}

void DependencyEngine::AddToBulk(SyncFn fn, Context ctx, const std::vector<VarHandle>& reads,
                                 const std::vector<VarHandle>& writes, int priority,
                                 std::string_view name, OpOptions options) {
  CheckUsable(reads, name);
  CheckUsable(writes, name);
  CheckContext(ctx, name);
  if (tls_bulk.segment && tls_bulk.segment->ctx != ctx) FlushBulk();
  if (!tls_bulk.segment) {
    tls_bulk.segment = std::make_unique<BulkSegment>();
    tls_bulk.segment->ctx = ctx;
    tls_bulk.segment->priority = priority;
  }
  BulkSegment& segment = *tls_bulk.segment;
  segment.priority = std::max(segment.priority, priority);
  BulkSegment::Step& step = segment.steps.emplace_back();
  step.fn = std::move(fn);
  step.name = name;
  step.profile = profiler_.ShouldRecord(options.origin == OpOrigin::kExecutor);
  segment.AddVars(step, reads, writes);
  if (static_cast<int>(segment.steps.size()) >= tls_bulk.max_ops) FlushBulk();
}

void DependencyEngine::FlushBulk() {
  if (!BulkOpenHere() || !tls_bulk.segment) return;
  std::unique_ptr<BulkSegment> segment = std::move(tls_bulk.segment);
  segment->var_index.clear();  // only needed while the segment was built
  const int priority = segment->priority;
  SubmitSegment(std::move(segment), priority, /*profile_steps=*/false);  // steps decided at push
}

void DependencyEngine::SubmitSegment(std::shared_ptr<const BulkSegment> segment, int priority,
                                     bool profile_steps) {
  auto* op = new OpBlock();
  op->ctx = segment->ctx;
  op->priority = priority;
  op->profile = false;  // each step records its own event
  op->profile_steps = profile_steps;
  op->name = "bulk(" + std::to_string(segment->steps.size()) + " ops from " +
             segment->steps.front().name + ")";
  op->deps.reserve(segment->vars.size());
  for (const BulkSegment::Var& var : segment->vars) {
    if (var.writes == 0) op->deps.push_back({var.var, op, false, 0, nullptr});
  }
  for (const BulkSegment::Var& var : segment->vars) {
    if (var.writes > 0) op->deps.push_back({var.var, op, true, var.writes, nullptr});
  }
  op->segment = std::move(segment);
  Submit(op);
}

// ------------------------------------------------------------------------------------------------
// Recorded segments
// ------------------------------------------------------------------------------------------------

std::shared_ptr<const OpSegment> DependencyEngine::NewSegment(Context ctx,
                                                              std::vector<SegmentStep> steps,
                                                              SegmentReplayKey replay_key) {
  MX_CHECK(!steps.empty()) << "NewSegment needs at least one step";
  CheckContext(ctx, steps.front().name);
  auto segment = std::make_shared<OpSegment>();
  segment->ctx = ctx;
  segment->steps.reserve(steps.size());
  for (SegmentStep& given : steps) {
    CheckUsable(given.reads, given.name);
    CheckUsable(given.writes, given.name);
    BulkSegment::Step& step = segment->steps.emplace_back();
    step.fn = std::move(given.fn);
    step.name = std::move(given.name);
    segment->AddVars(step, given.reads, given.writes);
  }
  segment->var_index.clear();
  if (replay_key && ctx.is_gpu()) {
    segment->graph = std::make_shared<SegmentGraph>(
        std::move(replay_key), CudaGraphBackend(),
        segment->steps.front().name + " .. " + segment->steps.back().name);
  }
  return segment;
}

void DependencyEngine::PushSegment(const std::shared_ptr<const OpSegment>& segment, int priority,
                                   OpOptions options) {
  MX_CHECK(segment != nullptr) << "PushSegment of a null segment";
  MX_CHECK(options.property == FnProperty::kNormal)
      << "PushSegment: a segment runs on its context's workers (property kNormal)";
  FlushBulk();
  for (const BulkSegment::Var& var : segment->vars) {
    MX_CHECK(!var.var->delete_pushed())
        << "segment from '" << segment->steps.front().name << "' uses a var after DeleteVariable";
  }
  SubmitSegment(segment, priority, profiler_.ShouldRecord(options.origin == OpOrigin::kExecutor));
}

}  // namespace engine_internal
}  // namespace mxlite
