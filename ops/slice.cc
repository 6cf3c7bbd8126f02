// slice (ops/slice.h): the OpDef and the CPU kernel, a row window (ops/cpu/row_window.h): whole
// rows where the last axis has step 1, single elements otherwise, one memcpy where the window is
// one slab (q, k and v taken from attention's packed projection; ShuffleNet's channel split).
#include "ops/slice.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "ops/cpu/row_window.h"
#include "ops/operator.h"

namespace mxlite {

namespace {

// Python's clamping of one slice bound on an axis of `extent` elements.
int64_t ClampBound(int64_t index, int64_t extent, bool backwards) {
  if (index < 0) index = index < -extent ? -1 : index + extent;  // -1: before the first element
  return backwards ? std::clamp<int64_t>(index, -1, extent - 1)
                   : std::clamp<int64_t>(index, 0, extent);
}

}  // namespace

SliceGeometry SliceGeometryOf(const Attributes& attrs, const Shape& data,
                              const std::string& owner) {
  return SliceGeometryOf(attrs.GetInts("begin"), attrs.GetInts("end"), attrs.GetInts("step"), data,
                         owner);
}

SliceGeometry SliceGeometryOf(const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                              const std::vector<int64_t>& step, const Shape& data,
                              const std::string& owner) {
  MX_CHECK(begin.size() == end.size() && (step.empty() || step.size() == begin.size()))
      << owner << ": begin=" << FormatIntTuple(begin) << ", end=" << FormatIntTuple(end)
      << " and step=" << FormatIntTuple(step) << " must have the same length (step may be ())";
  MX_CHECK(static_cast<int>(begin.size()) <= data.ndim())
      << owner << ": begin=" << FormatIntTuple(begin) << " names " << begin.size()
      << " axes; the data " << data << " has " << data.ndim();
  SliceGeometry g;
  std::vector<int64_t> dims(data.ndim());
  g.begin.assign(data.ndim(), 0);
  g.step.assign(data.ndim(), 1);
  for (int d = 0; d < data.ndim(); ++d) {
    const int64_t extent = data[d];
    if (d >= static_cast<int>(begin.size())) {
      dims[d] = extent;
      continue;
    }
    const int64_t s = step.empty() ? 1 : step[d];
    MX_CHECK(s != 0) << owner << ": step=" << FormatIntTuple(step) << " has a zero step at axis "
                     << d;
    const bool backwards = s < 0;
    const int64_t first = ClampBound(begin[d], extent, backwards);
    const int64_t last = ClampBound(end[d], extent, backwards);
    // Elements first, first + s, ... strictly before `last` in the walking direction.
    const int64_t span = backwards ? first - last : last - first;
    const int64_t stride = backwards ? -s : s;
    dims[d] = span <= 0 ? 0 : (span + stride - 1) / stride;
    g.begin[d] = dims[d] == 0 ? 0 : first;
    g.step[d] = s;
  }
  g.output = Shape(dims);
  return g;
}

namespace {

// The window the output (dense) reads: rows along the last axis where it steps by 1, single
// elements otherwise (ops/cpu/row_window.h merges what continues).
cpu::RowWindow RowWindowOf(const SliceGeometry& g, const Shape& data) {
  cpu::RowWindow w;
  const int ndim = data.ndim();
  if (ndim == 0) return w;  // one element
  int64_t stride = 1;
  std::vector<int64_t> strides(static_cast<size_t>(ndim));
  for (int d = ndim - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= data[d];
    w.base += g.begin[d] * strides[d];
  }
  const bool rows = g.step[ndim - 1] == 1;
  w.outer = rows ? ndim - 1 : ndim;
  for (int d = 0; d < w.outer; ++d) {
    w.extents[d] = g.output[d];
    w.steps[d] = g.step[d] * strides[d];
  }
  w.row = rows ? g.output[ndim - 1] : 1;
  return w;
}

void SliceForwardCpu(const OpContext& ctx, const Attributes& attrs,
                     const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                     const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const SliceGeometry g = SliceGeometryOf(attrs, inputs[0].shape, "slice " + ctx.node_name);
  cpu::CopyRowWindow(RowWindowOf(g, inputs[0].shape), inputs[0].data, outputs[0].data,
                     DTypeSize(inputs[0].dtype), /*scatter=*/false);
}

void SliceBackwardCpu(const OpContext& ctx, const Attributes& attrs,
                      const std::vector<TensorView>& output_grads,
                      const std::vector<TensorView>&, const std::vector<TensorView>&,
                      const std::vector<TensorView>& input_grads,
                      const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const TensorView& dx = input_grads[0];
  const SliceGeometry g = SliceGeometryOf(attrs, dx.shape, "slice " + ctx.node_name);
  std::memset(dx.data, 0, dx.bytes());
  cpu::CopyRowWindow(RowWindowOf(g, dx.shape), output_grads[0].data, dx.data, DTypeSize(dx.dtype),
                     /*scatter=*/true);
}

}  // namespace

MXLITE_REGISTER_OP(slice) {
  OpDef op;
  op.name = "slice";
  op.doc = "A strided window of the data: data[begin:end:step] on the leading axes (NumPy's).";
  op.attributes.IntTuple("begin", "the first index per leading axis; negative counts from the end")
      .IntTuple("end", "one past the last index per leading axis; negative counts from the end")
      .IntTuple("step", "the step per leading axis (nonzero); () is 1 on each", Default("()"));
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = [](const Attributes& attrs, ShapeInference& shapes) {
    const Shape& data = shapes.Input(0);
    shapes.AssignOutput(
        0, SliceGeometryOf(attrs, data, shapes.op + " " + shapes.node + " on input " +
                                            data.ToString())
               .output);
  };
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{false}, {false}};
  };
  op.cheap_to_recompute = true;
  op.forward[DeviceType::kCPU] = SliceForwardCpu;
  op.backward[DeviceType::kCPU] = SliceBackwardCpu;
  return op;
}

}  // namespace mxlite
