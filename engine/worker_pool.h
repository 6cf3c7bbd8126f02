// Internal to engine/: a fixed set of worker threads draining one queue of ready ops.
//
// Ops pushed with high priority are taken before normal ones; each class is FIFO. Each worker owns
// its DeviceStreams (so a GPU worker has its own stream per device). The destructor stops the
// queue and joins the workers after they have drained it; callers make sure no op is still
// pending (DependencyEngine::WaitUntilIdle) before destroying a pool.
//
// A thread waiting on the engine may run a queued CPU op itself (RunOneForWaiter), as a worker
// would: no futex wake-up of a worker before the op and none of the waiter after it. The pool runs
// at most `threads` ops at once, workers and waiters together, so MXNET_CPU_WORKER_NTHREADS still
// bounds how many CPU ops run concurrently.
// Thread safety: Push and RunOneForWaiter may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/dependency_engine.h"
#include "engine/device_streams.h"

namespace mxlite::engine_internal {

class WorkerPool {
 public:
  using Runner = std::function<void(OpBlock*, DeviceStreams&)>;

  // Starts `threads` workers named "<name> <index>" in the profiler.
  WorkerPool(std::string name, int threads, Runner run);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void Push(OpBlock* op, bool high_priority);

  // Runs the next queued op on the calling thread when it is a CPU op and fewer than `threads` ops
  // of this pool are running; returns whether it ran one. For threads waiting on the engine (they
  // hold no engine lock); the op sees the caller's thread-local state (e.g. ScopedIntraOpThreads).
  bool RunOneForWaiter();

 private:
  OpBlock* Pop();  // blocks; nullptr once stopped and drained
  bool QueueEmpty() const;   // REQUIRES(mutex_)
  OpBlock* FrontOp() const;  // REQUIRES(mutex_); the op TakeFront would take
  OpBlock* TakeFront();      // REQUIRES(mutex_); the queue is not empty
  void WorkerLoop(int index);

  const std::string name_;
  const Runner run_;
  const int slots_;  // ops that may run at once: the worker count
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<OpBlock*> high_priority_;  // GUARDED_BY(mutex_)
  std::deque<OpBlock*> normal_;         // GUARDED_BY(mutex_)
  int idle_workers_ = 0;                // GUARDED_BY(mutex_); workers blocked in Pop
  // Workers notified but not yet awake. Waking costs a futex call and a context switch, so Push
  // wakes a worker only for ops that no awake or already-notified worker will take.
  int wakeups_in_flight_ = 0;  // GUARDED_BY(mutex_)
  // Ops queued (mirrors the deques' sizes, written under mutex_) and workers briefly yielding
  // before they block: a spinning worker takes the next op, so Push need not wake anyone.
  std::atomic<int> queued_{0};
  std::atomic<int> spinning_{0};
  // Ops running, on workers or waiters. Taken under mutex_; a worker gives its slot back without
  // the lock (it takes the next op itself), a waiter under it (a worker may wait for the slot).
  std::atomic<int> running_{0};
  bool stopped_ = false;  // GUARDED_BY(mutex_)
  std::vector<std::thread> threads_;
};

}  // namespace mxlite::engine_internal
