// The element-wise math functions (ops/unary_math.h): their OpDefs and CPU kernels, vectorised
// by Eigen (sqrt and rsqrt excepted: the exact scalar root, see ExactSqrt) and split over the
// intra-op threads.
#include "ops/unary_math.h"

#include <unsupported/Eigen/SpecialFunctions>  // Eigen's vectorised erf

#include <cmath>

#include "ops/cpu/elementwise.h"
#include "ops/cpu/vector_math.h"
#include "ops/operator.h"

namespace mxlite {

namespace {

using cpu::EigenArray;
using cpu::ForEachChunk;

// The correctly rounded square root. Eigen's packet sqrt under its default EIGEN_FAST_MATH is an
// rsqrt estimate refined once (sqrt(4) = 1.9999999 in float32), where PyTorch and NumPy round
// exactly: the scalar one keeps the bits they give.
template <typename Array>
auto ExactSqrt(const Array& x) {
  return x.unaryExpr([](typename Array::Scalar v) { return std::sqrt(v); });
}

// y = f(x) over one chunk.
template <UnaryMath kF, typename T>
void ApplyForward(EigenArray<const T> x, EigenArray<T> y, const UnaryMathParams& p) {
  const T a = static_cast<T>(p.a), b = static_cast<T>(p.b);
  if constexpr (kF == UnaryMath::kSqrt) y = ExactSqrt(x);
  if constexpr (kF == UnaryMath::kRsqrt) y = T(1) / ExactSqrt(x);
  if constexpr (kF == UnaryMath::kSquare) y = x.square();
  if constexpr (kF == UnaryMath::kExp) y = x.exp();
  if constexpr (kF == UnaryMath::kLog) y = x.log();
  if constexpr (kF == UnaryMath::kAbs) y = x.abs();
  if constexpr (kF == UnaryMath::kNegative) y = -x;
  if constexpr (kF == UnaryMath::kReciprocal) y = x.inverse();
  if constexpr (kF == UnaryMath::kErf) y = x.erf();
  if constexpr (kF == UnaryMath::kSin) y = x.sin();
  if constexpr (kF == UnaryMath::kCos) y = x.cos();
  if constexpr (kF == UnaryMath::kTan) y = x.tan();
  if constexpr (kF == UnaryMath::kArcsin) y = x.asin();
  if constexpr (kF == UnaryMath::kArccos) y = x.acos();
  if constexpr (kF == UnaryMath::kArctan) y = x.atan();
  if constexpr (kF == UnaryMath::kSinh) y = x.sinh();
  if constexpr (kF == UnaryMath::kCosh) y = x.cosh();
  if constexpr (kF == UnaryMath::kArcsinh) y = x.unaryExpr([](T v) { return std::asinh(v); });
  if constexpr (kF == UnaryMath::kArccosh) y = x.unaryExpr([](T v) { return std::acosh(v); });
  if constexpr (kF == UnaryMath::kArctanh) y = x.unaryExpr([](T v) { return std::atanh(v); });
  if constexpr (kF == UnaryMath::kFloor) y = x.floor();
  if constexpr (kF == UnaryMath::kCeil) y = x.ceil();
  if constexpr (kF == UnaryMath::kRound) y = x.rint();  // halves to even, as ONNX and NumPy
  if constexpr (kF == UnaryMath::kPowerScalar) {
    // x^2 (variances, norms) is most of what models raise to a power: one multiply, exact.
    if (p.a == 2) {
      y = x.square();
    } else {
      // std::pow per element: right for negative bases with integer exponents.
      for (Eigen::Index i = 0; i < x.size(); ++i) y[i] = std::pow(x[i], a);
    }
  }
  if constexpr (kF == UnaryMath::kHardSigmoid) y = (x * a + b).max(T(0)).min(T(1));
  if constexpr (kF == UnaryMath::kSilu) y = x * (T(1) / (T(1) + (-x).exp()));
  if constexpr (kF == UnaryMath::kGelu) y = T(0.5) * x * (T(1) + (x * T(kSqrtHalf)).erf());
  // The bits of hard_sigmoid then a multiplication, as the two ops it replaces give them.
  if constexpr (kF == UnaryMath::kHardSwish) y = x * (x * a + b).max(T(0)).min(T(1));
}

// dx = dy * f'(x) over one chunk.
template <UnaryMath kF, typename T>
void ApplyBackward(EigenArray<const T> x, EigenArray<const T> dy, EigenArray<T> dx,
                   const UnaryMathParams& p) {
  const T a = static_cast<T>(p.a), b = static_cast<T>(p.b);
  if constexpr (kF == UnaryMath::kSqrt) dx = dy * T(0.5) / ExactSqrt(x);
  if constexpr (kF == UnaryMath::kRsqrt) dx = dy * T(-0.5) / ExactSqrt(x) / x;
  if constexpr (kF == UnaryMath::kSquare) dx = dy * T(2) * x;
  if constexpr (kF == UnaryMath::kExp) dx = dy * x.exp();
  if constexpr (kF == UnaryMath::kLog) dx = dy / x;
  if constexpr (kF == UnaryMath::kAbs) dx = dy * x.sign();
  if constexpr (kF == UnaryMath::kNegative) dx = -dy;
  if constexpr (kF == UnaryMath::kReciprocal) dx = -dy / x.square();
  if constexpr (kF == UnaryMath::kErf) dx = dy * T(kTwoOverSqrtPi) * (-x.square()).exp();
  if constexpr (kF == UnaryMath::kSin) dx = dy * x.cos();
  if constexpr (kF == UnaryMath::kCos) dx = -dy * x.sin();
  if constexpr (kF == UnaryMath::kTan) dx = dy / x.cos().square();
  if constexpr (kF == UnaryMath::kArcsin) dx = dy / (T(1) - x.square()).sqrt();
  if constexpr (kF == UnaryMath::kArccos) dx = -dy / (T(1) - x.square()).sqrt();
  if constexpr (kF == UnaryMath::kArctan) dx = dy / (T(1) + x.square());
  if constexpr (kF == UnaryMath::kSinh) dx = dy * x.cosh();
  if constexpr (kF == UnaryMath::kCosh) dx = dy * x.sinh();
  if constexpr (kF == UnaryMath::kArcsinh) dx = dy / (x.square() + T(1)).sqrt();
  if constexpr (kF == UnaryMath::kArccosh) dx = dy / (x.square() - T(1)).sqrt();
  if constexpr (kF == UnaryMath::kArctanh) dx = dy / (T(1) - x.square());
  if constexpr (kF == UnaryMath::kFloor || kF == UnaryMath::kCeil || kF == UnaryMath::kRound) {
    dx.setZero();
  }
  if constexpr (kF == UnaryMath::kPowerScalar) {
    for (Eigen::Index i = 0; i < x.size(); ++i) dx[i] = dy[i] * a * std::pow(x[i], a - T(1));
  }
  if constexpr (kF == UnaryMath::kHardSigmoid) {
    const auto z = x * a + b;
    dx = (z > T(0) && z < T(1)).select(dy * a, T(0));
  }
  if constexpr (kF == UnaryMath::kSilu) {  // s + x s (1 - s)
    const auto s = T(1) / (T(1) + (-x).exp());
    dx = dy * s * (T(1) + x * (T(1) - s));
  }
  if constexpr (kF == UnaryMath::kHardSwish) {  // h(x) + x h'(x)
    const auto z = x * a + b;
    dx = dy * (z.max(T(0)).min(T(1)) + (z > T(0) && z < T(1)).select(x * a, T(0)));
  }
  if constexpr (kF == UnaryMath::kGelu) {  // Phi(x) + x phi(x)
    const auto cdf = T(0.5) * (T(1) + (x * T(kSqrtHalf)).erf());
    dx = dy * (cdf + x * T(kOneOverSqrtTwoPi) * (T(-0.5) * x.square()).exp());
  }
}

template <UnaryMath kF>
void UnaryMathForwardCpu(const OpContext&, const Attributes& attrs,
                         const std::vector<TensorView>& inputs,
                         const std::vector<TensorView>& outputs,
                         const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const UnaryMathParams p = UnaryMathParamsOf(kF, attrs);
  if constexpr (kF == UnaryMath::kExp || kF == UnaryMath::kSilu || kF == UnaryMath::kGelu) {
    if (inputs[0].dtype == DType::kFloat32) {  // at the CPU's full vector width
      const auto apply = kF == UnaryMath::kExp    ? cpu::ExpFloats
                         : kF == UnaryMath::kSilu ? cpu::SiluFloats
                                                  : cpu::GeluFloats;
      apply(inputs[0].data_as<float>(), outputs[0].data_as<float>(), inputs[0].size());
      return;
    }
  }
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, UnaryMathName(kF), {
    const T* x = inputs[0].data_as<T>();
    T* y = outputs[0].data_as<T>();
    ForEachChunk(inputs[0].size(), [&](int64_t begin, int64_t end) {
      ApplyForward<kF, T>(EigenArray<const T>(x + begin, end - begin),
                          EigenArray<T>(y + begin, end - begin), p);
    });
  });
}

template <UnaryMath kF>
void UnaryMathBackwardCpu(const OpContext&, const Attributes& attrs,
                          const std::vector<TensorView>& output_grads,
                          const std::vector<TensorView>& inputs, const std::vector<TensorView>&,
                          const std::vector<TensorView>& input_grads,
                          const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const UnaryMathParams p = UnaryMathParamsOf(kF, attrs);
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, UnaryMathName(kF), {
    const T* x = inputs[0].data_as<T>();
    const T* dy = output_grads[0].data_as<T>();
    T* dx = input_grads[0].data_as<T>();
    ForEachChunk(inputs[0].size(), [&](int64_t begin, int64_t end) {
      ApplyBackward<kF, T>(EigenArray<const T>(x + begin, end - begin),
                           EigenArray<const T>(dy + begin, end - begin),
                           EigenArray<T>(dx + begin, end - begin), p);
    });
  });
}

