// What Deconvolution (ops/deconvolution.cc) reads from its attributes beyond the window it shares
// with Convolution (ops/conv_attributes.h): per spatial axis, the output's extent and the padding
// of its adjoint convolution, from pad and adj or from target_shape. Shared by its CPU kernels and
// its GPU kernels (ops/cuda/convolution_gpu.cc).
#pragma once

#include <cstdint>
#include <string>

#include "ops/attributes.h"
#include "ops/conv_attributes.h"

namespace mxlite {

struct DeconvolutionAxis {
  int64_t size;  // the output's extent
  int64_t pad;   // the adjoint convolution's padding
};

// Spatial axis `axis` of data whose extent on it is `in`. With target_shape (any entry non-zero):
// size = its entry and pad = ceil((full - size) / 2), full the window's reach; else the window's
// pad and size = full - 2 * pad + adj. Errors naming `owner` ("Deconvolution deconv0"): a
// target_shape or adj of the wrong length, a target the window cannot reach, an adj not below the
// stride or the dilation, padding that leaves no output.
DeconvolutionAxis DeconvolutionAxisOf(const Attributes& attrs, const ConvWindow& window, int axis,
                                      int64_t in, const std::string& owner);

}  // namespace mxlite
