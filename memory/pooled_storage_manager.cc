#include "memory/pooled_storage_manager.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"

namespace mxlite {

std::string FormatBytes(size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  if (unit == 0) {
    std::snprintf(text, sizeof(text), "%zu B", bytes);
  } else {
    std::snprintf(text, sizeof(text), "%.2f %s", value, units[unit]);
  }
  return text;
}

PooledStorageManager::PooledStorageManager(std::unique_ptr<DeviceAllocator> device,
                                           PoolConfig config)
    : device_(std::move(device)), config_(config) {
  MX_CHECK(device_ != nullptr) << "a storage manager needs a device allocator";
}

PooledStorageManager::~PooledStorageManager() {
  std::lock_guard<std::mutex> lock(mutex_);
  ReleaseCachedLocked();
}

StorageHandle PooledStorageManager::Alloc(size_t bytes) {
  StorageHandle handle{nullptr, bytes, device_->context()};
  if (bytes == 0) return handle;
  const size_t block_bytes = RoundedBlockSize(config_, bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  auto list = free_blocks_.find(block_bytes);
  if (config_.type != PoolType::kUnpooled && list != free_blocks_.end() && !list->second.empty()) {
    handle.ptr = list->second.back();
    list->second.pop_back();
    stats_.bytes_cached -= block_bytes;
    ++stats_.hits;
  } else {
    handle.ptr = AllocateFromDevice(block_bytes, bytes);
    ++stats_.misses;
  }
  in_use_.emplace(handle.ptr, std::make_pair(block_bytes, bytes));
  stats_.bytes_in_use += block_bytes;
  stats_.bytes_requested += bytes;
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  return handle;
}

void* PooledStorageManager::AllocateFromDevice(size_t block_bytes, size_t requested_bytes) {
  if (stats_.bytes_cached > 0 && config_.reserve_percent > 0) {
    const DeviceMemoryInfo info = device_->MemoryInfo();
    const size_t reserve = info.total_bytes / 100 * static_cast<size_t>(config_.reserve_percent);
    if (info.free_bytes < block_bytes + reserve) ReleaseCachedLocked();
  }
  void* ptr = device_->Allocate(block_bytes);
  if (ptr == nullptr) {
    const size_t cached_before = stats_.bytes_cached;
    ReleaseCachedLocked();
    ptr = device_->Allocate(block_bytes);
    if (ptr == nullptr) {
      const DeviceMemoryInfo info = device_->MemoryInfo();
      throw OutOfMemoryError(
          "out of memory on " + device_->context().ToString() + " (" + device_->name() +
          "): asked for " + FormatBytes(requested_bytes) + " (a block of " +
          FormatBytes(block_bytes) + "); the pool has " + FormatBytes(stats_.bytes_in_use) +
          " in use and " + FormatBytes(stats_.bytes_cached) + " cached (released " +
          FormatBytes(cached_before) + " of cache before retrying); the device has " +
          FormatBytes(info.free_bytes) + " free of " + FormatBytes(info.total_bytes));
    }
  }
  ++stats_.device_allocations;
  return ptr;
}

size_t PooledStorageManager::TakeInUseBlock(const StorageHandle& handle, const char* caller) {
  MX_CHECK(handle.ctx == device_->context())
      << caller << ": a block of " << handle.ctx << " given to the storage manager of "
      << device_->context();
  auto entry = in_use_.find(handle.ptr);
  MX_CHECK(entry != in_use_.end())
      << caller << ": pointer " << handle.ptr << " on " << handle.ctx
      << " was not allocated by this pool or was already freed";
  const auto [block_bytes, requested_bytes] = entry->second;
  in_use_.erase(entry);
  stats_.bytes_in_use -= block_bytes;
  stats_.bytes_requested -= requested_bytes;
  return block_bytes;
}

void PooledStorageManager::Free(const StorageHandle& handle) {
  if (handle.ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t block_bytes = TakeInUseBlock(handle, "Free");
  if (config_.type == PoolType::kUnpooled) {
    device_->Deallocate(handle.ptr, block_bytes);
    ++stats_.device_frees;
    return;
  }
  free_blocks_[block_bytes].push_back(handle.ptr);
  stats_.bytes_cached += block_bytes;
}

void PooledStorageManager::DirectFree(const StorageHandle& handle) {
  if (handle.ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t block_bytes = TakeInUseBlock(handle, "DirectFree");
  device_->Deallocate(handle.ptr, block_bytes);
  ++stats_.device_frees;
}

void PooledStorageManager::ReleaseCached() {
  std::lock_guard<std::mutex> lock(mutex_);
  ReleaseCachedLocked();
}

void PooledStorageManager::ReleaseCachedLocked() {
  if (stats_.bytes_cached == 0) return;
  for (auto& [block_bytes, blocks] : free_blocks_) {
    for (void* ptr : blocks) {
      device_->Deallocate(ptr, block_bytes);
      ++stats_.device_frees;
    }
  }
  free_blocks_.clear();
  stats_.bytes_cached = 0;
  ++stats_.cache_releases;
}

StorageStats PooledStorageManager::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace mxlite
