// CpuAllocator: aligned host memory for Context::CPU().
//
// Fresh pages cost a page fault each on first touch (~10 µs per 4 KiB on the development machine),
// which is why everything above it pools. Chunks of at least kHugePageBytes are 2 MiB aligned and
// marked MADV_HUGEPAGE so the kernel can back them with transparent huge pages (one fault per
// 2 MiB instead of 512). Small chunks are 64-byte aligned (a cache line, and an AVX-512 vector).
#pragma once

#include "memory/device_allocator.h"

namespace mxlite {

class CpuAllocator : public DeviceAllocator {
 public:
  static constexpr size_t kAlignment = 64;
  static constexpr size_t kHugePageBytes = size_t{2} << 20;

  // `ctx` is cpu, or cpu_pinned when standing in for pinned memory in a process without a GPU.
  explicit CpuAllocator(Context ctx = Context::CPU()) : ctx_(ctx) {}

  void* Allocate(size_t bytes) override;
  void Deallocate(void* ptr, size_t bytes) override;
  // Free is MemAvailable from /proc/meminfo; total is the physical memory.
  DeviceMemoryInfo MemoryInfo() const override;
  Context context() const override { return ctx_; }
  std::string name() const override { return "host memory"; }

 private:
  Context ctx_;
};

}  // namespace mxlite
