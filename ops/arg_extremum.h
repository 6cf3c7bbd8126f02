// argmax and argmin (MXNet's names): the index of the largest / smallest element along `axis`, as
// a number in the data's dtype (MXNet's rule; ONNX's ArgMax and ArgMin import to them and Cast
// the result to int64).
//
//   axis      the axis searched; negative counts from the end; absent: the data flattened
//   keepdims  keep the searched axis with extent 1 (absent axis: every axis) (default false)
//
// The first index wins a tie; a NaN counts as larger (argmax) or smaller (argmin) than any number,
// so the first NaN is found, as NumPy does. An empty searched axis is an error. No gradient (the
// data's is zero). This header is what the CPU kernel (ops/arg_extremum.cc) and the GPU kernel
// (ops/cuda/arg_extremum_gpu.cc) share.
#pragma once

#include <cstdint>
#include <string>

#include "core/shape.h"
#include "ops/attributes.h"

namespace mxlite {

// The data seen as (outer, extent, inner), searched along the middle axis.
struct ArgSearch {
  int64_t outer = 1, extent = 1, inner = 1;
  Shape output;
};

// The search `attrs` ask of `data`; an error naming `owner` ("argmax a1") for an axis out of range
// or an empty searched axis.
ArgSearch ArgSearchOf(const Attributes& attrs, const Shape& data, const std::string& owner);

}  // namespace mxlite
