// ONNX's tensor construction and selection around shape arithmetic, the window functions (Hann,
// Hamming, Blackman: constants at load), and TopK (mxlite's topk):
// ConstantOfShape, EyeLike (of a statically shaped input: known at load), OneHot (of run-time
// indices: comparisons with the positions along the new axis), Where (of run-time data: mxlite's
// where), Expand, Mod, Range and ScatterND of values known at load, computed then (a transformer's
// class token is Expand(token, Where(Equal(shape, -1), 1, shape)) with the shape known once the
// input's is; Swin's window padding and attention masks are Mod, Range and ScatterND of shapes).
// The comparisons (Equal, Greater, GreaterOrEqual, Less, LessOrEqual) are folded the same way, or
// run as mxlite's broadcast comparisons on computed data; so are IsNaN (x != x) and IsInf (x or
// |x| equal to an infinity). Booleans are held as uint8 0 / 1; Not,
// And, Or and Xor run as float32 arithmetic on them. A node that would have to run on computed data
// and has no mxlite op is an error naming it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "core/error.h"
#include "ops/broadcast.h"
#include "scheduler/onnx/onnx_converter.h"

namespace mxlite {
namespace {

// `tensor` broadcast to `shape`, element bytes copied.
HostTensor BroadcastTo(const HostTensor& tensor, const Shape& shape) {
  const size_t element = DTypeSize(tensor.dtype);
  HostTensor out{tensor.dtype, shape, std::vector<uint8_t>(static_cast<size_t>(shape.size()) * element)};
  for (int64_t i = 0; i < shape.size(); ++i) {
    const int64_t from = BroadcastOffset(tensor.shape, shape, i);
    std::copy_n(tensor.bytes.begin() + static_cast<ptrdiff_t>(from * element), element,
                out.bytes.begin() + static_cast<ptrdiff_t>(i * element));
  }
  return out;
}

const HostTensor& KnownAtLoad(OnnxNode& node, int input, const char* what) {
  const HostTensor* tensor = node.ConstantInput(input);
  MX_CHECK(tensor != nullptr) << node.where() << ": " << what << " ('" << node.input_name(input)
                              << "') is computed while the model runs; mxlite imports "
                              << node.op_type() << " of values known at load";
  return *tensor;
}

Shape BroadcastOrThrow(OnnxNode& node, const Shape& a, const Shape& b) {
  const std::optional<Shape> out = BroadcastShapes(a, b);
  MX_CHECK(out.has_value()) << node.where() << ": shapes " << a << " and " << b
                            << " do not broadcast";
  return CheckedOnnxShape(out->to_vector(), node.where() + " output");
}

void ConvertConstantOfShape(OnnxNode& node) {
  const HostTensor& shape_tensor = KnownAtLoad(node, 0, "the shape");
  const Shape shape = CheckedGeneratedShape(
      CheckedOnnxShape(shape_tensor.ToInt64s(node.where() + " shape"), node.where() + " output"),
      node.where());
  HostTensor value = HostTensor::From(std::vector<float>{0.0f}, Shape{1});
  if (const onnx::TensorProto* given = node.attrs().Tensor("value")) {
    value = TensorFromProto(*given, node.where() + " value", node.model_dir());
    MX_CHECK(value.shape.size() == 1)
        << node.where() << ": value holds " << value.shape.size() << " elements, not one";
  }
  node.SetConstantOutput(BroadcastTo(Reshaped(value, Shape()), shape));
}

// EyeLike: ones on the k-th diagonal of the input's (static, 2-D) shape, in `dtype` (an ONNX type
// number; absent: the input's).
void ConvertEyeLike(OnnxNode& node) {
  const Shape shape = node.InputShape(0);
  MX_CHECK(shape.ndim() == 2) << node.where() << ": the input must be 2-D, not " << shape;
  CheckedGeneratedShape(shape, node.where());
  const DType dtype = node.attrs().Has("dtype")
                          ? DTypeFromOnnx(static_cast<int32_t>(node.attrs().Int("dtype", 0)),
                                          node.where() + " attribute 'dtype'")
                          : node.InputDType(0);
  const int64_t k = node.attrs().Int("k", 0);
  std::vector<int64_t> values(static_cast<size_t>(shape.size()), 0);
  for (int64_t row = 0; row < shape[0]; ++row) {
    const int64_t column = row + k;
    if (column >= 0 && column < shape[1]) values[row * shape[1] + column] = 1;
  }
  node.SetConstantOutput(HostTensorOf(dtype, shape, values, node.where()));
}

// HannWindow, HammingWindow and BlackmanWindow (opset 17): the window of `size` values (known at
// load) as a constant: with N the size (periodic, the default) or size - 1 (symmetric), value n is
// sin(pi n / N)^2 (Hann), 25/46 - 21/46 cos(2 pi n / N) (Hamming) or 0.42 - 0.5 cos(2 pi n / N) +
// 0.08 cos(4 pi n / N) (Blackman), in output_datatype (default FLOAT).
enum class Window { kHann, kHamming, kBlackman };

void ConvertWindow(OnnxNode& node, Window window) {
  const std::vector<int64_t> size =
      node.RequireConstant(0, "size").ToInt64s(node.where() + " size");
  MX_CHECK(size.size() == 1 && size[0] > 0)
      << node.where() << ": size must be one positive value (mxlite has no empty tensors)";
  const int64_t n = size[0];
  CheckedGeneratedShape(Shape{n}, node.where());
  const double span =
      node.attrs().Int("periodic", 1) != 0 ? static_cast<double>(n) : static_cast<double>(n - 1);
  const DType dtype = DTypeFromOnnx(static_cast<int32_t>(node.attrs().Int("output_datatype", 1)),
                                    node.where() + " attribute 'output_datatype'");
  const double pi = std::acos(-1.0);
  std::vector<double> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double x = span == 0 ? 0.0 : static_cast<double>(i) / span;  // a symmetric window of 1
    switch (window) {
      case Window::kHann:
        values[i] = std::pow(std::sin(pi * x), 2);
        break;
      case Window::kHamming:
        values[i] = 25.0 / 46.0 - (21.0 / 46.0) * std::cos(2 * pi * x);
        break;
      case Window::kBlackman:
        values[i] = 0.42 - 0.5 * std::cos(2 * pi * x) + 0.08 * std::cos(4 * pi * x);
        break;
    }
  }
  node.SetConstantOutput(HostTensorOf(dtype, Shape{n}, values, node.where()));
}

void ConvertHannWindow(OnnxNode& node) { ConvertWindow(node, Window::kHann); }
void ConvertHammingWindow(OnnxNode& node) { ConvertWindow(node, Window::kHamming); }
void ConvertBlackmanWindow(OnnxNode& node) { ConvertWindow(node, Window::kBlackman); }

// OneHot(indices, depth, values; axis): values[1] where the position along the new axis `axis`
// (default -1, the last) equals the index, values[0] elsewhere, in values' dtype. From opset 11 a
// negative index counts from the end (index + depth); before, like any index outside [0, depth),
// it matches no position. depth and values must be known at load. The indices are truncated to
// integers (ONNX casts them to int64), then go to float32 (exact up to 2^24) and are compared with
// the positions; floating-point values are picked by where, integer ones computed as off + hit *
// (on - off) and cast.
void ConvertOneHot(OnnxNode& node, bool negative_from_end) {
  const std::vector<double> depth_values =
      node.RequireConstant(1, "depth").AsDoubles(node.where() + " depth");
  MX_CHECK(depth_values.size() == 1 && depth_values[0] >= 1 &&
           depth_values[0] <= static_cast<double>(std::numeric_limits<int32_t>::max()))
      << node.where() << ": depth must be one value from 1 to 2^31 - 1";
  const auto depth = static_cast<int64_t>(depth_values[0]);
  const HostTensor& values_tensor = node.RequireConstant(2, "values");
  const std::vector<double> values = values_tensor.AsDoubles(node.where() + " values");
  MX_CHECK(values.size() == 2) << node.where() << ": values must hold two elements (off, on), not "
                               << values.size();
  const DType dtype = values_tensor.dtype;
  const Shape in = node.InputShape(0);
  const int rank = in.ndim() + 1;
  const int axis =
      static_cast<int>(NormalizeAxis(node.attrs().Int("axis", -1), rank, node.where()));
  std::vector<int64_t> dims = in.to_vector();
  dims.insert(dims.begin() + axis, depth);
  CheckedOnnxShape(dims, node.where() + " output");  // the output's size, before making it
  const DType f32 = DType::kFloat32;
  NodeEntry index = node.Input(0);
  if (IsFloatingPoint(node.InputDType(0))) {
    index = node.Emit("Cast", {{"dtype", "int64"}}, {index}, "_truncated");
  }
  index = node.Emit("Cast", {{"dtype", "float32"}}, {index}, "_index");
  if (negative_from_end) {
    const NodeEntry negative =
        node.Emit("broadcast_lesser", {}, {index, node.NewScalar("_zero", 0.0, f32)}, "_negative");
    const NodeEntry from_end =
        node.Emit("broadcast_add", {},
                  {index, node.NewScalar("_depth", static_cast<double>(depth), f32)}, "_from_end");
    index = node.Emit("where", {}, {negative, from_end, index}, "_wrapped");
  }
  dims[static_cast<size_t>(axis)] = 1;
  index = node.Emit("Reshape", {{"shape", Tuple(dims)}}, {index}, "_expanded");
  const NodeEntry position = node.NewPositions("_positions", rank, axis, depth, f32);
  NodeEntry hit = node.Emit("broadcast_equal", {}, {index, position}, "_hit");
  if (IsFloatingPoint(dtype)) {
    if (dtype != f32) hit = node.Emit("Cast", {{"dtype", DTypeName(dtype)}}, {hit}, "_hit_cast");
    node.SetOutput(0, node.Emit("where", {},
                                {hit, node.NewScalar("_on", values[1], dtype),
                                 node.NewScalar("_off", values[0], dtype)}));
    return;
  }
  const NodeEntry scaled = node.Emit(
      "broadcast_mul", {}, {hit, node.NewScalar("_span", values[1] - values[0], f32)}, "_scaled");
  const NodeEntry shifted =
      node.Emit("broadcast_add", {}, {scaled, node.NewScalar("_off", values[0], f32)}, "_value");
  node.SetOutput(0, node.Emit("Cast", {{"dtype", DTypeName(dtype)}}, {shifted}));
}

void ConvertOneHotInRange(OnnxNode& node) { ConvertOneHot(node, false); }
void ConvertOneHotFromEnd(OnnxNode& node) { ConvertOneHot(node, true); }

// Equal, Greater, GreaterOrEqual, Less, LessOrEqual: of values known at load, computed then (the
// shape arithmetic around a class token); of computed values, mxlite's broadcast comparison
// (ops/comparison.cc: 1 / 0 in the operands' dtype) and a Cast to uint8, ONNX's bool.
template <typename Holds>
void EmitComparison(OnnxNode& node, const char* op, Holds&& holds) {
  const HostTensor* a = node.ConstantInput(0);
  const HostTensor* b = node.ConstantInput(1);
  if (a == nullptr || b == nullptr) {
    const NodeEntry ones = node.Emit(op, {}, {node.Input(0), node.Input(1)}, "_compare");
    node.SetOutput(0, node.Emit("Cast", {{"dtype", "uint8"}}, {ones}));
    return;
  }
  const Shape out = BroadcastOrThrow(node, a->shape, b->shape);
  const std::vector<double> x = a->AsDoubles(node.where() + " A");
  const std::vector<double> y = b->AsDoubles(node.where() + " B");
  std::vector<int64_t> result(static_cast<size_t>(out.size()));
  for (int64_t i = 0; i < out.size(); ++i) {
    result[i] = holds(x[BroadcastOffset(a->shape, out, i)], y[BroadcastOffset(b->shape, out, i)]);
  }
  node.SetConstantOutput(HostTensorOf(DType::kUInt8, out, result, node.where()));
}

void ConvertEqual(OnnxNode& node) {
  EmitComparison(node, "broadcast_equal", [](double x, double y) { return x == y; });
}
void ConvertGreater(OnnxNode& node) {
  EmitComparison(node, "broadcast_greater", [](double x, double y) { return x > y; });
}
void ConvertGreaterOrEqual(OnnxNode& node) {
  EmitComparison(node, "broadcast_greater_equal", [](double x, double y) { return x >= y; });
}
void ConvertLess(OnnxNode& node) {
  EmitComparison(node, "broadcast_lesser", [](double x, double y) { return x < y; });
}
void ConvertLessOrEqual(OnnxNode& node) {
  EmitComparison(node, "broadcast_lesser_equal", [](double x, double y) { return x <= y; });
}

// IsNaN: x != x holds exactly for NaN (IEEE comparisons), on data known at load or computed.
void ConvertIsNaN(OnnxNode& node) {
  const HostTensor* x = node.ConstantInput(0);
  if (x == nullptr) {
    const NodeEntry ones =
        node.Emit("broadcast_not_equal", {}, {node.Input(0), node.Input(0)}, "_compare");
    node.SetOutput(0, node.Emit("Cast", {{"dtype", "uint8"}}, {ones}));
    return;
  }
  const std::vector<double> values = x->AsDoubles(node.where() + " X");
  std::vector<int64_t> result(values.size());
  for (size_t i = 0; i < values.size(); ++i) result[i] = std::isnan(values[i]) ? 1 : 0;
  node.SetConstantOutput(HostTensorOf(DType::kUInt8, x->shape, result, node.where()));
}

// IsInf(detect_positive, detect_negative): x == +inf, x == -inf, or |x| == +inf for both.
void ConvertIsInf(OnnxNode& node) {
  const bool positive = node.attrs().Int("detect_positive", 1) != 0;
  const bool negative = node.attrs().Int("detect_negative", 1) != 0;
  const double inf = std::numeric_limits<double>::infinity();
  const HostTensor* x = node.ConstantInput(0);
  if (x != nullptr) {
    const std::vector<double> values = x->AsDoubles(node.where() + " X");
    std::vector<int64_t> result(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      result[i] = (positive && values[i] == inf) || (negative && values[i] == -inf) ? 1 : 0;
    }
    node.SetConstantOutput(HostTensorOf(DType::kUInt8, x->shape, result, node.where()));
    return;
  }
  if (!positive && !negative) {  // nothing is detected: zeros of x's shape
    const NodeEntry zeros = node.Emit("broadcast_not_equal", {}, {node.Input(0), node.Input(0)});
    const NodeEntry none = node.Emit("broadcast_mul", {}, {zeros, node.NewScalar("_zero", 0.0)});
    node.SetOutput(0, node.Emit("Cast", {{"dtype", "uint8"}}, {none}));
    return;
  }
  NodeEntry value = node.Input(0);
  if (positive && negative) value = node.Emit("abs", {}, {value}, "_abs");
  const NodeEntry infinity = node.NewScalar("_infinity", negative && !positive ? -inf : inf);
  const NodeEntry ones = node.Emit("broadcast_equal", {}, {value, infinity}, "_compare");
  node.SetOutput(0, node.Emit("Cast", {{"dtype", "uint8"}}, {ones}));
}

// Where of run-time data: mxlite's where, the boolean condition cast to the data's dtype.
void EmitWhere(OnnxNode& node) {
  const DType dtype = node.InputDType(1);
  MX_CHECK(dtype == node.InputDType(2))
      << node.where() << ": X and Y have dtypes " << DTypeName(dtype) << " and "
      << DTypeName(node.InputDType(2));
  MX_CHECK(IsFloatingPoint(dtype))
      << node.where() << ": Where of " << DTypeName(dtype)
      << " data computed while the model runs is not supported (floating-point data only)";
  NodeEntry condition = node.Input(0);
  if (node.InputDType(0) != dtype) {
    condition = node.Emit("Cast", {{"dtype", DTypeName(dtype)}}, {condition}, "_condition");
  }
  node.SetOutput(0, node.Emit("where", {}, {condition, node.Input(1), node.Input(2)}));
}

void ConvertWhere(OnnxNode& node) {
  if (!node.ConstantInput(0) || !node.ConstantInput(1) || !node.ConstantInput(2)) {
    return EmitWhere(node);
  }
  const HostTensor& condition = KnownAtLoad(node, 0, "the condition");
  const HostTensor& x = KnownAtLoad(node, 1, "X");
  const HostTensor& y = KnownAtLoad(node, 2, "Y");
  MX_CHECK(x.dtype == y.dtype) << node.where() << ": X and Y have dtypes " << DTypeName(x.dtype)
                               << " and " << DTypeName(y.dtype);
  const Shape out =
      BroadcastOrThrow(node, BroadcastOrThrow(node, condition.shape, x.shape), y.shape);
  const std::vector<double> pick = condition.AsDoubles(node.where() + " condition");
  const HostTensor xs = BroadcastTo(x, out), ys = BroadcastTo(y, out);
  const size_t element = DTypeSize(x.dtype);
  HostTensor result{x.dtype, out, std::vector<uint8_t>(static_cast<size_t>(out.size()) * element)};
  for (int64_t i = 0; i < out.size(); ++i) {
    const HostTensor& from = pick[BroadcastOffset(condition.shape, out, i)] != 0 ? xs : ys;
    std::copy_n(from.bytes.begin() + static_cast<ptrdiff_t>(i * element), element,
                result.bytes.begin() + static_cast<ptrdiff_t>(i * element));
  }
  node.SetConstantOutput(std::move(result));
}

// Expand of run-time data: the input reshaped to the output's rank (leading 1s), then each axis
// of extent 1 that grows copied by a Concat of that many of it (copies, exact for every dtype; the
// gradient sums the copies).
void EmitExpand(OnnxNode& node, const Shape& out) {
  const Shape in = node.InputShape(0);
  NodeEntry expanded = node.Input(0);
  if (in.ndim() < out.ndim()) {
    std::vector<int64_t> dims(static_cast<size_t>(out.ndim() - in.ndim()), 1);
    for (int axis = 0; axis < in.ndim(); ++axis) dims.push_back(in[axis]);
    expanded = node.Emit("Reshape", {{"shape", Tuple(dims)}}, {expanded}, "_rank");
  }
  const int offset = out.ndim() - in.ndim();
  for (int axis = 0; axis < out.ndim(); ++axis) {
    const int64_t extent = axis < offset ? 1 : in[axis - offset];
    if (extent == out[axis]) continue;
    std::string suffix = "_axis";  // appended: GCC 12 warns falsely on "_" + std::string
    suffix += std::to_string(axis);
    expanded = node.Emit("Concat",
                         {{"dim", std::to_string(axis)}, {"num_args", std::to_string(out[axis])}},
                         std::vector<NodeEntry>(static_cast<size_t>(out[axis]), expanded), suffix);
  }
  node.SetOutput(0, expanded);
}

// Expand broadcasts both ways: the output is the broadcast of the input's shape and `shape`,
// which must be known at load.
void ConvertExpand(OnnxNode& node) {
  const HostTensor& shape_tensor = KnownAtLoad(node, 1, "the shape");
  const Shape target = CheckedOnnxShape(shape_tensor.ToInt64s(node.where() + " shape"),
                                        node.where() + " shape");
  const HostTensor* data = node.ConstantInput(0);
  if (data == nullptr) return EmitExpand(node, BroadcastOrThrow(node, node.InputShape(0), target));
  node.SetConstantOutput(BroadcastTo(*data, BroadcastOrThrow(node, data->shape, target)));
}

// Booleans (uint8 0 / 1) as float32 0 / 1 for the arithmetic below, and back.
NodeEntry AsFloat(OnnxNode& node, int input) {
  std::string suffix = "_float";
  suffix += std::to_string(input);
  return node.Emit("Cast", {{"dtype", "float32"}}, {node.Input(input)}, suffix);
}
void SetBoolOutput(OnnxNode& node, NodeEntry ones) {
  node.SetOutput(0, node.Emit("Cast", {{"dtype", "uint8"}}, {ones}));
}

// Not, And, Or and Xor of booleans, exact on 0 / 1 as float32 arithmetic: x == 0, a * b,
// max(a, b), a != b. Of values known at load they fold like any node (onnx_fold.h).
void ConvertNot(OnnxNode& node) {
  const NodeEntry zero =
      node.NewConstant("_zero", HostTensor::From(std::vector<float>{0}, Shape{}));
  SetBoolOutput(node, node.Emit("broadcast_equal", {}, {AsFloat(node, 0), zero}, "_not"));
}

template <const char* kOp>
void ConvertLogical(OnnxNode& node) {
  SetBoolOutput(node, node.Emit(kOp, {}, {AsFloat(node, 0), AsFloat(node, 1)}, "_logic"));
}
constexpr char kAnd[] = "broadcast_mul";
constexpr char kOr[] = "broadcast_maximum";
constexpr char kXor[] = "broadcast_not_equal";

// Integers: fmod=0 takes the divisor's sign (Python's %), fmod=1 the dividend's (C's fmod);
// floating values need fmod=1, as ONNX says.
void ConvertMod(OnnxNode& node) {
  const HostTensor& a = KnownAtLoad(node, 0, "A");
  const HostTensor& b = KnownAtLoad(node, 1, "B");
  const bool fmod = node.attrs().Int("fmod", 0) != 0;
  const Shape out = BroadcastOrThrow(node, a.shape, b.shape);
  if (IsFloatingPoint(a.dtype)) {
    MX_CHECK(fmod) << node.where() << ": floating-point Mod needs fmod=1";
    const std::vector<double> x = a.AsDoubles(node.where()), y = b.AsDoubles(node.where());
    std::vector<double> r(static_cast<size_t>(out.size()));
    for (int64_t i = 0; i < out.size(); ++i) {
      r[i] = std::fmod(x[BroadcastOffset(a.shape, out, i)], y[BroadcastOffset(b.shape, out, i)]);
    }
    node.SetConstantOutput(HostTensorOf(a.dtype, out, r, node.where()));
    return;
  }
  const std::vector<int64_t> x = a.ToInt64s(node.where()), y = b.ToInt64s(node.where());
  std::vector<int64_t> r(static_cast<size_t>(out.size()));
  for (int64_t i = 0; i < out.size(); ++i) {
    const int64_t dividend = x[BroadcastOffset(a.shape, out, i)];
    const int64_t divisor = y[BroadcastOffset(b.shape, out, i)];
    MX_CHECK(divisor != 0) << node.where() << ": integer Mod by 0";
    int64_t rest = dividend % divisor;
    if (!fmod && rest != 0 && ((rest < 0) != (divisor < 0))) rest += divisor;
    r[i] = rest;
  }
  node.SetConstantOutput(HostTensorOf(a.dtype, out, r, node.where()));
}

// start, start + delta, ... up to (not including) limit: max(ceil((limit - start) / delta), 0)
// values.
void ConvertRange(OnnxNode& node) {
  const HostTensor& start = KnownAtLoad(node, 0, "start");
  const double first = start.AsDoubles(node.where())[0];
  const double limit = KnownAtLoad(node, 1, "limit").AsDoubles(node.where())[0];
  const double delta = KnownAtLoad(node, 2, "delta").AsDoubles(node.where())[0];
  MX_CHECK(delta != 0) << node.where() << ": delta is 0";
  const double steps = std::ceil((limit - first) / delta);
  MX_CHECK(std::isfinite(steps) && steps <= static_cast<double>(kMaxGeneratedConstantElements))
      << node.where() << ": start " << first << ", limit " << limit << " and delta " << delta
      << " make " << steps << " values, more than mxlite computes at load ("
      << kMaxGeneratedConstantElements << ")";
  const int64_t count = std::max<int64_t>(static_cast<int64_t>(steps), 0);
  const Shape shape = CheckedOnnxShape({count}, node.where() + " output");
  if (IsFloatingPoint(start.dtype)) {
    std::vector<double> values(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) values[i] = first + static_cast<double>(i) * delta;
    node.SetConstantOutput(HostTensorOf(start.dtype, shape, values, node.where()));
  } else {
    std::vector<int64_t> values(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      values[i] = static_cast<int64_t>(first) + i * static_cast<int64_t>(delta);
    }
    node.SetConstantOutput(HostTensorOf(start.dtype, shape, values, node.where()));
  }
}

double ScatterUpdate(const std::string& reduction, double target, double update) {
  if (reduction == "add") return target + update;
  if (reduction == "mul") return target * update;
  if (reduction == "max") return std::max(target, update);
  if (reduction == "min") return std::min(target, update);
  return update;
}

// A copy of data with the slices that indices (..., k) name replaced by updates (reduction
// none; from opset 16 also add and mul, from 18 max and min).
void ConvertScatterND(OnnxNode& node) {
  const HostTensor& data = KnownAtLoad(node, 0, "the data");
  const HostTensor& indices = KnownAtLoad(node, 1, "the indices");
  const HostTensor& updates = KnownAtLoad(node, 2, "the updates");
  const std::string reduction = node.attrs().String("reduction", "none");
  MX_CHECK(reduction == "none" || reduction == "add" || reduction == "mul" ||
           reduction == "max" || reduction == "min")
      << node.where() << ": unknown reduction '" << reduction << "'";
  MX_CHECK(updates.dtype == data.dtype)
      << node.where() << ": updates have dtype " << DTypeName(updates.dtype) << ", data "
      << DTypeName(data.dtype);
  const int ir = indices.shape.ndim();
  MX_CHECK(ir >= 1) << node.where() << ": indices must have at least one axis";
  const int64_t k = indices.shape[ir - 1];
  MX_CHECK(k >= 1 && k <= data.shape.ndim())
      << node.where() << ": index tuples of " << k << " for data of rank " << data.shape.ndim();
  const int64_t slice = data.shape.size(static_cast<int>(k), data.shape.ndim());
  const int64_t tuples = indices.shape.size(0, ir - 1);
  MX_CHECK(updates.shape.size() == tuples * slice)
      << node.where() << ": updates of shape " << updates.shape << " for " << tuples
      << " slices of " << slice << " elements";
  const std::vector<int64_t> at = indices.ToInt64s(node.where() + " indices");
  std::vector<double> out = data.AsDoubles(node.where());
  const std::vector<double> values = updates.AsDoubles(node.where());
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = 0;
    for (int64_t d = 0; d < k; ++d) {
      const int64_t extent = data.shape[static_cast<int>(d)];
      int64_t index = at[t * k + d];
      MX_CHECK(index >= -extent && index < extent)
          << node.where() << ": index " << index << " is out of range for extent " << extent;
      if (index < 0) index += extent;
      offset = offset * extent + index;
    }
    for (int64_t e = 0; e < slice; ++e) {
      double& target = out[offset * slice + e];
      const double update = values[t * slice + e];
      target = ScatterUpdate(reduction, target, update);
    }
  }
  node.SetConstantOutput(HostTensorOf(data.dtype, data.shape, out, node.where()));
}

