// Element-wise binary arithmetic: output = lhs (+ - * /) rhs, the larger / smaller of the two, or
// lhs to the power rhs.
//   broadcast_add, broadcast_sub, broadcast_mul, broadcast_div, broadcast_maximum,
//     broadcast_minimum, broadcast_power: NumPy broadcasting (also what ONNX's Add, Sub, Mul, Div,
//     Max, Min and Pow need); a scalar has shape ().
//   elemwise_add, elemwise_sub, elemwise_mul, elemwise_div: both inputs must have the same shape.
// Both families share one kernel (ops/cpu/broadcast.h), whose merged-axis layout makes the same-
// shape, scalar, row (bias on (N, C)) and channel (bias (1, C, 1, 1) on NCHW) cases contiguous
// loops. Backward sums each input's gradient over the axes along which it was broadcast. add and
// sub need no forward tensor in backward; mul and div read both inputs; maximum passes the
// gradient to lhs where lhs >= rhs and to rhs elsewhere (minimum: lhs <= rhs), as MXNet does, and
// reads both; power gives lhs rhs * lhs^(rhs - 1) (0 where rhs is 0) and rhs lhs^rhs * ln(lhs) (0
// where lhs is 0 and rhs >= 0), as PyTorch does. The output may share memory with an input of the
// same shape.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ops/broadcast.h"
#include "ops/cpu/broadcast.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

using cpu::BroadcastBinary;
using cpu::EigenArray;
using cpu::ForEachChunk;

enum class Arithmetic { kAdd, kSub, kMul, kDiv, kMaximum, kMinimum, kPower };

const auto kAdd = [](const auto& x, const auto& y) { return x + y; };
const auto kSub = [](const auto& x, const auto& y) { return x - y; };
const auto kMul = [](const auto& x, const auto& y) { return x * y; };
const auto kDiv = [](const auto& x, const auto& y) { return x / y; };

// max / min of what BroadcastBinary passes: two arrays, an array and a scalar, or two scalars. A
// NaN operand gives NaN, as NumPy's maximum does.
template <typename T, bool kLarger>
struct Extremum {
  template <typename X, typename Y>
  auto operator()(const X& x, const Y& y) const {
    if constexpr (std::is_same_v<X, T> && std::is_same_v<Y, T>) {
      if (x != x || y != y) return x != x ? x : y;
      return kLarger ? std::max(x, y) : std::min(x, y);
    } else if constexpr (std::is_same_v<X, T>) {
      return Apply(y, x);
    } else {
      return Apply(x, y);
    }
  }
  using Functor = std::conditional_t<kLarger, Eigen::internal::scalar_max_op<T, T, Eigen::PropagateNaN>,
                                     Eigen::internal::scalar_min_op<T, T, Eigen::PropagateNaN>>;
  template <typename A, typename B>
  static auto Apply(const A& array, const B& other) {
    if constexpr (std::is_same_v<B, T>) {  // the scalar stretched over the array
      return array.binaryExpr(Eigen::Array<T, Eigen::Dynamic, 1>::Constant(array.size(), other),
                              Functor());
    } else {
      return array.binaryExpr(other, Functor());
    }
  }
};

// A function of two scalars applied to what BroadcastBinary passes: two arrays, an array and a
// scalar, or two scalars.
template <typename T, typename F>
struct PerElement {
  F f;
  template <typename X, typename Y>
  auto operator()(const X& x, const Y& y) const {
    if constexpr (std::is_same_v<X, T> && std::is_same_v<Y, T>) {
      return f(x, y);
    } else if constexpr (std::is_same_v<X, T>) {
      return y.unaryExpr([f = f, x](T b) { return f(x, b); });
    } else if constexpr (std::is_same_v<Y, T>) {
      return x.unaryExpr([f = f, y](T a) { return f(a, y); });
    } else {
      return x.binaryExpr(y, f);
    }
  }
};
template <typename T, typename F>
PerElement<T, F> Elementwise(F f) {
  return {f};
}

// x^y and its partial derivatives (PyTorch's: 0 where the exponent is 0, and 0 where the base is
// 0 and the exponent is not negative).
template <typename T>
T Power(T x, T y) {
  return std::pow(x, y);
}
template <typename T>
T PowerBaseGradient(T x, T y) {
  return y == T(0) ? T(0) : y * std::pow(x, y - T(1));
}
template <typename T>
T PowerExponentGradient(T x, T y) {
  return x == T(0) && y >= T(0) ? T(0) : std::pow(x, y) * std::log(x);
}

