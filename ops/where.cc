// where: output = x where condition is nonzero, else y, element-wise with NumPy broadcasting of all
// three (MXNet's numpy where; ONNX's Where, whose boolean condition the importer casts to the
// data's dtype first). condition, x and y share one floating dtype. Gradient: the output gradient
// to x where the condition holds and to y elsewhere, each summed over the axes its operand is
// broadcast along; zero to the condition.
#include "ops/broadcast.h"
#include "ops/cpu/broadcast.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

// out = condition ? x : y over out_shape, each operand broadcast; a null x or y reads zeros (the
// masked output gradients of backward).
template <typename T>
void Select(const T* condition, const Shape& condition_shape, const T* x, const Shape& x_shape,
            const T* y, const Shape& y_shape, T* out, const Shape& out_shape) {
  const cpu::BroadcastLayout layout =
      cpu::MakeBroadcastLayout(out_shape, {condition_shape, x_shape, y_shape});
  const int64_t cs = layout.inner_stride(0), xs = layout.inner_stride(1),
                ys = layout.inner_stride(2);
  cpu::ForEachChunk(layout.size(), [&](int64_t begin, int64_t end) {
    cpu::ForEachRow(layout, begin, end,
                    [&](int64_t position, const cpu::BroadcastLayout::Offsets& at, int64_t length) {
                      const T* c = condition + at[0];
                      T* o = out + position;
                      for (int64_t j = 0; j < length; ++j) {
                        const T chosen_x = x != nullptr ? x[at[1] + j * xs] : T(0);
                        const T chosen_y = y != nullptr ? y[at[2] + j * ys] : T(0);
                        o[j] = c[j * cs] != T(0) ? chosen_x : chosen_y;
                      }
                    });
  });
}

void InferShape(const Attributes&, ShapeInference& shapes) {
  const std::string owner = shapes.op + " " + shapes.node;
  const std::optional<Shape> cx = BroadcastShapes(shapes.Input(0), shapes.Input(1));
  const std::optional<Shape> out = cx ? BroadcastShapes(*cx, shapes.Input(2)) : std::nullopt;
  MX_CHECK(out.has_value()) << owner << ": cannot broadcast 'condition' " << shapes.Input(0)
                            << ", 'x' " << shapes.Input(1) << " and 'y' " << shapes.Input(2);
  shapes.AssignOutput(0, *out);
}

void ForwardCpu(const OpContext& ctx, const Attributes&, const std::vector<TensorView>& inputs,
                const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  MXLITE_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, "where " + ctx.node_name, {
    Select<T>(inputs[0].data_as<T>(), inputs[0].shape, inputs[1].data_as<T>(), inputs[1].shape,
              inputs[2].data_as<T>(), inputs[2].shape, outputs[0].data_as<T>(), outputs[0].shape);
  });
}

void BackwardCpu(const OpContext& ctx, const Attributes&,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>& inputs,
                 const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  const TensorView& dy = output_grads[0];
  MXLITE_FLOAT_TYPE_SWITCH(dy.dtype, T, "where " + ctx.node_name, {
    if (req[0] != WriteMode::kNull) {
      T* grad = input_grads[0].data_as<T>();
      std::fill(grad, grad + input_grads[0].size(), T(0));
    }
    for (int operand : {1, 2}) {
      if (req[operand] == WriteMode::kNull) continue;
      T* masked = ctx.scratch->GetArray<T>(dy.size());
      const T* to_x = operand == 1 ? dy.data_as<T>() : nullptr;
      const T* to_y = operand == 2 ? dy.data_as<T>() : nullptr;
      Select<T>(inputs[0].data_as<T>(), inputs[0].shape, to_x, dy.shape, to_y, dy.shape, masked,
                dy.shape);
      cpu::ReduceToShape<T>(masked, dy.shape, input_grads[operand].data_as<T>(),
                            input_grads[operand].shape, T(1), ctx.scratch);
    }
  });
}

}  // namespace

MXLITE_REGISTER_OP(where) {
  OpDef op;
  op.name = "where";
  op.doc =
      "x where condition is nonzero, else y, element-wise with NumPy broadcasting of all three "
      "(one floating dtype); gradient to x where it holds, to y elsewhere.";
  op.input_names = [](const Attributes&) {
    return std::vector<std::string>{"condition", "x", "y"};
  };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = InferShape;
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{true, false, false}, {false}};
  };
  op.forward[DeviceType::kCPU] = ForwardCpu;
  op.backward[DeviceType::kCPU] = BackwardCpu;
  return op;
}

}  // namespace mxlite
