#include "memory/cpu_allocator.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace mxlite {

void* CpuAllocator::Allocate(size_t bytes) {
  const bool huge = bytes >= kHugePageBytes;
  const size_t alignment = huge ? kHugePageBytes : kAlignment;
  // aligned_alloc wants a size that is a multiple of the alignment.
  const size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  void* ptr = std::aligned_alloc(alignment, rounded);
  if (ptr != nullptr && huge) {
    // Advice only: failure (e.g. THP disabled) leaves ordinary pages, which is still correct.
    madvise(ptr, rounded, MADV_HUGEPAGE);
  }
  return ptr;
}

void CpuAllocator::Deallocate(void* ptr, size_t /*bytes*/) { std::free(ptr); }

DeviceMemoryInfo CpuAllocator::MemoryInfo() const {
  DeviceMemoryInfo info;
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  info.total_bytes = static_cast<size_t>(pages) * static_cast<size_t>(page_size);
  info.free_bytes = info.total_bytes;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  size_t kilobytes = 0;
  std::string unit;
  while (meminfo >> key >> kilobytes >> unit) {
    if (key == "MemAvailable:") {
      info.free_bytes = kilobytes * 1024;
      break;
    }
  }
  return info;
}

}  // namespace mxlite
