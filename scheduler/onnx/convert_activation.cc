// ONNX activations: Relu, Sigmoid, Tanh, Softplus, Softsign (Activation), LeakyRelu and Elu
// (LeakyReLU), Clip (clip), HardSigmoid (hard_sigmoid), HardSwish (hard_swish: x * hard_sigmoid(x)
// with alpha 1/6, beta 1/2), Gelu (gelu; the tanh approximation as its formula), and as short
// chains of those: Selu (gamma * elu(x)), Celu (alpha * elu(x / alpha) with elu's alpha 1), Mish
// (x * tanh(softplus(x))) and PRelu (relu(x) + slope * (x - relu(x)), the slope broadcast);
// ThresholdedRelu (where(x > alpha, x, 0)) and Shrink (where(x > lambd, x - bias, where(x <
// -lambd, x + bias, 0))) through the broadcast comparisons and where.
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

void ConvertSoftsign(OnnxNode& node) { EmitActivation(node, "softsign"); }

NodeEntry Elu(OnnxNode& node, NodeEntry x, double alpha, const std::string& suffix = "") {
  return node.Emit("LeakyReLU", {{"act_type", "elu"}, {"slope", Number(alpha)}}, {x}, suffix);
}

void ConvertElu(OnnxNode& node) {
  node.SetOutput(0, Elu(node, node.Input(0), node.attrs().Float("alpha", 1.0)));
}

// ONNX's defaults are the SELU paper's constants, rounded to float.
void ConvertSelu(OnnxNode& node) {
  const double alpha = node.attrs().Float("alpha", 1.67326319217681884765625);
  const double gamma = node.attrs().Float("gamma", 1.05070102214813232421875);
  const NodeEntry elu = Elu(node, node.Input(0), alpha, "_elu");
  node.SetOutput(0, node.Emit("broadcast_mul", {}, {elu, node.NewScalar("_gamma", gamma)}));
}

void ConvertCelu(OnnxNode& node) {
  const double alpha = node.attrs().Float("alpha", 1.0);
  MX_CHECK(alpha != 0) << node.where() << ": alpha must not be 0";
  const NodeEntry scaled =
      node.Emit("broadcast_div", {}, {node.Input(0), node.NewScalar("_alpha", alpha)}, "_scaled");
  const NodeEntry elu = Elu(node, scaled, 1.0, "_elu");
  node.SetOutput(0, node.Emit("broadcast_mul", {}, {elu, node.NewScalar("_alpha_out", alpha)}));
}

void ConvertMish(OnnxNode& node) {
  const NodeEntry x = node.Input(0);
  const NodeEntry softplus = node.Emit("Activation", {{"act_type", "softrelu"}}, {x}, "_softplus");
  const NodeEntry tanh = node.Emit("Activation", {{"act_type", "tanh"}}, {softplus}, "_tanh");
  node.SetOutput(0, node.Emit("elemwise_mul", {}, {x, tanh}));
}

// The slope broadcasts to the data (unidirectionally, as ONNX says).
void ConvertPRelu(OnnxNode& node) {
  const NodeEntry x = node.Input(0);
  const NodeEntry slope = node.Input(1);
  const NodeEntry positive = node.Emit("Activation", {{"act_type", "relu"}}, {x}, "_positive");
  const NodeEntry negative = node.Emit("elemwise_sub", {}, {x, positive}, "_negative");
  const NodeEntry sloped = node.Emit("broadcast_mul", {}, {negative, slope}, "_sloped");
  node.SetOutput(0, node.Emit("broadcast_add", {}, {positive, sloped}));
}

