// gather_elements on the GPU (gather_elements_kernels.h): one thread per output element; the
// backward adds atomically, so indices that repeat add up (in an order the hardware picks).
#include <cuda_fp16.h>

#include "ops/cuda/gather_elements_kernels.h"
#include "ops/cuda/grid.cuh"

namespace mxlite::cuda {
namespace {

template <typename Bits>
__global__ void GatherKernel(const Bits* data, const int64_t* offsets, int64_t count, Bits* out) {
  MXLITE_GRID_LOOP(i, count) { out[i] = data[offsets[i]]; }
}

template <typename Bits>
cudaError_t Launch(const void* data, const int64_t* offsets, int64_t count, void* out,
                   cudaStream_t s) {
  GatherKernel<Bits><<<Blocks(count), kThreads, 0, s>>>(static_cast<const Bits*>(data), offsets,
                                                        count, static_cast<Bits*>(out));
  return cudaGetLastError();
}

template <typename T>
__global__ void ScatterAddKernel(const T* dy, const int64_t* offsets, int64_t count, T* dx) {
  MXLITE_GRID_LOOP(i, count) { atomicAdd(dx + offsets[i], dy[i]); }
}

}  // namespace

cudaError_t GatherElements(const void* data, const int64_t* offsets, int64_t count,
                           size_t element_bytes, void* out, cudaStream_t s) {
  if (count == 0) return cudaSuccess;
  switch (element_bytes) {
    case 1:
      return Launch<uint8_t>(data, offsets, count, out, s);
    case 2:
      return Launch<uint16_t>(data, offsets, count, out, s);
    case 4:
      return Launch<uint32_t>(data, offsets, count, out, s);
    case 8:
      return Launch<uint64_t>(data, offsets, count, out, s);
  }
  return cudaErrorInvalidValue;
}

template <typename T>
cudaError_t GatherElementsBackward(const T* dy, const int64_t* offsets, int64_t count, T* dx,
                                   int64_t dx_count, cudaStream_t s) {
  const cudaError_t zeroed = cudaMemsetAsync(dx, 0, static_cast<size_t>(dx_count) * sizeof(T), s);
  if (zeroed != cudaSuccess || count == 0) return zeroed;
  ScatterAddKernel<T><<<Blocks(count), kThreads, 0, s>>>(dy, offsets, count, dx);
  return cudaGetLastError();
}

template cudaError_t GatherElementsBackward<float>(const float*, const int64_t*, int64_t, float*,
                                                   int64_t, cudaStream_t);
template cudaError_t GatherElementsBackward<double>(const double*, const int64_t*, int64_t, double*,
                                                    int64_t, cudaStream_t);
template cudaError_t GatherElementsBackward<__half>(const __half*, const int64_t*, int64_t, __half*,
                                                    int64_t, cudaStream_t);

}  // namespace mxlite::cuda
