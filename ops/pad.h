// What Pad (ops/pad.cc) reads from its attributes, shared by its CPU and GPU kernels
// (ops/cuda/pad_gpu.cc): the mode, and the input index each output index of an axis copies.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/dtype.h"
#include "ops/attributes.h"

namespace mxlite {

enum class PadMode { kConstant, kEdge, kReflect, kWrap };
PadMode PadModeOf(const Attributes& attrs);

// The input index that output index j of an axis copies, for an axis of `extent` elements padded
// by `before` in front: -1 for a constant; edge repeats the border, reflect mirrors around it,
// wrap continues from the other end (the axis a ring). Shape inference checks what edge, reflect
// and wrap need of the extent.
inline int64_t PadSourceIndex(PadMode mode, int64_t j, int64_t before, int64_t extent) {
  const int64_t i = j - before;
  if (i >= 0 && i < extent) return i;
  if (mode == PadMode::kConstant) return -1;
  if (mode == PadMode::kEdge) return std::clamp<int64_t>(i, 0, extent - 1);
  if (mode == PadMode::kWrap) return (i % extent + extent) % extent;
  return i < 0 ? -i : 2 * (extent - 1) - i;
}

// The constant of constant padding as data of dtype `dtype` holds it: integers take it truncated
// toward zero and clamped to their range (so the CPU and the GPU agree on any value).
double PadFillFor(DType dtype, double value);

}  // namespace mxlite
