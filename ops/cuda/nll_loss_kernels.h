// Launchers of nll_loss's CUDA kernels (ops/nll_loss.cc; nll_loss_kernels.cu), called by
// ops/cuda/nll_loss_gpu.cc. Like kernel_types.h, included by nvcc and g++.
//
// Positions i in [0, batch * positions) are the label's elements; position i reads data at
// (i / positions, label[i], i % positions) of data (batch, classes, positions). `label` holds
// each position's class (the host checked them), or -1 where the position is ignored;
// `coefficient` its class weight (1 without weights; 0 where ignored).
#pragma once

#include <cstdint>

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

struct NllPositions {
  int64_t count = 0;  // batch * positions
  int64_t positions = 1, classes = 0;
  const int64_t* label = nullptr;
  const double* coefficient = nullptr;
};

// reduce false: out[i] = -coefficient[i] * x at position i (out has the label's shape). reduce
// true: out[0] = scale * the sum of those over every position (one block).
template <typename T>
cudaError_t NllLossForward(const NllPositions& p, const T* data, bool reduce, double scale, T* out,
                           cudaStream_t s);

// dx (data's shape, zeroed first) = -coefficient[i] * g_i at each position's class, 0 elsewhere;
// g_i = dy[i] without reduce, dy[0] * scale with it.
template <typename T>
cudaError_t NllLossBackwardData(const NllPositions& p, const T* dy, bool reduce, double scale,
                                T* dx, cudaStream_t s);

// picked[i] = data at position i (0 where ignored), in double: for the weight's gradient, which
// the host sums per class.
template <typename T>
cudaError_t NllLossPick(const NllPositions& p, const T* data, double* picked, cudaStream_t s);

}  // namespace mxlite::cuda
