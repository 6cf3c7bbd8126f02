// ONNX reductions onto mxlite's sum, mean, max, min and prod (ops/reduce.h): ReduceSum,
// ReduceMean, ReduceMax, ReduceMin, ReduceProd directly; ReduceSumSquare (sum of x * x),
// ReduceL1 (sum of |x|), ReduceL2 (square root of the sum of squares), ReduceLogSum (log of the
// sum) and ReduceLogSumExp (max + log(sum(exp(x - max))), which cannot overflow) as short chains;
// ArgMax and ArgMin onto argmax / argmin (ops/arg_extremum.h), Hardmax as argmax compared
// with the positions along its axis, and MeanVarianceNormalization as ONNX's function.
//
// The axes are an attribute up to opset 12 for ReduceSum (17 for the others) and an input known at
// load from 13 (ReduceSum) or 18 (the others); none, or an empty list, reduces every axis, unless
// noop_with_empty_axes (input forms only) makes the node the identity.
#include "scheduler/onnx/onnx_converter.h"

#include <limits>

#include "core/error.h"

namespace mxlite {
namespace {

// One reduction of `data` over `axes`; keepdims from the node unless `keep` overrides it.
NodeEntry Reduce(OnnxNode& node, const char* op, NodeEntry data, const std::vector<int64_t>& axes,
                 const std::string& suffix = "", int keep = -1) {
  const bool keepdims = keep >= 0 ? keep != 0 : node.attrs().Int("keepdims", 1) != 0;
  return node.Emit(op, {{"axis", Tuple(axes)}, {"keepdims", keepdims ? "true" : "false"}}, {data},
                   suffix);
}

// What each ONNX reduction computes, given the data and its axes; defines the node's output.
using Reduction = void (*)(OnnxNode&, NodeEntry, const std::vector<int64_t>&);

void SumOf(OnnxNode& node, NodeEntry x, const std::vector<int64_t>& axes) {
  node.SetOutput(0, Reduce(node, "sum", x, axes));
}
void MeanOf(OnnxNode& node, NodeEntry x, const std::vector<int64_t>& axes) {
  node.SetOutput(0, Reduce(node, "mean", x, axes));
}
void MaxOf(OnnxNode& node, NodeEntry x, const std::vector<int64_t>& axes) {
  node.SetOutput(0, Reduce(node, "max", x, axes));
}
void MinOf(OnnxNode& node, NodeEntry x, const std::vector<int64_t>& axes) {
  node.SetOutput(0, Reduce(node, "min", x, axes));
}
void ProdOf(OnnxNode& node, NodeEntry x, const std::vector<int64_t>& axes) {
  node.SetOutput(0, Reduce(node, "prod", x, axes));
}
void SumSquareOf(OnnxNode& node, NodeEntry x, const std::vector<int64_t>& axes) {
  const NodeEntry squares = node.Emit("elemwise_mul", {}, {x, x}, "_square");
  node.SetOutput(0, Reduce(node, "sum", squares, axes));
}
void L1Of(OnnxNode& node, NodeEntry x, const std::vector<int64_t>& axes) {
  const NodeEntry magnitudes = node.Emit("abs", {}, {x}, "_abs");
  node.SetOutput(0, Reduce(node, "sum", magnitudes, axes));
}
void L2Of(OnnxNode& node, NodeEntry x, const std::vector<int64_t>& axes) {
  const NodeEntry squares = node.Emit("elemwise_mul", {}, {x, x}, "_square");
  const NodeEntry sum = Reduce(node, "sum", squares, axes, "_sum");
  node.SetOutput(0, node.Emit("sqrt", {}, {sum}));
}
void LogSumOf(OnnxNode& node, NodeEntry x, const std::vector<int64_t>& axes) {
  const NodeEntry sum = Reduce(node, "sum", x, axes, "_sum");
  node.SetOutput(0, node.Emit("log", {}, {sum}));
}
// max + log(sum(exp(x - max))) with the max kept as a size-1 axis for the subtraction; a final sum
// over those size-1 axes drops them when keepdims is 0 (a sum of one element is exact).
void LogSumExpOf(OnnxNode& node, NodeEntry x, const std::vector<int64_t>& axes) {
  const NodeEntry max = Reduce(node, "max", x, axes, "_max", 1);
  const NodeEntry shifted = node.Emit("broadcast_sub", {}, {x, max}, "_shift");
  const NodeEntry exps = node.Emit("exp", {}, {shifted}, "_exp");
  const NodeEntry sum = Reduce(node, "sum", exps, axes, "_sum", 1);
  const NodeEntry log = node.Emit("log", {}, {sum}, "_log");
  const NodeEntry kept = node.Emit("broadcast_add", {}, {log, max}, "_add");
  if (node.attrs().Int("keepdims", 1) != 0) {
    node.SetOutput(0, kept);
  } else {
    node.SetOutput(0, Reduce(node, "sum", kept, axes, "", 0));
  }
}

// Up to opset 12 (ReduceSum) or 17 (the others): the axes attribute.
template <Reduction reduction>
void ConvertAxesAttribute(OnnxNode& node) {
  reduction(node, node.Input(0), node.attrs().Ints("axes"));
}

// From opset 13 (ReduceSum) or 18 (the others): the axes input, known at load; absent or empty
// with noop_with_empty_axes=1, the node is the identity.
template <Reduction reduction>
void ConvertAxesInput(OnnxNode& node) {
  const std::vector<int64_t> axes =
      node.has_input(1) ? node.RequireConstant(1, "axes").ToInt64s(node.where() + " axes")
                        : std::vector<int64_t>{};
  if (axes.empty() && node.attrs().Int("noop_with_empty_axes", 0) != 0) {
    node.SetOutput(0, node.Emit("identity", {}, {node.Input(0)}));
    return;
  }
  reduction(node, node.Input(0), axes);
}

// ArgMax / ArgMin: the index (int64) of the first largest / smallest element along `axis`
// (default 0), or the last with select_last_index=1; keepdims default 1. Of data known at load,
// computed then; else mxlite's argmax / argmin (an index in the data's dtype) and a Cast to int64,
// the last index found as the first of the axis reversed (a slice with step -1).
template <bool kLargest>
void ConvertArgExtremum(OnnxNode& node) {
  const Shape in = node.InputShape(0);
  const int64_t axis = NormalizeAxis(node.attrs().Int("axis", 0), in.ndim(), node.where());
  const bool keepdims = node.attrs().Int("keepdims", 1) != 0;
  const bool last = node.attrs().Int("select_last_index", 0) != 0;
  const int a = static_cast<int>(axis);
  const int64_t extent = in[a];
  MX_CHECK(extent > 0) << node.where() << ": axis " << axis << " of data " << in << " is empty";
  const HostTensor* data = node.ConstantInput(0);
  if (data != nullptr && ComputableAtLoad(data->dtype)) {
    const std::vector<double> x = data->AsDoubles(node.where());
    const int64_t outer = in.size(0, a), inner = in.size(a + 1, in.ndim());
    std::vector<int64_t> found(static_cast<size_t>(outer * inner));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        int64_t best = 0;
        for (int64_t k = 1; k < extent; ++k) {
          const double value = x[(o * extent + k) * inner + i];
          const double best_value = x[(o * extent + best) * inner + i];
          const bool beats = kLargest ? value > best_value : value < best_value;
          if (beats || (last && value == best_value)) best = k;
        }
        found[static_cast<size_t>(o * inner + i)] = best;
      }
    }
    std::vector<int64_t> dims = in.to_vector();
    if (keepdims) {
      dims[static_cast<size_t>(a)] = 1;
    } else {
      dims.erase(dims.begin() + a);
    }
    node.SetConstantOutput(HostTensor::From(found, Shape(dims)));
    return;
  }
  NodeEntry values = node.Input(0);
  if (last) {
    std::vector<int64_t> begin(static_cast<size_t>(a) + 1, 0), end, step(begin.size(), 1);
    for (int d = 0; d < a; ++d) end.push_back(in[d]);
    begin[static_cast<size_t>(a)] = extent - 1;
    end.push_back(std::numeric_limits<int64_t>::min());
    step[static_cast<size_t>(a)] = -1;
    values = node.Emit("slice",
                       {{"begin", Tuple(begin)}, {"end", Tuple(end)}, {"step", Tuple(step)}},
                       {values}, "_reversed");
  }
  NodeEntry index =
      node.Emit(kLargest ? "argmax" : "argmin",
                {{"axis", std::to_string(axis)}, {"keepdims", keepdims ? "true" : "false"}},
                {values}, "_index");
  if (last) {
    const NodeEntry last_index = node.NewScalar("_last", static_cast<double>(extent - 1));
    index = node.Emit("broadcast_sub", {}, {last_index, index}, "_from_end");
  }
  node.SetOutput(0, node.Emit("Cast", {{"dtype", "int64"}}, {index}));
}

