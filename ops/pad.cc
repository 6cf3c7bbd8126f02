// Pad: grows each axis by pad_width = (before_0, after_0, before_1, after_1, ...) elements
// (MXNet's layout; ONNX's pads import as the same numbers regrouped). The new elements are
//   constant: constant_value;
//   edge:     the nearest input element along the axis (numpy "edge");
//   reflect:  the mirror image without repeating the border (numpy "reflect"): [a b c] padded by
//             2 before gives [c b a b c]. Needs each pad < the axis' extent;
//   wrap:     the axis continued from its other end (numpy "wrap", ONNX's from opset 19): [a b c]
//             padded by 4 before gives [c a b c a b c], any pad.
// Forward moves values of any dtype but float16 on the CPU (float32, float64, int32, int64, uint8;
// the constant truncated toward zero and clamped to the range for integers, PadFillFor); backward
// is for floating dtypes.
// Any rank from 1 to 6 and any axes (MXNet allows only 4-D/5-D inputs with no padding of the
// first two axes; ONNX needs the rest). Negative pads (cropping) are rejected.
// Backward: each input element's gradient is the sum of the output gradients at the positions
// that copied it: for constant the matching slice, for edge and reflect several positions.
// It needs no forward tensor.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops/cpu/elementwise.h"
#include "ops/cpu/parallel.h"
#include "ops/operator.h"
#include "ops/pad.h"

