// Launcher of cumsum's CUDA kernel (ops/cumsum.cc; cumsum_kernels.cu), called by
// ops/cuda/cumsum_gpu.cc. Like kernel_types.h, included by nvcc and g++.
#pragma once

#include <cstdint>

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

// Running sums of `in` into `out` along lines of `length` elements, element (o, k, i) at
// (o * length + k) * inner + i; `exclusive` leaves each element out of its sum, `reverse` runs
// from the end. One thread per line, summing in double (floating T) or uint64 (integer T, wrapping
// as the type does), as the CPU does, so the results are the CPU's.
template <typename T>
cudaError_t Cumsum(const T* in, T* out, int64_t outer, int64_t length, int64_t inner,
                   bool exclusive, bool reverse, cudaStream_t s);

}  // namespace mxlite::cuda
