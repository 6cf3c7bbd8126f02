// SimulatedDevice: a DeviceAllocator with a fixed capacity, for testing the pools on any machine.
//
// Memory is real host memory (so tests can write to it) but the device refuses any allocation
// that would take its usage past `capacity_bytes`, like a GPU that is full. Tests can also make the
// next N allocations fail regardless of capacity, and can ask for each block to be filled with a
// poison byte when it is allocated and when it is given back (to catch use of freed memory).
// Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>

#include "memory/device_allocator.h"

namespace mxlite {

class SimulatedDevice : public DeviceAllocator {
 public:
  explicit SimulatedDevice(size_t capacity_bytes, Context ctx = Context::GPU(0));

  void* Allocate(size_t bytes) override;
  void Deallocate(void* ptr, size_t bytes) override;
  DeviceMemoryInfo MemoryInfo() const override;
  Context context() const override { return ctx_; }
  std::string name() const override { return "simulated device"; }

  void FailNextAllocations(int count);
  // When set, blocks are filled with `byte` on Allocate and on Deallocate.
  void SetPoisonByte(int byte);
  size_t used_bytes() const;
  int64_t allocation_count() const;

 private:
  const size_t capacity_bytes_;
  const Context ctx_;
  mutable std::mutex mutex_;
  size_t used_bytes_ = 0;         // GUARDED_BY(mutex_)
  int failures_pending_ = 0;      // GUARDED_BY(mutex_)
  int poison_byte_ = -1;          // GUARDED_BY(mutex_); -1: no poisoning
  int64_t allocation_count_ = 0;  // GUARDED_BY(mutex_)
};

}  // namespace mxlite
