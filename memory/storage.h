// Storage: the process-wide entry point for device memory (docs/design.md, Memory).
//
//   StorageHandle h = Storage::Global().Alloc(bytes, Context::CPU());
//   ...
//   Storage::Global().Free(h);          // back to the pool
//
// One PooledStorageManager per context, created on first use from the settings registry:
// MXNET_GPU_MEM_* for GPUs, MXNET_CPU_MEM_* for host memory (cpu and cpu_pinned). Host memory is
// 64-byte aligned. A GPU context in a build without CUDA, or a GPU that does not exist, is a clear
// error. Tests may install a manager of their own for a context (e.g. over a SimulatedDevice).
//
// Thread safety: every method may be called from any thread. The global instance is never
// destroyed (engine threads may free memory while the process exits).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "memory/pooled_storage_manager.h"

namespace mxlite {

class Storage {
 public:
  static Storage& Global();

  // Size 0 gives a null handle.
  StorageHandle Alloc(size_t bytes, Context ctx);
  // Back to the pool of handle.ctx (no-op for a null handle).
  void Free(const StorageHandle& handle);
  // Straight back to the device, bypassing the pool.
  void DirectFree(const StorageHandle& handle);
  // Gives every cached block of `ctx` back to the device (MXNet users asked for this for years).
  void ReleaseAll(Context ctx);

  StorageStats Stats(Context ctx);
  // Stats of `ctx` if it has a manager already (never creates one; for the profiler).
  std::optional<StorageStats> FindStats(Context ctx);
  // The manager of `ctx`, created on first use.
  PooledStorageManager& Manager(Context ctx);
  // Installs `manager` for its context; throws if that context already has one.
  void InstallManager(std::unique_ptr<PooledStorageManager> manager);
  // Contexts that have a manager now.
  std::vector<Context> ActiveContexts();

 private:
  std::mutex mutex_;
  std::map<std::pair<int, int>, std::unique_ptr<PooledStorageManager>> managers_;  // GUARDED_BY(mutex_)
};

// The allocator for `ctx`: CpuAllocator, CudaAllocator or CudaPinnedAllocator (cpu_pinned falls
// back to ordinary host memory in builds without CUDA, as in MXNet).
std::unique_ptr<DeviceAllocator> CreateDeviceAllocator(Context ctx);

}  // namespace mxlite
