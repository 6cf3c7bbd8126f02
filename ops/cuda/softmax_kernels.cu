// softmax / log-softmax on the GPU (softmax_kernels.h), as ops/cpu/softmax.h: one block per row,
// its maximum and sum reduced in shared memory.
#include <cmath>

#include "ops/cuda/grid.cuh"
#include "ops/cuda/softmax_kernels.h"

namespace mxlite::cuda {
namespace {

unsigned RowBlocks(int64_t rows) {
  return static_cast<unsigned>(rows < (int64_t{1} << 30) ? (rows < 1 ? 1 : rows)
                                                         : (int64_t{1} << 30));
}

// One block per row (o, i); element k of the row is at (o * length + k) * inner + i.
// (float16 rows are exponentiated twice rather than stored unnormalised in y, whose rounding
// would add an error the float32 path does not have.)
template <typename T>
__global__ void SoftmaxForwardKernel(SoftmaxGeometry g, const T* x, T* y,
                                     ComputeType<T> temperature, bool log) {
  using C = ComputeType<T>;
  constexpr bool kStoreExponentials = sizeof(T) == sizeof(C);
  __shared__ C shared[kThreads];
  for (int64_t row = blockIdx.x; row < g.outer * g.inner; row += gridDim.x) {
    const int64_t base = (row / g.inner) * g.length * g.inner + row % g.inner;
    C max = -INFINITY;
    for (int64_t k = threadIdx.x; k < g.length; k += blockDim.x) {
      const C z = static_cast<C>(x[base + k * g.inner]) / temperature;
      max = z > max ? z : max;
    }
    max = BlockMax(max, shared);
    C sum = C(0);
    for (int64_t k = threadIdx.x; k < g.length; k += blockDim.x) {
      const C e = exp(static_cast<C>(x[base + k * g.inner]) / temperature - max);
      sum += e;
      if (!log && kStoreExponentials) y[base + k * g.inner] = static_cast<T>(e);
    }
    sum = BlockSum(sum, shared);
    const C log_sum = ::log(sum);
    for (int64_t k = threadIdx.x; k < g.length; k += blockDim.x) {
      const int64_t at = base + k * g.inner;
      const C z = static_cast<C>(x[at]) / temperature;
      C r;
      if (log) {
        r = z - (max + log_sum);
      } else if (kStoreExponentials) {
        r = static_cast<C>(y[at]) / sum;
      } else {
        r = exp(z - max) / sum;
      }
      y[at] = static_cast<T>(r);
    }
    __syncthreads();
  }
}

template <typename T>
__global__ void SoftmaxBackwardKernel(SoftmaxGeometry g, const T* y, const T* dy, T* dx,
                                      ComputeType<T> temperature, bool log) {
  using C = ComputeType<T>;
  __shared__ C shared[kThreads];
  for (int64_t row = blockIdx.x; row < g.outer * g.inner; row += gridDim.x) {
    const int64_t base = (row / g.inner) * g.length * g.inner + row % g.inner;
    C sum = C(0);
    for (int64_t k = threadIdx.x; k < g.length; k += blockDim.x) {
      const int64_t at = base + k * g.inner;
      const C grad = static_cast<C>(dy[at]);
      sum += log ? grad : grad * static_cast<C>(y[at]);
    }
    sum = BlockSum(sum, shared);
    for (int64_t k = threadIdx.x; k < g.length; k += blockDim.x) {
      const int64_t at = base + k * g.inner;
      const C out = static_cast<C>(y[at]), grad = static_cast<C>(dy[at]);
      dx[at] = static_cast<T>((log ? grad - exp(out) * sum : out * (grad - sum)) / temperature);
    }
    __syncthreads();
  }
}

}  // namespace

template <typename T>
cudaError_t SoftmaxForward(const SoftmaxGeometry& g, const T* x, T* y, double temperature, bool log,
                           cudaStream_t s) {
  if (g.outer * g.length * g.inner > 0) {
    SoftmaxForwardKernel<T><<<RowBlocks(g.outer * g.inner), kThreads, 0, s>>>(
        g, x, y, static_cast<ComputeType<T>>(temperature), log);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t SoftmaxBackward(const SoftmaxGeometry& g, const T* y, const T* dy, T* dx,
                            double temperature, bool log, cudaStream_t s) {
  if (g.outer * g.length * g.inner > 0) {
    SoftmaxBackwardKernel<T><<<RowBlocks(g.outer * g.inner), kThreads, 0, s>>>(
        g, y, dy, dx, static_cast<ComputeType<T>>(temperature), log);
  }
  return cudaGetLastError();
}

#define MXLITE_INSTANTIATE_FOR(T)                                                              \
  template cudaError_t SoftmaxForward(const SoftmaxGeometry&, const T*, T*, double, bool,      \
                                      cudaStream_t);                                           \
  template cudaError_t SoftmaxBackward(const SoftmaxGeometry&, const T*, const T*, T*, double, \
                                       bool, cudaStream_t);

MXLITE_INSTANTIATE_FOR(float)
MXLITE_INSTANTIATE_FOR(double)
MXLITE_INSTANTIATE_FOR(__half)

}  // namespace mxlite::cuda
