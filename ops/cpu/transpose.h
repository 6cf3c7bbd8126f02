// Permuting the axes of a dense row-major tensor on the CPU: the Transpose op and the layout
// transforms (NCHW <-> NHWC) of the convolution planner.
//
//   // out[n, h, w, c] = in[n, c, h, w]
//   TransposeAxes(in, Shape{N, C, H, W}, {0, 2, 3, 1}, out, DType::kFloat32);
//
// Output axis i is input axis axes[i]. Axes of extent 1 are dropped and input axes that stay
// neighbours in the output are merged first, so NCHW -> NHWC runs as N transposes of a C x (H*W)
// matrix. Those run in 32 x 32 tiles (reads and writes stay in cache); a permutation that keeps
// the last axis copies whole rows. Work is split over the intra-op pool. Any dtype (the kernel
// moves elements of 1, 2, 4 or 8 bytes); `in` and `out` must not overlap.
#pragma once

#include <vector>

#include "core/dtype.h"
#include "core/shape.h"

namespace mxlite::cpu {

void TransposeAxes(const void* in, const Shape& in_shape, const std::vector<int>& axes, void* out,
                   DType dtype);

}  // namespace mxlite::cpu
