// DeviceAllocator: the thin layer under the pools that really asks a device for memory.
//
// Implementations: CpuAllocator (aligned host memory, huge pages for large chunks), CudaAllocator
// and CudaPinnedAllocator (memory/cuda_allocator.h), and SimulatedDevice (a fixed-capacity device
// for tests). Allocate() returns nullptr when the device has no memory left — it never throws for
// that, so the pool can release its cache and retry. Implementations are thread-safe.
#pragma once

#include <cstddef>
#include <string>

#include "core/context.h"

namespace mxlite {

struct DeviceMemoryInfo {
  size_t free_bytes = 0;
  size_t total_bytes = 0;
};

class DeviceAllocator {
 public:
  virtual ~DeviceAllocator() = default;

  // Returns `bytes` bytes aligned to at least 64, or nullptr when the device is out of memory.
  virtual void* Allocate(size_t bytes) = 0;
  // Gives back a pointer from Allocate(); `bytes` is the size it was allocated with.
  virtual void Deallocate(void* ptr, size_t bytes) = 0;
  // What the device has free now and in total (for the reserve rule and error messages).
  virtual DeviceMemoryInfo MemoryInfo() const = 0;
  virtual Context context() const = 0;
  // Short description for messages and stats, e.g. "host memory", "cudaMalloc".
  virtual std::string name() const = 0;
};

}  // namespace mxlite
