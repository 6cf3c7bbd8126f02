#include "ops/cpu/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/settings.h"

namespace mxlite::cpu {
namespace {

std::atomic<int> process_thread_override{0};  // 0: none
thread_local int scoped_thread_override = 0;  // 0: none
// Set on pool workers for good and on a caller while it runs tasks: a ParallelFor from here is
// nested.
thread_local bool inside_parallel_for = false;

int ConfiguredThreads() {
  static const int configured = [] {
    const int64_t value = settings().GetInt("MXNET_OMP_MAX_THREADS");
    if (value > 0) return static_cast<int>(std::min<int64_t>(value, 1024));
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }();
  return configured;
}

// The tasks [begin, end) dealt to one thread of a job. Its thread takes them from the front, in
// order; a thread that has run out of its own takes from the back. Both ends live in one word, so
// a task is taken exactly once.
class alignas(64) TaskShare {  // a cache line each: the owners take tasks without false sharing
 public:
  void Set(int64_t begin, int64_t end) {  // 0 <= begin <= end <= kMaxTasks
    range_.store(Pack(begin, end), std::memory_order_relaxed);
  }
  void Clear() { range_.store(0, std::memory_order_relaxed); }
  // The task taken, or -1 when the share is empty.
  int64_t TakeFront() {
    uint64_t range = range_.load(std::memory_order_relaxed);
    while (Begin(range) < End(range)) {
      if (range_.compare_exchange_weak(range, Pack(Begin(range) + 1, End(range)),
                                       std::memory_order_relaxed)) {
        return Begin(range);
      }
    }
    return -1;
  }
  int64_t TakeBack() {
    uint64_t range = range_.load(std::memory_order_relaxed);
    while (Begin(range) < End(range)) {
      if (range_.compare_exchange_weak(range, Pack(Begin(range), End(range) - 1),
                                       std::memory_order_relaxed)) {
        return End(range) - 1;
      }
    }
    return -1;
  }

  static constexpr int64_t kMaxTasks = (int64_t{1} << 32) - 1;  // an end fits 32 bits

 private:
  static uint64_t Pack(int64_t begin, int64_t end) {
    return static_cast<uint64_t>(begin) | static_cast<uint64_t>(end) << 32;
  }
  static int64_t Begin(uint64_t range) { return static_cast<int64_t>(range & 0xffffffffu); }
  static int64_t End(uint64_t range) { return static_cast<int64_t>(range >> 32); }

  std::atomic<uint64_t> range_{0};
};

// One job at a time: the caller holds run_mutex_ from publishing the job until every worker it
// asked for has checked out, so job fields never change under a running worker.
class ThreadPool {
 public:
  static ThreadPool& Global() {
    // Leaked on purpose: workers block in wait() at exit, and destroying the pool under them
    // (static destruction order) would be undefined.
    static ThreadPool* pool = new ThreadPool;
    return *pool;
  }

  // Runs the job with `threads` threads (caller included). Returns false, having run nothing, when
  // another caller holds the pool.
  bool TryRun(int64_t num_tasks, int threads, const std::function<void(int64_t)>& fn) {
    std::unique_lock<std::mutex> run_lock(run_mutex_, std::try_to_lock);
    if (!run_lock.owns_lock()) return false;
    const int helpers = threads - 1;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      EnsureWorkers(helpers);
      fn_ = &fn;
      DealShares(num_tasks, threads);
      error_ = nullptr;
      helpers_wanted_ = helpers;
      helpers_running_.store(helpers, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    RunTasks(0);
    SpinWhile([&] { return helpers_running_.load(std::memory_order_acquire) != 0; });
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return helpers_running_.load(std::memory_order_relaxed) == 0; });
    fn_ = nullptr;
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return true;
  }

 private:
  // Spinning this long after a job lets back-to-back ops (one GEMM per layer) skip the futex
  // wake-up (tens of microseconds on a VM); a sleeping worker costs nothing. The caller spins the
  // same way for helpers still running its job: sleeping on the condition variable cost ~8 us
  // per ParallelFor here, a tenth of a small depthwise layer.
  static constexpr auto kSpinBeforeSleep = std::chrono::microseconds(100);

  // Spins while `busy()` for up to kSpinBeforeSleep. `busy()` is checked after every pause: a
  // pause takes ~25 ns on the development machine (Zen 4 under KVM), so checking after 64 of them
  // left each wait up to 1.6 us late, twice per ParallelFor (a helper's start, the caller's
  // end). The clock (as dear as a pause) is read once per 64.
  template <typename Busy>
  static void SpinWhile(Busy busy) {
    const auto spin_until = std::chrono::steady_clock::now() + kSpinBeforeSleep;
    for (;;) {
      for (int i = 0; i < 64; ++i) {
        if (!busy()) return;
        CpuRelax();
      }
      if (std::chrono::steady_clock::now() >= spin_until) return;
    }
  }

  // Gives slot s (0: the caller, s: worker s - 1) the tasks [n * s / slots, n * (s + 1) / slots).
  // Called before the job's generation is published; no worker reads the shares between jobs.
  void DealShares(int64_t num_tasks, int slots) {  // REQUIRES(mutex_)
    if (slots > share_capacity_) {
      shares_ = std::make_unique<TaskShare[]>(static_cast<size_t>(slots));
      share_capacity_ = slots;
    }
    slots_ = slots;
    for (int s = 0; s < slots; ++s) {
      shares_[s].Set(num_tasks * s / slots, num_tasks * (s + 1) / slots);
    }
  }

