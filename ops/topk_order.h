// The order topk (ops/topk.cc) ranks a line's elements by, shared by its CPU and GPU kernels
// (ops/host_device.h): for the largest, a larger value first; for the smallest (is_ascend), a
// smaller one; NaN ranks above every number either way (PyTorch's topk); equal values keep their
// order along the axis (ONNX's TopK: the lower index first). A strict weak order, so sorting by
// it is well defined with NaN present.
#pragma once

#include <cstdint>

#include "ops/host_device.h"

namespace mxlite {

// Whether element (a, at index i) ranks before element (b, at index j).
template <typename C>
MXLITE_HOST_DEVICE bool TopkRanksBefore(C a, int64_t i, C b, int64_t j, bool ascending) {
  const bool a_nan = a != a, b_nan = b != b;
  if (a_nan || b_nan) return a_nan && b_nan ? i < j : a_nan;
  if (a != b) return ascending ? a < b : a > b;
  return i < j;
}

}  // namespace mxlite