// 1 where lhs >= rhs (maximum's lhs wins), or lhs <= rhs (minimum's), else 0.
template <typename T, bool kLarger>
struct LhsWins {
  template <typename X, typename Y>
  auto operator()(const X& x, const Y& y) const {
    if constexpr (std::is_same_v<X, T> && std::is_same_v<Y, T>) {
      return T((kLarger ? x >= y : x <= y) ? 1 : 0);
    } else if constexpr (std::is_same_v<X, T> && kLarger) {  // scalar lhs: flip the comparison
      return (y <= x).template cast<T>();
    } else if constexpr (std::is_same_v<X, T>) {
      return (y >= x).template cast<T>();
    } else if constexpr (kLarger) {
      return (x >= y).template cast<T>();
    } else {
      return (x <= y).template cast<T>();
    }
  }
};

std::vector<std::string> Operands(const Attributes&) { return {"lhs", "rhs"}; }
std::vector<std::string> Output(const Attributes&) { return {"output"}; }

void BroadcastShape(const Attributes&, ShapeInference& shapes) {
  const Shape& lhs = shapes.Input(0);
  const Shape& rhs = shapes.Input(1);
  std::optional<Shape> output = BroadcastShapes(lhs, rhs);
  MX_CHECK(output.has_value()) << shapes.op << " " << shapes.node << ": cannot broadcast 'lhs' "
                               << lhs << " with 'rhs' " << rhs;
  shapes.AssignOutput(0, *output);
}

void SameShape(const Attributes&, ShapeInference& shapes) {
  const Shape& lhs = shapes.Input(0);
  const Shape& rhs = shapes.Input(1);
  MX_CHECK(lhs == rhs) << shapes.op << " " << shapes.node << ": 'lhs' " << lhs << " and 'rhs' "
                       << rhs << " differ (the broadcast_* ops broadcast)";
  shapes.AssignOutput(0, lhs);
}

template <typename T>
void Forward(Arithmetic kind, const TensorView& lhs, const TensorView& rhs, const TensorView& out) {
  const T* x = lhs.data_as<T>();
  const T* y = rhs.data_as<T>();
  T* z = out.data_as<T>();
  switch (kind) {
    case Arithmetic::kAdd:
      BroadcastBinary(kAdd, x, lhs.shape, y, rhs.shape, z, out.shape);
      break;
    case Arithmetic::kSub:
      BroadcastBinary(kSub, x, lhs.shape, y, rhs.shape, z, out.shape);
      break;
    case Arithmetic::kMul:
      BroadcastBinary(kMul, x, lhs.shape, y, rhs.shape, z, out.shape);
      break;
    case Arithmetic::kDiv:
      BroadcastBinary(kDiv, x, lhs.shape, y, rhs.shape, z, out.shape);
      break;
    case Arithmetic::kMaximum:
      BroadcastBinary(Extremum<T, true>{}, x, lhs.shape, y, rhs.shape, z, out.shape);
      break;
    case Arithmetic::kMinimum:
      BroadcastBinary(Extremum<T, false>{}, x, lhs.shape, y, rhs.shape, z, out.shape);
      break;
    case Arithmetic::kPower:
      BroadcastBinary(Elementwise<T>(Power<T>), x, lhs.shape, y, rhs.shape, z, out.shape);
      break;
  }
}

// The gradient of one operand: `fill_term(target)` writes its per-output-element term (output
// shape) into `target`; the result is scale * that term summed over the broadcast axes.
template <typename T, typename FillTerm>
void OperandGradient(const OpContext& ctx, const Shape& out_shape, const TensorView& grad, T scale,
                     FillTerm&& fill_term) {
  T* target = grad.data_as<T>();
  if (grad.size() == out_shape.size()) {  // not broadcast: the term is the gradient
    fill_term(target);
    if (scale != T(1)) {
      ForEachChunk(grad.size(), [&](int64_t begin, int64_t end) {
        EigenArray<T>(target + begin, end - begin) *= scale;
      });
    }
    return;
  }
  T* term = ctx.scratch->GetArray<T>(out_shape.size());
  fill_term(term);
  cpu::ReduceToShape<T>(term, out_shape, target, grad.shape, scale, ctx.scratch);
}

