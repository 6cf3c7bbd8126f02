// CUDA device allocators (only in builds with MXLITE_USE_CUDA):
//   CudaAllocator        cudaMalloc/cudaFree on one GPU; cudaMemGetInfo for free/total.
//   CudaPinnedAllocator  cudaMallocHost/cudaFreeHost: page-locked host memory for fast copies.
// Each call first makes the allocator's device current on the calling thread. Thread-safe (the
// CUDA runtime is). A failed cudaMalloc returns nullptr after clearing CUDA's error state, so the
// pool can release its cache and retry.
#pragma once

#if MXLITE_USE_CUDA

#include "memory/device_allocator.h"

namespace mxlite {

class CudaAllocator : public DeviceAllocator {
 public:
  // Throws mxlite::Error when the device does not exist or cannot be made current.
  explicit CudaAllocator(int device_id);

  void* Allocate(size_t bytes) override;
  void Deallocate(void* ptr, size_t bytes) override;
  DeviceMemoryInfo MemoryInfo() const override;
  Context context() const override { return Context::GPU(device_id_); }
  std::string name() const override { return "cudaMalloc"; }

 private:
  void MakeCurrent() const;
  int device_id_;
};

class CudaPinnedAllocator : public DeviceAllocator {
 public:
  void* Allocate(size_t bytes) override;
  void Deallocate(void* ptr, size_t bytes) override;
  DeviceMemoryInfo MemoryInfo() const override;  // the host's memory
  Context context() const override { return Context::CPUPinned(); }
  std::string name() const override { return "cudaMallocHost"; }
};

}  // namespace mxlite

#endif  // MXLITE_USE_CUDA