// Hardmax: 1 at the first largest element along `axis`, 0 elsewhere, in the input's dtype:
// mxlite's argmax (keeping the axis) compared with the positions along it. Before opset 13 the
// input is seen as 2-D, its dims before `axis` (default 1) one axis and the rest the other.
void ConvertHardmax(OnnxNode& node, bool as_matrix) {
  const Shape in = node.InputShape(0);
  int64_t axis =
      NormalizeAxis(node.attrs().Int("axis", as_matrix ? 1 : -1), in.ndim(), node.where());
  NodeEntry x = node.Input(0);
  Shape shape = in;
  if (as_matrix) {
    const int a = static_cast<int>(axis);
    shape = Shape{in.size(0, a), in.size(a, in.ndim())};
    x = node.Emit("Reshape", {{"shape", Tuple(shape.to_vector())}}, {x}, "_matrix");
    axis = 1;
  }
  const int a = static_cast<int>(axis);
  MX_CHECK(shape[a] > 0) << node.where() << ": axis " << axis << " of " << in << " is empty";
  const NodeEntry index =
      node.Emit("argmax", {{"axis", std::to_string(axis)}, {"keepdims", "true"}}, {x}, "_index");
  const NodeEntry positions =
      node.NewPositions("_positions", shape.ndim(), a, shape[a], node.InputDType(0));
  NodeEntry ones = node.Emit("broadcast_equal", {}, {index, positions}, as_matrix ? "_ones" : "");
  if (as_matrix) ones = node.Emit("Reshape", {{"shape", Tuple(in.to_vector())}}, {ones});
  node.SetOutput(0, ones);
}

