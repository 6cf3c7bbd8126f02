// gather_elements (ONNX's GatherElements, PyTorch's torch.gather): output has index's shape, and
// output[i0, ..., ik] = data[i0, ..., index[i0, ..., ik], ..., ik] with the index in place of the
// coordinate on `axis`. Indices are int32 or int64 (floating ones holding integers too), negative
// ones counting from the end of the axis; data may be any dtype (the values are moved as they
// are). Gradient: the output gradient added into a zero data gradient at the picked elements
// (indices that repeat add up); none to the index.
#include <algorithm>
#include <cstring>

#include "ops/cpu/parallel.h"
#include "ops/gather_elements.h"
#include "ops/index_values.h"
#include "ops/operator.h"

namespace mxlite {

std::string GatherElementsOwner(const std::string& node) { return "gather_elements " + node; }

namespace {

void ForwardCpu(const OpContext& ctx, const Attributes& attrs,
                const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = GatherElementsOwner(ctx.node_name);
  const int axis = ElementIndexAxis(attrs, inputs[0].shape, inputs[1].shape, owner, "gathered");
  const std::vector<int64_t> offsets = ElementIndexOffsets(inputs[1], inputs[0].shape, axis, owner);
  const size_t element = DTypeSize(inputs[0].dtype);
  const auto* data = static_cast<const uint8_t*>(inputs[0].data);
  auto* out = static_cast<uint8_t*>(outputs[0].data);
  const int64_t count = static_cast<int64_t>(offsets.size());
  const int64_t tasks = std::clamp<int64_t>(count / 16384, 1, 64);
  cpu::ParallelFor(tasks, [&](int64_t task) {
    for (int64_t i = count * task / tasks; i < count * (task + 1) / tasks; ++i) {
      std::memcpy(out + static_cast<size_t>(i) * element,
                  data + static_cast<size_t>(offsets[static_cast<size_t>(i)]) * element, element);
    }
  });
}

void BackwardCpu(const OpContext& ctx, const Attributes& attrs,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>& inputs,
                 const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = GatherElementsOwner(ctx.node_name);
  const Shape& data_shape = input_grads[0].shape;
  const int axis = ElementIndexAxis(attrs, data_shape, inputs[1].shape, owner, "gathered");
  const std::vector<int64_t> offsets = ElementIndexOffsets(inputs[1], data_shape, axis, owner);
  MXLITE_FLOAT_TYPE_SWITCH(output_grads[0].dtype, T, owner, {
    const T* dy = output_grads[0].data_as<T>();
    T* dx = input_grads[0].data_as<T>();
    std::fill(dx, dx + input_grads[0].size(), T(0));
    // In order: indices that repeat add up the same way on every thread count.
    for (size_t i = 0; i < offsets.size(); ++i) dx[offsets[i]] += dy[i];
  });
}

}  // namespace

MXLITE_REGISTER_OP(gather_elements) {
  OpDef op;
  op.name = "gather_elements";
  op.doc =
      "The data elements the index names along `axis`, one per index element (ONNX's "
      "GatherElements, torch.gather).";
  op.attributes.Int("axis", "the axis the index selects along; negative counts from the end",
                    Default("0"));
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data", "index"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = [](const Attributes& attrs, ShapeInference& shapes) {
    ElementIndexAxis(attrs, shapes.Input(0), shapes.Input(1), shapes.op + " " + shapes.node,
                     "gathered");
    shapes.AssignOutput(0, shapes.Input(1));
  };
  op.infer_dtype = [](const Attributes&, DTypeInference& dtypes) {
    // Data of unknown dtype (an undeclared variable) is float32, as everywhere else; so is an
    // undeclared index (floating indices holding integers are read as such).
    if (!dtypes.inputs[0]) dtypes.inputs[0] = DType::kFloat32;
    if (!dtypes.inputs[1]) dtypes.inputs[1] = DType::kFloat32;
    dtypes.outputs[0] = dtypes.inputs[0];
  };
  op.input_has_gradient = [](const Attributes&) { return std::vector<bool>{true, false}; };
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{false, true}, {false}};
  };
  op.forward[DeviceType::kCPU] = ForwardCpu;
  op.backward[DeviceType::kCPU] = BackwardCpu;
  return op;
}

}  // namespace mxlite