struct UnaryMathInfo {
  UnaryMath function;
  const char* name;
  const char* doc;
};

constexpr UnaryMathInfo kUnaryMath[] = {
    {UnaryMath::kSqrt, "sqrt", "Square root, element-wise."},
    {UnaryMath::kRsqrt, "rsqrt", "1 / sqrt(x), element-wise."},
    {UnaryMath::kSquare, "square", "x * x, element-wise."},
    {UnaryMath::kExp, "exp", "e^x, element-wise."},
    {UnaryMath::kLog, "log", "Natural logarithm, element-wise."},
    {UnaryMath::kAbs, "abs", "|x|, element-wise."},
    {UnaryMath::kNegative, "negative", "-x, element-wise."},
    {UnaryMath::kReciprocal, "reciprocal", "1 / x, element-wise."},
    {UnaryMath::kErf, "erf", "The Gauss error function, element-wise."},
    {UnaryMath::kSin, "sin", "Sine (radians), element-wise."},
    {UnaryMath::kCos, "cos", "Cosine (radians), element-wise."},
    {UnaryMath::kTan, "tan", "Tangent (radians), element-wise."},
    {UnaryMath::kArcsin, "arcsin", "Inverse sine, element-wise (NaN outside [-1, 1])."},
    {UnaryMath::kArccos, "arccos", "Inverse cosine, element-wise (NaN outside [-1, 1])."},
    {UnaryMath::kArctan, "arctan", "Inverse tangent, element-wise."},
    {UnaryMath::kSinh, "sinh", "Hyperbolic sine, element-wise."},
    {UnaryMath::kCosh, "cosh", "Hyperbolic cosine, element-wise."},
    {UnaryMath::kArcsinh, "arcsinh", "Inverse hyperbolic sine, element-wise."},
    {UnaryMath::kArccosh, "arccosh", "Inverse hyperbolic cosine, element-wise (NaN below 1)."},
    {UnaryMath::kArctanh, "arctanh",
     "Inverse hyperbolic tangent, element-wise (NaN outside (-1, 1))."},
    {UnaryMath::kFloor, "floor", "The largest integer <= x, element-wise."},
    {UnaryMath::kCeil, "ceil", "The smallest integer >= x, element-wise."},
    {UnaryMath::kRound, "round", "The nearest integer (halves to even), element-wise."},
    {UnaryMath::kPowerScalar, "_power_scalar", "x ^ scalar, element-wise."},
    {UnaryMath::kHardSigmoid, "hard_sigmoid", "max(0, min(1, alpha * x + beta)), element-wise."},
    {UnaryMath::kSilu, "silu", "x * sigmoid(x) (SiLU, swish), element-wise."},
    {UnaryMath::kGelu, "gelu", "x/2 * (1 + erf(x / sqrt 2)) (GELU, exact), element-wise."},
    {UnaryMath::kHardSwish, "hard_swish",
     "x * max(0, min(1, alpha * x + beta)) (hard swish with alpha 1/6, beta 1/2), element-wise."},
};

