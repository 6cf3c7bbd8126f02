#include "memory/cuda_allocator.h"

#if MXLITE_USE_CUDA

#include <cuda_runtime_api.h>

#include "core/error.h"
#include "memory/cpu_allocator.h"

namespace mxlite {

CudaAllocator::CudaAllocator(int device_id) : device_id_(device_id) {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    MX_THROW() << "cannot use gpu(" << device_id << "): " << cudaGetErrorString(status);
  }
  MX_CHECK(device_id >= 0 && device_id < count)
      << "cannot use gpu(" << device_id << "): " << count << " GPU(s) visible";
  MakeCurrent();
}

void CudaAllocator::MakeCurrent() const {
  cudaError_t status = cudaSetDevice(device_id_);
  MX_CHECK(status == cudaSuccess) << "cudaSetDevice(" << device_id_
                                  << ") failed: " << cudaGetErrorString(status);
}

void* CudaAllocator::Allocate(size_t bytes) {
  MakeCurrent();
  void* ptr = nullptr;
  if (cudaMalloc(&ptr, bytes) != cudaSuccess) {
    cudaGetLastError();  // an out-of-memory error is not sticky; clear it for the retry
    return nullptr;
  }
  return ptr;
}

void CudaAllocator::Deallocate(void* ptr, size_t /*bytes*/) {
  MakeCurrent();
  cudaError_t status = cudaFree(ptr);
  MX_CHECK(status == cudaSuccess) << "cudaFree on gpu(" << device_id_
                                  << ") failed: " << cudaGetErrorString(status);
}

DeviceMemoryInfo CudaAllocator::MemoryInfo() const {
  MakeCurrent();
  DeviceMemoryInfo info;
  cudaError_t status = cudaMemGetInfo(&info.free_bytes, &info.total_bytes);
  MX_CHECK(status == cudaSuccess) << "cudaMemGetInfo on gpu(" << device_id_
                                  << ") failed: " << cudaGetErrorString(status);
  return info;
}

void* CudaPinnedAllocator::Allocate(size_t bytes) {
  void* ptr = nullptr;
  if (cudaMallocHost(&ptr, bytes) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return ptr;
}

void CudaPinnedAllocator::Deallocate(void* ptr, size_t /*bytes*/) {
  cudaError_t status = cudaFreeHost(ptr);
  MX_CHECK(status == cudaSuccess) << "cudaFreeHost failed: " << cudaGetErrorString(status);
}

DeviceMemoryInfo CudaPinnedAllocator::MemoryInfo() const { return CpuAllocator().MemoryInfo(); }

}  // namespace mxlite

#endif  // MXLITE_USE_CUDA
