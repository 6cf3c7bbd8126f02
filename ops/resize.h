// Resize (ONNX's Resize and Upsample import to it; PyTorch's interpolate): the trailing axes of
// the data resampled to new extents, one axis at a time (separable: linear on two axes is
// bilinear, cubic bicubic, to rounding), the axis that grows the data least first.
//
//   size     the output extents of the trailing len(size) axes (the leading ones are kept)
//   mode     nearest (default), linear or cubic
//   coordinate_transformation_mode  how output index x maps to an input coordinate, with
//            scale = out / in (or the `scale` given) and resized = in * scale (out, unless a
//            scale was given: ONNX's rule):
//              half_pixel (default)  (x + 0.5) / scale - 0.5
//              pytorch_half_pixel    the same, but 0 where resized is 1 or less (ONNX's text
//                                    and ONNX Runtime; ONNX's Python reference takes -0.5, which
//                                    only cubic would tell apart)
//              align_corners         x * (in - 1) / (resized - 1) (0 where resized is 1)
//              asymmetric            x / scale
//              half_pixel_symmetric  half_pixel shifted by in / 2 * (1 - out / resized), so the
//                                    output's centre falls on the input's (ONNX opset 19)
//              tf_half_pixel_for_nn  (x + 0.5) / scale (TensorFlow's nearest)
//              tf_crop_and_resize    the output spans the window [roi_start, roi_end] of the
//                                    input (fractions of in - 1): roi_start * (in - 1) + x *
//                                    (roi_end - roi_start) * (in - 1) / (resized - 1) (the middle
//                                    of the window where resized is 1); an output whose coordinate
//                                    falls outside [0, in - 1] on some axis is 0 (ONNX's
//                                    extrapolation value is added to those by the importer)
//   nearest_mode  round_prefer_floor (default), round_prefer_ceil, floor or ceil
//   cubic_coeff_a    cubic's a (default -0.75, as PyTorch's bicubic; -0.5 is Keys' own)
//   exclude_outside  cubic and antialiased filters: taps outside the axis weigh 0 and the rest
//            are renormalised to sum 1 (default false: they read the edge value)
//   antialias  linear and cubic: on an axis that shrinks (scale < 1) the filter is stretched by
//            1 / scale, so an output averages every input under it (ONNX's antialias; with
//            half_pixel and exclude_outside, PyTorch's antialias=True); default false
//   scale    per resized axis, the scale of the transform (ONNX's scales when they were given,
//            which may differ from out / in); () uses out / in
//   roi      tf_crop_and_resize: the window's starts then its ends, one each per resized axis;
//            () is the whole input, (0, ..., 1, ...)
//
// Linear reads the two inputs around the coordinate, clamped to the axis (the edge value
// repeats); nearest reads the one its rounding picks, clamped. Cubic (ONNX's Resize, Keys'
// cubic convolution) reads the four inputs floor(c) - 1 .. floor(c) + 2 around coordinate c,
// with t = c - floor(c), weights
//   W(1 + t), W(t), W(1 - t), W(2 - t),
//   W(d) = ((a + 2) d - (a + 3)) d^2 + 1 for |d| <= 1, ((a d - 5a) d + 8a) d - 4a for 1 < |d| < 2,
// its indices clamped to the axis (the edge value repeats, as ONNX's reference pads with it)
// unless exclude_outside drops them; the coordinate itself is not clamped. Backward gives each
// input element the sum of the output gradients that read it, times the weights they read it
// with (the adjoint of the forward's taps).
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
  double roi_start = 0, roi_end = 1;  // tf_crop_and_resize's window
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

// Output index o of one axis reads `count` inputs, index[o * count + k] with weight
// weight[o * count + k] for k < count: nearest 1 (weight 1); linear 2, 1 - t and t (the kernels
// compute a * (1 - t) + b * t from the second weight, and read only a where t is 0); cubic 4;
// antialiased filters 2 - 2 * (floor(-support / scale) + 1), support 1 (linear) or 2 (cubic).
// Sums of more than two taps go in tap order.
struct ResizeTaps {
  int count = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
};
ResizeTaps TapsOf(const Attributes& attrs, const ResizeAxis& axis);

// The taps read backwards: input index i is read by outputs reader[k] with weight weight[k] for k
// in [begin[i], begin[i + 1]), in increasing order of output (and of tap, where an output reads i
// through two clamped taps); taps of weight 0 are left out.
struct ResizeReaders {
  std::vector<int64_t> begin, reader;
  std::vector<double> weight;
};
ResizeReaders ReadersOf(const ResizeTaps& taps, int64_t in);

}  // namespace mxlite
