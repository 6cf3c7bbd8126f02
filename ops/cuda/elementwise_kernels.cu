// Element-wise CUDA kernels: activations, LeakyReLU, clip, array arithmetic, broadcasting binary
// ops and Dropout (see kernels.h; ReduceSum is in reduce_kernels.cu). Grid-stride loops over
// int64 indices; every formula is the CPU kernel's.
#include <cmath>

#include "ops/cuda/grid.cuh"
#include "ops/cuda/kernels.h"

namespace mxlite::cuda {
namespace {

template <typename T>
__global__ void ActivationForwardKernel(UnaryKind kind, const T* x, T* y, int64_t n) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) {
    const C v = static_cast<C>(x[i]);
    C r;
    switch (kind) {
      case UnaryKind::kRelu:
        r = v > C(0) ? v : C(0);
        break;
      case UnaryKind::kSigmoid:
        r = C(1) / (C(1) + exp(-v));
        break;
      case UnaryKind::kTanh:
        r = tanh(v);
        break;
      case UnaryKind::kSoftrelu:
        r = (v > C(0) ? v : C(0)) + log1p(exp(-fabs(v)));
        break;
      default:
        r = v / (C(1) + fabs(v));
        break;
    }
    y[i] = static_cast<T>(r);
  }
}

template <typename T>
__global__ void ActivationBackwardKernel(UnaryKind kind, const T* y, const T* dy, T* dx,
                                         int64_t n) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) {
    const C out = static_cast<C>(y[i]), grad = static_cast<C>(dy[i]);
    C r;
    switch (kind) {
      case UnaryKind::kRelu:
        r = out > C(0) ? grad : C(0);
        break;
      case UnaryKind::kSigmoid:
        r = grad * out * (C(1) - out);
        break;
      case UnaryKind::kTanh:
        r = grad * (C(1) - out * out);
        break;
      case UnaryKind::kSoftrelu:
        r = grad * (C(1) - exp(-out));
        break;
      default: {
        const C d = C(1) - fabs(out);
        r = grad * (d * d);
      }
    }
    dx[i] = static_cast<T>(r);
  }
}

template <typename T>
__global__ void LeakyForwardKernel(bool elu, ComputeType<T> slope, const T* x, T* y, int64_t n) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) {
    const C v = static_cast<C>(x[i]);
    y[i] = static_cast<T>(v > C(0) ? v : (elu ? slope * (exp(v) - C(1)) : slope * v));
  }
}

template <typename T>
__global__ void LeakyBackwardKernel(bool elu, ComputeType<T> slope, const T* x, const T* dy, T* dx,
                                    int64_t n) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) {
    const C v = static_cast<C>(x[i]), g = static_cast<C>(dy[i]);
    dx[i] = static_cast<T>(v > C(0) ? g : (elu ? g * slope * exp(v) : g * slope));
  }
}

// The bounds are compared in the compute type (float for float16 data, like cuDNN's clipped
// relu): a bound between two float16 values clips to the value itself, not to a rounded bound.
template <typename T>
__global__ void ClipForwardKernel(const T* x, T* y, int64_t n, ComputeType<T> low,
                                  ComputeType<T> high) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) {
    C v = static_cast<C>(x[i]);
    v = v < low ? low : v;
    y[i] = static_cast<T>(high < v ? high : v);
  }
}

template <typename T>
__global__ void ClipBackwardKernel(const T* x, const T* dy, T* dx, int64_t n, ComputeType<T> low,
                                   ComputeType<T> high) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) {
    const C v = static_cast<C>(x[i]);
    dx[i] = (v >= low && v <= high) ? dy[i] : static_cast<T>(C(0));
  }
}

template <typename T>
__global__ void AddKernel(const T* a, const T* b, T* out, int64_t n) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) { out[i] = static_cast<T>(static_cast<C>(a[i]) + static_cast<C>(b[i])); }
}

template <typename T>
__global__ void MultiplyKernel(const T* a, const T* b, T* out, int64_t n) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) { out[i] = static_cast<T>(static_cast<C>(a[i]) * static_cast<C>(b[i])); }
}

template <typename T>
__global__ void ScaleKernel(const T* x, T* y, ComputeType<T> scale, int64_t n) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) { y[i] = static_cast<T>(static_cast<C>(x[i]) * scale); }
}

// Offsets of output element i in operands 0 and 1.
__device__ void BroadcastOffsets(const BroadcastGeometry& g, int64_t i, int64_t* first,
                                 int64_t* second) {
  int64_t a = 0, b = 0;
  for (int d = g.ndim - 1; d >= 0; --d) {
    const int64_t index = i % g.extents[d];
    i /= g.extents[d];
    a += index * g.strides[0][d];
    b += index * g.strides[1][d];
  }
  *first = a;
  *second = b;
}

