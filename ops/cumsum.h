// The geometry of cumsum (ops/cumsum.cc), shared by the CPU and GPU kernels
// (ops/cuda/cumsum_gpu.cc): the data as lines along the axis.
#pragma once

#include <cstdint>
#include <string>

#include "core/shape.h"
#include "ops/attributes.h"

namespace mxlite {

struct CumsumLines {
  int64_t outer = 1, length = 1, inner = 1;  // element (o, k, i) at (o * length + k) * inner + i
  bool exclusive = false;                    // each sum leaves its own element out
  bool reverse = false;                      // sums run from the end of the axis
};

// The lines of a cumsum node with attributes `attrs` over data of `shape`; its backward is the
// same with `reverse` flipped (`for_gradient`). Throws mxlite::Error naming `owner` when the data
// is a scalar or the axis is out of range.
CumsumLines CumsumLinesOf(const Attributes& attrs, const Shape& shape, bool for_gradient,
                          const std::string& owner);

}  // namespace mxlite
