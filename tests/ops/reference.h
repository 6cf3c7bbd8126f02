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

// (outer, channels, spatial) <-> (outer, channels / 16, spatial, 16): activations NCHW <->
// NCHW16c, written out element by element (the library's transforms are tested against it).
template <typename T>
std::vector<T> MoveToBlocks(const std::vector<T>& x, int64_t outer, int64_t channels,
                            int64_t spatial, bool to_blocks) {
  std::vector<T> y(x.size());
  for (int64_t n = 0; n < outer; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t s = 0; s < spatial; ++s) {
        const int64_t plain = (n * channels + c) * spatial + s;
        const int64_t blocked = (n * channels + c / 16 * 16) * spatial + s * 16 + c % 16;
        if (to_blocks) {
          y[blocked] = x[plain];
        } else {
          y[plain] = x[blocked];
        }
      }
    }
  }
  return y;
}

}  // namespace mxlite::testing
