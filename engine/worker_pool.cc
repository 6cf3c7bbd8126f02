#include "engine/worker_pool.h"

#include "engine/profiler.h"

namespace mxlite::engine_internal {

WorkerPool::WorkerPool(std::string name, int threads, Runner run)
    : name_(std::move(name)), run_(std::move(run)) {
  threads_.reserve(threads);
  for (int index = 0; index < threads; ++index) {
    threads_.emplace_back([this, index] { WorkerLoop(index); });
  }
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
  }
  cv_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

namespace {
// The pool whose worker is the calling thread, if any.
thread_local const WorkerPool* tls_worker_of = nullptr;
}  // namespace

void WorkerPool::Push(OpBlock* op, bool high_priority) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    (high_priority ? high_priority_ : normal_).push_back(op);
    queued_.fetch_add(1);  // seq_cst: pairs with the spinner's decrement of spinning_
    // A worker of this pool that pushes (an op it just made ready) takes one op itself next, and
    // so does each spinning worker.
    int backlog = static_cast<int>(high_priority_.size() + normal_.size()) -
                  (tls_worker_of == this ? 1 : 0) - spinning_.load();
    if (idle_workers_ > wakeups_in_flight_ && backlog > wakeups_in_flight_) {
      ++wakeups_in_flight_;
      wake = true;
    }
  }
  if (wake) cv_.notify_one();
}

OpBlock* WorkerPool::Pop() {
  // Yield a few rounds before blocking: ops often arrive within microseconds, and a futex sleep
  // and wake-up costs more than that. The blocking path below re-checks the queue under the lock.
  constexpr int kSpinRounds = 16;
  for (int round = 0; round < kSpinRounds && queued_.load() == 0; ++round) {
    spinning_.fetch_add(1);
    std::this_thread::yield();
    spinning_.fetch_sub(1);
  }
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopped_ && high_priority_.empty() && normal_.empty()) {
    ++idle_workers_;
    cv_.wait(lock);
    --idle_workers_;
    if (wakeups_in_flight_ > 0) --wakeups_in_flight_;
  }
  std::deque<OpBlock*>& queue = high_priority_.empty() ? normal_ : high_priority_;
  if (queue.empty()) return nullptr;  // stopped and drained
  OpBlock* op = queue.front();
  queue.pop_front();
  queued_.fetch_sub(1);
  return op;
}

void WorkerPool::WorkerLoop(int index) {
  tls_worker_of = this;
  Profiler::Get().SetThreadName(name_ + " " + std::to_string(index));
  DeviceStreams streams;
  while (OpBlock* op = Pop()) run_(op, streams);
}

}  // namespace mxlite::engine_internal
