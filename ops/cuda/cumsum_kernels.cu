// cumsum on the GPU (cumsum_kernels.h): one thread per line; neighbouring threads take
// neighbouring inner elements (their loads coalesce when inner is large). A single long line runs
// on one thread: a block scan per line would serve that case better (not written).
#include <cuda_fp16.h>

#include "ops/cuda/cumsum_kernels.h"
#include "ops/cuda/grid.cuh"

namespace mxlite::cuda {
namespace {

template <typename T>
struct Accumulator {
  using type = double;
};
// Integers sum in uint64: they wrap as the type does, with no undefined overflow.
template <>
struct Accumulator<int32_t> {
  using type = uint64_t;
};
template <>
struct Accumulator<int64_t> {
  using type = uint64_t;
};

template <typename T>
__global__ void CumsumKernel(const T* in, T* out, int64_t outer, int64_t length, int64_t inner,
                             bool exclusive, bool reverse) {
  using Acc = typename Accumulator<T>::type;
  MXLITE_GRID_LOOP(line, outer * inner) {
    const int64_t o = line / inner, i = line % inner;
    Acc sum = 0;
    for (int64_t step = 0; step < length; ++step) {
      const int64_t k = reverse ? length - 1 - step : step;
      const int64_t at = (o * length + k) * inner + i;
      const Acc value = static_cast<Acc>(static_cast<ComputeType<T>>(in[at]));
      if (exclusive) {
        out[at] = static_cast<T>(static_cast<ComputeType<T>>(sum));
        sum += value;
      } else {
        sum += value;
        out[at] = static_cast<T>(static_cast<ComputeType<T>>(sum));
      }
    }
  }
}

}  // namespace

template <typename T>
cudaError_t Cumsum(const T* in, T* out, int64_t outer, int64_t length, int64_t inner,
                   bool exclusive, bool reverse, cudaStream_t s) {
  const int64_t lines = outer * inner;
  if (lines == 0 || length == 0) return cudaSuccess;
  CumsumKernel<T>
      <<<Blocks(lines), kThreads, 0, s>>>(in, out, outer, length, inner, exclusive, reverse);
  return cudaGetLastError();
}

template cudaError_t Cumsum<float>(const float*, float*, int64_t, int64_t, int64_t, bool, bool,
                                   cudaStream_t);
template cudaError_t Cumsum<double>(const double*, double*, int64_t, int64_t, int64_t, bool, bool,
                                    cudaStream_t);
template cudaError_t Cumsum<__half>(const __half*, __half*, int64_t, int64_t, int64_t, bool, bool,
                                    cudaStream_t);
template cudaError_t Cumsum<int32_t>(const int32_t*, int32_t*, int64_t, int64_t, int64_t, bool,
                                     bool, cudaStream_t);
template cudaError_t Cumsum<int64_t>(const int64_t*, int64_t*, int64_t, int64_t, int64_t, bool,
                                     bool, cudaStream_t);

}  // namespace mxlite::cuda
