// Activation (relu, sigmoid, tanh, softrelu, softsign) and LeakyReLU (leaky, elu): element-wise
// non-linearities. Activation's backward reads only the output (as in MXNet), so it may run in
// place; LeakyReLU's reads the input, which keeps it right for any slope.
#include <cmath>

#include "ops/cpu/elementwise.h"
#include "ops/cpu/vector_math.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

using cpu::EigenArray;
using cpu::ForEachChunk;

std::vector<std::string> DataInput(const Attributes&) { return {"data"}; }
std::vector<std::string> OneOutput(const Attributes&) { return {"output"}; }

void SameShape(const Attributes&, ShapeInference& shapes) {
  shapes.AssignOutput(0, shapes.Input(0));
}

BackwardDependencies OutputOnly(const Attributes&) { return {{false}, {true}}; }

// y = f(x) for the Activation types.
template <typename T>
void ActivationForward(const std::string& type, const T* x, T* y, int64_t n) {
  ForEachChunk(n, [&](int64_t begin, int64_t end) {
    auto in = EigenArray<const T>(x + begin, end - begin);
    auto out = EigenArray<T>(y + begin, end - begin);
    if (type == "relu") {
      out = in.max(T(0));
    } else if (type == "sigmoid") {
      out = T(1) / (T(1) + (-in).exp());
    } else if (type == "tanh") {
      out = in.tanh();
    } else if (type == "softrelu") {
      // log(1 + e^x) without overflow: max(x, 0) + log1p(e^-|x|).
      out = in.max(T(0)) + (-in.abs()).exp().log1p();
    } else {  // softsign
      out = in / (T(1) + in.abs());
    }
  });
}

// dx = dy * f'(x), written in terms of y = f(x).
template <typename T>
void ActivationBackward(const std::string& type, const T* y, const T* dy, T* dx, int64_t n) {
  ForEachChunk(n, [&](int64_t begin, int64_t end) {
    auto out = EigenArray<const T>(y + begin, end - begin);
    auto grad = EigenArray<const T>(dy + begin, end - begin);
    auto result = EigenArray<T>(dx + begin, end - begin);
    if (type == "relu") {
      result = (out > T(0)).select(grad, T(0));
    } else if (type == "sigmoid") {
      result = grad * out * (T(1) - out);
    } else if (type == "tanh") {
      result = grad * (T(1) - out.square());
    } else if (type == "softrelu") {
      result = grad * (T(1) - (-out).exp());  // sigmoid(x) = 1 - e^-y
    } else {  // softsign: f' = (1 - |y|)^2
      result = grad * (T(1) - out.abs()).square();
    }
  });
}

void ActivationForwardCpu(const OpContext&, const Attributes& attrs,
                          const std::vector<TensorView>& inputs,
                          const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string& type = attrs.GetString("act_type");
  if (type == "sigmoid" && inputs[0].dtype == DType::kFloat32) {  // full vector width
    cpu::SigmoidFloats(inputs[0].data_as<float>(), outputs[0].data_as<float>(), inputs[0].size());
    return;
  }
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, "Activation", {
    ActivationForward<T>(type, inputs[0].data_as<T>(), outputs[0].data_as<T>(), inputs[0].size());
  });
}

void ActivationBackwardCpu(const OpContext&, const Attributes& attrs,
                           const std::vector<TensorView>& output_grads,
                           const std::vector<TensorView>&, const std::vector<TensorView>& outputs,
                           const std::vector<TensorView>& input_grads,
                           const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string& type = attrs.GetString("act_type");
  MXLITE_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, "Activation", {
    ActivationBackward<T>(type, outputs[0].data_as<T>(), output_grads[0].data_as<T>(),
                          input_grads[0].data_as<T>(), outputs[0].size());
  });
}

template <typename T>
void LeakyForward(bool elu, T slope, const T* x, T* y, int64_t n) {
  ForEachChunk(n, [&](int64_t begin, int64_t end) {
    auto in = EigenArray<const T>(x + begin, end - begin);
    auto out = EigenArray<T>(y + begin, end - begin);
    if (elu) {
      out = (in > T(0)).select(in, slope * (in.exp() - T(1)));
    } else {
      out = (in > T(0)).select(in, slope * in);
    }
  });
}

