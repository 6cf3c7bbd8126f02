// slice (MXNet's name; ONNX's Slice imports to it): a strided window of the data, NumPy's
// data[b0:e0:s0, b1:e1:s1, ...].
//
//   begin  first index per leading axis; negative counts from the end
//   end    the index one past the last, per leading axis (exclusive); negative counts from the end
//   step   per leading axis, nonzero, default 1; negative walks the axis backwards
//
// begin, end and step cover the first k axes (the same k for all three; step may be ()); the
// other axes are taken whole. As in Python, out-of-range begin and end are clamped rather than
// refused (end = 2^63-1 reads to the end of an axis; with a negative step, end = -2^63 reads
// through index 0), and an empty range gives an extent-0 axis. Any dtype; backward scatters the
// output gradient into a zero input gradient.
//
// This header is what the CPU kernel (ops/slice.cc) and the GPU kernel (ops/cuda/slice_gpu.cc)
// share.
#pragma once

#include <string>
#include <vector>

#include "core/shape.h"
#include "ops/attributes.h"

namespace mxlite {

// Where output element (i0, i1, ...) comes from: input index begin[d] + i_d * step[d] on each axis.
struct SliceGeometry {
  Shape output;
  std::vector<int64_t> begin;  // per input axis, clamped
  std::vector<int64_t> step;   // per input axis
};

// The window `attrs` ask of data of shape `data`; an error naming `owner` ("slice s1") when the
// tuples differ in length, name more axes than the data has, or hold a zero step.
SliceGeometry SliceGeometryOf(const Attributes& attrs, const Shape& data, const std::string& owner);
// The same from the tuples themselves (the ONNX importer's slices of values known at load).
SliceGeometry SliceGeometryOf(const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                              const std::vector<int64_t>& step, const Shape& data,
                              const std::string& owner);

}  // namespace mxlite
