// Neural-network CUDA kernels: Pooling, softmax / log-softmax, SoftmaxOutput's gradients and
// BatchNorm (see kernels.h). Each follows its CPU kernel: pooling windows, ties and empty windows
// as ops/pooling.cc; softmax as ops/cpu/softmax.h; BatchNorm's statistics in double with the
// biased variance, as ops/batch_norm.cc.
#include <cmath>

#include "ops/cuda/grid.cuh"
#include "ops/cuda/kernels.h"

namespace mxlite::cuda {
namespace {

unsigned RowBlocks(int64_t rows) {
  return static_cast<unsigned>(rows < (int64_t{1} << 30) ? (rows < 1 ? 1 : rows)
                                                         : (int64_t{1} << 30));
}

// ---- pooling ---------------------------------------------------------------------------------

struct Window {
  int64_t begin[3], end[3];
  int64_t divisor;  // 0: nothing to divide by (no real element)
};

__device__ Window WindowAt(const PoolingGeometry& g, const int64_t* position) {
  Window w;
  int64_t padded_count = 1, real_count = 1;
  for (int d = 0; d < 3; ++d) {
    const int64_t start = position[d] * g.stride[d] - g.pad[d];
    const int64_t limit = g.in[d] + g.pad[d];
    const int64_t padded_end = start + g.kernel[d] < limit ? start + g.kernel[d] : limit;
    w.begin[d] = start > 0 ? start : 0;
    w.end[d] = start + g.kernel[d] < g.in[d] ? start + g.kernel[d] : g.in[d];
    padded_count *= padded_end - start;
    real_count *= w.end[d] > w.begin[d] ? w.end[d] - w.begin[d] : 0;
  }
  if (g.type == 2) {
    w.divisor = 1;
  } else {
    w.divisor = real_count > 0 ? (g.count_include_pad ? padded_count : real_count) : 0;
  }
  return w;
}

// Offset of spatial position `position` of (n, c).
__device__ int64_t PoolOffset(const PoolingGeometry& g, int64_t n, int64_t c, int64_t position,
                              int64_t plane) {
  return g.channels_last ? (n * plane + position) * g.channels + c
                         : (n * g.channels + c) * plane + position;
}

// The first position (scan order) holding the window's maximum, -1 when the window is empty.
template <typename T>
__device__ int64_t WindowArgMax(const PoolingGeometry& g, const Window& w, const T* x, int64_t n,
                                int64_t c, int64_t plane, ComputeType<T>* best_value) {
  int64_t best_position = -1;
  ComputeType<T> best = 0;
  for (int64_t d = w.begin[0]; d < w.end[0]; ++d) {
    for (int64_t h = w.begin[1]; h < w.end[1]; ++h) {
      for (int64_t x_ = w.begin[2]; x_ < w.end[2]; ++x_) {
        const int64_t position = (d * g.in[1] + h) * g.in[2] + x_;
        const ComputeType<T> value =
            static_cast<ComputeType<T>>(x[PoolOffset(g, n, c, position, plane)]);
        if (best_position < 0 || value > best) {
          best = value;
          best_position = position;
        }
      }
    }
  }
  *best_value = best;
  return best_position;
}

template <typename T>
__global__ void PoolingForwardKernel(PoolingGeometry g, const T* x, T* y, int64_t total) {
  using C = ComputeType<T>;
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  MXLITE_GRID_LOOP(i, total) {
    int64_t n, c, position;
    if (g.channels_last) {
      c = i % g.channels;
      position = (i / g.channels) % out_plane;
      n = i / (g.channels * out_plane);
    } else {
      position = i % out_plane;
      c = (i / out_plane) % g.channels;
      n = i / (out_plane * g.channels);
    }
    const int64_t at[3] = {position / (g.out[1] * g.out[2]), (position / g.out[2]) % g.out[1],
                           position % g.out[2]};
    const Window w = WindowAt(g, at);
    if (g.type == 0) {
      C best;
      const int64_t best_position = WindowArgMax(g, w, x, n, c, in_plane, &best);
      y[i] = static_cast<T>(best_position < 0 ? C(0) : best);
      continue;
    }
    C sum = C(0);
    for (int64_t d = w.begin[0]; d < w.end[0]; ++d) {
      for (int64_t h = w.begin[1]; h < w.end[1]; ++h) {
        for (int64_t x_ = w.begin[2]; x_ < w.end[2]; ++x_) {
          sum += static_cast<C>(x[PoolOffset(g, n, c, (d * g.in[1] + h) * g.in[2] + x_, in_plane)]);
        }
      }
    }
    const C scale = w.divisor == 0 ? C(0) : C(1) / static_cast<C>(w.divisor);
    y[i] = static_cast<T>(sum * scale);
  }
}

// First and last output index along one dim whose window covers input index i.
__device__ void CoveringOutputs(const PoolingGeometry& g, int d, int64_t i, int64_t* first,
                                int64_t* last) {
  const int64_t low = i + g.pad[d] - g.kernel[d] + 1;  // start >= low
  int64_t f = low <= 0 ? 0 : (low + g.stride[d] - 1) / g.stride[d];
  int64_t l = (i + g.pad[d]) / g.stride[d];
  if (l > g.out[d] - 1) l = g.out[d] - 1;
  *first = f;
  *last = l;
}

// Gather form of the CPU scatter: input element i adds, in output scan order, the gradient of
// every window that routes to it.
template <typename T>
__global__ void PoolingBackwardKernel(PoolingGeometry g, const T* x, const T* dy, T* dx,
                                      int64_t total) {
  using C = ComputeType<T>;
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  MXLITE_GRID_LOOP(i, total) {
    int64_t n, c, position;
    if (g.channels_last) {
      c = i % g.channels;
      position = (i / g.channels) % in_plane;
      n = i / (g.channels * in_plane);
    } else {
      position = i % in_plane;
      c = (i / in_plane) % g.channels;
      n = i / (in_plane * g.channels);
    }
    const int64_t at[3] = {position / (g.in[1] * g.in[2]), (position / g.in[2]) % g.in[1],
                           position % g.in[2]};
    int64_t first[3], last[3];
    for (int d = 0; d < 3; ++d) CoveringOutputs(g, d, at[d], &first[d], &last[d]);
    C sum = C(0);
    for (int64_t od = first[0]; od <= last[0]; ++od) {
      for (int64_t oh = first[1]; oh <= last[1]; ++oh) {
        for (int64_t ow = first[2]; ow <= last[2]; ++ow) {
          const int64_t out_at[3] = {od, oh, ow};
          const Window w = WindowAt(g, out_at);
          const C grad = static_cast<C>(
              dy[PoolOffset(g, n, c, (od * g.out[1] + oh) * g.out[2] + ow, out_plane)]);
          if (g.type == 0) {
            C best;
            if (WindowArgMax(g, w, x, n, c, in_plane, &best) == position) sum += grad;
          } else if (w.divisor != 0) {
            sum += grad * (C(1) / static_cast<C>(w.divisor));
          }
        }
      }
    }
    dx[i] = static_cast<T>(sum);
  }
}

// ---- convolution epilogue --------------------------------------------------------------------

template <typename T>
__global__ void ConvEpilogueKernel(ConvEpilogueGeometry g, T* y, const T* bias, const T* residual,
                                   ComputeType<T> low, ComputeType<T> high) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, g.n) {
    C v = static_cast<C>(y[i]);
    if (bias != nullptr) {
      v = static_cast<C>(static_cast<T>(v + static_cast<C>(bias[(i / g.inner) % g.channels])));
    }
    if (residual != nullptr) v = static_cast<C>(static_cast<T>(v + static_cast<C>(residual[i])));
    v = v < low ? low : v;
    y[i] = static_cast<T>(high < v ? high : v);
  }
}

