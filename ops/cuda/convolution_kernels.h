// Launcher of the Convolution's own CUDA kernel (ops/convolution.cc; convolution_kernels.cu), the
// epilogue of its fused forms, called by ops/cuda/convolution_gpu.cc (the convolutions themselves
// run on cuDNN). Like kernel_types.h, included by nvcc and g++.
#pragma once

#include "ops/cuda/kernel_types.h"

namespace mxlite::cuda {

// A convolution's output epilogue after cuDNN (ops/convolution.cc's fused forms): in place,
// y = clamp(round(round(y + bias[c]) + residual), low, high), element by element, where c is the
// element's channel, (i / inner) % channels (inner: H*W channels-first, 1 channels-last). bias and
// residual may be null (not added); low / high may be infinite. Each addition rounds to T as the
// separate bias (cudnnAddTensor) and addition kernels would, so float16 results match them.
struct ConvEpilogueGeometry {
  int64_t n = 0, channels = 1, inner = 1;
};
template <typename T>
cudaError_t ConvEpilogue(const ConvEpilogueGeometry& g, T* y, const T* bias, const T* residual,
                         double low, double high, cudaStream_t s);

}  // namespace mxlite::cuda