template <typename C>
__device__ C ApplyBinary(BinaryKind kind, C x, C y) {
  switch (kind) {
    case BinaryKind::kAdd: return x + y;
    case BinaryKind::kSub: return x - y;
    case BinaryKind::kMul: return x * y;
    case BinaryKind::kDiv: return x / y;
    case BinaryKind::kMaximum: return x >= y || x != x ? x : y;  // as std::max, but NaN-keeping
    case BinaryKind::kMinimum: return x <= y || x != x ? x : y;
    case BinaryKind::kEqual: return C(x == y ? 1 : 0);
    case BinaryKind::kNotEqual: return C(x != y ? 1 : 0);
    case BinaryKind::kGreater: return C(x > y ? 1 : 0);
    case BinaryKind::kGreaterEqual: return C(x >= y ? 1 : 0);
    case BinaryKind::kLesser: return C(x < y ? 1 : 0);
    default: return C(x <= y ? 1 : 0);
  }
}

template <typename T>
__global__ void BroadcastBinaryKernel(BinaryKind kind, BroadcastGeometry g, const T* lhs,
                                      const T* rhs, T* out, int64_t n) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) {
    int64_t a, b;
    BroadcastOffsets(g, i, &a, &b);
    out[i] = static_cast<T>(ApplyBinary(kind, static_cast<C>(lhs[a]), static_cast<C>(rhs[b])));
  }
}

template <typename T>
__global__ void ElementwiseBinaryKernel(BinaryKind kind, const T* lhs, const T* rhs, T* out,
                                        int64_t n) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) {
    out[i] = static_cast<T>(ApplyBinary(kind, static_cast<C>(lhs[i]), static_cast<C>(rhs[i])));
  }
}

template <typename T>
__global__ void BroadcastAssignKernel(BroadcastGeometry g, const T* x, T* out, ComputeType<T> scale,
                                      int64_t n) {
  MXLITE_GRID_LOOP(i, n) {
    int64_t a, b;
    BroadcastOffsets(g, i, &a, &b);
    out[i] = static_cast<T>(scale * static_cast<ComputeType<T>>(x[a]));
  }
}

// ops/dropout.cc's SplitMix64 and Keep, bit for bit.
__device__ uint64_t SplitMix64(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

template <typename T>
__global__ void DropoutKernel(DropoutGeometry g, uint64_t seed, double p, ComputeType<T> scale,
                              const T* x, T* y, T* mask, int64_t n) {
  using C = ComputeType<T>;
  MXLITE_GRID_LOOP(i, n) {
    int64_t rest = i, drawn_index = 0, drawn_stride = 1;
    for (int d = g.ndim - 1; d >= 0; --d) {
      const int64_t index = rest % g.extents[d];
      rest /= g.extents[d];
      if (g.drawn[d] != 1) drawn_index += index * drawn_stride;
      drawn_stride *= g.drawn[d];
    }
    const double uniform =
        static_cast<double>(SplitMix64(seed, static_cast<uint64_t>(drawn_index)) >> 11) *
        (1.0 / 9007199254740992.0);
    const C factor = uniform >= p ? scale : C(0);
    y[i] = static_cast<T>(static_cast<C>(x[i]) * factor);
    if (mask != nullptr) mask[i] = static_cast<T>(factor);
  }
}

}  // namespace