namespace mxlite {

PadMode PadModeOf(const Attributes& attrs) {
  const std::string& mode = attrs.GetString("mode");
  return mode == "constant" ? PadMode::kConstant
         : mode == "edge"   ? PadMode::kEdge
         : mode == "wrap"   ? PadMode::kWrap
                            : PadMode::kReflect;
}

double PadFillFor(DType dtype, double value) {
  const auto clamped = [&](double low, double high) {
    return value != value ? 0.0 : std::clamp(std::trunc(value), low, high);
  };
  switch (dtype) {
    case DType::kInt32:
      return clamped(-2147483648.0, 2147483647.0);
    case DType::kInt64:
      return clamped(-9223372036854775808.0, 9223372036854774784.0);
    case DType::kUInt8:
      return clamped(0.0, 255.0);
    default:
      return value;
  }
}

namespace {

void PadShape(const Attributes& attrs, ShapeInference& shapes) {
  const Shape& data = shapes.Input(0);
  const std::vector<int64_t>& pads = attrs.GetInts("pad_width");
  const std::string where = shapes.op + " " + shapes.node + ": pad_width=" + FormatIntTuple(pads) +
                            " on input " + data.ToString();
  MX_CHECK(data.ndim() >= 1) << where << ": the input must have at least 1 dim";
  MX_CHECK(static_cast<int>(pads.size()) == 2 * data.ndim())
      << where << ": pad_width needs 2 values (before, after) per axis, " << 2 * data.ndim()
      << " in all";
  const PadMode mode = PadModeOf(attrs);
  Shape output = data;
  for (int axis = 0; axis < data.ndim(); ++axis) {
    const int64_t before = pads[2 * axis], after = pads[2 * axis + 1];
    MX_CHECK(before >= 0 && after >= 0) << where << ": pads must not be negative";
    if (mode == PadMode::kReflect && before + after > 0) {
      MX_CHECK(before < data[axis] && after < data[axis])
          << where << ": reflect padding of axis " << axis << " must be smaller than its extent "
          << data[axis];
    }
    if ((mode == PadMode::kEdge || mode == PadMode::kWrap) && before + after > 0) {
      MX_CHECK(data[axis] > 0) << where << ": " << attrs.GetString("mode")
                               << " padding of the empty axis " << axis;
    }
    output[axis] += before + after;
  }
  shapes.AssignOutput(0, output);
}

// For every axis, the input index each output index copies (-1: constant), in scratch memory.
struct PadMaps {
  int ndim = 0;
  const int64_t* source[Shape::kMaxDims] = {};
};

PadMaps MakeMaps(const Shape& in, const Shape& out, const std::vector<int64_t>& pads, PadMode mode,
                 ScratchSpace* scratch) {
  PadMaps maps;
  maps.ndim = in.ndim();
  for (int axis = 0; axis < in.ndim(); ++axis) {
    int64_t* map = scratch->GetArray<int64_t>(std::max<int64_t>(1, out[axis]));
    const int64_t extent = in[axis], before = pads[2 * axis];
    for (int64_t j = 0; j < out[axis]; ++j) map[j] = PadSourceIndex(mode, j, before, extent);
    maps.source[axis] = map;
  }
  return maps;
}

// Runs fn(row) for every row of `rows` rows of `row_length` elements, in blocks on the pool.
template <typename Fn>
void ForEachRowBlock(int64_t rows, int64_t row_length, Fn&& fn) {
  const int64_t per_block =
      std::max<int64_t>(1, cpu::kElementwiseGrain / std::max<int64_t>(1, row_length));
  cpu::ParallelFor((rows + per_block - 1) / per_block, [&](int64_t block) {
    const int64_t end = std::min(rows, (block + 1) * per_block);
    for (int64_t row = block * per_block; row < end; ++row) fn(row);
  });
}

template <typename T>
void PadForward(const OpContext& ctx, const Attributes& attrs, const TensorView& in_view,
                const TensorView& out_view) {
  const Shape& in = in_view.shape;
  const Shape& out = out_view.shape;
  const std::vector<int64_t>& pads = attrs.GetInts("pad_width");
  const PadMaps maps = MakeMaps(in, out, pads, PadModeOf(attrs), ctx.scratch);
  const T* x = in_view.data_as<T>();
  T* y = out_view.data_as<T>();
  const T fill = static_cast<T>(PadFillFor(out_view.dtype, attrs.GetFloat("constant_value")));
  const int last = in.ndim() - 1;
  const int64_t in_row = in[last], out_row = out[last], before = pads[2 * last];
  const int64_t* last_map = maps.source[last];
  ForEachRowBlock(out.size(0, last), out_row, [&](int64_t row) {
    T* target = y + row * out_row;
    int64_t rest = row, offset = 0, stride = in_row;
    for (int axis = last - 1; axis >= 0; --axis) {
      const int64_t source = maps.source[axis][rest % out[axis]];
      rest /= out[axis];
      if (source < 0) {
        std::fill(target, target + out_row, fill);
        return;
      }
      offset += source * stride;
      stride *= in[axis];
    }
    const T* source = x + offset;
    for (int64_t j = 0; j < before; ++j) target[j] = last_map[j] < 0 ? fill : source[last_map[j]];
    std::copy(source, source + in_row, target + before);
    for (int64_t j = before + in_row; j < out_row; ++j) {
      target[j] = last_map[j] < 0 ? fill : source[last_map[j]];
    }
  });
}

// For every axis, the output indices that copy each input index (CSR: first[i]..first[i+1]).
struct InverseMaps {
  const int64_t* first[Shape::kMaxDims] = {};
  const int64_t* outputs[Shape::kMaxDims] = {};
};

InverseMaps Invert(const PadMaps& maps, const Shape& in, const Shape& out, ScratchSpace* scratch) {
  InverseMaps inverse;
  for (int axis = 0; axis < maps.ndim; ++axis) {
    int64_t* first = scratch->GetArray<int64_t>(in[axis] + 1);
    int64_t* outputs = scratch->GetArray<int64_t>(std::max<int64_t>(1, out[axis]));
    std::fill(first, first + in[axis] + 1, 0);
    for (int64_t j = 0; j < out[axis]; ++j) {
      if (maps.source[axis][j] >= 0) ++first[maps.source[axis][j] + 1];
    }
    for (int64_t i = 0; i < in[axis]; ++i) first[i + 1] += first[i];
    // Filling advances first[i] to the start of i + 1; shifting right restores the starts.
    for (int64_t j = 0; j < out[axis]; ++j) {
      const int64_t i = maps.source[axis][j];
      if (i >= 0) outputs[first[i]++] = j;
    }
    for (int64_t i = in[axis]; i > 0; --i) first[i] = first[i - 1];
    first[0] = 0;
    inverse.first[axis] = first;
    inverse.outputs[axis] = outputs;
  }
  return inverse;
}

template <typename T>
void PadBackward(const OpContext& ctx, const Attributes& attrs, const TensorView& dy_view,
                 const TensorView& dx_view) {
  const Shape& in = dx_view.shape;
  const Shape& out = dy_view.shape;
  const PadMaps maps = MakeMaps(in, out, attrs.GetInts("pad_width"), PadModeOf(attrs), ctx.scratch);
  const InverseMaps inverse = Invert(maps, in, out, ctx.scratch);
  const T* dy = dy_view.data_as<T>();
  T* dx = dx_view.data_as<T>();
  const int last = in.ndim() - 1;
  const int64_t in_row = in[last], out_row = out[last];
  const int64_t* last_map = maps.source[last];
  ForEachRowBlock(in.size(0, last), in_row, [&](int64_t row) {
    T* target = dx + row * in_row;
    std::fill(target, target + in_row, T(0));
    // The input row's index along each outer axis, and a cursor into its list of output indices.
    int64_t index[Shape::kMaxDims] = {}, cursor[Shape::kMaxDims] = {};
    int64_t rest = row;
    for (int axis = last - 1; axis >= 0; --axis) {
      index[axis] = rest % in[axis];
      rest /= in[axis];
      cursor[axis] = inverse.first[axis][index[axis]];
      if (cursor[axis] == inverse.first[axis][index[axis] + 1]) return;  // never copied
    }
    while (true) {
      int64_t offset = 0;
      for (int axis = 0; axis < last; ++axis) {
        offset = offset * out[axis] + inverse.outputs[axis][cursor[axis]];
      }
      const T* source = dy + offset * out_row;
      for (int64_t j = 0; j < out_row; ++j) {
        if (last_map[j] >= 0) target[last_map[j]] += source[j];
      }
      int axis = last - 1;  // next combination of output rows
      for (; axis >= 0; --axis) {
        if (++cursor[axis] < inverse.first[axis][index[axis] + 1]) break;
        cursor[axis] = inverse.first[axis][index[axis]];
      }
      if (axis < 0) break;
    }
  });
}

void PadForwardCpu(const OpContext& ctx, const Attributes& attrs,
                   const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                   const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull || outputs[0].size() == 0) return;
  switch (outputs[0].dtype) {
    case DType::kInt32:
      PadForward<int32_t>(ctx, attrs, inputs[0], outputs[0]);
      break;
    case DType::kInt64:
      PadForward<int64_t>(ctx, attrs, inputs[0], outputs[0]);
      break;
    case DType::kUInt8:
      PadForward<uint8_t>(ctx, attrs, inputs[0], outputs[0]);
      break;
    default:
      MXLITE_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, "Pad",
                               { PadForward<T>(ctx, attrs, inputs[0], outputs[0]); });
  }
}

void PadBackwardCpu(const OpContext& ctx, const Attributes& attrs,
                    const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                    const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                    const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull || input_grads[0].size() == 0) return;
  MXLITE_FLOAT_TYPE_SWITCH(output_grads[0].dtype, T, "Pad",
                           { PadBackward<T>(ctx, attrs, output_grads[0], input_grads[0]); });
}

}  // namespace

MXLITE_REGISTER_OP(Pad) {
  OpDef op;
  op.name = "Pad";
  op.doc =
      "Pads every axis with a constant, the edge values, their reflection or the axis wrapped "
      "around.";
  op.attributes
      .Enum("mode", {"constant", "edge", "reflect", "wrap"}, "what the new elements hold",
            Default("constant"))
      .IntTuple("pad_width", "(before_0, after_0, before_1, after_1, ...), one pair per axis")
      .Float("constant_value", "the value of constant padding", Default("0"));
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = PadShape;
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{false}, {false}};
  };
  op.forward[DeviceType::kCPU] = PadForwardCpu;
  op.backward[DeviceType::kCPU] = PadBackwardCpu;
  return op;
}

}  // namespace mxlite
