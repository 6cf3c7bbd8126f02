// ONNX arithmetic and linear algebra: Add, Sub, Mul, Div (broadcast_*), Max, Min, Sum, Mean
// (chains of broadcast_maximum / minimum / add), the element-wise math
// functions (Sqrt, Exp, Log, Abs, Neg, Reciprocal, Erf, Sin, Cos, Tan, Asin, Acos, Atan, Sinh,
// Cosh, Asinh, Acosh, Atanh, Floor, Ceil, Round; ops/unary_math.h), Pow (the scalar power, or
// broadcast_power), Softmax and LogSoftmax, CumSum, Gemm, MatMul.
#include "scheduler/onnx/onnx_converter.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/error.h"
#include "ops/broadcast.h"

namespace mxlite {
namespace {

void EmitBinary(OnnxNode& node, const char* op) {
  node.SetOutput(0, node.Emit(op, {}, {node.Input(0), node.Input(1)}));
}

template <typename Value, typename Fn>
std::vector<Value> BroadcastValues(const std::vector<Value>& a, const Shape& a_shape,
                                   const std::vector<Value>& b, const Shape& b_shape,
                                   const Shape& out, Fn&& fn) {
  std::vector<Value> values(static_cast<size_t>(out.size()));
  for (int64_t i = 0; i < out.size(); ++i) {
    values[static_cast<size_t>(i)] = fn(a[static_cast<size_t>(BroadcastOffset(a_shape, out, i))],
                                        b[static_cast<size_t>(BroadcastOffset(b_shape, out, i))]);
  }
  return values;
}

// Add, Sub, Mul, Div of two values known at load (the shape arithmetic exporters write between
// Shape and Reshape or Slice, and masks built from shapes, as Swin's attention mask) are computed
// at load with NumPy broadcasting, stored in the inputs' dtype: integers in int64 (division
// truncating toward zero, as ONNX Runtime's), float32 and float64 in double, which rounds each
// result to exactly what the float kernel gives. Anything else is a graph node.
template <typename Fn>
void EmitArithmetic(OnnxNode& node, const char* op, Fn&& fn) {
  const HostTensor* a = node.ConstantInput(0);
  const HostTensor* b = node.ConstantInput(1);
  if (a == nullptr || b == nullptr || !ComputableAtLoad(a->dtype)) {
    EmitBinary(node, op);
    return;
  }
  MX_CHECK(a->dtype == b->dtype) << node.where() << ": the inputs' dtypes differ ("
                                 << DTypeName(a->dtype) << " and " << DTypeName(b->dtype) << ")";
  const std::optional<Shape> out = BroadcastShapes(a->shape, b->shape);
  MX_CHECK(out.has_value()) << node.where() << ": shapes " << a->shape << " and " << b->shape
                            << " do not broadcast";
  const std::string what = node.where() + " (computed at load)";
  if (IsFloatingPoint(a->dtype)) {
    const std::vector<double> x = a->AsDoubles(what), y = b->AsDoubles(what);
    node.SetConstantOutput(
        HostTensorOf(a->dtype, *out, BroadcastValues(x, a->shape, y, b->shape, *out, fn), what));
    return;
  }
  const std::vector<int64_t> x = a->ToInt64s(what), y = b->ToInt64s(what);
  if (std::string(op) == "broadcast_div") {
    for (int64_t divisor : y) MX_CHECK(divisor != 0) << node.where() << ": integer division by 0";
  }
  node.SetConstantOutput(
      HostTensorOf(a->dtype, *out, BroadcastValues(x, a->shape, y, b->shape, *out, fn), what));
}

void ConvertAdd(OnnxNode& node) {
  EmitArithmetic(node, "broadcast_add", [](auto x, auto y) { return x + y; });
}
void ConvertSub(OnnxNode& node) {
  EmitArithmetic(node, "broadcast_sub", [](auto x, auto y) { return x - y; });
}
void ConvertMul(OnnxNode& node) {
  EmitArithmetic(node, "broadcast_mul", [](auto x, auto y) { return x * y; });
}
void ConvertDiv(OnnxNode& node) {
  EmitArithmetic(node, "broadcast_div", [](auto x, auto y) { return x / y; });
}

// Max, Min, Sum and Mean of one or more inputs, NumPy broadcasting (from opset 8; before, the
// inputs had one shape, which broadcasting includes): a chain of `op` (Mean: Sum, then divided by
// the count). Inputs all known at load are computed then, in the inputs' dtype as Add's are.
template <typename Fn>
void EmitVariadic(OnnxNode& node, const char* op, Fn&& fn, bool mean) {
  const int count = node.num_inputs();
  MX_CHECK(count >= 1) << node.where() << ": no inputs";
  bool all_known = true;
  for (int i = 0; i < count; ++i) {
    const HostTensor* input = node.ConstantInput(i);
    all_known = all_known && input != nullptr && ComputableAtLoad(input->dtype) &&
                input->dtype == node.ConstantInput(0)->dtype;
  }
  if (all_known && (!mean || IsFloatingPoint(node.ConstantInput(0)->dtype))) {
    const std::string what = node.where() + " (computed at load)";
    const HostTensor& first = *node.ConstantInput(0);
    Shape shape = first.shape;
    std::vector<double> values = first.AsDoubles(what);
    for (int i = 1; i < count; ++i) {
      const HostTensor& next = *node.ConstantInput(i);
      const std::optional<Shape> out = BroadcastShapes(shape, next.shape);
      MX_CHECK(out.has_value()) << node.where() << ": shapes " << shape << " and " << next.shape
                                << " do not broadcast";
      values = BroadcastValues(values, shape, next.AsDoubles(what), next.shape, *out, fn);
      shape = *out;
    }
    if (mean) {
      for (double& value : values) value /= count;
    }
    node.SetConstantOutput(HostTensorOf(first.dtype, shape, values, what));
    return;
  }
  NodeEntry result = node.Input(0);
  for (int i = 1; i < count; ++i) {
    std::string suffix = "_";  // appended: GCC 12 warns falsely on "_" + std::string
    suffix += std::to_string(i);
    const bool last = i == count - 1 && !mean;
    result = node.Emit(op, {}, {result, node.Input(i)}, last ? "" : suffix);
  }
  if (mean && count > 1) {
    result = node.Emit("broadcast_div", {}, {result, node.NewScalar("_count", count)});
  }
  node.SetOutput(0, result);
}

void ConvertMax(OnnxNode& node) {
  EmitVariadic(node, "broadcast_maximum", [](auto x, auto y) { return std::max(x, y); }, false);
}
void ConvertMin(OnnxNode& node) {
  EmitVariadic(node, "broadcast_minimum", [](auto x, auto y) { return std::min(x, y); }, false);
}
void ConvertSum(OnnxNode& node) {
  EmitVariadic(node, "broadcast_add", [](auto x, auto y) { return x + y; }, false);
}
void ConvertMean(OnnxNode& node) {
  EmitVariadic(node, "broadcast_add", [](auto x, auto y) { return x + y; }, true);
}

void EmitUnary(OnnxNode& node, const char* op) {
  node.SetOutput(0, node.Emit(op, {}, {node.Input(0)}));
}

void ConvertSqrt(OnnxNode& node) { EmitUnary(node, "sqrt"); }
void ConvertExp(OnnxNode& node) { EmitUnary(node, "exp"); }
void ConvertLog(OnnxNode& node) { EmitUnary(node, "log"); }
// Neg and Abs of integers known at load (shape arithmetic: the expanded LayerNormalization's
// -axis) are computed then, in the input's dtype; anything else is a graph node (floating-point
// values known at load are folded by mxlite's own kernels, scheduler/onnx/onnx_fold.h).
template <typename Fn>
void EmitIntegerUnary(OnnxNode& node, const char* op, Fn&& fn) {
  const HostTensor* x = node.ConstantInput(0);
  if (x == nullptr || IsFloatingPoint(x->dtype) || !ComputableAtLoad(x->dtype)) {
    EmitUnary(node, op);
    return;
  }
  const std::string what = node.where() + " (computed at load)";
  std::vector<int64_t> values = x->ToInt64s(what);
  for (int64_t& value : values) value = fn(value);
  node.SetConstantOutput(HostTensorOf(x->dtype, x->shape, values, what));
}

// -x in two's complement, as the integer kernels wrap: the lowest value is its own negation
// (no signed overflow here).
int64_t WrappingNegation(int64_t x) {
  return static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(x));
}

void ConvertAbs(OnnxNode& node) {
  EmitIntegerUnary(node, "abs", [](int64_t x) { return x < 0 ? WrappingNegation(x) : x; });
}
void ConvertNeg(OnnxNode& node) { EmitIntegerUnary(node, "negative", WrappingNegation); }
void ConvertReciprocal(OnnxNode& node) { EmitUnary(node, "reciprocal"); }
void ConvertErf(OnnxNode& node) { EmitUnary(node, "erf"); }
void ConvertSin(OnnxNode& node) { EmitUnary(node, "sin"); }
void ConvertCos(OnnxNode& node) { EmitUnary(node, "cos"); }
void ConvertTan(OnnxNode& node) { EmitUnary(node, "tan"); }
void ConvertAsin(OnnxNode& node) { EmitUnary(node, "arcsin"); }
void ConvertAcos(OnnxNode& node) { EmitUnary(node, "arccos"); }
void ConvertAtan(OnnxNode& node) { EmitUnary(node, "arctan"); }
void ConvertSinh(OnnxNode& node) { EmitUnary(node, "sinh"); }
void ConvertCosh(OnnxNode& node) { EmitUnary(node, "cosh"); }
void ConvertAsinh(OnnxNode& node) { EmitUnary(node, "arcsinh"); }
void ConvertAcosh(OnnxNode& node) { EmitUnary(node, "arccosh"); }
void ConvertAtanh(OnnxNode& node) { EmitUnary(node, "arctanh"); }
void ConvertFloor(OnnxNode& node) { EmitUnary(node, "floor"); }
void ConvertCeil(OnnxNode& node) { EmitUnary(node, "ceil"); }
void ConvertRound(OnnxNode& node) { EmitUnary(node, "round"); }

// Whether Pow's exponent is one value known at load that does not enlarge the data: the scalar
// power (x^2 in a norm, x^0.5) is then enough.
std::optional<double> ScalarExponent(OnnxNode& node) {
  const HostTensor* exponent = node.ConstantInput(1);
  if (exponent == nullptr) return std::nullopt;
  const std::vector<double> values = exponent->AsDoubles(node.where() + " exponent");
  if (values.empty()) return std::nullopt;
  for (double value : values) {
    if (value != values[0] && !(std::isnan(value) && std::isnan(values[0]))) return std::nullopt;
  }
  const Shape data = node.InputShape(0);
  const Shape& power = exponent->shape;
  if (power.ndim() > data.ndim()) return std::nullopt;
  for (int d = 1; d <= power.ndim(); ++d) {
    const int64_t extent = power[power.ndim() - d];
    if (extent != 1 && extent != data[data.ndim() - d]) return std::nullopt;
  }
  return values[0];
}

// Pow: one exponent known at load is the scalar power; any other (a tensor, computed while the
// model runs, of its own dtype) broadcast_power with the exponent cast to the base's dtype. ONNX's
// output has the base's dtype: an integer base is raised in float64 and truncated back (NumPy's
// power(a, b).astype(a.dtype), exact for the integers float64 holds).
void ConvertPow(OnnxNode& node) {
  if (const std::optional<double> exponent = ScalarExponent(node); exponent.has_value()) {
    if (IsFloatingPoint(node.InputDType(0))) {
      node.SetOutput(0,
                     node.Emit("_power_scalar", {{"scalar", Number(*exponent)}}, {node.Input(0)}));
      return;
    }
  }
  const DType base = node.InputDType(0);
  const DType computed = IsFloatingPoint(base) ? base : DType::kFloat64;
  const auto as_computed = [&](int input, const char* suffix) {
    return node.InputDType(input) == computed
               ? node.Input(input)
               : node.Emit("Cast", {{"dtype", DTypeName(computed)}}, {node.Input(input)}, suffix);
  };
  const NodeEntry power =
      node.Emit("broadcast_power", {}, {as_computed(0, "_base"), as_computed(1, "_exponent")},
                computed == base ? "" : "_power");
  node.SetOutput(
      0, computed == base ? power : node.Emit("Cast", {{"dtype", DTypeName(base)}}, {power}));
}

// Before opset 13 the input is viewed as 2-D (the dims before `axis`, the dims from it) and
// normalised along the second; the result has the input's shape. The default axis is 1.
void EmitSoftmaxOf2D(OnnxNode& node, const char* op) {
  const Shape in = node.InputShape(0);
  const int64_t rank = in.ndim();
  const int64_t axis = NormalizeAxis(node.attrs().Int("axis", 1), rank, node.where());
  const NodeEntry data = node.Input(0);
  if (axis == rank - 1) {
    node.SetOutput(0, node.Emit(op, {{"axis", std::to_string(axis)}}, {data}));
    return;
  }
  const int a = static_cast<int>(axis);
  const Shape flat{in.size(0, a), in.size(a, static_cast<int>(rank))};
  const NodeEntry as_2d = node.Emit("Reshape", {{"shape", Tuple(flat.to_vector())}}, {data}, "_2d");
  const NodeEntry normalised = node.Emit(op, {{"axis", "-1"}}, {as_2d});
  node.SetOutput(
      0, node.Emit("Reshape", {{"shape", Tuple(in.to_vector())}}, {normalised}, "_restore"));
}

// From opset 13 the op normalises along one axis (default -1).
void EmitSoftmaxAlongAxis(OnnxNode& node, const char* op) {
  const int64_t axis =
      NormalizeAxis(node.attrs().Int("axis", -1), node.InputShape(0).ndim(), node.where());
  node.SetOutput(0, node.Emit(op, {{"axis", std::to_string(axis)}}, {node.Input(0)}));
}

// CumSum (opsets 11, 14): mxlite's cumsum, the axis from input 1 (a scalar known at load).
void ConvertCumSum(OnnxNode& node) {
  const std::vector<double> axis_values =
      node.RequireConstant(1, "axis").AsDoubles(node.where() + " axis");
  MX_CHECK(axis_values.size() == 1)
      << node.where() << ": axis has " << axis_values.size() << " values; expected one (a scalar)";
  const int64_t axis =
      NormalizeAxis(static_cast<int64_t>(axis_values[0]), node.InputShape(0).ndim(), node.where());
  node.SetOutput(0, node.Emit("cumsum",
                              {{"axis", std::to_string(axis)},
                               {"exclusive", node.attrs().Int("exclusive", 0) ? "true" : "false"},
                               {"reverse", node.attrs().Int("reverse", 0) ? "true" : "false"}},
                              {node.Input(0)}));
}

void ConvertSoftmax2D(OnnxNode& node) { EmitSoftmaxOf2D(node, "softmax"); }
void ConvertLogSoftmax2D(OnnxNode& node) { EmitSoftmaxOf2D(node, "log_softmax"); }
void ConvertSoftmax(OnnxNode& node) { EmitSoftmaxAlongAxis(node, "softmax"); }
void ConvertLogSoftmax(OnnxNode& node) { EmitSoftmaxAlongAxis(node, "log_softmax"); }

void ConvertGemm(OnnxNode& node) {
  std::vector<NodeEntry> inputs = {node.Input(0), node.Input(1)};
  const bool has_c = node.has_input(2);
  if (has_c) inputs.push_back(node.Input(2));
  const NodeAttributes& a = node.attrs();
  node.SetOutput(0, node.Emit("Gemm",
                              {{"alpha", Number(a.Float("alpha", 1))},
                               {"beta", Number(a.Float("beta", 1))},
                               {"transA", a.Int("transA", 0) ? "true" : "false"},
                               {"transB", a.Int("transB", 0) ? "true" : "false"},
                               {"no_bias", has_c ? "false" : "true"}},
                              inputs));
}

void ConvertMatMul(OnnxNode& node) { EmitBinary(node, "MatMul"); }

}  // namespace