// ---- block reductions ------------------------------------------------------------------------

template <typename T>
__device__ T BlockSum(T value, T* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int width = kThreads / 2; width > 0; width /= 2) {
    if (static_cast<int>(threadIdx.x) < width) shared[threadIdx.x] += shared[threadIdx.x + width];
    __syncthreads();
  }
  const T result = shared[0];
  __syncthreads();
  return result;
}

template <typename T>
__device__ T BlockMax(T value, T* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int width = kThreads / 2; width > 0; width /= 2) {
    if (static_cast<int>(threadIdx.x) < width) {
      const T other = shared[threadIdx.x + width];
      if (other > shared[threadIdx.x]) shared[threadIdx.x] = other;
    }
    __syncthreads();
  }
  const T result = shared[0];
  __syncthreads();
  return result;
}

// ---- softmax ---------------------------------------------------------------------------------

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

template <typename T>
__global__ void HardGradientKernel(SoftmaxGeometry g, const T* y, const int64_t* class_index,
                                   ComputeType<T> on, ComputeType<T> off, ComputeType<T> factor,
                                   const T* dy, T* dx) {
  using C = ComputeType<T>;
  const int64_t total = g.outer * g.length * g.inner;
  MXLITE_GRID_LOOP(e, total) {
    const int64_t i = e % g.inner;
    const int64_t k = (e / g.inner) % g.length;
    const int64_t o = e / (g.inner * g.length);
    const int64_t target = class_index[o * g.inner + i];
    C grad = target < 0 ? C(0) : (static_cast<C>(y[e]) - (k == target ? on : off)) * factor;
    if (dy != nullptr) grad *= static_cast<C>(dy[e]);
    dx[e] = static_cast<T>(grad);
  }
}

template <typename T>
__global__ void SoftGradientKernel(const T* y, const T* label, ComputeType<T> factor, const T* dy,
                                   T* dx, int64_t n) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) {
    C grad = (static_cast<C>(y[i]) - static_cast<C>(label[i])) * factor;
    if (dy != nullptr) grad *= static_cast<C>(dy[i]);
    dx[i] = static_cast<T>(grad);
  }
}

