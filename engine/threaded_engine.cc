// ThreadedEngine (one shared pool) and ThreadedEnginePerDevice (pools per device).
#include <array>
#include <atomic>
#include <memory>
#include <mutex>

#include "core/build_info.h"
#include "core/error.h"
#include "core/settings.h"
#include "engine/dependency_engine.h"
#include "engine/worker_pool.h"

namespace mxlite::engine_internal {

namespace {

int SettingThreads(const char* name) { return static_cast<int>(settings().GetInt(name)); }

// One pool of MXNET_CPU_WORKER_NTHREADS + MXNET_CPU_PRIORITY_NTHREADS workers runs every op of
// every device; ops with priority > 0 jump the queue. Workers keep a stream per GPU.
class ThreadedEngine final : public DependencyEngine {
 public:
  ThreadedEngine()
      : pool_("worker",
              SettingThreads("MXNET_CPU_WORKER_NTHREADS") +
                  SettingThreads("MXNET_CPU_PRIORITY_NTHREADS"),
              [this](OpBlock* op, DeviceStreams& streams) { Execute(op, streams); }) {}
  ~ThreadedEngine() override { WaitUntilIdle(); }
  EngineType type() const override { return EngineType::kThreaded; }

 protected:
  void Dispatch(OpBlock* op) override { pool_.Push(op, op->priority > 0); }
  bool RunOneForWaiter() override { return pool_.RunOneForWaiter(); }

 private:
  WorkerPool pool_;
};

// A pool created on first use. Get() is one acquire load once the pool exists.
class LazyPool {
 public:
  template <typename Create>
  WorkerPool& Get(Create create) {
    WorkerPool* pool = pool_.load(std::memory_order_acquire);
    if (pool != nullptr) return *pool;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!owned_) {
      owned_ = create();
      pool_.store(owned_.get(), std::memory_order_release);
    }
    return *owned_;
  }
  // Joins the pool's workers (the engine is idle by then).
  void Reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    pool_.store(nullptr, std::memory_order_release);
    owned_.reset();
  }

 private:
  std::atomic<WorkerPool*> pool_{nullptr};
  std::mutex mutex_;
  std::unique_ptr<WorkerPool> owned_;  // GUARDED_BY(mutex_)
};

// CPU ops run on MXNET_CPU_WORKER_NTHREADS workers, or with priority > 0 on a separate pool of
// MXNET_CPU_PRIORITY_NTHREADS. Each GPU has MXNET_GPU_WORKER_NTHREADS workers for its ops and
// MXNET_GPU_COPY_NTHREADS for copies (FnProperty kCopyToGpu / kCopyFromGpu), each worker with its
// own stream. Pools other than the CPU workers are created on first use.
class ThreadedEnginePerDevice final : public DependencyEngine {
 public:
  static constexpr int kMaxGpus = 64;

  ThreadedEnginePerDevice()
      : cpu_threads_(SettingThreads("MXNET_CPU_WORKER_NTHREADS")),
        cpu_priority_threads_(SettingThreads("MXNET_CPU_PRIORITY_NTHREADS")),
        gpu_worker_threads_(SettingThreads("MXNET_GPU_WORKER_NTHREADS")),
        gpu_copy_threads_(SettingThreads("MXNET_GPU_COPY_NTHREADS")),
        cpu_pool_("cpu worker", cpu_threads_, Runner()) {
    MX_CHECK_LE(VisibleGpuCount(), kMaxGpus) << "more GPUs than ThreadedEnginePerDevice supports";
  }

  ~ThreadedEnginePerDevice() override {
    WaitUntilIdle();
    cpu_priority_pool_.Reset();
    for (LazyPool& pool : gpu_worker_pools_) pool.Reset();
    for (LazyPool& pool : gpu_copy_pools_) pool.Reset();
  }
  EngineType type() const override { return EngineType::kThreadedPerDevice; }

 protected:
  void Dispatch(OpBlock* op) override {
    if (!op->ctx.is_gpu()) {  // cpu and cpu_pinned
      if (op->priority > 0) {
        cpu_priority_pool_.Get([&] { return NewPool("cpu priority", cpu_priority_threads_); })
            .Push(op, true);
      } else {
        cpu_pool_.Push(op, false);
      }
      return;
    }
    const int device = op->ctx.device_id;  // validated at push: a visible GPU, < kMaxGpus
    const std::string label = "gpu(" + std::to_string(device) + ")";
    if (op->property == FnProperty::kNormal) {
      gpu_worker_pools_[device]
          .Get([&] { return NewPool(label + " worker", gpu_worker_threads_); })
          .Push(op, op->priority > 0);
    } else {
      gpu_copy_pools_[device]
          .Get([&] { return NewPool(label + " copy", gpu_copy_threads_); })
          .Push(op, op->priority > 0);
    }
  }
  // A waiter helps the CPU workers only; priority ops keep their own threads.
  bool RunOneForWaiter() override { return cpu_pool_.RunOneForWaiter(); }

 private:
  WorkerPool::Runner Runner() {
    return [this](OpBlock* op, DeviceStreams& streams) { Execute(op, streams); };
  }
  std::unique_ptr<WorkerPool> NewPool(const std::string& name, int threads) {
    return std::make_unique<WorkerPool>(name, threads, Runner());
  }

  const int cpu_threads_;
  const int cpu_priority_threads_;
  const int gpu_worker_threads_;
  const int gpu_copy_threads_;
  WorkerPool cpu_pool_;
  LazyPool cpu_priority_pool_;
  std::array<LazyPool, kMaxGpus> gpu_worker_pools_;
  std::array<LazyPool, kMaxGpus> gpu_copy_pools_;
};

}  // namespace

std::unique_ptr<Engine> NewThreadedEngine() { return std::make_unique<ThreadedEngine>(); }
std::unique_ptr<Engine> NewThreadedEnginePerDevice() {
  return std::make_unique<ThreadedEnginePerDevice>();
}

}  // namespace mxlite::engine_internal
