// softmax and log_softmax along `axis` (default -1, the last), with an optional temperature:
// softmax(x / temperature), computed stably (ops/cpu/softmax.h). Backward reads only the output,
// so both may run in place. Names and attributes follow MXNet's softmax/log_softmax (MXNet's
// `dtype` and `use_length` are not supported: unknown attributes are errors); "Softmax" and
// "LogSoftmax" (ONNX opset 13's names and semantics) are the same ops.
#include "ops/softmax.h"

#include "ops/cpu/softmax.h"
#include "ops/operator.h"

namespace mxlite {

SoftmaxExtent SoftmaxAroundAxis(const Attributes& attrs, const Shape& data,
                                const std::string& owner) {
  const int64_t axis = attrs.GetInt("axis");
  const int ndim = data.ndim();
  MX_CHECK(ndim >= 1 && axis >= -ndim && axis < ndim)
      << owner << ": axis " << axis << " is out of range for data of shape " << data;
  const int a = static_cast<int>(axis < 0 ? axis + ndim : axis);
  return {data.size(0, a), data[a], data.size(a + 1, ndim)};
}

double SoftmaxTemperature(const Attributes& attrs, const std::string& owner) {
  const double temperature = attrs.Has("temperature") ? attrs.GetFloat("temperature") : 1.0;
  MX_CHECK(temperature != 0) << owner << ": temperature must not be 0";
  return temperature;
}

namespace {

cpu::SoftmaxLayout LayoutAround(const Attributes& attrs, const Shape& data,
                                const std::string& owner) {
  const SoftmaxExtent e = SoftmaxAroundAxis(attrs, data, owner);
  return {e.outer, e.length, e.inner};
}

void SoftmaxInferShape(const Attributes& attrs, ShapeInference& shapes) {
  const std::string owner = shapes.op + " " + shapes.node;
  const Shape& data = shapes.Input(0);
  LayoutAround(attrs, data, owner);
  SoftmaxTemperature(attrs, owner);
  shapes.AssignOutput(0, data);
}

template <bool kLog>
void SoftmaxForwardCpu(const OpContext& ctx, const Attributes& attrs,
                       const std::vector<TensorView>& inputs,
                       const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = std::string(kLog ? "log_softmax " : "softmax ") + ctx.node_name;
  const cpu::SoftmaxLayout layout = LayoutAround(attrs, inputs[0].shape, owner);
  const double temperature = SoftmaxTemperature(attrs, owner);
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    cpu::SoftmaxForward<T>(layout, inputs[0].data_as<T>(), outputs[0].data_as<T>(), temperature,
                           kLog);
  });
}

template <bool kLog>
void SoftmaxBackwardCpu(const OpContext& ctx, const Attributes& attrs,
                        const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                        const std::vector<TensorView>& outputs,
                        const std::vector<TensorView>& input_grads,
                        const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = std::string(kLog ? "log_softmax " : "softmax ") + ctx.node_name;
  const cpu::SoftmaxLayout layout = LayoutAround(attrs, outputs[0].shape, owner);
  const double temperature = SoftmaxTemperature(attrs, owner);
  MXLITE_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, owner, {
    cpu::SoftmaxBackward<T>(layout, outputs[0].data_as<T>(), output_grads[0].data_as<T>(),
                            input_grads[0].data_as<T>(), temperature, kLog);
  });
}

template <bool kLog>
OpDef MakeSoftmaxOp(const char* name, const char* doc) {
  OpDef op;
  op.name = name;
  op.doc = doc;
  op.attributes
      .Int("axis", "the axis to normalise along; negative counts from the end", Default("-1"))
      .Float("temperature", "divides the input before the softmax; default 1", Optional());
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = SoftmaxInferShape;
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{false}, {true}};
  };
  op.inplace = {{0, 0}};
  op.forward[DeviceType::kCPU] = SoftmaxForwardCpu<kLog>;
  op.backward[DeviceType::kCPU] = SoftmaxBackwardCpu<kLog>;
  return op;
}

}  // namespace

MXLITE_REGISTER_OP(softmax) {
  return MakeSoftmaxOp<false>("softmax", "exp(x / t) normalised to sum to 1 along `axis`.");
}

MXLITE_REGISTER_OP(log_softmax) {
  return MakeSoftmaxOp<true>("log_softmax", "log of softmax(x / t) along `axis`, computed stably.");
}

MXLITE_REGISTER_OP(Softmax) {
  return MakeSoftmaxOp<false>("Softmax", "softmax under its ONNX name.");
}

MXLITE_REGISTER_OP(LogSoftmax) {
  return MakeSoftmaxOp<true>("LogSoftmax", "log_softmax under its ONNX name.");
}

}  // namespace mxlite