// Written in terms of x so any slope (also negative, as ONNX allows) is right.
template <typename T>
void LeakyBackward(bool elu, T slope, const T* x, const T* dy, T* dx, int64_t n) {
  ForEachChunk(n, [&](int64_t begin, int64_t end) {
    auto in = EigenArray<const T>(x + begin, end - begin);
    auto grad = EigenArray<const T>(dy + begin, end - begin);
    auto result = EigenArray<T>(dx + begin, end - begin);
    if (elu) {
      result = (in > T(0)).select(grad, grad * slope * in.exp());
    } else {
      result = (in > T(0)).select(grad, grad * slope);
    }
  });
}

void LeakyForwardCpu(const OpContext&, const Attributes& attrs,
                     const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                     const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const bool elu = attrs.GetString("act_type") == "elu";
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, "LeakyReLU", {
    LeakyForward<T>(elu, static_cast<T>(attrs.GetFloat("slope")), inputs[0].data_as<T>(),
                    outputs[0].data_as<T>(), inputs[0].size());
  });
}

void LeakyBackwardCpu(const OpContext&, const Attributes& attrs,
                      const std::vector<TensorView>& output_grads,
                      const std::vector<TensorView>& inputs, const std::vector<TensorView>&,
                      const std::vector<TensorView>& input_grads,
                      const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const bool elu = attrs.GetString("act_type") == "elu";
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, "LeakyReLU", {
    LeakyBackward<T>(elu, static_cast<T>(attrs.GetFloat("slope")), inputs[0].data_as<T>(),
                     output_grads[0].data_as<T>(), input_grads[0].data_as<T>(),
                     inputs[0].size());
  });
}

}  // namespace

MXLITE_REGISTER_OP(Activation) {
  OpDef op;
  op.name = "Activation";
  op.name_prefix = [](const std::map<std::string, std::string>& attrs) {  // relu0, sigmoid0
    auto type = attrs.find("act_type");
    return type != attrs.end() ? type->second : std::string("activation");
  };
  op.doc = "Element-wise activation: relu, sigmoid, tanh, softrelu (softplus) or softsign.";
  op.attributes.Enum("act_type", {"relu", "sigmoid", "tanh", "softrelu", "softsign"},
                     "the non-linearity");
  op.input_names = DataInput;
  op.output_names = OneOutput;
  op.infer_shape = SameShape;
  op.backward_dependencies = OutputOnly;
  op.inplace = {{0, 0}};
  op.cheap_to_recompute = true;
  op.layout.role = LayoutRole::kAgnostic;
  op.fusion.clamp = [](const Attributes& attrs,
                       const std::map<std::string, std::string>&) -> std::optional<ClampBounds> {
    if (attrs.GetString("act_type") != "relu") return std::nullopt;
    return ClampBounds{"0", std::nullopt, "relu"};
  };
  op.fusion.self_gate = [](const Attributes& attrs,
                           const std::map<std::string, std::string>&) -> std::optional<SelfGate> {
    if (attrs.GetString("act_type") != "sigmoid") return std::nullopt;
    return SelfGate{"silu", {}};
  };
  op.forward[DeviceType::kCPU] = ActivationForwardCpu;
  op.backward[DeviceType::kCPU] = ActivationBackwardCpu;
  return op;
}

MXLITE_REGISTER_OP(LeakyReLU) {
  OpDef op;
  op.name = "LeakyReLU";
  op.doc = "Leaky ReLU (x for x > 0, slope * x otherwise) or ELU (slope * (e^x - 1)).";
  op.attributes.Enum("act_type", {"leaky", "elu"}, "the variant", Default("leaky"))
      .Float("slope", "the slope for x <= 0", Default("0.25"));
  op.input_names = DataInput;
  op.output_names = OneOutput;
  op.infer_shape = SameShape;
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{true}, {false}};
  };
  op.cheap_to_recompute = true;
  op.layout.role = LayoutRole::kAgnostic;
  op.forward[DeviceType::kCPU] = LeakyForwardCpu;
  op.backward[DeviceType::kCPU] = LeakyBackwardCpu;
  return op;
}

}  // namespace mxlite
