// Cache states for timing CPU kernels as a pass meets them (the convolution tuner, the planner's
// layout-transform and node costs, benchmarks).
//
//   CacheEvictor evictor;                 // DefaultBytes(): twice the last-level cache
//   conv::TimeCandidate(run, {}, [&] {
//     evictor.Evict();                    // what the layer reads last touched a pass ago...
//     TouchForReading(input, input_bytes);  // ...but its input just written by the layer before
//   });
//
// Why. A kernel timed back to back finds its weight in the caches; in a pass the weight was last
// read a whole pass (tens of MB of other weights and activations) ago and comes from memory, while
// the input was written by the layer just before. Timed hot, a 3x3 256->256 Winograd layer at
// 14x14 read 1.78 ms and ran 2.8-3.0 ms in ResNet-18's pass (its transformed weight is 9.4 MB);
// the tuner then preferred it to a direct kernel that loses less to memory (bench/RESULTS.md).
//
// Thread safety: an evictor is used by one thread at a time; separate evictors are independent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "memory/storage.h"

namespace mxlite::cpu {

class CacheEvictor {
 public:
  // Twice the last-level cache this machine reports (sysfs), at least 16 MiB: written through
  // once, it leaves no line of what came before in any level.
  static size_t DefaultBytes();

  explicit CacheEvictor(size_t bytes = DefaultBytes());
  ~CacheEvictor();
  CacheEvictor(const CacheEvictor&) = delete;
  CacheEvictor& operator=(const CacheEvictor&) = delete;

  // Writes one byte in every cache line of the buffer (dirty lines, as a pass leaves them). The
  // first call also pays the buffer's page faults.
  void Evict();
  size_t bytes() const { return bytes_; }

 private:
  size_t bytes_;
  StorageHandle buffer_;  // pooled: an evictor made per tuned problem reuses the last one's pages
  uint64_t evictions_ = 0;
};

// A cache size as sysfs writes it ("32768K", "1M", "512") in bytes; 0 when it is not one.
size_t ParseCacheSizeText(const std::string& text);

// Reads one byte in every cache line of [data, data + bytes), the range split among the intra-op
// threads (ops/cpu/parallel.h) as an op's threads would have written it: brings it into the caches
// as the op before leaves it. Runs a ParallelFor even for an empty range, so the pool's helpers
// are awake and spinning for the next one: after an eviction long enough to put them to sleep,
// a timed run would otherwise pay their wake-up, which a pass of back-to-back ops does not.
void TouchForReading(const void* data, size_t bytes);

}  // namespace mxlite::cpu
