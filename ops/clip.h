// What clip (ops/clip.cc) reads from its attributes, shared by its CPU and GPU kernels
// (ops/cuda/clip_gpu.cc).
#pragma once

#include "ops/attributes.h"

namespace mxlite {

// a_min and a_max; an absent bound is -inf or +inf. Each kernel rounds them to the type it
// compares in (the GPU's float16 kernel compares in float).
struct ClipBounds {
  double low, high;
};
ClipBounds ClipBoundsOf(const Attributes& attrs);

}  // namespace mxlite
