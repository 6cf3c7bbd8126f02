// Copies for the ops that only move memory (Flatten, Reshape, identity, Concat): plain bytes, so
// they work for every dtype, split into chunks on the intra-op pool when large.
#pragma once

#include <cstdint>
#include <cstring>

#include "ops/cpu/elementwise.h"

namespace mxlite::cpu {

// Copies `bytes` bytes; nothing when `from` and `to` are the same memory (an op run in place).
inline void CopyBytes(const void* from, void* to, int64_t bytes) {
  if (from == to || bytes <= 0) return;
  const char* source = static_cast<const char*>(from);
  char* target = static_cast<char*>(to);
  // Chunks of kElementwiseGrain * 8 bytes: a memcpy moves several bytes per element-op's time.
  constexpr int64_t kBytesPerUnit = 8;
  ForEachChunk((bytes + kBytesPerUnit - 1) / kBytesPerUnit, [&](int64_t begin, int64_t end) {
    const int64_t first = begin * kBytesPerUnit;
    const int64_t last = std::min(bytes, end * kBytesPerUnit);
    std::memcpy(target + first, source + first, static_cast<size_t>(last - first));
  });
}

}  // namespace mxlite::cpu
