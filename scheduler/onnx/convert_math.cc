// ONNX arithmetic and linear algebra: Add, Sub, Mul, Div (broadcast_*), Softmax and LogSoftmax,
// Gemm, MatMul.
#include "scheduler/onnx/onnx_converter.h"

#include "core/error.h"

namespace mxlite {
namespace {

void EmitBinary(OnnxNode& node, const char* op) {
  node.SetOutput(0, node.Emit(op, {}, {node.Input(0), node.Input(1)}));
}

void ConvertAdd(OnnxNode& node) { EmitBinary(node, "broadcast_add"); }
void ConvertSub(OnnxNode& node) { EmitBinary(node, "broadcast_sub"); }
void ConvertMul(OnnxNode& node) { EmitBinary(node, "broadcast_mul"); }
void ConvertDiv(OnnxNode& node) { EmitBinary(node, "broadcast_div"); }

// Before opset 13 the input is viewed as 2-D (the dims before `axis`, the dims from it) and
// normalised along the second; the result has the input's shape. The default axis is 1.
void EmitSoftmaxOf2D(OnnxNode& node, const char* op) {
  const Shape in = node.InputShape(0);
  const int64_t rank = in.ndim();
  const int64_t axis = NormalizeAxis(node.attrs().Int("axis", 1), rank, node.where());
  const NodeEntry data = node.Input(0);
  if (axis == rank - 1) {
    node.SetOutput(0, node.Emit(op, {{"axis", std::to_string(axis)}}, {data}));
    return;
  }
  const int a = static_cast<int>(axis);
  const Shape flat{in.size(0, a), in.size(a, static_cast<int>(rank))};
  const NodeEntry as_2d = node.Emit("Reshape", {{"shape", Tuple(flat.to_vector())}}, {data}, "_2d");
  const NodeEntry normalised = node.Emit(op, {{"axis", "-1"}}, {as_2d});
  node.SetOutput(
      0, node.Emit("Reshape", {{"shape", Tuple(in.to_vector())}}, {normalised}, "_restore"));
}

// From opset 13 the op normalises along one axis (default -1).
void EmitSoftmaxAlongAxis(OnnxNode& node, const char* op) {
  const int64_t axis =
      NormalizeAxis(node.attrs().Int("axis", -1), node.InputShape(0).ndim(), node.where());
  node.SetOutput(0, node.Emit(op, {{"axis", std::to_string(axis)}}, {node.Input(0)}));
}

void ConvertSoftmax2D(OnnxNode& node) { EmitSoftmaxOf2D(node, "softmax"); }
void ConvertLogSoftmax2D(OnnxNode& node) { EmitSoftmaxOf2D(node, "log_softmax"); }
void ConvertSoftmax(OnnxNode& node) { EmitSoftmaxAlongAxis(node, "softmax"); }
void ConvertLogSoftmax(OnnxNode& node) { EmitSoftmaxAlongAxis(node, "log_softmax"); }

void ConvertGemm(OnnxNode& node) {
  std::vector<NodeEntry> inputs = {node.Input(0), node.Input(1)};
  const bool has_c = node.has_input(2);
  if (has_c) inputs.push_back(node.Input(2));
  const NodeAttributes& a = node.attrs();
  node.SetOutput(0, node.Emit("Gemm",
                              {{"alpha", Number(a.Float("alpha", 1))},
                               {"beta", Number(a.Float("beta", 1))},
                               {"transA", a.Int("transA", 0) ? "true" : "false"},
                               {"transB", a.Int("transB", 0) ? "true" : "false"},
                               {"no_bias", has_c ? "false" : "true"}},
                              inputs));
}

void ConvertMatMul(OnnxNode& node) { EmitBinary(node, "MatMul"); }

}  // namespace

MXLITE_REGISTER_ONNX_CONVERTER(Add, 1, kMaxOnnxOpset, ConvertAdd);
MXLITE_REGISTER_ONNX_CONVERTER(Sub, 1, kMaxOnnxOpset, ConvertSub);
MXLITE_REGISTER_ONNX_CONVERTER(Mul, 1, kMaxOnnxOpset, ConvertMul);
MXLITE_REGISTER_ONNX_CONVERTER(Div, 1, kMaxOnnxOpset, ConvertDiv);
MXLITE_REGISTER_ONNX_CONVERTER(Softmax, 1, 12, ConvertSoftmax2D);
MXLITE_REGISTER_ONNX_CONVERTER(Softmax, 13, kMaxOnnxOpset, ConvertSoftmax);
MXLITE_REGISTER_ONNX_CONVERTER(LogSoftmax, 1, 12, ConvertLogSoftmax2D);
MXLITE_REGISTER_ONNX_CONVERTER(LogSoftmax, 13, kMaxOnnxOpset, ConvertLogSoftmax);
MXLITE_REGISTER_ONNX_CONVERTER(Gemm, 1, kMaxOnnxOpset, ConvertGemm);
MXLITE_REGISTER_ONNX_CONVERTER(MatMul, 1, kMaxOnnxOpset, ConvertMatMul);

}  // namespace mxlite
