// BatchNorm on the GPU (batch_norm_kernels.h), as ops/batch_norm.cc: the statistics in double with
// the biased variance, one block per channel, then one thread per element.
#include <cmath>

#include "ops/cuda/batch_norm_kernels.h"
#include "ops/cuda/grid.cuh"

namespace mxlite::cuda {
namespace {

__device__ int64_t ChannelOffset(const BatchNormGeometry& g, int64_t c, int64_t j) {
  return ((j / g.inner) * g.channels + c) * g.inner + j % g.inner;
}

// One block per channel: statistics, hidden outputs, moving states and the y = a x + b
// coefficients (already rounded to the compute type, as the CPU kernel rounds them to T).
// Parameters and states are P (float for float16 data).
template <typename T>
__global__ void BatchNormStatsKernel(BatchNormGeometry g, BatchNormParams p,
                                     BatchNormForwardArgs<T> a) {
  using C = ComputeType<T>;
  using P = BatchNormParamType<T>;
  __shared__ double shared[kThreads];
  const int64_t c = blockIdx.x;
  const int64_t m = g.outer * g.inner;
  double mean, var;
  if (p.batch_stats) {
    double sum = 0;
    for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
      sum += static_cast<double>(static_cast<ComputeType<T>>(a.x[ChannelOffset(g, c, j)]));
    }
    mean = BlockSum(sum, shared) / static_cast<double>(m);
    double squares = 0;
    for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
      const double centred =
          static_cast<double>(static_cast<ComputeType<T>>(a.x[ChannelOffset(g, c, j)])) - mean;
      squares += centred * centred;
    }
    var = BlockSum(squares, shared) / static_cast<double>(m);
  } else {
    mean = static_cast<double>(a.moving_mean[c]);
    var = static_cast<double>(a.moving_var[c]);
  }
  if (threadIdx.x != 0) return;
  const double invstd = 1.0 / sqrt(var + p.eps);
  const double scale = (p.fix_gamma ? 1.0 : static_cast<double>(a.gamma[c])) * invstd;
  a.coefficients[c] = static_cast<double>(static_cast<C>(scale));
  a.coefficients[g.channels + c] =
      static_cast<double>(static_cast<C>(static_cast<double>(a.beta[c]) - mean * scale));
  if (a.saved_mean != nullptr) a.saved_mean[c] = static_cast<P>(mean);
  if (a.saved_var != nullptr) a.saved_var[c] = static_cast<P>(var);
  if (p.batch_stats) {
    a.moving_mean[c] = static_cast<P>(static_cast<double>(a.moving_mean[c]) * p.momentum +
                                      mean * (1 - p.momentum));
    a.moving_var[c] =
        static_cast<P>(static_cast<double>(a.moving_var[c]) * p.momentum + var * (1 - p.momentum));
  }
}

template <typename T>
__global__ void BatchNormApplyKernel(BatchNormGeometry g, const T* x, T* y,
                                     const double* coefficients, bool clamps, ComputeType<T> low,
                                     ComputeType<T> high) {
  const int64_t total = g.outer * g.channels * g.inner;
  MXLITE_GRID_LOOP(i, total) {
    const int64_t c = (i / g.inner) % g.channels;
    using C = ComputeType<T>;
    C value = static_cast<C>(x[i]) * static_cast<C>(coefficients[c]) +
              static_cast<C>(coefficients[g.channels + c]);
    if (clamps) value = value < low ? low : (value > high ? high : value);  // NaN kept, as the CPU
    y[i] = static_cast<T>(value);
  }
}

