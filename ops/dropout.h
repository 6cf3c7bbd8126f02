// What Dropout (ops/dropout.cc) reads from its attributes, shared by its CPU and GPU kernels
// (ops/cuda/dropout_gpu.cc).
#pragma once

#include <string>

#include "core/shape.h"
#include "ops/attributes.h"

namespace mxlite {

// p and mode for one pass.
struct DropoutSettings {
  double p;
  double scale;  // 1 / (1 - p), 0 when p = 1 (nothing is kept)
  bool active;   // a mask is drawn and applied (p > 0, and training or mode=always)
};
DropoutSettings DropoutSettingsOf(const Attributes& attrs, bool is_train);

// The mask's own shape: the data's, with every axis of `axes` (negative counts from the end)
// reduced to 1, the axes whose elements share one draw. An error naming `owner` ("Dropout drop0")
// for an axis out of range.
Shape DropoutDrawShape(const Attributes& attrs, const Shape& data, const std::string& owner);

}  // namespace mxlite
