// SGD-momentum and Adam update kernels (see optimizer_update.h).
#include <cmath>

#include "ops/cuda/grid.cuh"
#include "ops/cuda/optimizer_update.h"

namespace mxlite::cuda {
namespace {

template <typename T>
__device__ T ScaledGradient(T grad, T weight, GradientOptions o) {
  T g = static_cast<T>(o.rescale_grad) * grad;
  if (o.clip_gradient > 0) {
    const T clip = static_cast<T>(o.clip_gradient);
    g = g < -clip ? -clip : (clip < g ? clip : g);
  }
  return g + static_cast<T>(o.wd) * weight;
}

template <typename T>
__global__ void SgdKernel(T* w, const T* grad, T* mom, int64_t n, T lr, T momentum,
                          GradientOptions o) {
  MXLITE_GRID_LOOP(i, n) {
    const T g = ScaledGradient(grad[i], w[i], o);
    if (mom == nullptr) {
      w[i] -= lr * g;
    } else {
      mom[i] = momentum * mom[i] - lr * g;
      w[i] += mom[i];
    }
  }
}

template <typename T>
__global__ void AdamKernel(T* w, const T* grad, T* m, T* v, int64_t n, T lr, T b1, T b2, T eps,
                           GradientOptions o) {
  MXLITE_GRID_LOOP(i, n) {
    const T g = ScaledGradient(grad[i], w[i], o);
    m[i] = b1 * m[i] + (1 - b1) * g;
    v[i] = b2 * v[i] + (1 - b2) * g * g;
    w[i] -= lr * m[i] / (sqrt(v[i]) + eps);
  }
}

}  // namespace

#define MXLITE_DEFINE_FOR(T)                                                                    \
  cudaError_t SgdUpdate(T* weight, const T* grad, T* momentum_state, int64_t n, double lr,      \
                        double momentum, const GradientOptions& options, cudaStream_t stream) { \
    if (n > 0)                                                                                  \
      SgdKernel<T><<<Blocks(n), kThreads, 0, stream>>>(weight, grad, momentum_state, n,         \
                                                       static_cast<T>(lr),                      \
                                                       static_cast<T>(momentum), options);      \
    return cudaGetLastError();                                                                  \
  }                                                                                             \
  cudaError_t AdamUpdate(T* weight, const T* grad, T* mean, T* variance, int64_t n,             \
                         double corrected_lr, double beta1, double beta2, double epsilon,       \
                         const GradientOptions& options, cudaStream_t stream) {                 \
    if (n > 0)                                                                                  \
      AdamKernel<T><<<Blocks(n), kThreads, 0, stream>>>(                                        \
          weight, grad, mean, variance, n, static_cast<T>(corrected_lr), static_cast<T>(beta1), \
          static_cast<T>(beta2), static_cast<T>(epsilon), options);                             \
    return cudaGetLastError();                                                                  \
  }

MXLITE_DEFINE_FOR(float)
MXLITE_DEFINE_FOR(double)

}  // namespace mxlite::cuda
