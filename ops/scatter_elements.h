// scatter_elements (ONNX's ScatterElements and Scatter, PyTorch's scatter / scatter_reduce):
// output = data with updates written along `axis` where the index names (index and updates of one
// shape, the rank of data; ops/index_values.h's ElementIndexAxis): element j of updates goes to
// data's element at index j's coordinates with the one on `axis` replaced by index[j] (negative
// from the end). `reduction` none writes it (where indices repeat, the last along the axis wins),
// add / mul / max / min combine it with what is there (max and min keep NaN). Indices are int32 or
// int64 (floating ones holding integers too); any dtype for none, float and int32 / int64 for the
// others.
//
// Index elements that differ off `axis` write different data elements, so each "line" of the
// index (its elements along `axis` at one coordinate elsewhere) is processed in order on its own
// (intra-op threads on the CPU, a GPU thread each): results do not depend on the thread count.
//
// Gradients (PyTorch's): none: dy to data except where written, and dy where written to the
// updates that wrote there; add: dy to data and to every update; mul: to data dy times the
// product of its updates, to an update dy times data and the other updates there; max / min: dy
// split evenly among data and the updates equal to the result. None to the index.
#pragma once

#include <cstdint>
#include <string>

#include "core/shape.h"
#include "ops/attributes.h"

namespace mxlite {

enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

// "scatter_elements NODE", for errors.
std::string ScatterElementsOwner(const std::string& node);

ScatterReduction ScatterReductionOf(const Attributes& attrs);

// The index's lines along `axis`: `lines` of `steps` elements, element k of line l at flat
// position Element(l, k).
struct ScatterLines {
  int64_t lines = 0, steps = 0, inner = 1;
  int64_t Element(int64_t line, int64_t k) const {
    return (line / inner * steps + k) * inner + line % inner;
  }
};
ScatterLines ScatterLinesOf(const Shape& index, int axis);

}  // namespace mxlite
