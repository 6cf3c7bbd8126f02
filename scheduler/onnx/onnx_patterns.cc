#include "scheduler/onnx/onnx_patterns.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/error.h"

namespace mxlite {

OnnxGraphIndex::OnnxGraphIndex(const onnx::GraphProto& graph) : graph_(graph) {
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const std::string& input : graph.node(i).input()) {
      if (!input.empty()) consumers_[input].push_back(i);
    }
  }
  for (const onnx::ValueInfoProto& output : graph.output()) outputs_.insert(output.name());
}

int OnnxGraphIndex::SoleConsumer(const std::string& value) const {
  if (IsGraphOutput(value)) return -1;
  const std::vector<int>& readers = Consumers(value);
  return readers.size() == 1 ? readers[0] : -1;
}

const std::vector<int>& OnnxGraphIndex::Consumers(const std::string& value) const {
  static const std::vector<int> kNone;
  auto it = consumers_.find(value);
  return it == consumers_.end() ? kNone : it->second;
}

namespace {

bool InDefaultDomain(const onnx::NodeProto& node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

// The name the importer gives a node (its own, or "<op type>_<index>").
std::string NodeNameOf(const onnx::NodeProto& node, int index) {
  return node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name();
}

// A formula found: the op it becomes and what the op reads.
struct Formula {
  std::string op;
  AttrText attrs;
  std::vector<NodeEntry> inputs;
  std::vector<int> nodes;  // the first where the search started, the last defines the result
};

// The matching state of one search: the graph, the values known so far.
class Matcher {
 public:
  Matcher(const OnnxGraphIndex& graph, OnnxValues& values) : graph_(graph), values_(values) {}

  const onnx::NodeProto& node(int index) const { return graph_.node(index); }

  // The node reading `value` alone, when it is a `op_type` of the default domain with one output.
  int Next(const std::string& value, const char* op_type) const {
    const int next = graph_.SoleConsumer(value);
    if (next < 0) return -1;
    const onnx::NodeProto& n = graph_.node(next);
    return InDefaultDomain(n) && n.op_type() == op_type && n.output_size() == 1 ? next : -1;
  }

  // The input of binary node `n` that is not `one` ("" when `one` is neither or both of them).
  static std::string OtherInput(const onnx::NodeProto& n, const std::string& one) {
    if (n.input_size() != 2 || n.input(0) == n.input(1)) return "";
    if (n.input(0) == one) return n.input(1);
    if (n.input(1) == one) return n.input(0);
    return "";
  }

  // The value of `name` when it is a constant holding one number.
  std::optional<double> Scalar(const std::string& name) const {
    const HostTensor* tensor = values_.Constant(name);
    if (tensor == nullptr || tensor->shape.size() != 1 || !IsFloatingPoint(tensor->dtype)) {
      return std::nullopt;
    }
    return tensor->AsDoubles(name)[0];
  }

  bool ScalarIs(const std::string& name, double want) const {
    const std::optional<double> value = Scalar(name);
    return value && std::abs(*value - want) <= 1e-6 * std::abs(want);
  }

  // The constant `name` as one value per element of a last axis of `channels`, when it holds
  // that many and broadcasts along the last axis only (shape (C), (1, C), (1, 1, C)...).
  std::optional<HostTensor> PerChannel(const std::string& name, int64_t channels) const {
    const HostTensor* tensor = values_.Constant(name);
    if (tensor == nullptr || !IsFloatingPoint(tensor->dtype) || tensor->shape.ndim() < 1 ||
        tensor->shape[tensor->shape.ndim() - 1] != channels || tensor->shape.size() != channels) {
      return std::nullopt;
    }
    return Reshaped(*tensor, Shape{channels});
  }

  // Axes of a ReduceMean (opsets 1-17: an attribute) that keeps its dims and reduces only the
  // last axis of its rank-`rank` input.
  bool ReducesLastAxisKeepingDims(const onnx::NodeProto& n, int64_t rank) const {
    if (n.input_size() != 1) return false;
    int64_t keepdims = 1;
    std::vector<int64_t> axes;
    for (const onnx::AttributeProto& attr : n.attribute()) {
      if (attr.name() == "keepdims") keepdims = attr.i();
      if (attr.name() == "axes") axes.assign(attr.ints().begin(), attr.ints().end());
    }
    return keepdims == 1 && axes.size() == 1 && (axes[0] == -1 || axes[0] == rank - 1);
  }

  DType ConstantDType(const std::string& name) const { return values_.Constant(name)->dtype; }
  const HostTensor* Constant(const std::string& name) const { return values_.Constant(name); }
  const std::vector<int>& Consumers(const std::string& value) const {
    return graph_.Consumers(value);
  }
  bool IsGraphOutput(const std::string& value) const { return graph_.IsGraphOutput(value); }
  Shape ShapeOf(const std::string& name) const { return values_.ShapeOf(name, name); }
  NodeEntry Entry(const std::string& name) const {
    return values_.Entry(name, name, VariableRole::kParameter);
  }
  NodeEntry NewConstant(const std::string& base, HostTensor tensor) const {
    return values_.NewConstant(base, std::move(tensor), VariableRole::kParameter);
  }

 private:
  const OnnxGraphIndex& graph_;
  OnnxValues& values_;
};

// ReduceMean -> Sub -> Pow 2 -> ReduceMean -> Add eps -> Sqrt -> Div [-> Mul gamma] [-> Add beta].
std::optional<Formula> MatchLayerNorm(int start, const Matcher& m) {
  const onnx::NodeProto& mean = m.node(start);
  if (mean.op_type() != "ReduceMean" || mean.output_size() != 1) return std::nullopt;
  const std::string x = mean.input_size() == 1 ? mean.input(0) : "";
  if (x.empty()) return std::nullopt;
  const int sub = m.Next(mean.output(0), "Sub");
  if (sub < 0 || m.node(sub).input(0) != x || m.node(sub).input(1) != mean.output(0)) {
    return std::nullopt;
  }
  const Shape shape = m.ShapeOf(x);  // after the cheap checks: it may infer the graph's shapes
  if (shape.ndim() < 1 || !m.ReducesLastAxisKeepingDims(mean, shape.ndim())) return std::nullopt;
  const int64_t channels = shape[shape.ndim() - 1];

  // x - mean is read twice: squared for the variance, and divided by the deviation.
  const std::string centred = m.node(sub).output(0);
  const std::vector<int>& readers = m.Consumers(centred);
  if (readers.size() != 2 || m.IsGraphOutput(centred)) return std::nullopt;
  int pow = -1, div = -1;
  for (int reader : readers) {
    const onnx::NodeProto& n = m.node(reader);
    if (!InDefaultDomain(n) || n.input_size() != 2 || n.output_size() != 1 ||
        n.input(0) != centred || n.input(1) == centred) {
      return std::nullopt;
    }
    if (n.op_type() == "Pow" && m.ScalarIs(n.input(1), 2.0)) pow = reader;
    if (n.op_type() == "Div") div = reader;
  }
  if (pow < 0 || div < 0) return std::nullopt;

  const int variance = m.Next(m.node(pow).output(0), "ReduceMean");
  if (variance < 0 || !m.ReducesLastAxisKeepingDims(m.node(variance), shape.ndim())) {
    return std::nullopt;
  }
  const int add_eps = m.Next(m.node(variance).output(0), "Add");
  if (add_eps < 0) return std::nullopt;
  const std::string eps_name = Matcher::OtherInput(m.node(add_eps), m.node(variance).output(0));
  const std::optional<double> eps = m.Scalar(eps_name);
  if (!eps || !(*eps >= 0)) return std::nullopt;
  const DType dtype = m.ConstantDType(eps_name);
  const int sqrt = m.Next(m.node(add_eps).output(0), "Sqrt");
  if (sqrt < 0 || m.Next(m.node(sqrt).output(0), "Div") != div ||
      m.node(div).input(1) != m.node(sqrt).output(0)) {
    return std::nullopt;
  }

  Formula f;
  f.op = "LayerNorm";
  f.attrs = {{"axis", "-1"}, {"eps", Number(*eps)}};
  f.nodes = {start, sub, pow, variance, add_eps, sqrt, div};
  // An affine step after: Mul by gamma, then Add beta (each optional, constants per channel).
  std::string result = m.node(div).output(0);
  std::optional<HostTensor> gamma, beta;
  if (const int mul = m.Next(result, "Mul"); mul >= 0) {
    gamma = m.PerChannel(Matcher::OtherInput(m.node(mul), result), channels);
    if (gamma && gamma->dtype == dtype) {
      f.nodes.push_back(mul);
      result = m.node(mul).output(0);
    } else {
      gamma.reset();
    }
  }
  if (const int add = m.Next(result, "Add"); add >= 0) {
    beta = m.PerChannel(Matcher::OtherInput(m.node(add), result), channels);
    if (beta && beta->dtype == dtype) {
      f.nodes.push_back(add);
      result = m.node(add).output(0);
    } else {
      beta.reset();
    }
  }
  const std::string base = NodeNameOf(m.node(f.nodes.back()), f.nodes.back());
  const std::vector<double> ones(static_cast<size_t>(channels), 1.0), zeros(ones.size(), 0.0);
  f.inputs = {m.Entry(x),
              m.NewConstant(base + "_gamma",
                            gamma ? *gamma : HostTensorOf(dtype, Shape{channels}, ones, base)),
              m.NewConstant(base + "_beta",
                            beta ? *beta : HostTensorOf(dtype, Shape{channels}, zeros, base))};
  return f;
}

// Div(x, sqrt 2) or Mul(x, 1 / sqrt 2) -> Erf -> Add 1 -> Mul x -> Mul 0.5.
std::optional<Formula> MatchGelu(int start, const Matcher& m) {
  const onnx::NodeProto& scale = m.node(start);
  if (scale.input_size() != 2 || scale.output_size() != 1) return std::nullopt;
  const std::string x = scale.input(0);
  const bool divides = scale.op_type() == "Div" && m.ScalarIs(scale.input(1), std::sqrt(2.0));
  const bool multiplies = scale.op_type() == "Mul" && m.ScalarIs(scale.input(1), std::sqrt(0.5));
  if (!divides && !multiplies) return std::nullopt;
  const int erf = m.Next(scale.output(0), "Erf");
  if (erf < 0) return std::nullopt;
  const int add_one = m.Next(m.node(erf).output(0), "Add");
  if (add_one < 0 || !m.ScalarIs(Matcher::OtherInput(m.node(add_one), m.node(erf).output(0)), 1.0)) {
    return std::nullopt;
  }
  const int times_x = m.Next(m.node(add_one).output(0), "Mul");
  if (times_x < 0 || Matcher::OtherInput(m.node(times_x), m.node(add_one).output(0)) != x) {
    return std::nullopt;
  }
  const int half = m.Next(m.node(times_x).output(0), "Mul");
  if (half < 0 || !m.ScalarIs(Matcher::OtherInput(m.node(half), m.node(times_x).output(0)), 0.5)) {
    return std::nullopt;
  }
  Formula f;
  f.op = "gelu";
  f.nodes = {start, erf, add_one, times_x, half};
  f.inputs = {m.Entry(x)};
  return f;
}

// An attribute of `n` as integers, or `fallback` when it is absent.
std::vector<int64_t> IntsAttribute(const onnx::NodeProto& n, const char* name,
                                   std::vector<int64_t> fallback) {
  for (const onnx::AttributeProto& attr : n.attribute()) {
    if (attr.name() == name) return {attr.ints().begin(), attr.ints().end()};
  }
  return fallback;
}

// The spatial pads of a Pad node that adds zeros around the spatial axes only, the same on both
// sides of each, of a rank-`rank` input: pads and value from inputs (opset 11 on) or attributes.
std::optional<std::vector<int64_t>> SymmetricSpatialZeroPads(const onnx::NodeProto& pad,
                                                             int64_t rank, const Matcher& m) {
  for (const onnx::AttributeProto& attr : pad.attribute()) {
    if (attr.name() == "mode" && attr.s() != "constant") return std::nullopt;
    if (attr.name() == "value" && attr.f() != 0.0f) return std::nullopt;
  }
  std::vector<int64_t> pads = IntsAttribute(pad, "pads", {});
  if (pad.input_size() >= 2) {
    const HostTensor* given = m.Constant(pad.input(1));
    if (given == nullptr || IsFloatingPoint(given->dtype)) return std::nullopt;
    pads = given->ToInt64s(pad.input(1));
  }
  if (pad.input_size() >= 3 && !pad.input(2).empty()) {
    const std::optional<double> value = m.Scalar(pad.input(2));
    if (!value || *value != 0.0) return std::nullopt;
  }
  if (static_cast<int64_t>(pads.size()) != 2 * rank || rank < 3) return std::nullopt;
  std::vector<int64_t> spatial;
  for (int64_t axis = 0; axis < rank; ++axis) {
    const int64_t begin = pads[axis], end = pads[axis + rank];
    if (begin != end || begin < 0 || (axis < 2 && begin != 0)) return std::nullopt;
    if (axis >= 2) spatial.push_back(begin);
  }
  return spatial;
}

// Pad(zeros around the spatial axes, symmetric) -> AveragePool(no pads of its own, floor): one
// average pooling whose window counts the padding, as PyTorch exports avg_pool2d(padding=p) with
// count_include_pad=True (Inception-V3's branch pools).
std::optional<Formula> MatchPaddedAveragePool(int start, const Matcher& m) {
  const onnx::NodeProto& pad = m.node(start);
  if (pad.op_type() != "Pad" || pad.input_size() < 1 || pad.output_size() != 1) {
    return std::nullopt;
  }
  const int64_t rank = m.ShapeOf(pad.input(0)).ndim();
  const std::optional<std::vector<int64_t>> spatial = SymmetricSpatialZeroPads(pad, rank, m);
  if (!spatial) return std::nullopt;
  const int pool = m.Next(pad.output(0), "AveragePool");
  if (pool < 0) return std::nullopt;
  const onnx::NodeProto& p = m.node(pool);
  const std::vector<int64_t> kernel = IntsAttribute(p, "kernel_shape", {});
  const std::vector<int64_t> ones(spatial->size(), 1);
  if (kernel.size() != spatial->size() || IntsAttribute(p, "dilations", ones) != ones) {
    return std::nullopt;
  }
  const std::vector<int64_t> own_pads = IntsAttribute(p, "pads", {});
  if (std::any_of(own_pads.begin(), own_pads.end(), [](int64_t v) { return v != 0; })) {
    return std::nullopt;
  }
  for (const onnx::AttributeProto& attr : p.attribute()) {
    if (attr.name() == "ceil_mode" && attr.i() != 0) return std::nullopt;
    if (attr.name() == "auto_pad" && attr.s() != "NOTSET" && attr.s() != "VALID") {
      return std::nullopt;
    }
  }
  Formula f;
  f.op = "Pooling";
  f.attrs = {{"kernel", Tuple(kernel)},
             {"stride", Tuple(IntsAttribute(p, "strides", ones))},
             {"pad", Tuple(*spatial)},
             {"pool_type", "avg"},
             {"pooling_convention", "valid"},
             {"count_include_pad", "true"}};
  f.nodes = {start, pool};
  f.inputs = {m.Entry(pad.input(0))};
  return f;
}

}  // namespace

bool FuseFormulaAt(int index, const OnnxGraphIndex& graph, OnnxValues& values,
                   std::set<int>& replaced) {
  const onnx::NodeProto& start = graph.node(index);
  if (!InDefaultDomain(start)) return false;
  const Matcher matcher(graph, values);
  std::optional<Formula> formula = MatchLayerNorm(index, matcher);
  if (!formula) formula = MatchGelu(index, matcher);
  if (!formula) formula = MatchPaddedAveragePool(index, matcher);
  if (!formula) return false;
  const int last = formula->nodes.back();
  const NodeEntry result = values.Emit(formula->op, NodeNameOf(graph.node(last), last),
                                       formula->attrs, formula->inputs);
  values.Define(graph.node(last).output(0), result);
  replaced.insert(formula->nodes.begin(), formula->nodes.end());
  return true;
}

}  // namespace mxlite