// Add, Sub, Mul, Div and Pow before opset 7 broadcast only when told to (the broadcast and axis
// attributes, a rule of their own); they are imported from 7, where NumPy broadcasting begins.
MXLITE_REGISTER_ONNX_CONVERTER(Add, 7, kMaxOnnxOpset, ConvertAdd);
MXLITE_REGISTER_ONNX_CONVERTER(Sub, 7, kMaxOnnxOpset, ConvertSub);
MXLITE_REGISTER_ONNX_CONVERTER(Mul, 7, kMaxOnnxOpset, ConvertMul);
MXLITE_REGISTER_ONNX_CONVERTER(Div, 7, kMaxOnnxOpset, ConvertDiv);
MXLITE_REGISTER_ONNX_CONVERTER(Max, 1, kMaxOnnxOpset, ConvertMax);
MXLITE_REGISTER_ONNX_CONVERTER(Min, 1, kMaxOnnxOpset, ConvertMin);
MXLITE_REGISTER_ONNX_CONVERTER(Sum, 1, kMaxOnnxOpset, ConvertSum);
MXLITE_REGISTER_ONNX_CONVERTER(Mean, 1, kMaxOnnxOpset, ConvertMean);
MXLITE_REGISTER_ONNX_CONVERTER(Sqrt, 1, kMaxOnnxOpset, ConvertSqrt);
MXLITE_REGISTER_ONNX_CONVERTER(Exp, 1, kMaxOnnxOpset, ConvertExp);
MXLITE_REGISTER_ONNX_CONVERTER(Log, 1, kMaxOnnxOpset, ConvertLog);
MXLITE_REGISTER_ONNX_CONVERTER(Abs, 1, kMaxOnnxOpset, ConvertAbs);
MXLITE_REGISTER_ONNX_CONVERTER(Neg, 1, kMaxOnnxOpset, ConvertNeg);
MXLITE_REGISTER_ONNX_CONVERTER(Reciprocal, 1, kMaxOnnxOpset, ConvertReciprocal);
MXLITE_REGISTER_ONNX_CONVERTER(Erf, 9, kMaxOnnxOpset, ConvertErf);
MXLITE_REGISTER_ONNX_CONVERTER(Sin, 7, kMaxOnnxOpset, ConvertSin);
MXLITE_REGISTER_ONNX_CONVERTER(Cos, 7, kMaxOnnxOpset, ConvertCos);
MXLITE_REGISTER_ONNX_CONVERTER(Tan, 7, kMaxOnnxOpset, ConvertTan);
MXLITE_REGISTER_ONNX_CONVERTER(Asin, 7, kMaxOnnxOpset, ConvertAsin);
MXLITE_REGISTER_ONNX_CONVERTER(Acos, 7, kMaxOnnxOpset, ConvertAcos);
MXLITE_REGISTER_ONNX_CONVERTER(Atan, 7, kMaxOnnxOpset, ConvertAtan);
MXLITE_REGISTER_ONNX_CONVERTER(Sinh, 9, kMaxOnnxOpset, ConvertSinh);
MXLITE_REGISTER_ONNX_CONVERTER(Cosh, 9, kMaxOnnxOpset, ConvertCosh);
MXLITE_REGISTER_ONNX_CONVERTER(Asinh, 9, kMaxOnnxOpset, ConvertAsinh);
MXLITE_REGISTER_ONNX_CONVERTER(Acosh, 9, kMaxOnnxOpset, ConvertAcosh);
MXLITE_REGISTER_ONNX_CONVERTER(Atanh, 9, kMaxOnnxOpset, ConvertAtanh);
MXLITE_REGISTER_ONNX_CONVERTER(Floor, 1, kMaxOnnxOpset, ConvertFloor);
MXLITE_REGISTER_ONNX_CONVERTER(Ceil, 1, kMaxOnnxOpset, ConvertCeil);
MXLITE_REGISTER_ONNX_CONVERTER(Round, 11, kMaxOnnxOpset, ConvertRound);
MXLITE_REGISTER_ONNX_CONVERTER(Pow, 7, kMaxOnnxOpset, ConvertPow);
MXLITE_REGISTER_ONNX_CONVERTER(Softmax, 1, 12, ConvertSoftmax2D);
MXLITE_REGISTER_ONNX_CONVERTER(Softmax, 13, kMaxOnnxOpset, ConvertSoftmax);
MXLITE_REGISTER_ONNX_CONVERTER(LogSoftmax, 1, 12, ConvertLogSoftmax2D);
MXLITE_REGISTER_ONNX_CONVERTER(LogSoftmax, 13, kMaxOnnxOpset, ConvertLogSoftmax);
MXLITE_REGISTER_ONNX_CONVERTER(CumSum, 11, kMaxOnnxOpset, ConvertCumSum);
MXLITE_REGISTER_ONNX_CONVERTER(Gemm, 1, kMaxOnnxOpset, ConvertGemm);
MXLITE_REGISTER_ONNX_CONVERTER(MatMul, 1, kMaxOnnxOpset, ConvertMatMul);

}  // namespace mxlite
