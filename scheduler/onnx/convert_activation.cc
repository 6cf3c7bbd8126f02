// ONNX activations: Relu, Sigmoid, Tanh, Softplus (Activation), LeakyRelu (LeakyReLU), Clip (clip),
// HardSigmoid (hard_sigmoid) and HardSwish (hard_swish: x * hard_sigmoid(x) with alpha 1/6,
// beta 1/2).
#include "scheduler/onnx/onnx_converter.h"

#include "core/error.h"

namespace mxlite {
namespace {

void EmitActivation(OnnxNode& node, const char* act_type) {
  node.SetOutput(0, node.Emit("Activation", {{"act_type", act_type}}, {node.Input(0)}));
}

void ConvertRelu(OnnxNode& node) { EmitActivation(node, "relu"); }
void ConvertSigmoid(OnnxNode& node) { EmitActivation(node, "sigmoid"); }
void ConvertTanh(OnnxNode& node) { EmitActivation(node, "tanh"); }
void ConvertSoftplus(OnnxNode& node) { EmitActivation(node, "softrelu"); }

void ConvertLeakyRelu(OnnxNode& node) {
  node.SetOutput(
      0, node.Emit("LeakyReLU",
                   {{"act_type", "leaky"}, {"slope", Number(node.attrs().Float("alpha", 0.01))}},
                   {node.Input(0)}));
}

void ConvertHardSigmoid(OnnxNode& node) {
  node.SetOutput(0, node.Emit("hard_sigmoid",
                              {{"alpha", Number(node.attrs().Float("alpha", 0.2))},
                               {"beta", Number(node.attrs().Float("beta", 0.5))}},
                              {node.Input(0)}));
}

void ConvertHardSwish(OnnxNode& node) {
  node.SetOutput(0, node.Emit("hard_swish", {{"alpha", Number(1.0 / 6)}, {"beta", "0.5"}},
                              {node.Input(0)}));
}

// Before opset 11 the bounds are attributes.
void ConvertClipAttributes(OnnxNode& node) {
  AttrText attrs;
  if (node.attrs().Has("min")) attrs["a_min"] = Number(node.attrs().Float("min", 0));
  if (node.attrs().Has("max")) attrs["a_max"] = Number(node.attrs().Float("max", 0));
  node.SetOutput(0, node.Emit("clip", attrs, {node.Input(0)}));
}

// From opset 11 the bounds are optional inputs, which must be known at load.
void ConvertClipInputs(OnnxNode& node) {
  AttrText attrs;
  const char* keys[] = {"a_min", "a_max"};
  for (int i = 1; i <= 2; ++i) {
    if (!node.has_input(i)) continue;
    const std::vector<double> bound =
        node.RequireConstant(i, i == 1 ? "min" : "max").AsDoubles(node.where());
    MX_CHECK(bound.size() == 1) << node.where() << ": a Clip bound must be one value";
    attrs[keys[i - 1]] = Number(bound[0]);
  }
  node.SetOutput(0, node.Emit("clip", attrs, {node.Input(0)}));
}

}  // namespace

MXLITE_REGISTER_ONNX_CONVERTER(Relu, 1, kMaxOnnxOpset, ConvertRelu);
MXLITE_REGISTER_ONNX_CONVERTER(Sigmoid, 1, kMaxOnnxOpset, ConvertSigmoid);
MXLITE_REGISTER_ONNX_CONVERTER(Tanh, 1, kMaxOnnxOpset, ConvertTanh);
MXLITE_REGISTER_ONNX_CONVERTER(Softplus, 1, kMaxOnnxOpset, ConvertSoftplus);
MXLITE_REGISTER_ONNX_CONVERTER(LeakyRelu, 1, kMaxOnnxOpset, ConvertLeakyRelu);
MXLITE_REGISTER_ONNX_CONVERTER(HardSigmoid, 6, kMaxOnnxOpset, ConvertHardSigmoid);
MXLITE_REGISTER_ONNX_CONVERTER(HardSwish, 14, kMaxOnnxOpset, ConvertHardSwish);
MXLITE_REGISTER_ONNX_CONVERTER(Clip, 1, 10, ConvertClipAttributes);
MXLITE_REGISTER_ONNX_CONVERTER(Clip, 11, kMaxOnnxOpset, ConvertClipInputs);

}  // namespace mxlite
