// Cache states for timing CPU kernels as a pass meets them (the convolution tuner, the planner's
// layout-transform costs, benchmarks).
//
//   conv::TimeCandidate(run, {}, [&] {
//     FlushFromCaches(weight, weight_bytes);  // last read a pass ago: comes from memory
//     TouchForReading(input, input_bytes);    // just written by the layer before: cached
//   });
//
// Why. A kernel timed back to back finds its weight in the caches; in a pass the weight was last
// read a whole pass (tens of MB of other weights and activations) ago and comes from memory, while
// the input was written by the layer just before. Timed hot, a 3x3 256->256 Winograd layer at
// 14x14 read 1.78 ms and ran 2.8-3.0 ms in ResNet-18's pass (its transformed weight is 9.4 MB);
// the tuner then preferred it to a direct kernel that loses less to memory (bench/RESULTS.md,
// "Predictions against passes").
//
// FlushFromCaches writes back and drops exactly the given lines (clflush), so its cost follows the
// operands, not the machine: writing twice the last-level cache through instead took 10+ ms per
// timed run on a GPU host's large L3, and the tuning in the test suite ran past its time limit.
// CacheEvictor writes a fixed number of bytes through the caches (the planner's transform costs
// and benchmarks, where "a few MB of other work since" is the state wanted).
//
// Thread safety: an evictor is used by one thread at a time; the functions are thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memory/storage.h"

namespace mxlite::cpu {

class CacheEvictor {
 public:
  explicit CacheEvictor(size_t bytes);
  ~CacheEvictor();
  CacheEvictor(const CacheEvictor&) = delete;
  CacheEvictor& operator=(const CacheEvictor&) = delete;

  // Writes one byte in every cache line of the buffer (dirty lines, as a pass leaves them). The
  // first call also pays the buffer's page faults.
  void Evict();
  size_t bytes() const { return bytes_; }

 private:
  size_t bytes_;
  StorageHandle buffer_;  // pooled: a new evictor of the same size reuses the last one's pages
  uint64_t evictions_ = 0;
};

// Writes back (if dirty) and drops from every cache level each line of [data, data + bytes); the
// next access reads memory. Null or empty: nothing. On CPUs other than x86 a no-op (timed hot).
void FlushFromCaches(const void* data, size_t bytes);

// Reads one byte in every cache line of [data, data + bytes), the range split among the intra-op
// threads (ops/cpu/parallel.h) as an op's threads would have written it: brings it into the caches
// as the op before leaves it. Runs a ParallelFor even for an empty range, so the pool's helpers
// are awake and spinning for the next one: after work long enough to put them to sleep, a timed
// run would otherwise pay their wake-up, which a pass of back-to-back ops does not.
void TouchForReading(const void* data, size_t bytes);

// The L2 cache of one core in bytes, as the system reports it (sysconf), or 1 MiB where it does
// not; read once. Kernels size blocks that must stay in L2 by it (the GEMM's rows of A, the fused
// depthwise blocks).
size_t L2CacheBytesPerCore();

}  // namespace mxlite::cpu