template <typename T>
__global__ void BatchNormGradientSumsKernel(BatchNormGeometry g, BatchNormParams p,
                                            BatchNormBackwardArgs<T> a) {
  using C = ComputeType<T>;
  using P = BatchNormParamType<T>;
  __shared__ double shared[kThreads];
  const int64_t c = blockIdx.x;
  const int64_t m = g.outer * g.inner;
  const double mean = static_cast<double>(a.saved_mean[c]);
  const double invstd = 1.0 / sqrt(static_cast<double>(a.saved_var[c]) + p.eps);
  double sum_dy = 0, sum_dy_centred = 0;
  for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
    const int64_t at = ChannelOffset(g, c, j);
    const double grad = static_cast<double>(static_cast<C>(a.dy[at]));
    sum_dy += grad;
    sum_dy_centred += grad * (static_cast<double>(static_cast<C>(a.x[at])) - mean);
  }
  sum_dy = BlockSum(sum_dy, shared);
  sum_dy_centred = BlockSum(sum_dy_centred, shared);
  if (threadIdx.x != 0) return;
  if (a.dgamma != nullptr) {
    a.dgamma[c] = p.fix_gamma ? P(0) : static_cast<P>(sum_dy_centred * invstd);
  }
  if (a.dbeta != nullptr) a.dbeta[c] = static_cast<P>(sum_dy);
  const double gamma = p.fix_gamma ? 1.0 : static_cast<double>(a.gamma[c]);
  const double scale = gamma * invstd;
  double b = 0, d = 0;
  if (p.batch_stats) {
    b = -scale * invstd * invstd * sum_dy_centred / static_cast<double>(m);
    d = -scale * sum_dy / static_cast<double>(m) - b * mean;
  }
  a.coefficients[c] = static_cast<double>(static_cast<C>(scale));
  a.coefficients[g.channels + c] = static_cast<double>(static_cast<C>(b));
  a.coefficients[2 * g.channels + c] = static_cast<double>(static_cast<C>(d));
}

template <typename T>
__global__ void BatchNormGradientApplyKernel(BatchNormGeometry g, const T* dy, const T* x, T* dx,
                                             const double* coefficients) {
  const int64_t total = g.outer * g.channels * g.inner;
  MXLITE_GRID_LOOP(i, total) {
    const int64_t c = (i / g.inner) % g.channels;
    using C = ComputeType<T>;
    dx[i] = static_cast<T>(static_cast<C>(dy[i]) * static_cast<C>(coefficients[c]) +
                           static_cast<C>(x[i]) * static_cast<C>(coefficients[g.channels + c]) +
                           static_cast<C>(coefficients[2 * g.channels + c]));
  }
}

}  // namespace

template <typename T>
cudaError_t BatchNormForward(const BatchNormGeometry& g, const BatchNormParams& p,
                             const BatchNormForwardArgs<T>& a, cudaStream_t s) {
  if (g.channels <= 0) return cudaGetLastError();
  BatchNormStatsKernel<T><<<static_cast<unsigned>(g.channels), kThreads, 0, s>>>(g, p, a);
  const int64_t total = g.outer * g.channels * g.inner;
  if (a.y != nullptr && total > 0) {
    using C = ComputeType<T>;
    const bool clamps = p.low != -HUGE_VAL || p.high != HUGE_VAL;
    BatchNormApplyKernel<T><<<Blocks(total), kThreads, 0, s>>>(
        g, a.x, a.y, a.coefficients, clamps, static_cast<C>(p.low), static_cast<C>(p.high));
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t BatchNormBackward(const BatchNormGeometry& g, const BatchNormParams& p,
                              const BatchNormBackwardArgs<T>& a, cudaStream_t s) {
  if (g.channels <= 0) return cudaGetLastError();
  BatchNormGradientSumsKernel<T><<<static_cast<unsigned>(g.channels), kThreads, 0, s>>>(g, p, a);
  const int64_t total = g.outer * g.channels * g.inner;
  if (a.dx != nullptr && total > 0) {
    BatchNormGradientApplyKernel<T>
        <<<Blocks(total), kThreads, 0, s>>>(g, a.dy, a.x, a.dx, a.coefficients);
  }
  return cudaGetLastError();
}

#define MXLITE_INSTANTIATE_FOR(T)                                                          \
  template cudaError_t BatchNormForward(const BatchNormGeometry&, const BatchNormParams&,  \
                                        const BatchNormForwardArgs<T>&, cudaStream_t);     \
  template cudaError_t BatchNormBackward(const BatchNormGeometry&, const BatchNormParams&, \
                                         const BatchNormBackwardArgs<T>&, cudaStream_t);

MXLITE_INSTANTIATE_FOR(float)
MXLITE_INSTANTIATE_FOR(double)
MXLITE_INSTANTIATE_FOR(__half)

}  // namespace mxlite::cuda
