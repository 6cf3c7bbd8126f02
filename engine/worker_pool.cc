#include "engine/worker_pool.h"

#include "engine/profiler.h"

namespace mxlite::engine_internal {

WorkerPool::WorkerPool(std::string name, int threads, Runner run)
    : name_(std::move(name)), run_(std::move(run)), slots_(threads) {
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
  // A waiter running an op may hold the last slot; it wakes a worker when it gives the slot back.
  while (!stopped_ && (QueueEmpty() || running_.load() >= slots_)) {
    ++idle_workers_;
    cv_.wait(lock);
    --idle_workers_;
    if (wakeups_in_flight_ > 0) --wakeups_in_flight_;
  }
  if (QueueEmpty()) return nullptr;  // stopped and drained
  running_.fetch_add(1);
  return TakeFront();
}

bool WorkerPool::RunOneForWaiter() {
  OpBlock* op = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (QueueEmpty() || running_.load() >= slots_ || FrontOp()->ctx.is_gpu()) return false;
    running_.fetch_add(1);
    op = TakeFront();
  }
  // While it runs the op, the waiter counts as this pool's worker: an op it makes ready is one it
  // may take next, so Push need not wake a worker for it.
  const WorkerPool* const previous = tls_worker_of;
  tls_worker_of = this;
  DeviceStreams no_streams;  // a CPU op needs none
  run_(op, no_streams);
  tls_worker_of = previous;
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    running_.fetch_sub(1);
    const int backlog = static_cast<int>(high_priority_.size() + normal_.size()) - spinning_.load();
    if (idle_workers_ > wakeups_in_flight_ && backlog > wakeups_in_flight_) {
      ++wakeups_in_flight_;
      wake = true;
    }
  }
  if (wake) cv_.notify_one();
  return true;
}

bool WorkerPool::QueueEmpty() const { return high_priority_.empty() && normal_.empty(); }

OpBlock* WorkerPool::FrontOp() const {
  return high_priority_.empty() ? normal_.front() : high_priority_.front();
}

OpBlock* WorkerPool::TakeFront() {
  std::deque<OpBlock*>& queue = high_priority_.empty() ? normal_ : high_priority_;
  OpBlock* op = queue.front();
  queue.pop_front();
  queued_.fetch_sub(1);
  return op;
}

void WorkerPool::WorkerLoop(int index) {
  tls_worker_of = this;
  Profiler::Get().SetThreadName(name_ + " " + std::to_string(index));
  DeviceStreams streams;
  while (OpBlock* op = Pop()) {
    run_(op, streams);
    running_.fetch_sub(1);  // this worker is awake and takes the next op itself
  }
}

}  // namespace mxlite::engine_internal
