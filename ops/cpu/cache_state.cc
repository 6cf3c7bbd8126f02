#include "ops/cpu/cache_state.h"

#include <algorithm>
#include <fstream>
#include <string>

#include "ops/cpu/parallel.h"

namespace mxlite::cpu {
namespace {

constexpr size_t kCacheLine = 64;
constexpr size_t kMinEvictionBytes = size_t{16} << 20;

// The largest cache sysfs lists for CPU 0, or 0 when it lists none.
size_t LargestCacheBytes() {
  size_t largest = 0;
  for (int index = 0; index < 8; ++index) {
    std::ifstream file("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) +
                       "/size");
    std::string text;
    if (file >> text) largest = std::max(largest, ParseCacheSizeText(text));
  }
  return largest;
}

}  // namespace

size_t ParseCacheSizeText(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 9) return 0;  // 9 digits times 1 GiB still fits
  const std::string unit = text.substr(digits);
  size_t scale = 0;
  if (unit.empty()) scale = 1;
  if (unit == "K") scale = size_t{1} << 10;
  if (unit == "M") scale = size_t{1} << 20;
  if (unit == "G") scale = size_t{1} << 30;
  return static_cast<size_t>(std::stoull(text.substr(0, digits))) * scale;
}

size_t CacheEvictor::DefaultBytes() {
  static const size_t bytes = std::max(kMinEvictionBytes, 2 * LargestCacheBytes());
  return bytes;
}

CacheEvictor::CacheEvictor(size_t bytes)
    : bytes_(bytes), buffer_(Storage::Global().Alloc(std::max<size_t>(bytes, 1), Context::CPU())) {}

CacheEvictor::~CacheEvictor() { Storage::Global().Free(buffer_); }

void CacheEvictor::Evict() {
  // A store brings its line in (write-allocate) as a load would; the value does not matter.
  auto* lines = static_cast<volatile unsigned char*>(buffer_.ptr);
  const auto value = static_cast<unsigned char>(++evictions_);
  for (size_t i = 0; i < bytes_; i += kCacheLine) lines[i] = value;
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

}  // namespace mxlite::cpu
