// What Concat (ops/concat.cc) reads from its attributes, shared by its CPU and GPU kernels
// (ops/cuda/concat_gpu.cc).
#pragma once

#include "ops/attributes.h"

namespace mxlite {

// The axis `dim` names in tensors of `ndim` dims (a negative dim counts from the end). Shape
// inference checks that it is in range.
int ConcatAxisOf(const Attributes& attrs, int ndim);

}  // namespace mxlite
