// Activation and LeakyReLU on the GPU (activation_kernels.h): grid-stride loops over int64
// indices; every formula is the CPU kernel's (ops/activation.cc).
#include <cmath>

#include "ops/cuda/activation_kernels.h"
#include "ops/cuda/grid.cuh"

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

#define MXLITE_INSTANTIATE_FOR(T)                                                         \
  template cudaError_t ActivationForward(UnaryKind, const T*, T*, int64_t, cudaStream_t); \
  template cudaError_t ActivationBackward(UnaryKind, const T*, const T*, T*, int64_t,     \
                                          cudaStream_t);                                  \
  template cudaError_t LeakyForward(bool, double, const T*, T*, int64_t, cudaStream_t);   \
  template cudaError_t LeakyBackward(bool, double, const T*, const T*, T*, int64_t, cudaStream_t);

MXLITE_INSTANTIATE_FOR(float)
MXLITE_INSTANTIATE_FOR(double)
MXLITE_INSTANTIATE_FOR(__half)

}  // namespace mxlite::cuda