  // Called before the job's generation is published.
  void EnsureWorkers(int count) {  // REQUIRES(mutex_)
    while (static_cast<int>(workers_.size()) < count) {
      const int index = static_cast<int>(workers_.size());
      // The job being published now is the first one the new worker must see.
      const uint64_t seen = generation_.load(std::memory_order_relaxed);
      workers_.emplace_back([this, index, seen] { WorkerLoop(index, seen); });
      workers_.back().detach();
    }
  }

  void WorkerLoop(int index, uint64_t seen) {
    inside_parallel_for = true;
    for (;;) {
      WaitForNextGeneration(seen);
      bool asked;
      {
        // Generation and helper count are read together, so a worker joins each job at most once.
        std::lock_guard<std::mutex> lock(mutex_);
        seen = generation_.load(std::memory_order_relaxed);
        asked = index < helpers_wanted_;
      }
      if (!asked) continue;
      RunTasks(index + 1);
      std::lock_guard<std::mutex> lock(mutex_);
      // Release: the caller that sees 0 while spinning reads what the tasks wrote.
      if (helpers_running_.fetch_sub(1, std::memory_order_acq_rel) == 1) done_.notify_one();
    }
  }

  void WaitForNextGeneration(uint64_t seen) {
    SpinWhile([&] { return generation_.load(std::memory_order_acquire) == seen; });
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait(lock, [&] { return generation_.load(std::memory_order_relaxed) != seen; });
  }

  static void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }

  // Runs the job's tasks on slot `slot`: its own share first, front to back, then tasks taken
  // from the back of the other shares until none is left.
  void RunTasks(int slot) {
    const bool was_inside = inside_parallel_for;
    inside_parallel_for = true;
    for (;;) {
      int64_t task = shares_[slot].TakeFront();
      for (int other = 1; task < 0 && other < slots_; ++other) {
        task = shares_[(slot + other) % slots_].TakeBack();
      }
      if (task < 0) break;
      try {
        (*fn_)(task);
      } catch (...) {
        for (int i = 0; i < slots_; ++i) shares_[i].Clear();  // skip what is left
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = std::current_exception();
      }
    }
    inside_parallel_for = was_inside;
  }

  std::mutex run_mutex_;  // held by the caller of the current job
  std::mutex mutex_;
  std::condition_variable wake_;         // workers: a new generation was published
  std::condition_variable done_;         // caller: helpers_running_ reached 0
  std::vector<std::thread> workers_;     // GUARDED_BY(mutex_); detached, never exit
  std::atomic<uint64_t> generation_{0};  // written under mutex_; one per job
  int helpers_wanted_ = 0;               // GUARDED_BY(mutex_): workers [0, this) join
  // Written under mutex_ (so the condition variable sees every change); read by a spinning caller.
  std::atomic<int> helpers_running_{0};
  std::exception_ptr error_;             // GUARDED_BY(mutex_): first failure of the job
  // Fixed while a job runs (written by its caller before the generation is published).
  const std::function<void(int64_t)>* fn_ = nullptr;
  int slots_ = 0;  // threads of the job, caller included
  // Per slot, the tasks it has not taken yet; reallocated (between jobs) when a job wants more.
  std::unique_ptr<TaskShare[]> shares_;
  int share_capacity_ = 0;
};

void RunInline(int64_t num_tasks, const std::function<void(int64_t)>& fn) {
  const bool was_inside = inside_parallel_for;
  inside_parallel_for = true;
  try {
    for (int64_t task = 0; task < num_tasks; ++task) fn(task);
  } catch (...) {
    inside_parallel_for = was_inside;
    throw;
  }
  inside_parallel_for = was_inside;
}

}  // namespace

int IntraOpThreads() {
  if (scoped_thread_override > 0) return scoped_thread_override;
  const int process = process_thread_override.load(std::memory_order_relaxed);
  return process > 0 ? process : ConfiguredThreads();
}

void SetIntraOpThreads(int threads) {
  MX_CHECK(threads >= 0)
      << "SetIntraOpThreads: threads must be >= 0 (0 = MXNET_OMP_MAX_THREADS), got " << threads;
  process_thread_override.store(threads, std::memory_order_relaxed);
}

ScopedIntraOpThreads::ScopedIntraOpThreads(int threads) : previous_(scoped_thread_override) {
  MX_CHECK(threads >= 1) << "ScopedIntraOpThreads: threads must be >= 1, got " << threads;
  scoped_thread_override = threads;
}

ScopedIntraOpThreads::~ScopedIntraOpThreads() { scoped_thread_override = previous_; }

void ParallelFor(int64_t num_tasks, const std::function<void(int64_t)>& fn) {
  if (num_tasks <= 0) return;
  const int threads = static_cast<int>(std::min<int64_t>(num_tasks, IntraOpThreads()));
  if (threads > 1 && !inside_parallel_for && num_tasks <= TaskShare::kMaxTasks &&
      ThreadPool::Global().TryRun(num_tasks, threads, fn)) {
    return;
  }
  RunInline(num_tasks, fn);
}

}  // namespace mxlite::cpu