void ConvertHardmaxOfMatrix(OnnxNode& node) { ConvertHardmax(node, true); }
void ConvertHardmaxAlongAxis(OnnxNode& node) { ConvertHardmax(node, false); }

// MeanVarianceNormalization (opsets 9-21): ONNX's function, (X - E[X]) / (sqrt(E[X^2] - E[X]^2)
// + 1e-9) over `axes` (default 0, 2, 3).
void ConvertMeanVarianceNormalization(OnnxNode& node) {
  const std::vector<int64_t> axes = node.attrs().Ints("axes", {0, 2, 3});
  const NodeEntry x = node.Input(0);
  const NodeEntry mean = Reduce(node, "mean", x, axes, "_mean", 1);
  const NodeEntry mean_of_squares =
      Reduce(node, "mean", node.Emit("square", {}, {x}, "_squares"), axes, "_mean_squares", 1);
  const NodeEntry variance =
      node.Emit("broadcast_sub", {},
                {mean_of_squares, node.Emit("square", {}, {mean}, "_mean_squared")}, "_variance");
  const NodeEntry deviation = node.Emit(
      "broadcast_add", {},
      {node.Emit("sqrt", {}, {variance}, "_std"), node.NewScalar("_eps", 1e-9)}, "_std_eps");
  node.SetOutput(0, node.Emit("broadcast_div", {},
                              {node.Emit("broadcast_sub", {}, {x, mean}, "_centred"), deviation}));
}

}  // namespace

MXLITE_REGISTER_ONNX_CONVERTER(ArgMax, 1, kMaxOnnxOpset, ConvertArgExtremum<true>);
MXLITE_REGISTER_ONNX_CONVERTER(Hardmax, 1, 12, ConvertHardmaxOfMatrix);
MXLITE_REGISTER_ONNX_CONVERTER(Hardmax, 13, kMaxOnnxOpset, ConvertHardmaxAlongAxis);
MXLITE_REGISTER_ONNX_CONVERTER(ArgMin, 1, kMaxOnnxOpset, ConvertArgExtremum<false>);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceSum, 1, 12, ConvertAxesAttribute<SumOf>);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceSum, 13, kMaxOnnxOpset, ConvertAxesInput<SumOf>);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceMean, 1, 17, ConvertAxesAttribute<MeanOf>);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceMean, 18, kMaxOnnxOpset, ConvertAxesInput<MeanOf>);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceMax, 1, 17, ConvertAxesAttribute<MaxOf>);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceMax, 18, kMaxOnnxOpset, ConvertAxesInput<MaxOf>);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceMin, 1, 17, ConvertAxesAttribute<MinOf>);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceMin, 18, kMaxOnnxOpset, ConvertAxesInput<MinOf>);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceProd, 1, 17, ConvertAxesAttribute<ProdOf>);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceProd, 18, kMaxOnnxOpset, ConvertAxesInput<ProdOf>);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceSumSquare, 1, 17, ConvertAxesAttribute<SumSquareOf>);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceSumSquare, 18, kMaxOnnxOpset, ConvertAxesInput<SumSquareOf>);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceL1, 1, 17, ConvertAxesAttribute<L1Of>);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceL1, 18, kMaxOnnxOpset, ConvertAxesInput<L1Of>);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceL2, 1, 17, ConvertAxesAttribute<L2Of>);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceL2, 18, kMaxOnnxOpset, ConvertAxesInput<L2Of>);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceLogSum, 1, 17, ConvertAxesAttribute<LogSumOf>);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceLogSum, 18, kMaxOnnxOpset, ConvertAxesInput<LogSumOf>);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceLogSumExp, 1, 17, ConvertAxesAttribute<LogSumExpOf>);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceLogSumExp, 18, kMaxOnnxOpset, ConvertAxesInput<LogSumExpOf>);

MXLITE_REGISTER_ONNX_CONVERTER(MeanVarianceNormalization, 9, kMaxOnnxOpset,
                               ConvertMeanVarianceNormalization);

}  // namespace mxlite
