// Internal to ops/cpu/transpose.cc: AVX2 transposes of 4-byte elements. Call them only when the
// CPU supports AVX2 (CpuSupportsAvx2Fma(), ops/cpu/gemm.h); each function carries its own target
// attribute. Elements are moved as bits (no arithmetic), so any 4-byte type is safe.
#pragma once

#include <cstdint>

#include "ops/cpu/gemm_kernel_avx2.h"  // MXLITE_HAS_AVX2_KERNEL

namespace mxlite::cpu::detail {

// out[j * out_stride + i] = in[i * in_stride + j] for i, j in [0, 8); strides in elements.
void Transpose8x8Block4Bytes(const uint32_t* in, int64_t in_stride, uint32_t* out,
                             int64_t out_stride);

// Interleaves `rows` (2..7) rows of `in` (row r at in + r * in_stride) into rows of `rows`
// elements: out[b * rows + r] = in[r * in_stride + b], for b from 0 upward in steps of 8 while
// the steps' stores stay inside out[0, count * rows); returns how many b it did (a multiple of 8,
// possibly 0), the caller does the rest. Each pixel b is written as one full 8-lane store whose
// lanes past `rows` land in the places of the pixels after it, which later stores (in increasing
// b) overwrite: so it needs out's places up to count * rows to be the caller's and written only
// after it returns. NCHW -> NHWC of a 3-channel image is this with rows = 3, which has its own
// path: three permutes and three full stores per 8 pixels, each output element written once.
int64_t InterleaveRows4Bytes(const uint32_t* in, int64_t in_stride, int rows, int64_t count,
                             uint32_t* out);

}  // namespace mxlite::cpu::detail
