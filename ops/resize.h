// Resize (ONNX's Resize and Upsample import to it; PyTorch's interpolate): the trailing axes of
// the data resampled to new extents, one axis at a time (separable: linear on two axes is
// bilinear, to rounding), the axis that grows the data least first.
//
//   size     the output extents of the trailing len(size) axes (the leading ones are kept)
//   mode     nearest (default) or linear
//   coordinate_transformation_mode  how output index x maps to an input coordinate, with
//            scale = out / in (or the `scale` given) and resized = in * scale (out, unless a
//            scale was given: ONNX's rule):
//              half_pixel (default)  (x + 0.5) / scale - 0.5
//              pytorch_half_pixel    the same, but 0 where resized is 1 or less
//              align_corners         x * (in - 1) / (resized - 1) (0 where resized is 1)
//              asymmetric            x / scale
//   nearest_mode  round_prefer_floor (default), round_prefer_ceil, floor or ceil
//   scale    per resized axis, the scale of the transform (ONNX's scales when they were given,
//            which may differ from out / in); () uses out / in
//
// Linear reads the two inputs around the coordinate, clamped to the axis (the edge value
// repeats); nearest reads the one its rounding picks, clamped. Backward gives each input element
// the sum of the output gradients that read it, times the weights they read it with.
//
// What the attributes mean for a tensor, shared by the CPU kernels (ops/resize.cc) and the GPU
// kernels (ops/cuda/resize_gpu.cc): each resized axis as taps (which inputs each output reads)
// and, for backward, the same read the other way (which outputs read each input).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/shape.h"
#include "ops/attributes.h"

namespace mxlite {

// One axis resized from `in` to `out` elements.
struct ResizeAxis {
  int axis = 0;
  int64_t in = 0, out = 0;
  double scale = 1;
};

struct ResizePlan {
  Shape output;
  std::vector<ResizeAxis> axes;  // those that change, in the order their passes run
};

// What `attrs` ask of data of shape `data`; an error naming `owner` ("Resize up1") for more
// extents than axes, a negative extent, an empty axis resized to a non-empty one, or a scale
// that is not positive.
ResizePlan ResizePlanOf(const Attributes& attrs, const Shape& data, const std::string& owner);

// The data's shape before each pass and after the last: shapes[0] the data's, shapes[k + 1]
// after resizing plan.axes[k].
std::vector<Shape> ResizePassShapes(const Shape& data, const ResizePlan& plan);

// Output index o of one axis reads input `first[o]` with weight 1 - frac[o] and `second[o]` with
// weight frac[o] (nearest: first == second, frac 0).
struct ResizeTaps {
  std::vector<int64_t> first, second;
  std::vector<double> frac;
};
ResizeTaps TapsOf(const Attributes& attrs, const ResizeAxis& axis);

// The taps read backwards: input index i is read by outputs reader[k] with weight weight[k] for k
// in [begin[i], begin[i + 1]), in increasing order of output.
struct ResizeReaders {
  std::vector<int64_t> begin, reader;
  std::vector<double> weight;
};
ResizeReaders ReadersOf(const ResizeTaps& taps, int64_t in);

}  // namespace mxlite
