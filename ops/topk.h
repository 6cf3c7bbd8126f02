// topk (MXNet's topk, ONNX's TopK, PyTorch's torch.topk): the k elements of each line along `axis`
// that rank first (ops/topk_order.h: the largest, or the smallest with is_ascend; NaN first; ties
// by position), in rank order.
//
//   axis      the axis (default -1, the last; negative from the end)
//   k         how many (default 1; k < 1 keeps the whole axis, a sort)
//   ret_typ   value (the values), indices (their positions along the axis, the default), both
//             (values, then positions), mask (data's shape: 1 where an element was picked, else 0)
//   is_ascend the smallest instead of the largest (default false)
//   dtype     the positions' dtype (float32, the default as MXNet's, float64, int32 or int64)
//
// Gradient: to the data, the values' gradient added at the picked positions (0 elsewhere); none
// through positions or the mask. The CPU sorts each line (std::partial_sort, lines over the
// intra-op threads); the GPU gives each line a thread that keeps the k best in a heap (O(n log k)).
#pragma once

#include <cstdint>
#include <string>

#include "core/shape.h"
#include "ops/attributes.h"

namespace mxlite {

enum class TopkReturn { kValue, kIndices, kBoth, kMask };

// The node's lines: `outer` x `inner` of `extent` elements (element e of line (o, i) at
// (o * extent + e) * inner + i), of which `k` are kept.
struct TopkGeometry {
  int64_t outer = 1, extent = 1, inner = 1, k = 1;
  TopkReturn ret = TopkReturn::kIndices;
  bool ascending = false;
};

// "topk NODE", for errors.
std::string TopkOwner(const std::string& node);

// The geometry of data of shape `data`; an error naming `owner` for a scalar, an axis out of range
// or a k beyond the axis' extent.
TopkGeometry TopkGeometryOf(const Attributes& attrs, const Shape& data, const std::string& owner);

}  // namespace mxlite
