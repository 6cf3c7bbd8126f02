// transpose (MXNet's name; ONNX's Transpose): permutes the axes, output axis i = input axis
// axes[i]; empty `axes` reverses them (MXNet and NumPy). Negative axes count from the end. Any rank
// up to 6 and any dtype; backward is the transpose of the gradient by the inverse permutation and
// needs no forward tensor. The kernel (ops/cpu/transpose.h) is the one the layout transforms use.
#include <numeric>

#include "ops/transpose.h"

#include "ops/cpu/transpose.h"
#include "ops/operator.h"

namespace mxlite {

std::vector<int> TransposePermutation(const Attributes& attrs, int ndim, const std::string& where) {
  const std::vector<int64_t>& given = attrs.GetInts("axes");
  std::vector<int> axes(ndim);
  if (given.empty()) {
    std::iota(axes.rbegin(), axes.rend(), 0);
    return axes;
  }
  MX_CHECK(static_cast<int>(given.size()) == ndim)
      << where << ": axes=" << FormatIntTuple(given) << " has " << given.size()
      << " entries for an input of " << ndim << " dims";
  std::vector<bool> seen(ndim, false);
  for (int i = 0; i < ndim; ++i) {
    const int64_t axis = given[i] < 0 ? given[i] + ndim : given[i];
    MX_CHECK(axis >= 0 && axis < ndim && !seen[axis])
        << where << ": axes=" << FormatIntTuple(given) << " is not a permutation of " << ndim
        << " axes";
    seen[axis] = true;
    axes[i] = static_cast<int>(axis);
  }
  return axes;
}

namespace {

void TransposeShape(const Attributes& attrs, ShapeInference& shapes) {
  const Shape& data = shapes.Input(0);
  const std::vector<int> axes = TransposePermutation(
      attrs, data.ndim(), shapes.op + " " + shapes.node + " on input " + data.ToString());
  std::vector<int64_t> dims(data.ndim());
  for (int i = 0; i < data.ndim(); ++i) dims[i] = data[axes[i]];
  shapes.AssignOutput(0, Shape(dims));
}

void TransposeForwardCpu(const OpContext& ctx, const Attributes& attrs,
                         const std::vector<TensorView>& inputs,
                         const std::vector<TensorView>& outputs,
                         const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const TensorView& data = inputs[0];
  cpu::TransposeAxes(data.data, data.shape,
                     TransposePermutation(attrs, data.shape.ndim(), "transpose " + ctx.node_name),
                     outputs[0].data, data.dtype);
}

void TransposeBackwardCpu(const OpContext& ctx, const Attributes& attrs,
                          const std::vector<TensorView>& output_grads,
                          const std::vector<TensorView>&, const std::vector<TensorView>&,
                          const std::vector<TensorView>& input_grads,
                          const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const TensorView& grad = output_grads[0];
  const int ndim = grad.shape.ndim();
  const std::vector<int> axes = TransposePermutation(attrs, ndim, "transpose " + ctx.node_name);
  std::vector<int> inverse(ndim);
  for (int i = 0; i < ndim; ++i) inverse[axes[i]] = i;
  cpu::TransposeAxes(grad.data, grad.shape, inverse, input_grads[0].data, grad.dtype);
}

}  // namespace

MXLITE_REGISTER_OP(transpose) {
  OpDef op;
  op.name = "transpose";
  op.doc = "Permutes the axes: output axis i is input axis axes[i]; empty axes reverse them.";
  op.attributes.IntTuple("axes", "the permutation; () reverses the axes", Default("()"));
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = TransposeShape;
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{false}, {false}};
  };
  op.forward[DeviceType::kCPU] = TransposeForwardCpu;
  op.backward[DeviceType::kCPU] = TransposeBackwardCpu;
  return op;
}

}  // namespace mxlite