const UnaryMathInfo& InfoOf(UnaryMath function) {
  for (const UnaryMathInfo& info : kUnaryMath) {
    if (info.function == function) return info;
  }
  MX_THROW() << "unknown element-wise math function " << static_cast<int>(function);
}

template <UnaryMath kF>
OpDef MakeUnaryMathOp() {
  const UnaryMathInfo& info = InfoOf(kF);
  OpDef op;
  op.name = info.name;
  op.doc = info.doc;
  if (kF == UnaryMath::kPowerScalar) {
    op.attributes.Float("scalar", "the exponent", Default("1"));
  }
  if (kF == UnaryMath::kHardSigmoid) {
    op.attributes.Float("alpha", "the slope", Default("0.2"))
        .Float("beta", "the offset", Default("0.5"));
  }
  if (kF == UnaryMath::kHardSwish) {  // MobileNet-V3's and ONNX's HardSwish by default
    op.attributes.Float("alpha", "the gate's slope", Default("0.1666666666666667"))
        .Float("beta", "the gate's offset", Default("0.5"));
  }
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = [](const Attributes&, ShapeInference& shapes) {
    shapes.AssignOutput(0, shapes.Input(0));
  };
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{true}, {false}};
  };
  op.cheap_to_recompute = true;
  op.layout.role = LayoutRole::kAgnostic;
  if (kF == UnaryMath::kHardSigmoid) {  // x * hard_sigmoid(x) is hard_swish with its alpha, beta
    op.fusion.self_gate = [](const Attributes&, const std::map<std::string, std::string>& text) {
      std::map<std::string, std::string> attrs = {{"alpha", "0.2"}, {"beta", "0.5"}};
      for (const char* name : {"alpha", "beta"}) {
        if (text.count(name)) attrs[name] = text.at(name);
      }
      return std::optional<SelfGate>(SelfGate{"hard_swish", attrs});
    };
  }
  op.forward[DeviceType::kCPU] = UnaryMathForwardCpu<kF>;
  op.backward[DeviceType::kCPU] = UnaryMathBackwardCpu<kF>;
  return op;
}

}  // namespace

