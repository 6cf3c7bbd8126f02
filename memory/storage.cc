#include "memory/storage.h"

#include "core/build_info.h"
#include "core/error.h"
#include "memory/cpu_allocator.h"
#include "memory/cuda_allocator.h"

namespace mxlite {

namespace {
std::pair<int, int> KeyOf(Context ctx) {
  return {static_cast<int>(ctx.device_type), ctx.device_id};
}
}  // namespace

std::unique_ptr<DeviceAllocator> CreateDeviceAllocator(Context ctx) {
  switch (ctx.device_type) {
    case DeviceType::kCPU:
      return std::make_unique<CpuAllocator>();
    case DeviceType::kCPUPinned:
#if MXLITE_USE_CUDA
      if (VisibleGpuCount() > 0) return std::make_unique<CudaPinnedAllocator>();
#endif
      return std::make_unique<CpuAllocator>(Context::CPUPinned());
    case DeviceType::kGPU:
#if MXLITE_USE_CUDA
      return std::make_unique<CudaAllocator>(ctx.device_id);
#else
      MX_THROW() << "cannot allocate on " << ctx << ": mxlite was built without CUDA "
                 << "(configure with -DMXLITE_USE_CUDA=ON)";
#endif
  }
  MX_THROW() << "invalid context " << ctx;
}

Storage& Storage::Global() {
  static Storage* storage = new Storage();  // never destroyed, see header
  return *storage;
}

PooledStorageManager& Storage::Manager(Context ctx) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<PooledStorageManager>& manager = managers_[KeyOf(ctx)];
  if (!manager) {
    try {
      manager = std::make_unique<PooledStorageManager>(
          CreateDeviceAllocator(ctx), PoolConfig::FromSettings(ctx.device_type));
    } catch (...) {
      managers_.erase(KeyOf(ctx));
      throw;
    }
  }
  return *manager;
}

void Storage::InstallManager(std::unique_ptr<PooledStorageManager> manager) {
  MX_CHECK(manager != nullptr) << "InstallManager needs a manager";
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<PooledStorageManager>& slot = managers_[KeyOf(manager->context())];
  MX_CHECK(slot == nullptr) << manager->context() << " already has a storage manager";
  slot = std::move(manager);
}

std::vector<Context> Storage::ActiveContexts() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Context> contexts;
  for (const auto& [key, manager] : managers_) contexts.push_back(manager->context());
  return contexts;
}

StorageHandle Storage::Alloc(size_t bytes, Context ctx) { return Manager(ctx).Alloc(bytes); }

void Storage::Free(const StorageHandle& handle) {
  if (handle.ptr != nullptr) Manager(handle.ctx).Free(handle);
}

void Storage::DirectFree(const StorageHandle& handle) {
  if (handle.ptr != nullptr) Manager(handle.ctx).DirectFree(handle);
}

void Storage::ReleaseAll(Context ctx) { Manager(ctx).ReleaseCached(); }

StorageStats Storage::Stats(Context ctx) { return Manager(ctx).stats(); }

std::optional<StorageStats> Storage::FindStats(Context ctx) {
  PooledStorageManager* manager = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = managers_.find(KeyOf(ctx));
    if (it == managers_.end() || it->second == nullptr) return std::nullopt;
    manager = it->second.get();
  }
  return manager->stats();
}

}  // namespace mxlite
