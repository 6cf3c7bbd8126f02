// NumPy broadcasting rules on shapes, shared by the element-wise binary ops, Gemm's C and
// MatMul's batch dimensions and bias. Shapes are aligned at their last axis; two extents are
// compatible when they are equal or one of them is 1 (which then stretches, also to 0).
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include "core/shape.h"

namespace mxlite {

// The shape `a` and `b` broadcast to, or nullopt when they are incompatible.
inline std::optional<Shape> BroadcastShapes(const Shape& a, const Shape& b) {
  const int ndim = std::max(a.ndim(), b.ndim());
  std::vector<int64_t> dims(ndim);
  for (int axis = 0; axis < ndim; ++axis) {
    const int from_end = ndim - axis;
    const int64_t x = from_end <= a.ndim() ? a[a.ndim() - from_end] : 1;
    const int64_t y = from_end <= b.ndim() ? b[b.ndim() - from_end] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    dims[axis] = x == 1 ? y : x;
  }
  return Shape(dims);
}

// Whether `from` broadcasts to `to` without changing `to` (ONNX's unidirectional broadcasting).
inline bool BroadcastsTo(const Shape& from, const Shape& to) {
  std::optional<Shape> both = BroadcastShapes(from, to);
  return both.has_value() && *both == to;
}

// Whether `vector` lies along the last axis of `to`: (N) or (1, ..., 1, N) with N that axis's
// extent, of at most `to`'s rank (a bias a product may add as it stores each row; MatMul's `bias`).
inline bool IsLastAxisVector(const Shape& vector, const Shape& to) {
  if (to.ndim() == 0 || vector.ndim() == 0 || vector.ndim() > to.ndim()) return false;
  if (vector[vector.ndim() - 1] != to[to.ndim() - 1]) return false;
  for (int axis = 0; axis + 1 < vector.ndim(); ++axis) {
    if (vector[axis] != 1) return false;
  }
  return true;
}

}  // namespace mxlite
