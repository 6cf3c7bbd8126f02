#include "memory/simulated_device.h"

#include <cstdlib>
#include <cstring>

namespace mxlite {

SimulatedDevice::SimulatedDevice(size_t capacity_bytes, Context ctx)
    : capacity_bytes_(capacity_bytes), ctx_(ctx) {}

void* SimulatedDevice::Allocate(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failures_pending_ > 0) {
    --failures_pending_;
    return nullptr;
  }
  if (bytes > capacity_bytes_ - used_bytes_) return nullptr;
  void* ptr = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (ptr == nullptr) return nullptr;
  if (poison_byte_ >= 0) std::memset(ptr, poison_byte_, bytes);
  used_bytes_ += bytes;
  ++allocation_count_;
  return ptr;
}

void SimulatedDevice::Deallocate(void* ptr, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (poison_byte_ >= 0) std::memset(ptr, poison_byte_, bytes);
  std::free(ptr);
  used_bytes_ -= bytes;
}

DeviceMemoryInfo SimulatedDevice::MemoryInfo() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {capacity_bytes_ - used_bytes_, capacity_bytes_};
}

void SimulatedDevice::FailNextAllocations(int count) {
  std::lock_guard<std::mutex> lock(mutex_);
  failures_pending_ = count;
}

void SimulatedDevice::SetPoisonByte(int byte) {
  std::lock_guard<std::mutex> lock(mutex_);
  poison_byte_ = byte;
}

size_t SimulatedDevice::used_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return used_bytes_;
}

int64_t SimulatedDevice::allocation_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return allocation_count_;
}

}  // namespace mxlite
