// ONNX reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd (mxlite's sum, mean,
// max, min, prod; ops/reduce.h) and ReduceSumSquare (sum of x * x). The axes are an attribute up
// to opset 12 for ReduceSum (17 for the others) and an input known at load from 13 (ReduceSum);
// none, or an empty list, reduces every axis, unless noop_with_empty_axes makes that the identity.
#include "scheduler/onnx/onnx_converter.h"

#include "core/error.h"

namespace mxlite {
namespace {

void EmitReduction(OnnxNode& node, const char* op, NodeEntry data,
                   const std::vector<int64_t>& axes) {
  const bool keepdims = node.attrs().Int("keepdims", 1) != 0;
  node.SetOutput(
      0, node.Emit(op, {{"axis", Tuple(axes)}, {"keepdims", keepdims ? "true" : "false"}}, {data}));
}

std::vector<int64_t> AxesAttribute(OnnxNode& node) { return node.attrs().Ints("axes"); }

// From ReduceSum-13: the axes input; absent or empty with noop_with_empty_axes=1 is the identity.
bool AxesInput(OnnxNode& node, std::vector<int64_t>& axes) {
  axes = node.has_input(1) ? node.RequireConstant(1, "axes").ToInt64s(node.where() + " axes")
                           : std::vector<int64_t>{};
  if (!axes.empty() || node.attrs().Int("noop_with_empty_axes", 0) == 0) return true;
  node.SetOutput(0, node.Emit("identity", {}, {node.Input(0)}));
  return false;
}

void ConvertReduceSum(OnnxNode& node) {
  EmitReduction(node, "sum", node.Input(0), AxesAttribute(node));
}
void ConvertReduceSumAxesInput(OnnxNode& node) {
  std::vector<int64_t> axes;
  if (AxesInput(node, axes)) EmitReduction(node, "sum", node.Input(0), axes);
}
void ConvertReduceMean(OnnxNode& node) {
  EmitReduction(node, "mean", node.Input(0), AxesAttribute(node));
}
void ConvertReduceMax(OnnxNode& node) {
  EmitReduction(node, "max", node.Input(0), AxesAttribute(node));
}
void ConvertReduceMin(OnnxNode& node) {
  EmitReduction(node, "min", node.Input(0), AxesAttribute(node));
}
void ConvertReduceProd(OnnxNode& node) {
  EmitReduction(node, "prod", node.Input(0), AxesAttribute(node));
}
void ConvertReduceSumSquare(OnnxNode& node) {
  const NodeEntry x = node.Input(0);
  const NodeEntry squares = node.Emit("elemwise_mul", {}, {x, x}, "_square");
  EmitReduction(node, "sum", squares, AxesAttribute(node));
}

}  // namespace

MXLITE_REGISTER_ONNX_CONVERTER(ReduceSum, 1, 12, ConvertReduceSum);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceSum, 13, kMaxOnnxOpset, ConvertReduceSumAxesInput);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceMean, 1, kMaxOnnxOpset, ConvertReduceMean);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceMax, 1, kMaxOnnxOpset, ConvertReduceMax);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceMin, 1, kMaxOnnxOpset, ConvertReduceMin);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceProd, 1, kMaxOnnxOpset, ConvertReduceProd);
MXLITE_REGISTER_ONNX_CONVERTER(ReduceSumSquare, 1, kMaxOnnxOpset, ConvertReduceSumSquare);

}  // namespace mxlite
