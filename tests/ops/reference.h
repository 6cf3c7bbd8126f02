// Index arithmetic for the plain reference implementations in the op tests: coordinates of a
// row-major element, and the element of a broadcast operand that an output element reads.
// Deliberately naive (one element at a time) so it shares nothing with the kernels under test.
#pragma once

#include <cstdint>
#include <vector>

#include "core/shape.h"

namespace mxlite::testing {

// Coordinates of flat element `index` in `shape`.
inline std::vector<int64_t> Unravel(int64_t index, const Shape& shape) {
  std::vector<int64_t> coords(shape.ndim());
  for (int axis = shape.ndim() - 1; axis >= 0; --axis) {
    coords[axis] = index % shape[axis];
    index /= shape[axis];
  }
  return coords;
}

inline int64_t Ravel(const std::vector<int64_t>& coords, const Shape& shape) {
  int64_t index = 0;
  for (int axis = 0; axis < shape.ndim(); ++axis) index = index * shape[axis] + coords[axis];
  return index;
}

// The flat index into `operand` read at output coordinates `coords` under NumPy broadcasting.
inline int64_t BroadcastIndex(const std::vector<int64_t>& coords, const Shape& operand) {
  const int offset = static_cast<int>(coords.size()) - operand.ndim();
  std::vector<int64_t> own(operand.ndim());
  for (int axis = 0; axis < operand.ndim(); ++axis) {
    own[axis] = operand[axis] == 1 ? 0 : coords[axis + offset];
  }
  return Ravel(own, operand);
}

}  // namespace mxlite::testing