template <typename T>
void Backward(Arithmetic kind, const OpContext& ctx, const TensorView& out_grad,
              const TensorView& lhs, const TensorView& rhs, const std::vector<TensorView>& grads,
              const std::vector<WriteMode>& req) {
  const Shape& out_shape = out_grad.shape;
  const T* dy = out_grad.data_as<T>();
  // d(output)/d(operand) is +-1 for add and sub: reduce the output gradient itself.
  auto pass_through = [&](const TensorView& grad, T sign) {
    if (grad.size() == out_shape.size()) {
      T* target = grad.data_as<T>();
      ForEachChunk(grad.size(), [&](int64_t begin, int64_t end) {
        EigenArray<T>(target + begin, end - begin) =
            sign * EigenArray<const T>(dy + begin, end - begin);
      });
    } else {
      cpu::ReduceToShape<T>(dy, out_shape, grad.data_as<T>(), grad.shape, sign, ctx.scratch);
    }
  };
  // dy * other (mul) or dy / other (div lhs), other broadcast to the output.
  auto times_other = [&](const TensorView& other, bool divide) {
    return [&, other, divide](T* target) {
      if (divide) {
        BroadcastBinary(kDiv, dy, out_shape, other.data_as<T>(), other.shape, target, out_shape);
      } else {
        BroadcastBinary(kMul, dy, out_shape, other.data_as<T>(), other.shape, target, out_shape);
      }
    };
  };
  const bool want_lhs = req[0] != WriteMode::kNull, want_rhs = req[1] != WriteMode::kNull;
  switch (kind) {
    case Arithmetic::kAdd:
    case Arithmetic::kSub:
      if (want_lhs) pass_through(grads[0], T(1));
      if (want_rhs) pass_through(grads[1], kind == Arithmetic::kAdd ? T(1) : T(-1));
      break;
    case Arithmetic::kMul:
      if (want_lhs) OperandGradient<T>(ctx, out_shape, grads[0], T(1), times_other(rhs, false));
      if (want_rhs) OperandGradient<T>(ctx, out_shape, grads[1], T(1), times_other(lhs, false));
      break;
    case Arithmetic::kDiv:
      if (want_lhs) OperandGradient<T>(ctx, out_shape, grads[0], T(1), times_other(rhs, true));
      if (want_rhs) {  // d(x/y)/dy = -x / y^2
        OperandGradient<T>(ctx, out_shape, grads[1], T(-1), [&](T* target) {
          const T* x = lhs.data_as<T>();
          const T* y = rhs.data_as<T>();
          BroadcastBinary(kMul, dy, out_shape, x, lhs.shape, target, out_shape);
          BroadcastBinary(kDiv, target, out_shape, y, rhs.shape, target, out_shape);
          BroadcastBinary(kDiv, target, out_shape, y, rhs.shape, target, out_shape);
        });
      }
      break;
    case Arithmetic::kMaximum:
    case Arithmetic::kMinimum: {
      // dy * [lhs wins] to lhs, dy * (1 - [lhs wins]) to rhs.
      const bool larger = kind == Arithmetic::kMaximum;
      auto lhs_wins = [&](T* target) {
        const T* x = lhs.data_as<T>();
        const T* y = rhs.data_as<T>();
        if (larger) {
          BroadcastBinary(LhsWins<T, true>{}, x, lhs.shape, y, rhs.shape, target, out_shape);
        } else {
          BroadcastBinary(LhsWins<T, false>{}, x, lhs.shape, y, rhs.shape, target, out_shape);
        }
      };
      if (want_lhs) {
        OperandGradient<T>(ctx, out_shape, grads[0], T(1), [&](T* target) {
          lhs_wins(target);
          BroadcastBinary(kMul, dy, out_shape, target, out_shape, target, out_shape);
        });
      }
      if (want_rhs) {
        OperandGradient<T>(ctx, out_shape, grads[1], T(1), [&](T* target) {
          lhs_wins(target);
          BroadcastBinary([](const auto& g, const auto& w) { return g - g * w; }, dy, out_shape,
                          target, out_shape, target, out_shape);
        });
      }
      break;
    }
    case Arithmetic::kPower: {
      // dy times a partial derivative of x^y at (lhs, rhs), broadcast to the output.
      auto dy_times = [&](auto partial) {
        return [&, partial](T* target) {
          BroadcastBinary(Elementwise<T>(partial), lhs.data_as<T>(), lhs.shape, rhs.data_as<T>(),
                          rhs.shape, target, out_shape);
          BroadcastBinary(kMul, dy, out_shape, target, out_shape, target, out_shape);
        };
      };
      if (want_lhs) {
        OperandGradient<T>(ctx, out_shape, grads[0], T(1), dy_times(PowerBaseGradient<T>));
      }
      if (want_rhs) {
        OperandGradient<T>(ctx, out_shape, grads[1], T(1), dy_times(PowerExponentGradient<T>));
      }
      break;
    }
  }
}