// ---- batch norm ------------------------------------------------------------------------------

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
                                     const double* coefficients) {
  const int64_t total = g.outer * g.channels * g.inner;
  MXLITE_GRID_LOOP(i, total) {
    const int64_t c = (i / g.inner) % g.channels;
    using C = ComputeType<T>;
    y[i] = static_cast<T>(static_cast<C>(x[i]) * static_cast<C>(coefficients[c]) +
                          static_cast<C>(coefficients[g.channels + c]));
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
cudaError_t ConvEpilogue(const ConvEpilogueGeometry& g, T* y, const T* bias, const T* residual,
                         double low, double high, cudaStream_t s) {
  using C = ComputeType<T>;
  if (g.n > 0) {
    ConvEpilogueKernel<T><<<Blocks(g.n), kThreads, 0, s>>>(g, y, bias, residual,
                                                           static_cast<C>(low),
                                                           static_cast<C>(high));
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t PoolingForward(const PoolingGeometry& g, const T* x, T* y, cudaStream_t s) {
  const int64_t total = g.batch * g.channels * g.out[0] * g.out[1] * g.out[2];
  if (total > 0) PoolingForwardKernel<T><<<Blocks(total), kThreads, 0, s>>>(g, x, y, total);
  return cudaGetLastError();
}

template <typename T>
cudaError_t PoolingBackward(const PoolingGeometry& g, const T* x, const T* dy, T* dx,
                            cudaStream_t s) {
  const int64_t total = g.batch * g.channels * g.in[0] * g.in[1] * g.in[2];
  if (total > 0) PoolingBackwardKernel<T><<<Blocks(total), kThreads, 0, s>>>(g, x, dy, dx, total);
  return cudaGetLastError();
}

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

template <typename T>
cudaError_t SoftmaxOutputHardGradient(const SoftmaxGeometry& g, const T* y,
                                      const int64_t* class_index, double on, double off,
                                      double scale, const T* dy, T* dx, cudaStream_t s) {
  using C = ComputeType<T>;
  const int64_t total = g.outer * g.length * g.inner;
  if (total > 0) {
    HardGradientKernel<T><<<Blocks(total), kThreads, 0, s>>>(
        g, y, class_index, static_cast<C>(on), static_cast<C>(off), static_cast<C>(scale), dy, dx);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t SoftmaxOutputSoftGradient(const T* y, const T* label, double scale, const T* dy, T* dx,
                                      int64_t n, cudaStream_t s) {
  if (n > 0) {
    SoftGradientKernel<T>
        <<<Blocks(n), kThreads, 0, s>>>(y, label, static_cast<ComputeType<T>>(scale), dy, dx, n);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t BatchNormForward(const BatchNormGeometry& g, const BatchNormParams& p,
                             const BatchNormForwardArgs<T>& a, cudaStream_t s) {
  if (g.channels <= 0) return cudaGetLastError();
  BatchNormStatsKernel<T><<<static_cast<unsigned>(g.channels), kThreads, 0, s>>>(g, p, a);
  const int64_t total = g.outer * g.channels * g.inner;
  if (a.y != nullptr && total > 0) {
    BatchNormApplyKernel<T><<<Blocks(total), kThreads, 0, s>>>(g, a.x, a.y, a.coefficients);
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

#define MXLITE_INSTANTIATE_FOR(T)                                                                  \
  template cudaError_t ConvEpilogue(const ConvEpilogueGeometry&, T*, const T*, const T*, double,   \
                                    double, cudaStream_t);                                         \
  template cudaError_t PoolingForward(const PoolingGeometry&, const T*, T*, cudaStream_t);         \
  template cudaError_t PoolingBackward(const PoolingGeometry&, const T*, const T*, T*,             \
                                       cudaStream_t);                                              \
  template cudaError_t SoftmaxForward(const SoftmaxGeometry&, const T*, T*, double, bool,          \
                                      cudaStream_t);                                               \
  template cudaError_t SoftmaxBackward(const SoftmaxGeometry&, const T*, const T*, T*, double,     \
                                       bool, cudaStream_t);                                        \
  template cudaError_t SoftmaxOutputHardGradient(const SoftmaxGeometry&, const T*, const int64_t*, \
                                                 double, double, double, const T*, T*,             \
                                                 cudaStream_t);                                    \
  template cudaError_t SoftmaxOutputSoftGradient(const T*, const T*, double, const T*, T*,         \
                                                 int64_t, cudaStream_t);                           \
  template cudaError_t BatchNormForward(const BatchNormGeometry&, const BatchNormParams&,          \
                                        const BatchNormForwardArgs<T>&, cudaStream_t);             \
  template cudaError_t BatchNormBackward(const BatchNormGeometry&, const BatchNormParams&,         \
                                         const BatchNormBackwardArgs<T>&, cudaStream_t);

MXLITE_INSTANTIATE_FOR(float)
MXLITE_INSTANTIATE_FOR(double)
MXLITE_INSTANTIATE_FOR(__half)

}  // namespace mxlite::cuda