const char* UnaryMathName(UnaryMath function) { return InfoOf(function).name; }

UnaryMathParams UnaryMathParamsOf(UnaryMath function, const Attributes& attrs) {
  if (function == UnaryMath::kPowerScalar) return {attrs.GetFloat("scalar"), 0};
  if (function == UnaryMath::kHardSigmoid || function == UnaryMath::kHardSwish) {
    return {attrs.GetFloat("alpha"), attrs.GetFloat("beta")};
  }
  return {};
}

MXLITE_REGISTER_OP(sqrt) { return MakeUnaryMathOp<UnaryMath::kSqrt>(); }
MXLITE_REGISTER_OP(rsqrt) { return MakeUnaryMathOp<UnaryMath::kRsqrt>(); }
MXLITE_REGISTER_OP(square) { return MakeUnaryMathOp<UnaryMath::kSquare>(); }
MXLITE_REGISTER_OP(exp) { return MakeUnaryMathOp<UnaryMath::kExp>(); }
MXLITE_REGISTER_OP(log) { return MakeUnaryMathOp<UnaryMath::kLog>(); }
MXLITE_REGISTER_OP(abs) { return MakeUnaryMathOp<UnaryMath::kAbs>(); }
MXLITE_REGISTER_OP(negative) { return MakeUnaryMathOp<UnaryMath::kNegative>(); }
MXLITE_REGISTER_OP(reciprocal) { return MakeUnaryMathOp<UnaryMath::kReciprocal>(); }
MXLITE_REGISTER_OP(erf) { return MakeUnaryMathOp<UnaryMath::kErf>(); }
MXLITE_REGISTER_OP(sin) { return MakeUnaryMathOp<UnaryMath::kSin>(); }
MXLITE_REGISTER_OP(cos) { return MakeUnaryMathOp<UnaryMath::kCos>(); }
MXLITE_REGISTER_OP(tan) { return MakeUnaryMathOp<UnaryMath::kTan>(); }
MXLITE_REGISTER_OP(arcsin) { return MakeUnaryMathOp<UnaryMath::kArcsin>(); }
MXLITE_REGISTER_OP(arccos) { return MakeUnaryMathOp<UnaryMath::kArccos>(); }
MXLITE_REGISTER_OP(arctan) { return MakeUnaryMathOp<UnaryMath::kArctan>(); }
MXLITE_REGISTER_OP(sinh) { return MakeUnaryMathOp<UnaryMath::kSinh>(); }
MXLITE_REGISTER_OP(cosh) { return MakeUnaryMathOp<UnaryMath::kCosh>(); }
MXLITE_REGISTER_OP(arcsinh) { return MakeUnaryMathOp<UnaryMath::kArcsinh>(); }
MXLITE_REGISTER_OP(arccosh) { return MakeUnaryMathOp<UnaryMath::kArccosh>(); }
MXLITE_REGISTER_OP(arctanh) { return MakeUnaryMathOp<UnaryMath::kArctanh>(); }
MXLITE_REGISTER_OP(floor) { return MakeUnaryMathOp<UnaryMath::kFloor>(); }
MXLITE_REGISTER_OP(ceil) { return MakeUnaryMathOp<UnaryMath::kCeil>(); }
MXLITE_REGISTER_OP(round) { return MakeUnaryMathOp<UnaryMath::kRound>(); }
MXLITE_REGISTER_OP(_power_scalar) { return MakeUnaryMathOp<UnaryMath::kPowerScalar>(); }
MXLITE_REGISTER_OP(hard_sigmoid) { return MakeUnaryMathOp<UnaryMath::kHardSigmoid>(); }
MXLITE_REGISTER_OP(silu) { return MakeUnaryMathOp<UnaryMath::kSilu>(); }
MXLITE_REGISTER_OP(gelu) { return MakeUnaryMathOp<UnaryMath::kGelu>(); }
MXLITE_REGISTER_OP(hard_swish) { return MakeUnaryMathOp<UnaryMath::kHardSwish>(); }

}  // namespace mxlite