// TopK: mxlite's topk returning both values and int64 positions. k is an attribute (opsets 1-9)
// or an input known at load (10 on); largest and sorted from 11 (mxlite always sorts, which an
// unsorted TopK allows).
void EmitTopK(OnnxNode& node, int64_t k, bool largest) {
  const int rank = node.InputShape(0).ndim();
  const int64_t axis = NormalizeAxis(node.attrs().Int("axis", -1), rank, node.where());
  MX_CHECK(k >= 0 && k <= node.InputShape(0)[static_cast<int>(axis)])
      << node.where() << ": K " << k << " is outside [0, "
      << node.InputShape(0)[static_cast<int>(axis)] << "] for axis " << axis << " of the data "
      << node.InputShape(0);
  MX_CHECK(k > 0) << node.where() << ": K is 0 (mxlite has no empty tensors)";
  const NodeEntry both = node.Emit("topk",
                                   {{"axis", std::to_string(axis)},
                                    {"k", std::to_string(k)},
                                    {"ret_typ", "both"},
                                    {"is_ascend", largest ? "false" : "true"},
                                    {"dtype", "int64"}},
                                   {node.Input(0)});
  node.SetOutput(0, both);
  node.SetOutput(1, NodeEntry{both.node, 1});
}

void ConvertTopKAttribute(OnnxNode& node) { EmitTopK(node, node.attrs().Int("k", 1), true); }

