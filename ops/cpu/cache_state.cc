#include "ops/cpu/cache_state.h"

#include <unistd.h>

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "ops/cpu/parallel.h"

namespace mxlite::cpu {
namespace {

constexpr size_t kCacheLine = 64;

}  // namespace

CacheEvictor::CacheEvictor(size_t bytes)
    : bytes_(bytes), buffer_(Storage::Global().Alloc(std::max<size_t>(bytes, 1), Context::CPU())) {}

CacheEvictor::~CacheEvictor() { Storage::Global().Free(buffer_); }

void CacheEvictor::Evict() {
  // A store brings its line in (write-allocate) as a load would; the value does not matter.
  auto* lines = static_cast<volatile unsigned char*>(buffer_.ptr);
  const auto value = static_cast<unsigned char>(++evictions_);
  for (size_t i = 0; i < bytes_; i += kCacheLine) lines[i] = value;
}

void FlushFromCaches(const void* data, size_t bytes) {
#if defined(__x86_64__) || defined(__i386__)
  if (data == nullptr || bytes == 0) return;
  // From the line holding the first byte to the one holding the last.
  const auto first = reinterpret_cast<uintptr_t>(data) & ~uintptr_t{kCacheLine - 1};
  const auto end = reinterpret_cast<uintptr_t>(data) + bytes;
  for (uintptr_t line = first; line < end; line += kCacheLine) {
    _mm_clflush(reinterpret_cast<const void*>(line));
  }
  _mm_mfence();  // the flushes are done before what follows reads memory
#else
  static_cast<void>(data);
  static_cast<void>(bytes);
#endif
}

void TouchForReading(const void* data, size_t bytes) {
  if (data == nullptr) bytes = 0;
  const auto* lines = static_cast<const volatile unsigned char*>(data);
  const int64_t parts = IntraOpThreads();
  const size_t lines_per_part = (bytes / kCacheLine + parts) / parts;
  ParallelFor(parts, [&](int64_t part) {
    const size_t begin = static_cast<size_t>(part) * lines_per_part * kCacheLine;
    const size_t end = std::min(bytes, begin + lines_per_part * kCacheLine);
    for (size_t i = begin; i < end; i += kCacheLine) static_cast<void>(lines[i]);
  });
}

size_t L2CacheBytesPerCore() {
  static const size_t bytes = [] {
    size_t l2 = size_t{1} << 20;
#ifdef _SC_LEVEL2_CACHE_SIZE
    const long reported = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (reported > 0) l2 = static_cast<size_t>(reported);
#endif
    return l2;
  }();
  return bytes;
}

}  // namespace mxlite::cpu
