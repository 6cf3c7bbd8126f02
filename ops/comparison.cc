// Element-wise comparisons with NumPy broadcasting, MXNet's names and semantics: output = 1 where
// the comparison holds, else 0, in the operands' dtype.
//   broadcast_equal (==), broadcast_not_equal (!=), broadcast_greater (>),
//   broadcast_greater_equal (>=), broadcast_lesser (<), broadcast_lesser_equal (<=).
// A NaN compares unequal to everything (not_equal gives 1). The gradient is zero for both operands
// (a step function), as in MXNet. ONNX's Equal, Greater, GreaterOrEqual, Less and LessOrEqual
// import to them, followed by a Cast to uint8 (ONNX's bool).
#include <type_traits>

#include "ops/broadcast.h"
#include "ops/cpu/broadcast.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

enum class Comparison { kEqual, kNotEqual, kGreater, kGreaterEqual, kLesser, kLesserEqual };

// `kind` of what BroadcastBinary passes (two arrays, an array and a scalar, two scalars) as 1 / 0.
template <typename T, Comparison kind>
struct Compare {
  template <typename X, typename Y>
  auto operator()(const X& x, const Y& y) const {
    if constexpr (std::is_same_v<X, T> && std::is_same_v<Y, T>) {
      return T(Holds(x, y) ? 1 : 0);
    } else if constexpr (std::is_same_v<X, T>) {  // a scalar lhs: the same test, sides swapped
      return Swapped(y, x).template cast<T>();
    } else {
      return Holds(x, y).template cast<T>();
    }
  }
  template <typename A, typename B>
  static auto Holds(const A& a, const B& b) {
    if constexpr (kind == Comparison::kEqual) return a == b;
    if constexpr (kind == Comparison::kNotEqual) return a != b;
    if constexpr (kind == Comparison::kGreater) return a > b;
    if constexpr (kind == Comparison::kGreaterEqual) return a >= b;
    if constexpr (kind == Comparison::kLesser) return a < b;
    if constexpr (kind == Comparison::kLesserEqual) return a <= b;
  }
  // a (op) b written as b (mirrored op) a, for an array b and a scalar a.
  template <typename Array, typename Scalar>
  static auto Swapped(const Array& b, const Scalar& a) {
    if constexpr (kind == Comparison::kEqual) return b == a;
    if constexpr (kind == Comparison::kNotEqual) return b != a;
    if constexpr (kind == Comparison::kGreater) return b < a;
    if constexpr (kind == Comparison::kGreaterEqual) return b <= a;
    if constexpr (kind == Comparison::kLesser) return b > a;
    if constexpr (kind == Comparison::kLesserEqual) return b >= a;
  }
};

std::vector<std::string> Operands(const Attributes&) { return {"lhs", "rhs"}; }
std::vector<std::string> Output(const Attributes&) { return {"output"}; }

void BroadcastShape(const Attributes&, ShapeInference& shapes) {
  std::optional<Shape> output = BroadcastShapes(shapes.Input(0), shapes.Input(1));
  MX_CHECK(output.has_value()) << shapes.op << " " << shapes.node << ": cannot broadcast 'lhs' "
                               << shapes.Input(0) << " with 'rhs' " << shapes.Input(1);
  shapes.AssignOutput(0, *output);
}

template <Comparison kind>
OpDef MakeComparisonOp(const std::string& name, const char* symbol) {
  OpDef op;
  op.name = name;
  op.cheap_to_recompute = true;
  op.doc = std::string("output = 1 where lhs ") + symbol +
           " rhs, else 0, element-wise with NumPy broadcasting, in the operands' dtype; no "
           "gradient.";
  op.input_names = Operands;
  op.output_names = Output;
  op.infer_shape = BroadcastShape;
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{false, false}, {false}};
  };
  op.layout.role = LayoutRole::kAgnostic;  // when the operands' shapes are equal
  op.forward[DeviceType::kCPU] =
      [name](const OpContext&, const Attributes&, const std::vector<TensorView>& inputs,
             const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
        if (req[0] == WriteMode::kNull) return;
        MXLITE_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, name, {
          cpu::BroadcastBinary(Compare<T, kind>{}, inputs[0].data_as<T>(), inputs[0].shape,
                               inputs[1].data_as<T>(), inputs[1].shape, outputs[0].data_as<T>(),
                               outputs[0].shape);
        });
      };
  op.backward[DeviceType::kCPU] =
      [name](const OpContext&, const Attributes&, const std::vector<TensorView>&,
             const std::vector<TensorView>&, const std::vector<TensorView>&,
             const std::vector<TensorView>& input_grads, const std::vector<WriteMode>& req) {
        for (size_t i = 0; i < input_grads.size(); ++i) {
          if (req[i] == WriteMode::kNull) continue;
          MXLITE_FLOAT_TYPE_SWITCH(input_grads[i].dtype, T, name, {
            T* grad = input_grads[i].data_as<T>();
            cpu::ForEachChunk(input_grads[i].size(), [&](int64_t begin, int64_t end) {
              cpu::EigenArray<T>(grad + begin, end - begin).setZero();
            });
          });
        }
      };
  return op;
}

}  // namespace

MXLITE_REGISTER_OP(broadcast_equal) {
  return MakeComparisonOp<Comparison::kEqual>("broadcast_equal", "==");
}
MXLITE_REGISTER_OP(broadcast_not_equal) {
  return MakeComparisonOp<Comparison::kNotEqual>("broadcast_not_equal", "!=");
}
MXLITE_REGISTER_OP(broadcast_greater) {
  return MakeComparisonOp<Comparison::kGreater>("broadcast_greater", ">");
}
MXLITE_REGISTER_OP(broadcast_greater_equal) {
  return MakeComparisonOp<Comparison::kGreaterEqual>("broadcast_greater_equal", ">=");
}
MXLITE_REGISTER_OP(broadcast_lesser) {
  return MakeComparisonOp<Comparison::kLesser>("broadcast_lesser", "<");
}
MXLITE_REGISTER_OP(broadcast_lesser_equal) {
  return MakeComparisonOp<Comparison::kLesserEqual>("broadcast_lesser_equal", "<=");
}

}  // namespace mxlite