OpDef MakeBinaryOp(const std::string& name, Arithmetic kind, bool broadcast) {
  OpDef op;
  op.name = name;
  op.cheap_to_recompute = true;
  const char* formula = kind == Arithmetic::kAdd       ? "lhs + rhs"
                        : kind == Arithmetic::kSub     ? "lhs - rhs"
                        : kind == Arithmetic::kMul     ? "lhs * rhs"
                        : kind == Arithmetic::kDiv     ? "lhs / rhs"
                        : kind == Arithmetic::kMaximum ? "max(lhs, rhs)"
                        : kind == Arithmetic::kMinimum ? "min(lhs, rhs)"
                                                       : "lhs ^ rhs";
  op.doc = std::string("output = ") + formula + ", element-wise" +
           (broadcast ? " with NumPy broadcasting." : "; the shapes must be equal.");
  op.input_names = Operands;
  op.output_names = Output;
  op.infer_shape = broadcast ? BroadcastShape : SameShape;
  const bool reads_inputs = kind != Arithmetic::kAdd && kind != Arithmetic::kSub;
  op.backward_dependencies = [reads_inputs](const Attributes&) -> BackwardDependencies {
    return {{reads_inputs, reads_inputs}, {false}};
  };
  op.inplace = {{0, 0}, {1, 0}};
  op.layout.role = LayoutRole::kAgnostic;  // when the operands' shapes are equal
  op.fusion.adds = kind == Arithmetic::kAdd;
  op.fusion.multiplies = kind == Arithmetic::kMul;
  op.forward[DeviceType::kCPU] =
      [kind, name](const OpContext&, const Attributes&, const std::vector<TensorView>& inputs,
                   const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
        if (req[0] == WriteMode::kNull) return;
        MXLITE_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, name,
                                 { Forward<T>(kind, inputs[0], inputs[1], outputs[0]); });
      };
  op.backward[DeviceType::kCPU] =
      [kind, name](const OpContext& ctx, const Attributes&,
                   const std::vector<TensorView>& output_grads,
                   const std::vector<TensorView>& inputs, const std::vector<TensorView>&,
                   const std::vector<TensorView>& input_grads, const std::vector<WriteMode>& req) {
        MXLITE_FLOAT_TYPE_SWITCH(output_grads[0].dtype, T, name, {
          Backward<T>(kind, ctx, output_grads[0], inputs[0], inputs[1], input_grads, req);
        });
      };
  return op;
}

}  // namespace

MXLITE_REGISTER_OP(broadcast_add) { return MakeBinaryOp("broadcast_add", Arithmetic::kAdd, true); }
MXLITE_REGISTER_OP(broadcast_sub) { return MakeBinaryOp("broadcast_sub", Arithmetic::kSub, true); }
MXLITE_REGISTER_OP(broadcast_mul) { return MakeBinaryOp("broadcast_mul", Arithmetic::kMul, true); }
MXLITE_REGISTER_OP(broadcast_div) { return MakeBinaryOp("broadcast_div", Arithmetic::kDiv, true); }
MXLITE_REGISTER_OP(broadcast_maximum) {
  return MakeBinaryOp("broadcast_maximum", Arithmetic::kMaximum, true);
}
MXLITE_REGISTER_OP(broadcast_minimum) {
  return MakeBinaryOp("broadcast_minimum", Arithmetic::kMinimum, true);
}
MXLITE_REGISTER_OP(broadcast_power) {
  return MakeBinaryOp("broadcast_power", Arithmetic::kPower, true);
}
MXLITE_REGISTER_OP(elemwise_add) { return MakeBinaryOp("elemwise_add", Arithmetic::kAdd, false); }
MXLITE_REGISTER_OP(elemwise_sub) { return MakeBinaryOp("elemwise_sub", Arithmetic::kSub, false); }
MXLITE_REGISTER_OP(elemwise_mul) { return MakeBinaryOp("elemwise_mul", Arithmetic::kMul, false); }
MXLITE_REGISTER_OP(elemwise_div) { return MakeBinaryOp("elemwise_div", Arithmetic::kDiv, false); }

}  // namespace mxlite
