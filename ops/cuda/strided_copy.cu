// StridedCopy's kernel (strided_copy.h): a thread per (possibly widened) element, its window
// offset from its dense index in 32-bit arithmetic where Simplified allows it.
#include <cstdint>

#include "ops/cuda/grid.cuh"
#include "ops/cuda/strided_copy.h"

namespace mxlite::cuda {
namespace {

template <typename E, typename Index>
__global__ void StridedCopyKernel(StridedCopy c, const E* from, E* to) {
  const Index count = static_cast<Index>(c.count);
  const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    Index rest = i, offset = static_cast<Index>(c.base);
    for (int d = c.ndim - 1; d > 0; --d) {
      const Index extent = static_cast<Index>(c.extents[d]);
      offset += (rest % extent) * static_cast<Index>(c.steps[d]);
      rest /= extent;
    }
    offset += rest * static_cast<Index>(c.steps[0]);  // rest < extents[0]
    if (c.scatter) {
      to[offset] = from[i];
    } else {
      to[i] = from[offset];
    }
  }
}

template <typename E>
void Launch(const StridedCopy& c, const void* from, void* to, cudaStream_t s) {
  const E* source = static_cast<const E*>(from);
  E* target = static_cast<E*>(to);
  if (c.narrow_index) {
    StridedCopyKernel<E, int32_t><<<Blocks(c.count), kThreads, 0, s>>>(c, source, target);
  } else {
    StridedCopyKernel<E, int64_t><<<Blocks(c.count), kThreads, 0, s>>>(c, source, target);
  }
}

}  // namespace

cudaError_t RunStridedCopy(const StridedCopy& copy, int64_t window_elements, const void* from,
                           void* to, cudaStream_t stream) {
  if (copy.count <= 0) return cudaGetLastError();
  const void* dense = copy.scatter ? from : to;
  const void* window = copy.scatter ? to : from;
  const StridedCopy c = Simplified(copy, window_elements, dense, window);
  if (c.ndim == 1 && c.steps[0] == 1) {  // one contiguous run
    const size_t offset = static_cast<size_t>(c.base) * c.element_size;
    const size_t bytes = static_cast<size_t>(c.count) * c.element_size;
    char* target = static_cast<char*>(to) + (copy.scatter ? offset : 0);
    const char* source = static_cast<const char*>(from) + (copy.scatter ? 0 : offset);
    return cudaMemcpyAsync(target, source, bytes, cudaMemcpyDeviceToDevice, stream);
  }
  switch (c.element_size) {
    case 1:
      Launch<uint8_t>(c, from, to, stream);
      break;
    case 2:
      Launch<uint16_t>(c, from, to, stream);
      break;
    case 4:
      Launch<uint32_t>(c, from, to, stream);
      break;
    case 8:
      Launch<uint64_t>(c, from, to, stream);
      break;
    case 16:
      Launch<uint4>(c, from, to, stream);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace mxlite::cuda
