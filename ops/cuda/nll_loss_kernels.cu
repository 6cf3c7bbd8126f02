// nll_loss on the GPU (nll_loss_kernels.h): one thread per position for the losses, the data
// gradient and the picked values; one block for a reduced loss, summed in double.
#include <cuda_fp16.h>

#include "ops/cuda/grid.cuh"
#include "ops/cuda/nll_loss_kernels.h"

namespace mxlite::cuda {
namespace {

__device__ int64_t DataIndex(const NllPositions& p, int64_t i) {
  return (i / p.positions * p.classes + p.label[i]) * p.positions + i % p.positions;
}

template <typename T>
__global__ void LossesKernel(NllPositions p, const T* data, T* out) {
  MXLITE_GRID_LOOP(i, p.count) {
    double loss = 0.0;
    if (p.label[i] >= 0) {
      loss = -p.coefficient[i] *
             static_cast<double>(static_cast<ComputeType<T>>(data[DataIndex(p, i)]));
    }
    out[i] = static_cast<T>(static_cast<ComputeType<T>>(loss));
  }
}

template <typename T>
__global__ void ReducedLossKernel(NllPositions p, const T* data, double scale, T* out) {
  __shared__ double shared[kThreads];
  double sum = 0.0;
  for (int64_t i = threadIdx.x; i < p.count; i += kThreads) {
    if (p.label[i] >= 0) {
      sum -= p.coefficient[i] *
             static_cast<double>(static_cast<ComputeType<T>>(data[DataIndex(p, i)]));
    }
  }
  sum = BlockSum(sum, shared);
  if (threadIdx.x == 0) out[0] = static_cast<T>(static_cast<ComputeType<T>>(sum * scale));
}

template <typename T>
__global__ void BackwardDataKernel(NllPositions p, const T* dy, bool reduce, double scale, T* dx) {
  MXLITE_GRID_LOOP(i, p.count) {
    if (p.label[i] < 0) continue;
    const double g = reduce ? static_cast<double>(static_cast<ComputeType<T>>(dy[0])) * scale
                            : static_cast<double>(static_cast<ComputeType<T>>(dy[i]));
    dx[DataIndex(p, i)] = static_cast<T>(static_cast<ComputeType<T>>(-p.coefficient[i] * g));
  }
}

template <typename T>
__global__ void PickKernel(NllPositions p, const T* data, double* picked) {
  MXLITE_GRID_LOOP(i, p.count) {
    picked[i] = p.label[i] < 0
                    ? 0.0
                    : static_cast<double>(static_cast<ComputeType<T>>(data[DataIndex(p, i)]));
  }
}

}  // namespace

template <typename T>
cudaError_t NllLossForward(const NllPositions& p, const T* data, bool reduce, double scale, T* out,
                           cudaStream_t s) {
  if (reduce) {
    ReducedLossKernel<T><<<1, kThreads, 0, s>>>(p, data, scale, out);
  } else if (p.count > 0) {
    LossesKernel<T><<<Blocks(p.count), kThreads, 0, s>>>(p, data, out);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t NllLossBackwardData(const NllPositions& p, const T* dy, bool reduce, double scale,
                                T* dx, cudaStream_t s) {
  const cudaError_t zeroed =
      cudaMemsetAsync(dx, 0, static_cast<size_t>(p.count * p.classes) * sizeof(T), s);
  if (zeroed != cudaSuccess || p.count == 0) return zeroed;
  BackwardDataKernel<T><<<Blocks(p.count), kThreads, 0, s>>>(p, dy, reduce, scale, dx);
  return cudaGetLastError();
}

template <typename T>
cudaError_t NllLossPick(const NllPositions& p, const T* data, double* picked, cudaStream_t s) {
  if (p.count == 0) return cudaSuccess;
  PickKernel<T><<<Blocks(p.count), kThreads, 0, s>>>(p, data, picked);
  return cudaGetLastError();
}

#define MXLITE_NLL_LOSS_INSTANTIATE(T)                                                         \
  template cudaError_t NllLossForward<T>(const NllPositions&, const T*, bool, double, T*,      \
                                         cudaStream_t);                                        \
  template cudaError_t NllLossBackwardData<T>(const NllPositions&, const T*, bool, double, T*, \
                                              cudaStream_t);                                   \
  template cudaError_t NllLossPick<T>(const NllPositions&, const T*, double*, cudaStream_t);
MXLITE_NLL_LOSS_INSTANTIATE(float)
MXLITE_NLL_LOSS_INSTANTIATE(double)
MXLITE_NLL_LOSS_INSTANTIATE(__half)

}  // namespace mxlite::cuda
