// The convolution epilogue on the GPU (convolution_kernels.h): one grid-stride pass over y.
#include "ops/cuda/convolution_kernels.h"
#include "ops/cuda/grid.cuh"

namespace mxlite::cuda {
namespace {

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

#define MXLITE_INSTANTIATE_FOR(T)                                                                \
  template cudaError_t ConvEpilogue(const ConvEpilogueGeometry&, T*, const T*, const T*, double, \
                                    double, cudaStream_t);

MXLITE_INSTANTIATE_FOR(float)
MXLITE_INSTANTIATE_FOR(double)
MXLITE_INSTANTIATE_FOR(__half)

}  // namespace mxlite::cuda
