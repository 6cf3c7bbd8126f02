// gather_nd (MXNet's gather_nd; ONNX's GatherND imports to it): data of shape (X0, ..., X{N-1})
// and indices of shape (M, Y0, ..., Y{K-1}) give an output of shape (Y0, ..., Y{K-1}, XM, ...,
// X{N-1}):
//
//   output[y0, ..., y{K-1}, xM, ...] = data[indices[0, y...], ..., indices[M-1, y...], xM, ...]
//
// each index tuple (along indices' first axis) picking a slice of data. Indices are int32 or
// int64 (floating ones holding integers, as MXNet passes them, too); a negative index counts from
// the end of its axis. Gradient: the output gradient added into a zero data gradient at the
// picked slices (tuples that repeat add up); none to the indices. The indices are read on the
// host on either device (a bad index is an error naming the node, the tuple and the axis); the
// GPU copies and adds through gather_elements' kernels, one element offset per output element.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/shape.h"
#include "ops/tensor.h"

namespace mxlite {

// "gather_nd NODE", for errors.
std::string GatherNdOwner(const std::string& node);

// The output's shape; an error naming `owner` when indices is a scalar or its tuples are longer
// than data's rank.
Shape GatherNdShape(const Shape& data, const Shape& indices, const std::string& owner);

// The picked slices: the offset into data of each tuple's slice, in output order, and the slice's
// size (the product of data's extents past the tuple).
struct GatherNdSlices {
  std::vector<int64_t> offsets;
  int64_t size = 1;
};
GatherNdSlices GatherNdSlicesOf(const TensorView& indices, const Shape& data,
                                const std::string& owner);

}  // namespace mxlite
