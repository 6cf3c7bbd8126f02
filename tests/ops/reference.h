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

// Moves x between (outer, channels, spatial) — NCHW — and the layout that puts element (n, c, s) at
// flat index `moved(n, c, s)`: to it when `to_moved`, else back from it. Written out element by
// element (the library's transforms are tested against it).
template <typename T, typename Moved>
std::vector<T> MoveElements(const std::vector<T>& x, int64_t outer, int64_t channels,
                            int64_t spatial, bool to_moved, Moved moved) {
  std::vector<T> y(x.size());
  for (int64_t n = 0; n < outer; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t s = 0; s < spatial; ++s) {
        const int64_t plain = (n * channels + c) * spatial + s, other = moved(n, c, s);
        if (to_moved) {
          y[other] = x[plain];
        } else {
          y[plain] = x[other];
        }
      }
    }
  }
  return y;
}

// (outer, channels, spatial) <-> (outer, spatial, channels): activations NCHW <-> NHWC and
// weights OIHW <-> OHWI.
template <typename T>
std::vector<T> MoveChannels(const std::vector<T>& x, int64_t outer, int64_t channels,
                            int64_t spatial, bool to_last) {
  return MoveElements(x, outer, channels, spatial, to_last, [&](int64_t n, int64_t c, int64_t s) {
    return (n * spatial + s) * channels + c;
  });
}

// (outer, channels, spatial) <-> (outer, channels / 16, spatial, 16): activations NCHW <->
// NCHW16c.
template <typename T>
std::vector<T> MoveToBlocks(const std::vector<T>& x, int64_t outer, int64_t channels,
                            int64_t spatial, bool to_blocks) {
  return MoveElements(x, outer, channels, spatial, to_blocks, [&](int64_t n, int64_t c, int64_t s) {
    return (n * channels + c / 16 * 16) * spatial + s * 16 + c % 16;
  });
}

}  // namespace mxlite::testing