// approximate "none": the exact GELU; "tanh": x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
void ConvertGelu(OnnxNode& node) {
  const std::string approximate = node.attrs().String("approximate", "none");
  const NodeEntry x = node.Input(0);
  if (approximate == "none") {
    node.SetOutput(0, node.Emit("gelu", {}, {x}));
    return;
  }
  MX_CHECK(approximate == "tanh") << node.where() << ": approximate '" << approximate
                                  << "' is unknown (none and tanh are defined)";
  const NodeEntry cube = node.Emit("_power_scalar", {{"scalar", "3"}}, {x}, "_cube");
  const NodeEntry cubic_term =
      node.Emit("broadcast_mul", {}, {cube, node.NewScalar("_c", 0.044715)}, "_cubic_term");
  const NodeEntry inner = node.Emit("elemwise_add", {}, {x, cubic_term}, "_inner");
  const NodeEntry argument = node.Emit(
      "broadcast_mul", {}, {inner, node.NewScalar("_sqrt_2_over_pi", 0.79788456080286535588)},
      "_argument");
  const NodeEntry tanh = node.Emit("Activation", {{"act_type", "tanh"}}, {argument}, "_tanh");
  const NodeEntry one_plus =
      node.Emit("broadcast_add", {}, {tanh, node.NewScalar("_one", 1.0)}, "_one_plus");
  const NodeEntry half_x = node.Emit("broadcast_mul", {}, {x, node.NewScalar("_half", 0.5)}, "_half_x");
  node.SetOutput(0, node.Emit("elemwise_mul", {}, {half_x, one_plus}));
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

// y = x where x > alpha, else 0 (a NaN compares false: 0, as where's select gives it).
void ConvertThresholdedRelu(OnnxNode& node) {
  const NodeEntry x = node.Input(0);
  const NodeEntry above =
      node.Emit("broadcast_greater", {},
                {x, node.NewScalar("_alpha", node.attrs().Float("alpha", 1.0))}, "_above");
  node.SetOutput(0, node.Emit("where", {}, {above, x, node.NewScalar("_zero", 0.0)}));
}

// y = x - bias where x > lambd, x + bias where x < -lambd, else 0.
void ConvertShrink(OnnxNode& node) {
  const double bias = node.attrs().Float("bias", 0.0), lambd = node.attrs().Float("lambd", 0.5);
  const NodeEntry x = node.Input(0);
  const NodeEntry above =
      node.Emit("broadcast_greater", {}, {x, node.NewScalar("_lambd", lambd)}, "_above");
  const NodeEntry below =
      node.Emit("broadcast_lesser", {}, {x, node.NewScalar("_minus_lambd", -lambd)}, "_below");
  const NodeEntry lowered =
      node.Emit("broadcast_sub", {}, {x, node.NewScalar("_bias", bias)}, "_lowered");
  const NodeEntry raised =
      node.Emit("broadcast_add", {}, {x, node.NewScalar("_bias_up", bias)}, "_raised");
  const NodeEntry low_side =
      node.Emit("where", {}, {below, raised, node.NewScalar("_zero", 0.0)}, "_low_side");
  node.SetOutput(0, node.Emit("where", {}, {above, lowered, low_side}));
}

}  // namespace

MXLITE_REGISTER_ONNX_CONVERTER(ThresholdedRelu, 10, kMaxOnnxOpset, ConvertThresholdedRelu);
MXLITE_REGISTER_ONNX_CONVERTER(Shrink, 9, kMaxOnnxOpset, ConvertShrink);
MXLITE_REGISTER_ONNX_CONVERTER(Relu, 1, kMaxOnnxOpset, ConvertRelu);
MXLITE_REGISTER_ONNX_CONVERTER(Sigmoid, 1, kMaxOnnxOpset, ConvertSigmoid);
MXLITE_REGISTER_ONNX_CONVERTER(Tanh, 1, kMaxOnnxOpset, ConvertTanh);
MXLITE_REGISTER_ONNX_CONVERTER(Softplus, 1, kMaxOnnxOpset, ConvertSoftplus);
MXLITE_REGISTER_ONNX_CONVERTER(LeakyRelu, 1, kMaxOnnxOpset, ConvertLeakyRelu);
MXLITE_REGISTER_ONNX_CONVERTER(Softsign, 1, kMaxOnnxOpset, ConvertSoftsign);
MXLITE_REGISTER_ONNX_CONVERTER(Elu, 1, kMaxOnnxOpset, ConvertElu);
MXLITE_REGISTER_ONNX_CONVERTER(Selu, 1, kMaxOnnxOpset, ConvertSelu);
MXLITE_REGISTER_ONNX_CONVERTER(Celu, 12, kMaxOnnxOpset, ConvertCelu);
MXLITE_REGISTER_ONNX_CONVERTER(Mish, 18, kMaxOnnxOpset, ConvertMish);
// PRelu before opset 7 broadcast its slope by a rule of its own.
MXLITE_REGISTER_ONNX_CONVERTER(PRelu, 7, kMaxOnnxOpset, ConvertPRelu);
MXLITE_REGISTER_ONNX_CONVERTER(Gelu, 20, kMaxOnnxOpset, ConvertGelu);
MXLITE_REGISTER_ONNX_CONVERTER(HardSigmoid, 1, kMaxOnnxOpset, ConvertHardSigmoid);
MXLITE_REGISTER_ONNX_CONVERTER(HardSwish, 14, kMaxOnnxOpset, ConvertHardSwish);
MXLITE_REGISTER_ONNX_CONVERTER(Clip, 1, 10, ConvertClipAttributes);
MXLITE_REGISTER_ONNX_CONVERTER(Clip, 11, kMaxOnnxOpset, ConvertClipInputs);

}  // namespace mxlite
