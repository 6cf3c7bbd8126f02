// add_n (MXNet's add_n / ElementWiseSum): output = arg0 + arg1 + ... + arg(num_args-1), all of
// one shape. The executor uses it to accumulate the gradients of a tensor read by several nodes.
// The output may share memory with arg0; backward hands the output gradient to every input and
// needs no forward tensor.
#include "ops/cpu/copy.h"
#include "ops/cpu/elementwise.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

using cpu::EigenArray;
using cpu::ForEachChunk;

int NumArgs(const Attributes& attrs) { return static_cast<int>(attrs.GetInt("num_args")); }

void AddNShape(const Attributes& attrs, ShapeInference& shapes) {
  const Shape& first = shapes.Input(0);
  for (int i = 1; i < NumArgs(attrs); ++i) {
    const Shape& input = shapes.Input(i);
    MX_CHECK(input == first) << shapes.op << " " << shapes.node << ": 'arg0' " << first << " and '"
                             << shapes.input_names[i] << "' " << input
                             << " differ; add_n sums inputs of one shape";
  }
  shapes.AssignOutput(0, first);
}

// Each chunk of the output is summed in cache: out = arg0 + arg1, then += arg_i.
template <typename T>
void Sum(const std::vector<TensorView>& inputs, const TensorView& output) {
  T* out = output.data_as<T>();
  ForEachChunk(output.size(), [&](int64_t begin, int64_t end) {
    const int64_t length = end - begin;
    EigenArray<T> result(out + begin, length);
    auto arg = [&](size_t i) {
      return EigenArray<const T>(inputs[i].data_as<T>() + begin, length);
    };
    if (inputs.size() == 1) {
      if (inputs[0].data != output.data) result = arg(0);
      return;
    }
    result = arg(0) + arg(1);
    for (size_t i = 2; i < inputs.size(); ++i) result += arg(i);
  });
}

void AddNForwardCpu(const OpContext&, const Attributes&, const std::vector<TensorView>& inputs,
                    const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  MXLITE_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, "add_n", { Sum<T>(inputs, outputs[0]); });
}

void AddNBackwardCpu(const OpContext&, const Attributes&,
                     const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                     const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                     const std::vector<WriteMode>& req) {
  for (size_t i = 0; i < input_grads.size(); ++i) {
    if (req[i] == WriteMode::kNull) continue;
    cpu::CopyElements(output_grads[0].data, input_grads[i].data, input_grads[i].size(),
                      DTypeSize(input_grads[i].dtype));
  }
}

}  // namespace

MXLITE_REGISTER_OP(add_n) {
  OpDef op;
  op.name = "add_n";
  op.doc = "Sums num_args inputs of one shape element-wise.";
  op.attributes.Int("num_args", "number of inputs", Required(), 1);
  op.input_names = [](const Attributes& attrs) {
    std::vector<std::string> names;
    for (int i = 0; i < NumArgs(attrs); ++i) names.push_back("arg" + std::to_string(i));
    return names;
  };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = AddNShape;
  op.backward_dependencies = [](const Attributes& attrs) -> BackwardDependencies {
    return {std::vector<bool>(NumArgs(attrs), false), {false}};
  };
  op.inplace = {{0, 0}};
  op.layout.role = LayoutRole::kAgnostic;
  op.forward[DeviceType::kCPU] = AddNForwardCpu;
  op.backward[DeviceType::kCPU] = AddNBackwardCpu;
  return op;
}

}  // namespace mxlite
