// Internal to ops/cpu/transpose.cc: the AVX2 8x8 block transpose of 4-byte elements. Call it only
// when the CPU supports AVX2 (CpuSupportsAvx2Fma(), ops/cpu/gemm.h); the function carries its own
// target attribute. Elements are moved as bits (no arithmetic), so any 4-byte type is safe.
#pragma once

#include <cstdint>

#include "ops/cpu/gemm_kernel_avx2.h"  // MXLITE_HAS_AVX2_KERNEL

namespace mxlite::cpu::detail {

// out[j * out_stride + i] = in[i * in_stride + j] for i, j in [0, 8); strides in elements.
void Transpose8x8Block4Bytes(const uint32_t* in, int64_t in_stride, uint32_t* out,
                             int64_t out_stride);

}  // namespace mxlite::cpu::detail
