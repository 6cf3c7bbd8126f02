// What SoftmaxOutput (ops/softmax_output.cc) reads from its attributes, shared by its CPU and GPU
// kernels (ops/cuda/softmax_output_gpu.cc): the classes, the labels' class indices and the
// gradient's scale. The file comment of ops/softmax_output.cc gives the op's semantics.
#pragma once

#include <cstdint>
#include <string>

#include "core/shape.h"
#include "ops/attributes.h"
#include "ops/softmax.h"

namespace mxlite {

// How the gradient of class-index labels is normalised (the `normalization` attribute).
enum class SoftmaxNormalization { kNull, kBatch, kValid };

// The attributes, with their defaults.
struct SoftmaxOutputParams {
  double grad_scale = 1;
  // Compared with the labels, both truncated to integers (IsIgnoreLabel).
  double ignore_label = -1;
  // Positions labelled ignore_label get a zero gradient.
  bool use_ignore = false;
  // The classes along dim 1, one label per position of dims 2... (multi_output); along the last
  // dim (preserve_shape).
  bool multi_output = false, preserve_shape = false;
  SoftmaxNormalization normalization = SoftmaxNormalization::kNull;
  // The gradient multiplied by the incoming output gradient.
  bool out_grad = false;
  // Label smoothing: the probability mass moved off the label.
  double smooth_alpha = 0;

  // Whether `label` (a class index held in a float) is ignore_label, compared truncated; MXNet's
  // "valid" normalisation counts the labels that are not, use_ignore or not.
  bool IsIgnoreLabel(double label) const {
    return static_cast<int64_t>(label) == static_cast<int64_t>(ignore_label);
  }
};

// Reads grad_scale, ignore_label, use_ignore, multi_output, preserve_shape, normalization,
// out_grad and smooth_alpha. An error naming `owner` ("SoftmaxOutput softmax0") for a
// normalization other than null, batch and valid (the schema admits no other).
SoftmaxOutputParams SoftmaxOutputParamsOf(const Attributes& attrs, const std::string& owner);

// The classes are every dim but the first, dim 1 with multi_output, the last with
// preserve_shape; data of fewer than 2 dims is an error naming `owner`.
SoftmaxExtent SoftmaxOutputClasses(const SoftmaxOutputParams& p, const Shape& data,
                                   const std::string& owner);

// The class index of the label `value` at `position` (positions count outer * inner of the
// classes): -1 when ignored (use_ignore and IsIgnoreLabel). An error naming `owner`, the value
// and the position when the value is not an integer in [0, classes).
int64_t SoftmaxOutputClassIndex(const SoftmaxOutputParams& p, double value, int64_t position,
                                int64_t classes, const std::string& owner);

// What the gradient of class-index labels (of shape `label`, `valid` of them not ignore_label) is
// multiplied by: grad_scale divided by the normaliser, which is 1 (null), the label's first dim
// (batch: the outer extent of `classes`, or every position with preserve_shape) or
// max(valid, 1) (valid); with multi_output, null and batch also divide by the positions per
// sample (the inner extent), as MXNet does.
double SoftmaxOutputGradientScale(const SoftmaxOutputParams& p, const SoftmaxExtent& classes,
                                  const Shape& label, int64_t valid);

// The smoothed one-hot target among `classes` classes: `on` at the label (1 - smooth_alpha),
// `off` elsewhere (smooth_alpha / (classes - 1); 0 for a single class).
struct SoftmaxOutputTarget {
  double on = 1, off = 0;
};
SoftmaxOutputTarget SoftmaxOutputTargetOf(const SoftmaxOutputParams& p, int64_t classes);

}  // namespace mxlite
