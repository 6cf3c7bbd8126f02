// Launchers of Pooling's CUDA kernels (ops/pooling.cc; pooling_kernels.cu), called by
// ops/cuda/pooling_gpu.cc. Like kernel_types.h, included by nvcc and g++.
#pragma once

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

// Pooling (ops/pooling.cc): spatial dims right-aligned into (d, h, w).
struct PoolingGeometry {
  int64_t batch = 0, channels = 0;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1},
          pad[3] = {0, 0, 0}, dilate[3] = {1, 1, 1};
  bool channels_last = false;
  int type = 0;  // 0 max, 1 avg, 2 sum
  bool count_include_pad = true;
};
template <typename T>
cudaError_t PoolingForward(const PoolingGeometry& g, const T* x, T* y, cudaStream_t s);
// x is read only for max (may be null otherwise).
template <typename T>
cudaError_t PoolingBackward(const PoolingGeometry& g, const T* x, const T* dy, T* dx,
                            cudaStream_t s);

}  // namespace mxlite::cuda
