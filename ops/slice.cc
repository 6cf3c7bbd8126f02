// slice (ops/slice.h): the OpDef and the CPU kernel, which copies whole rows where the last axis
// has step 1 and walks elements otherwise, rows split over the intra-op threads.
#include "ops/slice.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "ops/cpu/parallel.h"
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

// For each output row (every axis but the last), the input offset of its first element; the
// callback gets (row, input offset) and copies the row.
template <typename Fn>
void ForEachRow(const SliceGeometry& g, const Shape& data, Fn&& fn) {
  const int ndim = data.ndim();
  if (g.output.size() == 0) return;
  std::vector<int64_t> strides(ndim, 1);
  for (int d = ndim - 2; d >= 0; --d) strides[d] = strides[d + 1] * data[d + 1];
  const int64_t rows = ndim == 0 ? 1 : g.output.size() / g.output[ndim - 1];
  const int64_t row_elements = ndim == 0 ? 1 : g.output[ndim - 1];
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 15) / row_elements);
  cpu::ParallelFor((rows + grain - 1) / grain, [&](int64_t chunk) {
    for (int64_t row = chunk * grain; row < std::min(rows, (chunk + 1) * grain); ++row) {
      int64_t rest = row, offset = 0;
      for (int d = ndim - 2; d >= 0; --d) {
        const int64_t index = rest % g.output[d];
        rest /= g.output[d];
        offset += (g.begin[d] + index * g.step[d]) * strides[d];
      }
      if (ndim > 0) offset += g.begin[ndim - 1];
      fn(row, offset);
    }
  });
}

// Copies the window (forward) or scatters into it (backward), for elements of type T.
template <typename T>
void CopyWindow(const SliceGeometry& g, const Shape& data, const T* from, T* to, bool scatter) {
  const int ndim = data.ndim();
  const int64_t row_elements = ndim == 0 ? 1 : g.output[ndim - 1];
  const int64_t last_step = ndim == 0 ? 1 : g.step[ndim - 1];
  ForEachRow(g, data, [&](int64_t row, int64_t offset) {
    const int64_t out = row * row_elements;
    if (last_step == 1) {
      if (scatter) {
        std::memcpy(to + offset, from + out, static_cast<size_t>(row_elements) * sizeof(T));
      } else {
        std::memcpy(to + out, from + offset, static_cast<size_t>(row_elements) * sizeof(T));
      }
      return;
    }
    for (int64_t i = 0; i < row_elements; ++i) {
      if (scatter) {
        to[offset + i * last_step] = from[out + i];
      } else {
        to[out + i] = from[offset + i * last_step];
      }
    }
  });
}

// Dispatches on the element size: the copy is the same for every dtype of that size.
void CopyWindowOfSize(const SliceGeometry& g, const TensorView& data, const void* from, void* to,
                      bool scatter) {
  switch (DTypeSize(data.dtype)) {
    case 1:
      CopyWindow(g, data.shape, static_cast<const uint8_t*>(from), static_cast<uint8_t*>(to),
                 scatter);
      break;
    case 2:
      CopyWindow(g, data.shape, static_cast<const uint16_t*>(from), static_cast<uint16_t*>(to),
                 scatter);
      break;
    case 4:
      CopyWindow(g, data.shape, static_cast<const uint32_t*>(from), static_cast<uint32_t*>(to),
                 scatter);
      break;
    default:
      CopyWindow(g, data.shape, static_cast<const uint64_t*>(from), static_cast<uint64_t*>(to),
                 scatter);
      break;
  }
}

void SliceForwardCpu(const OpContext& ctx, const Attributes& attrs,
                     const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                     const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const SliceGeometry g = SliceGeometryOf(attrs, inputs[0].shape, "slice " + ctx.node_name);
  CopyWindowOfSize(g, inputs[0], inputs[0].data, outputs[0].data, /*scatter=*/false);
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
  CopyWindowOfSize(g, dx, output_grads[0].data, dx.data, /*scatter=*/true);
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
