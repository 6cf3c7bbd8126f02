// Flatten: (d0, d1, ..., dk) -> (d0, d1 * ... * dk), the same elements in the same order.
// MXNet flattens after the first axis; `axis` (ONNX's attribute, default 1) chooses the split:
// (d0 * ... * d(axis-1), d(axis) * ... * dk). Runs in place (the copy is skipped when output and
// input share memory); backward reshapes the gradient back and needs no forward tensor.
#include "ops/copy_kernels.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

void FlattenShape(const Attributes& attrs, ShapeInference& shapes) {
  const Shape& data = shapes.Input(0);
  const int64_t axis_attr = attrs.GetInt("axis");
  const int64_t axis = axis_attr < 0 ? axis_attr + data.ndim() : axis_attr;
  MX_CHECK(axis >= 0 && axis <= data.ndim())
      << shapes.op << " " << shapes.node << ": axis " << axis_attr << " is out of range for input "
      << data << " (" << data.ndim() << " dims)";
  const int split = static_cast<int>(axis);
  shapes.AssignOutput(0, Shape{data.size(0, split), data.size(split, data.ndim())});
}

}  // namespace

MXLITE_REGISTER_OP(Flatten) {
  OpDef op;
  op.name = "Flatten";
  op.cheap_to_recompute = true;
  op.doc = "Collapses the axes after the first (or after `axis`) into one: (N, ...) -> (N, rest).";
  op.attributes.Int("axis", "axes before it form the first output axis (ONNX); -r..r",
                    Default("1"));
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = FlattenShape;
  op.backward_dependencies = NoBackwardDependencies;
  op.inplace = {{0, 0}};
  op.forward[DeviceType::kCPU] = CopyForwardCpu;
  op.backward[DeviceType::kCPU] = CopyBackwardCpu;
  return op;
}

}  // namespace mxlite
