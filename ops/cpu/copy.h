// Copies for the ops that only move memory (Flatten, Reshape, identity, Concat, add_n's
// gradients): plain bytes, so they work for every dtype. A copy of at least
// MXNET_CPU_PARALLEL_COPY_SIZE elements (MXNet's threshold for a parallel CPU copy) is split
// among the intra-op threads; a smaller one runs on the calling thread.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mxlite::cpu {

// How many parts a copy of `elements` elements runs as: 1 below MXNET_CPU_PARALLEL_COPY_SIZE
// (read at each call), else one per intra-op thread (ops/cpu/parallel.h).
int64_t CopyParts(int64_t elements);

// Copies `elements` elements of `element_bytes` bytes each; nothing when `from` and `to` are the
// same memory (an op run in place).
void CopyElements(const void* from, void* to, int64_t elements, size_t element_bytes);

}  // namespace mxlite::cpu
