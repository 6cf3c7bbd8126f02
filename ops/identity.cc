// identity: output = data (MXNet's identity / _copy, ONNX's Identity). Runs in place, when the
// memory planner lets it, as a no-op; backward passes the gradient through unchanged.
#include "ops/copy_kernels.h"
#include "ops/operator.h"

namespace mxlite {

MXLITE_REGISTER_OP(identity) {
  OpDef op;
  op.name = "identity";
  op.cheap_to_recompute = true;
  op.doc = "Returns its input unchanged (a copy, or nothing when run in place).";
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = [](const Attributes&, ShapeInference& shapes) {
    shapes.AssignOutput(0, shapes.Input(0));
  };
  op.backward_dependencies = NoBackwardDependencies;
  op.inplace = {{0, 0}};
  op.layout.role = LayoutRole::kAgnostic;
  op.forward[DeviceType::kCPU] = CopyForwardCpu;
  op.backward[DeviceType::kCPU] = CopyBackwardCpu;
  return op;
}

}  // namespace mxlite