template <typename T>
cudaError_t ActivationForward(UnaryKind kind, const T* x, T* y, int64_t n, cudaStream_t s) {
  if (n > 0) ActivationForwardKernel<T><<<Blocks(n), kThreads, 0, s>>>(kind, x, y, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t ActivationBackward(UnaryKind kind, const T* y, const T* dy, T* dx, int64_t n,
                               cudaStream_t s) {
  if (n > 0) ActivationBackwardKernel<T><<<Blocks(n), kThreads, 0, s>>>(kind, y, dy, dx, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LeakyForward(bool elu, double slope, const T* x, T* y, int64_t n, cudaStream_t s) {
  if (n > 0) {
    LeakyForwardKernel<T>
        <<<Blocks(n), kThreads, 0, s>>>(elu, static_cast<ComputeType<T>>(slope), x, y, n);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t LeakyBackward(bool elu, double slope, const T* x, const T* dy, T* dx, int64_t n,
                          cudaStream_t s) {
  if (n > 0) {
    LeakyBackwardKernel<T>
        <<<Blocks(n), kThreads, 0, s>>>(elu, static_cast<ComputeType<T>>(slope), x, dy, dx, n);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t ClipForward(const T* x, T* y, int64_t n, double low, double high, cudaStream_t s) {
  using C = ComputeType<T>;
  if (n > 0) {
    ClipForwardKernel<T>
        <<<Blocks(n), kThreads, 0, s>>>(x, y, n, static_cast<C>(low), static_cast<C>(high));
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t ClipBackward(const T* x, const T* dy, T* dx, int64_t n, double low, double high,
                         cudaStream_t s) {
  using C = ComputeType<T>;
  if (n > 0) {
    ClipBackwardKernel<T>
        <<<Blocks(n), kThreads, 0, s>>>(x, dy, dx, n, static_cast<C>(low), static_cast<C>(high));
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t AddArrays(const T* a, const T* b, T* out, int64_t n, cudaStream_t s) {
  if (n > 0) AddKernel<T><<<Blocks(n), kThreads, 0, s>>>(a, b, out, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t MultiplyArrays(const T* a, const T* b, T* out, int64_t n, cudaStream_t s) {
  if (n > 0) MultiplyKernel<T><<<Blocks(n), kThreads, 0, s>>>(a, b, out, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t ScaleArray(const T* x, T* y, double scale, int64_t n, cudaStream_t s) {
  if (n > 0) {
    ScaleKernel<T><<<Blocks(n), kThreads, 0, s>>>(x, y, static_cast<ComputeType<T>>(scale), n);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t BroadcastBinary(BinaryKind kind, const BroadcastGeometry& g, const T* lhs, const T* rhs,
                            T* out, int64_t n, cudaStream_t s) {
  if (n > 0) BroadcastBinaryKernel<T><<<Blocks(n), kThreads, 0, s>>>(kind, g, lhs, rhs, out, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t ElementwiseBinary(BinaryKind kind, const T* lhs, const T* rhs, T* out, int64_t n,
                              cudaStream_t s) {
  if (n > 0) ElementwiseBinaryKernel<T><<<Blocks(n), kThreads, 0, s>>>(kind, lhs, rhs, out, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t BroadcastAssign(const BroadcastGeometry& g, const T* x, T* out, double scale, int64_t n,
                            cudaStream_t s) {
  if (n > 0) {
    BroadcastAssignKernel<T>
        <<<Blocks(n), kThreads, 0, s>>>(g, x, out, static_cast<ComputeType<T>>(scale), n);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t DropoutForward(const DropoutGeometry& g, uint64_t seed, double p, double scale,
                           const T* x, T* y, T* mask, int64_t n, cudaStream_t s) {
  if (n > 0) {
    DropoutKernel<T><<<Blocks(n), kThreads, 0, s>>>(g, seed, p, static_cast<ComputeType<T>>(scale),
                                                    x, y, mask, n);
  }
  return cudaGetLastError();
}

#define MXLITE_INSTANTIATE_FOR(T)                                                                  \
  template cudaError_t ActivationForward(UnaryKind, const T*, T*, int64_t, cudaStream_t);          \
  template cudaError_t ActivationBackward(UnaryKind, const T*, const T*, T*, int64_t,              \
                                          cudaStream_t);                                           \
  template cudaError_t LeakyForward(bool, double, const T*, T*, int64_t, cudaStream_t);            \
  template cudaError_t LeakyBackward(bool, double, const T*, const T*, T*, int64_t, cudaStream_t); \
  template cudaError_t ClipForward(const T*, T*, int64_t, double, double, cudaStream_t);           \
  template cudaError_t ClipBackward(const T*, const T*, T*, int64_t, double, double,               \
                                    cudaStream_t);                                                 \
  template cudaError_t AddArrays(const T*, const T*, T*, int64_t, cudaStream_t);                   \
  template cudaError_t MultiplyArrays(const T*, const T*, T*, int64_t, cudaStream_t);              \
  template cudaError_t ScaleArray(const T*, T*, double, int64_t, cudaStream_t);                    \
  template cudaError_t BroadcastBinary(BinaryKind, const BroadcastGeometry&, const T*, const T*,   \
                                       T*, int64_t, cudaStream_t);                                 \
  template cudaError_t ElementwiseBinary(BinaryKind, const T*, const T*, T*, int64_t,              \
                                         cudaStream_t);                                            \
  template cudaError_t BroadcastAssign(const BroadcastGeometry&, const T*, T*, double, int64_t,    \
                                       cudaStream_t);                                              \
  template cudaError_t DropoutForward(const DropoutGeometry&, uint64_t, double, double, const T*,  \
                                      T*, T*, int64_t, cudaStream_t);

MXLITE_INSTANTIATE_FOR(float)
MXLITE_INSTANTIATE_FOR(double)
MXLITE_INSTANTIATE_FOR(__half)

}  // namespace mxlite::cuda