void ConvertTopK(OnnxNode& node) {
  const std::vector<int64_t> k = node.RequireConstant(1, "K").ToInt64s(node.where() + " K");
  MX_CHECK(k.size() == 1) << node.where() << ": K holds " << k.size() << " values; it needs one";
  const int64_t largest = node.attrs().Int("largest", 1);
  MX_CHECK(largest == 0 || largest == 1)
      << node.where() << ": largest is " << largest << "; it must be 0 or 1";
  EmitTopK(node, k[0], largest == 1);
}

}  // namespace

MXLITE_REGISTER_ONNX_CONVERTER(ConstantOfShape, 9, kMaxOnnxOpset, ConvertConstantOfShape);
MXLITE_REGISTER_ONNX_CONVERTER(EyeLike, 9, kMaxOnnxOpset, ConvertEyeLike);
MXLITE_REGISTER_ONNX_CONVERTER(OneHot, 9, 10, ConvertOneHotInRange);
MXLITE_REGISTER_ONNX_CONVERTER(OneHot, 11, kMaxOnnxOpset, ConvertOneHotFromEnd);
// Before opset 7 the comparisons broadcast only when told to (a legacy broadcast attribute).
MXLITE_REGISTER_ONNX_CONVERTER(Equal, 7, kMaxOnnxOpset, ConvertEqual);
MXLITE_REGISTER_ONNX_CONVERTER(IsNaN, 9, kMaxOnnxOpset, ConvertIsNaN);
MXLITE_REGISTER_ONNX_CONVERTER(IsInf, 10, kMaxOnnxOpset, ConvertIsInf);
MXLITE_REGISTER_ONNX_CONVERTER(Greater, 7, kMaxOnnxOpset, ConvertGreater);
MXLITE_REGISTER_ONNX_CONVERTER(Less, 7, kMaxOnnxOpset, ConvertLess);
MXLITE_REGISTER_ONNX_CONVERTER(GreaterOrEqual, 12, kMaxOnnxOpset, ConvertGreaterOrEqual);
MXLITE_REGISTER_ONNX_CONVERTER(LessOrEqual, 12, kMaxOnnxOpset, ConvertLessOrEqual);
MXLITE_REGISTER_ONNX_CONVERTER(Where, 9, kMaxOnnxOpset, ConvertWhere);
MXLITE_REGISTER_ONNX_CONVERTER(Expand, 8, kMaxOnnxOpset, ConvertExpand);
MXLITE_REGISTER_ONNX_CONVERTER(Not, 1, kMaxOnnxOpset, ConvertNot);
// From 7: the legacy broadcast attribute of opset 1 is gone.
MXLITE_REGISTER_ONNX_CONVERTER(And, 7, kMaxOnnxOpset, ConvertLogical<kAnd>);
MXLITE_REGISTER_ONNX_CONVERTER(Or, 7, kMaxOnnxOpset, ConvertLogical<kOr>);
MXLITE_REGISTER_ONNX_CONVERTER(Xor, 7, kMaxOnnxOpset, ConvertLogical<kXor>);
MXLITE_REGISTER_ONNX_CONVERTER(Mod, 10, kMaxOnnxOpset, ConvertMod);
MXLITE_REGISTER_ONNX_CONVERTER(HannWindow, 17, kMaxOnnxOpset, ConvertHannWindow);
MXLITE_REGISTER_ONNX_CONVERTER(HammingWindow, 17, kMaxOnnxOpset, ConvertHammingWindow);
MXLITE_REGISTER_ONNX_CONVERTER(BlackmanWindow, 17, kMaxOnnxOpset, ConvertBlackmanWindow);
MXLITE_REGISTER_ONNX_CONVERTER(TopK, 1, 9, ConvertTopKAttribute);
MXLITE_REGISTER_ONNX_CONVERTER(TopK, 10, kMaxOnnxOpset, ConvertTopK);
MXLITE_REGISTER_ONNX_CONVERTER(Range, 11, kMaxOnnxOpset, ConvertRange);
MXLITE_REGISTER_ONNX_CONVERTER(ScatterND, 11, kMaxOnnxOpset, ConvertScatterND);

}  // namespace mxlite
