// PooledStorageManager: the device-independent pool that sits on one DeviceAllocator.
//
// Alloc rounds the request to a block size (memory/pool_config.h) and serves it from the free
// list of that exact block size (a hit) or from the device (a miss). Free puts the block back on
// its list; DirectFree gives it to the device. On a miss:
//   1. reserve: if taking the block would leave less than reserve_percent of the device's memory
//      free, every cached block is released first;
//   2. if the device still refuses, every cached block is released and the allocation retried once;
//   3. if that fails too, OutOfMemoryError says what was asked, what the pool holds (in use and
//      cached) and what the device has free. The manager stays usable.
// Size 0 gives a null handle; freeing a null handle does nothing. Freeing a pointer the manager
// did not hand out (or twice) is an mxlite::Error.
//
// Thread safety: all methods may be called from any thread; one mutex guards the lists and stats
// and is held across device calls (allocation is not on any hot path once the pool is warm).
// Ownership: the manager owns its DeviceAllocator and every cached block; blocks in use belong to
// the caller until freed. The destructor releases cached blocks (blocks still in use are left to
// the device, which is torn down with the process).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "memory/device_allocator.h"
#include "memory/pool_config.h"

namespace mxlite {

// A block of device memory: the pointer, the size asked for, and where it lives.
struct StorageHandle {
  void* ptr = nullptr;
  size_t size = 0;
  Context ctx;

  explicit operator bool() const { return ptr != nullptr; }
};

struct StorageStats {
  size_t bytes_in_use = 0;         // block bytes handed out and not yet freed
  size_t bytes_requested = 0;      // bytes asked for by those blocks (<= bytes_in_use)
  size_t bytes_cached = 0;         // block bytes on the free lists
  size_t peak_bytes_in_use = 0;
  int64_t device_allocations = 0;  // allocations that reached the device
  int64_t device_frees = 0;        // blocks given back to the device
  int64_t hits = 0;                // allocations served from the free lists
  int64_t misses = 0;              // allocations that went to the device
  int64_t cache_releases = 0;      // times the whole cache was released (reserve, retry, user)
};

class PooledStorageManager {
 public:
  PooledStorageManager(std::unique_ptr<DeviceAllocator> device, PoolConfig config);
  ~PooledStorageManager();

  PooledStorageManager(const PooledStorageManager&) = delete;
  PooledStorageManager& operator=(const PooledStorageManager&) = delete;

  StorageHandle Alloc(size_t bytes);
  void Free(const StorageHandle& handle);
  void DirectFree(const StorageHandle& handle);
  // Gives every cached block back to the device (blocks in use are untouched).
  void ReleaseCached();

  StorageStats stats() const;
  const PoolConfig& config() const { return config_; }
  Context context() const { return device_->context(); }
  DeviceAllocator& device() { return *device_; }

 private:
  void* AllocateFromDevice(size_t block_bytes, size_t requested_bytes);  // REQUIRES(mutex_)
  void ReleaseCachedLocked();                                             // REQUIRES(mutex_)
  size_t TakeInUseBlock(const StorageHandle& handle, const char* caller); // REQUIRES(mutex_)

  const std::unique_ptr<DeviceAllocator> device_;
  const PoolConfig config_;

  mutable std::mutex mutex_;
  // Free lists by block size. Invariant: bytes_cached == sum of key * list size.
  std::map<size_t, std::vector<void*>> free_blocks_;  // GUARDED_BY(mutex_)
  // Blocks handed out: pointer -> (block size, requested size).
  std::unordered_map<void*, std::pair<size_t, size_t>> in_use_;  // GUARDED_BY(mutex_)
  StorageStats stats_;                                            // GUARDED_BY(mutex_)
};

// "1.50 GiB", "4.0 KiB", "512 B": sizes for messages.
std::string FormatBytes(size_t bytes);

}  // namespace mxlite
