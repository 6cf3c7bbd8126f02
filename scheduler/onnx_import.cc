#include "scheduler/onnx_import.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "core/error.h"
#include "onnx/onnx_pb.h"  // defines ONNX_API, then includes onnx/onnx-ml.pb.h
#include "ops/attributes.h"
#include "scheduler/infer_shapes.h"

namespace mxlite {
namespace {

using AttrText = std::map<std::string, std::string>;

// The largest model file read (protobuf itself cannot parse messages of 2 GiB or more).
constexpr uint64_t kMaxModelBytes = (uint64_t{1} << 31) - 1;
constexpr int64_t kMinOpset = 7;
constexpr int64_t kMaxOpset = 17;

const std::set<std::string>& SupportedOps() {
  static const std::set<std::string> ops = {"Conv",
                                            "ConvTranspose",
                                            "Gemm",
                                            "MatMul",
                                            "Relu",
                                            "LeakyRelu",
                                            "Sigmoid",
                                            "Tanh",
                                            "Softplus",
                                            "Clip",
                                            "MaxPool",
                                            "AveragePool",
                                            "GlobalAveragePool",
                                            "GlobalMaxPool",
                                            "BatchNormalization",
                                            "Dropout",
                                            "Flatten",
                                            "Reshape",
                                            "Transpose",
                                            "Concat",
                                            "Add",
                                            "Sub",
                                            "Mul",
                                            "Div",
                                            "Softmax",
                                            "LogSoftmax",
                                            "Pad",
                                            "Identity",
                                            "Constant",
                                            "Shape",
                                            "Gather",
                                            "Unsqueeze",
                                            "Squeeze"};
  return ops;
}

std::string Tuple(const std::vector<int64_t>& values) { return FormatIntTuple(values); }

std::string Number(double value) {
  std::ostringstream out;
  out.precision(17);
  out << value;
  return out.str();
}

// Reads one NodeProto's attributes, checking each one's type.
class NodeAttributes {
 public:
  NodeAttributes(const onnx::NodeProto& node, std::string where) : where_(std::move(where)) {
    for (const onnx::AttributeProto& attr : node.attribute()) by_name_[attr.name()] = &attr;
  }
  bool Has(const std::string& name) const { return by_name_.count(name) > 0; }
  int64_t Int(const std::string& name, int64_t fallback) const {
    const onnx::AttributeProto* attr = Get(name, onnx::AttributeProto::INT);
    return attr ? attr->i() : fallback;
  }
  double Float(const std::string& name, double fallback) const {
    const onnx::AttributeProto* attr = Get(name, onnx::AttributeProto::FLOAT);
    return attr ? attr->f() : fallback;
  }
  std::string String(const std::string& name, const std::string& fallback) const {
    const onnx::AttributeProto* attr = Get(name, onnx::AttributeProto::STRING);
    return attr ? attr->s() : fallback;
  }
  std::vector<int64_t> Ints(const std::string& name, std::vector<int64_t> fallback = {}) const {
    const onnx::AttributeProto* attr = Get(name, onnx::AttributeProto::INTS);
    return attr ? std::vector<int64_t>(attr->ints().begin(), attr->ints().end()) : fallback;
  }
  std::vector<float> Floats(const std::string& name) const {
    const onnx::AttributeProto* attr = Get(name, onnx::AttributeProto::FLOATS);
    return attr ? std::vector<float>(attr->floats().begin(), attr->floats().end())
                : std::vector<float>{};
  }
  const onnx::TensorProto* Tensor(const std::string& name) const {
    const onnx::AttributeProto* attr = Get(name, onnx::AttributeProto::TENSOR);
    return attr ? &attr->t() : nullptr;
  }

 private:
  const onnx::AttributeProto* Get(const std::string& name,
                                  onnx::AttributeProto::AttributeType type) const {
    auto it = by_name_.find(name);
    if (it == by_name_.end()) return nullptr;
    MX_CHECK(it->second->type() == type)
        << where_ << ": attribute '" << name << "' should be "
        << onnx::AttributeProto::AttributeType_Name(type) << ", not "
        << onnx::AttributeProto::AttributeType_Name(it->second->type());
    return it->second;
  }

  std::string where_;
  std::map<std::string, const onnx::AttributeProto*> by_name_;
};

// A value of the ONNX graph during import: an entry of the mxlite graph, a constant known at load,
// or an output mxlite cannot produce (with the reason).
struct Value {
  std::optional<NodeEntry> entry;
  std::optional<HostTensor> constant;
  std::string unsupported;
};

int64_t NormalizeAxis(int64_t axis, int64_t rank, const std::string& where) {
  MX_CHECK(axis >= -rank && axis < std::max<int64_t>(rank, 1))
      << where << ": axis " << axis << " is out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

// Pads for auto_pad SAME_UPPER / SAME_LOWER: the output extent is ceil(in / stride).
void SamePads(const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
              const std::vector<int64_t>& stride, const std::vector<int64_t>& dilation, bool upper,
              std::vector<int64_t>& pads) {
  const size_t rank = kernel.size();
  pads.assign(2 * rank, 0);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t out = (in[i] + stride[i] - 1) / stride[i];
    const int64_t total =
        std::max<int64_t>(0, (out - 1) * stride[i] + (kernel[i] - 1) * dilation[i] + 1 - in[i]);
    const int64_t small = total / 2;
    pads[i] = upper ? small : total - small;
    pads[i + rank] = total - pads[i];
  }
}

bool Symmetric(const std::vector<int64_t>& pads) {
  const size_t rank = pads.size() / 2;
  for (size_t i = 0; i < rank; ++i) {
    if (pads[i] != pads[i + rank]) return false;
  }
  return true;
}

HostTensor Reshaped(HostTensor tensor, const Shape& shape) {
  tensor.shape = shape;
  return tensor;
}

class Importer {
 public:
  Importer(const onnx::ModelProto& model, std::string file, std::string model_dir,
           const ImportOptions& options)
      : model_(model), file_(std::move(file)), dir_(std::move(model_dir)), options_(options) {}

  ImportedModel Run() {
    MX_CHECK(model_.has_graph()) << file_ << ": the model has no graph (empty or not an ONNX file)";
    ReadOpset();
    const onnx::GraphProto& graph = model_.graph();
    DeclareInitializers(graph);
    DeclareInputs(graph);
    const std::vector<int> order = TopologicalOrder(graph);
    CheckSupported(graph, order);
    for (int index : order) ConvertNode(graph.node(index), index);
    AddOutputs(graph);
    CheckFinalShapes();
    out_.graph = std::move(graph_);
    out_.opset = opset_;
    out_.producer = model_.producer_name() + " " + model_.producer_version();
    return std::move(out_);
  }

 private:
  // ---- Model-level declarations ------------------------------------------------------------

  void ReadOpset() {
    for (const onnx::OperatorSetIdProto& set : model_.opset_import()) {
      if (set.domain().empty() || set.domain() == "ai.onnx") opset_ = set.version();
    }
    MX_CHECK(opset_ >= kMinOpset && opset_ <= kMaxOpset)
        << file_ << ": opset " << opset_ << " of the default domain is not supported (mxlite "
        << "imports opsets " << kMinOpset << " to " << kMaxOpset << ")";
  }

  void DeclareInitializers(const onnx::GraphProto& graph) {
    MX_CHECK(graph.sparse_initializer_size() == 0)
        << file_ << ": sparse initializers are not supported";
    for (const onnx::TensorProto& tensor : graph.initializer()) {
      const std::string where = file_ + ": initializer '" + tensor.name() + "'";
      MX_CHECK(!tensor.name().empty()) << file_ << ": an initializer has no name";
      MX_CHECK(!values_.count(tensor.name())) << where << " is defined twice";
      values_[tensor.name()].constant = TensorFromProto(tensor, where, dir_);
      reserved_.insert(tensor.name());
    }
  }

  void DeclareInputs(const onnx::GraphProto& graph) {
    for (const onnx::ValueInfoProto& input : graph.input()) {
      if (values_.count(input.name())) continue;  // an initializer (a default value)
      MX_CHECK(!input.name().empty()) << file_ << ": a graph input has no name";
      MX_CHECK(!graph_inputs_.count(input.name()))
          << file_ << ": graph input '" << input.name() << "' is declared twice";
      graph_inputs_[input.name()] = &input;
      reserved_.insert(input.name());
    }
  }

  // Node indices in an order where every value is defined before it is used (ONNX requires the
  // file's order to be one; this also accepts others). Undefined values and cycles are errors.
  std::vector<int> TopologicalOrder(const onnx::GraphProto& graph) {
    std::map<std::string, int> producer;
    for (int i = 0; i < graph.node_size(); ++i) {
      for (const std::string& output : graph.node(i).output()) {
        if (output.empty()) continue;
        MX_CHECK(!values_.count(output) && !graph_inputs_.count(output) && !producer.count(output))
            << file_ << ": value '" << output << "' of node " << Describe(graph.node(i), i)
            << " is defined more than once";
        producer[output] = i;
      }
    }
    std::vector<int> pending(static_cast<size_t>(graph.node_size()), 0);
    std::vector<std::vector<int>> consumers(static_cast<size_t>(graph.node_size()));
    for (int i = 0; i < graph.node_size(); ++i) {
      for (const std::string& input : graph.node(i).input()) {
        if (input.empty() || values_.count(input) || graph_inputs_.count(input)) continue;
        auto it = producer.find(input);
        MX_CHECK(it != producer.end())
            << file_ << ": node " << Describe(graph.node(i), i) << " uses '" << input
            << "', which no node, initializer or graph input defines";
        consumers[static_cast<size_t>(it->second)].push_back(i);
        ++pending[static_cast<size_t>(i)];
      }
    }
    std::vector<int> order;
    for (int i = 0; i < graph.node_size(); ++i) {
      if (pending[static_cast<size_t>(i)] == 0) order.push_back(i);
    }
    for (size_t next = 0; next < order.size(); ++next) {
      for (int consumer : consumers[static_cast<size_t>(order[next])]) {
        if (--pending[static_cast<size_t>(consumer)] == 0) order.push_back(consumer);
      }
    }
    if (static_cast<int>(order.size()) != graph.node_size()) {
      std::ostringstream cycle;
      for (int i = 0; i < graph.node_size(); ++i) {
        if (pending[static_cast<size_t>(i)] > 0) cycle << " " << Describe(graph.node(i), i);
      }
      MX_THROW() << file_ << ": the graph has a cycle through the nodes" << cycle.str();
    }
    return order;
  }

  void CheckSupported(const onnx::GraphProto& graph, const std::vector<int>& order) {
    std::ostringstream unsupported;
    int count = 0;
    for (int index : order) {
      const onnx::NodeProto& node = graph.node(index);
      const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
      if (default_domain && SupportedOps().count(node.op_type())) continue;
      unsupported << (count++ ? ", " : " ") << Describe(node, index);
    }
    MX_CHECK(count == 0) << file_ << ": " << count
                         << " node(s) use ops mxlite does not import:" << unsupported.str();
  }

  static std::string Describe(const onnx::NodeProto& node, int index) {
    std::string domain = node.domain().empty() ? "" : node.domain() + ".";
    return "'" + NodeName(node, index) + "' (" + domain + node.op_type() + ")";
  }
  static std::string NodeName(const onnx::NodeProto& node, int index) {
    return node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name();
  }

  // ---- Values ------------------------------------------------------------------------------

  std::string UniqueName(const std::string& base, bool allow_reserved) {
    auto taken = [&](const std::string& name) {
      return graph_.HasName(name) || (!allow_reserved && reserved_.count(name));
    };
    std::string name = base;
    for (int suffix = 1; taken(name); ++suffix) name = base + "_" + std::to_string(suffix);
    return name;
  }

  Shape DeclaredInputShape(const onnx::ValueInfoProto& input) {
    const std::string where = file_ + ": graph input '" + input.name() + "'";
    auto given = options_.input_shapes.find(input.name());
    if (given != options_.input_shapes.end()) {
      return CheckedOnnxShape(given->second.to_vector(), where);
    }
    MX_CHECK(input.type().has_tensor_type()) << where << " is not a tensor";
    const onnx::TypeProto::Tensor& type = input.type().tensor_type();
    MX_CHECK(type.has_shape()) << where
                               << " declares no shape; give it in ImportOptions::input_shapes";
    std::vector<int64_t> dims;
    for (int axis = 0; axis < type.shape().dim_size(); ++axis) {
      const auto& dim = type.shape().dim(axis);
      MX_CHECK(dim.has_dim_value())
          << where << " has a dynamic dim"
          << (dim.has_dim_param() ? " '" + dim.dim_param() + "'" : std::string()) << " at axis "
          << axis << "; give its shape in ImportOptions::input_shapes";
      dims.push_back(dim.dim_value());
    }
    return CheckedOnnxShape(dims, where);
  }

  DType DeclaredInputDType(const onnx::ValueInfoProto& input) {
    const std::string where = file_ + ": graph input '" + input.name() + "'";
    MX_CHECK(input.type().has_tensor_type()) << where << " is not a tensor";
    return DTypeFromOnnx(input.type().tensor_type().elem_type(), where);
  }

  // The graph entry holding ONNX value `name`; constants become parameter (or auxiliary)
  // variables and graph inputs input variables the first time they are used as data.
  NodeEntry Entry(const std::string& name, const std::string& where,
                  VariableRole constant_role = VariableRole::kParameter) {
    MX_CHECK(!name.empty()) << where << ": a required input is missing";
    auto it = values_.find(name);
    if (it == values_.end()) {
      auto input = graph_inputs_.find(name);
      MX_CHECK(input != graph_inputs_.end()) << where << ": value '" << name << "' is undefined";
      const std::string var = UniqueName(name, true);
      const int id =
          graph_.AddVariable(var, VariableRole::kInput, DeclaredInputShape(*input->second),
                             DeclaredInputDType(*input->second));
      out_.inputs[name] = var;
      it = values_.emplace(name, Value{}).first;
      it->second.entry = NodeEntry{id, 0};
    }
    Value& value = it->second;
    MX_CHECK(value.unsupported.empty())
        << where << ": uses '" << name << "': " << value.unsupported;
    if (!value.entry) {
      const HostTensor& tensor = *value.constant;
      const std::string var = UniqueName(name, true);
      const int id = graph_.AddVariable(var, constant_role, tensor.shape, tensor.dtype);
      out_.parameters[var] = tensor;
      value.entry = NodeEntry{id, 0};
    }
    return *value.entry;
  }

  // The value of `name` when it is known at load, else nullptr.
  const HostTensor* Constant(const std::string& name) {
    auto it = values_.find(name);
    if (it != values_.end()) return it->second.constant ? &*it->second.constant : nullptr;
    auto given = options_.constant_inputs.find(name);
    return given != options_.constant_inputs.end() ? &given->second : nullptr;
  }

  const HostTensor& RequireConstant(const std::string& name, const std::string& where,
                                    const std::string& what) {
    const HostTensor* tensor = Constant(name);
    MX_CHECK(tensor != nullptr) << where << ": " << what << " ('" << name
                                << "') must be a constant known at load (an initializer or a "
                                   "Constant), not a computed value";
    return *tensor;
  }

  // The static shape of a value: constants and inputs directly, computed values by inference.
  Shape ShapeOf(const std::string& name, const std::string& where) {
    if (const HostTensor* tensor = Constant(name)) return tensor->shape;
    auto it = values_.find(name);
    if (it == values_.end()) {
      auto input = graph_inputs_.find(name);
      MX_CHECK(input != graph_inputs_.end()) << where << ": value '" << name << "' is undefined";
      return DeclaredInputShape(*input->second);
    }
    const NodeEntry entry = Entry(name, where);
    if (shapes_nodes_ != graph_.num_nodes()) {
      shapes_ = InferGraphShapes(graph_);
      shapes_nodes_ = graph_.num_nodes();
    }
    return shapes_.of(entry);
  }

  void Define(const onnx::NodeProto& node, int output, NodeEntry entry) {
    if (output < node.output_size() && !node.output(output).empty()) {
      values_[node.output(output)].entry = entry;
    }
  }
  void DefineConstant(const onnx::NodeProto& node, HostTensor tensor) {
    MX_CHECK(node.output_size() >= 1) << "node " << node.name() << " has no output";
    values_[node.output(0)].constant = std::move(tensor);
  }
  // Marks outputs from `first` on as values mxlite does not compute.
  void Unsupported(const onnx::NodeProto& node, int first, const std::string& why) {
    for (int i = first; i < node.output_size(); ++i) {
      if (!node.output(i).empty()) values_[node.output(i)].unsupported = why;
    }
  }

  NodeEntry Emit(const std::string& op, const std::string& base, const AttrText& attrs,
                 const std::vector<NodeEntry>& inputs) {
    const int id = graph_.AddOpNode(op, UniqueName(base, false), attrs, inputs);
    return NodeEntry{id, 0};
  }

  // ---- Nodes -------------------------------------------------------------------------------

  struct Ctx {
    const onnx::NodeProto& node;
    std::string name;   // mxlite node name base
    std::string where;  // "model.onnx: node 'conv1' (Conv)"
    NodeAttributes attrs;
    std::string In(int i) const { return i < node.input_size() ? node.input(i) : std::string(); }
  };

  void ConvertNode(const onnx::NodeProto& node, int index) {
    const std::string where = file_ + ": node " + Describe(node, index);
    Ctx c{node, NodeName(node, index), where, NodeAttributes(node, where)};
    try {
      Convert(c);
    } catch (const Error& error) {
      const std::string message = error.what();
      if (message.find(where) != std::string::npos) throw;
      throw Error(where + ": " + message);
    }
  }

  void Convert(const Ctx& c) {
    const std::string& op = c.node.op_type();
    MX_CHECK(c.node.output_size() >= 1) << c.where << ": has no output";
    if (op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "Softplus") {
      const std::string type = op == "Relu"      ? "relu"
                               : op == "Sigmoid" ? "sigmoid"
                               : op == "Tanh"    ? "tanh"
                                                 : "softrelu";
      Define(c.node, 0,
             Emit("Activation", c.name, {{"act_type", type}}, {Entry(c.In(0), c.where)}));
    } else if (op == "LeakyRelu") {
      Define(c.node, 0,
             Emit("LeakyReLU", c.name,
                  {{"act_type", "leaky"}, {"slope", Number(c.attrs.Float("alpha", 0.01))}},
                  {Entry(c.In(0), c.where)}));
    } else if (op == "Identity") {
      if (const HostTensor* constant = Constant(c.In(0))) {
        DefineConstant(c.node, *constant);
      } else {
        Define(c.node, 0, Emit("identity", c.name, {}, {Entry(c.In(0), c.where)}));
      }
    } else if (op == "Dropout") {
      ConvertDropout(c);
    } else if (op == "Constant") {
      ConvertConstant(c);
    } else if (op == "Shape") {
      ConvertShape(c);
    } else if (op == "Gather") {
      ConvertGather(c);
    } else if (op == "Unsqueeze" || op == "Squeeze") {
      ConvertSqueeze(c, op == "Unsqueeze");
    } else if (op == "Concat") {
      ConvertConcat(c);
    } else if (op == "Reshape") {
      ConvertReshape(c);
    } else if (op == "Flatten") {
      Define(c.node, 0,
             Emit("Flatten", c.name, {{"axis", std::to_string(c.attrs.Int("axis", 1))}},
                  {Entry(c.In(0), c.where)}));
    } else if (op == "Transpose") {
      Define(c.node, 0,
             Emit("transpose", c.name, {{"axes", Tuple(c.attrs.Ints("perm"))}},
                  {Entry(c.In(0), c.where)}));
    } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
      std::string lower = op;
      std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
      Define(c.node, 0,
             Emit("broadcast_" + lower, c.name, {},
                  {Entry(c.In(0), c.where), Entry(c.In(1), c.where)}));
    } else if (op == "Softmax" || op == "LogSoftmax") {
      ConvertSoftmax(c, op == "LogSoftmax" ? "log_softmax" : "softmax");
    } else if (op == "Gemm") {
      ConvertGemm(c);
    } else if (op == "MatMul") {
      Define(c.node, 0,
             Emit("MatMul", c.name, {}, {Entry(c.In(0), c.where), Entry(c.In(1), c.where)}));
    } else if (op == "Conv") {
      ConvertConv(c);
    } else if (op == "ConvTranspose") {
      ConvertConvTranspose(c);
    } else if (op == "MaxPool" || op == "AveragePool") {
      ConvertPool(c, op == "MaxPool");
    } else if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
      Define(c.node, 0,
             Emit("Pooling", c.name,
                  {{"global_pool", "true"}, {"pool_type", op == "GlobalMaxPool" ? "max" : "avg"}},
                  {Entry(c.In(0), c.where)}));
    } else if (op == "BatchNormalization") {
      ConvertBatchNorm(c);
    } else if (op == "Pad") {
      ConvertPad(c);
    } else if (op == "Clip") {
      ConvertClip(c);
    } else {
      MX_THROW() << c.where << ": op " << op << " is not imported";
    }
  }

  void ConvertDropout(const Ctx& c) {
    if (opset_ >= 12 && !c.In(2).empty()) {
      const std::vector<int64_t> training =
          RequireConstant(c.In(2), c.where, "training_mode").ToInt64s(c.where);
      MX_CHECK(training.empty() || training[0] == 0)
          << c.where << ": training_mode=1 is not supported (inference only)";
    }
    Define(c.node, 0, Entry(c.In(0), c.where));
    Unsupported(c.node, 1, "Dropout's mask output is not supported");
  }

  void ConvertConstant(const Ctx& c) {
    if (const onnx::TensorProto* tensor = c.attrs.Tensor("value")) {
      DefineConstant(c.node, TensorFromProto(*tensor, c.where + " value", dir_));
    } else if (c.attrs.Has("value_float")) {
      DefineConstant(
          c.node,
          HostTensor::From(std::vector<float>{static_cast<float>(c.attrs.Float("value_float", 0))},
                           Shape()));
    } else if (c.attrs.Has("value_floats")) {
      const std::vector<float> values = c.attrs.Floats("value_floats");
      DefineConstant(c.node, HostTensor::From(values, Shape{static_cast<int64_t>(values.size())}));
    } else if (c.attrs.Has("value_int")) {
      DefineConstant(c.node,
                     HostTensor::From(std::vector<int64_t>{c.attrs.Int("value_int", 0)}, Shape()));
    } else if (c.attrs.Has("value_ints")) {
      const std::vector<int64_t> values = c.attrs.Ints("value_ints");
      DefineConstant(c.node, HostTensor::From(values, Shape{static_cast<int64_t>(values.size())}));
    } else {
      MX_THROW() << c.where << ": only tensor, float(s) and int(s) constants are supported";
    }
  }

  void ConvertShape(const Ctx& c) {
    const std::vector<int64_t> dims = ShapeOf(c.In(0), c.where).to_vector();
    const int64_t rank = static_cast<int64_t>(dims.size());
    auto clamp = [&](int64_t axis) {
      if (axis < 0) axis += rank;
      return std::clamp<int64_t>(axis, 0, rank);
    };
    const int64_t start = clamp(c.attrs.Int("start", 0));
    const int64_t end = std::max(start, clamp(c.attrs.Int("end", rank)));
    const std::vector<int64_t> slice(dims.begin() + start, dims.begin() + end);
    DefineConstant(c.node, HostTensor::From(slice, Shape{end - start}));
  }

  void ConvertGather(const Ctx& c) {
    const HostTensor& data = RequireConstant(c.In(0), c.where, "Gather's data");
    const HostTensor& indices_tensor = RequireConstant(c.In(1), c.where, "Gather's indices");
    const std::vector<int64_t> indices = indices_tensor.ToInt64s(c.where + " indices");
    const std::vector<int64_t> dims = data.shape.to_vector();
    const int64_t axis =
        NormalizeAxis(c.attrs.Int("axis", 0), static_cast<int64_t>(dims.size()), c.where);
    MX_CHECK(!dims.empty()) << c.where << ": Gather on a scalar";
    std::vector<int64_t> out_dims(dims.begin(), dims.begin() + axis);
    for (int64_t d : indices_tensor.shape.to_vector()) out_dims.push_back(d);
    out_dims.insert(out_dims.end(), dims.begin() + axis + 1, dims.end());
    const Shape out_shape = CheckedOnnxShape(out_dims, c.where + " output");
    const size_t element = DTypeSize(data.dtype);
    const int64_t outer = data.shape.size(0, static_cast<int>(axis));
    const int64_t inner = data.shape.size(static_cast<int>(axis) + 1, data.shape.ndim());
    const int64_t extent = dims[static_cast<size_t>(axis)];
    HostTensor out{data.dtype, out_shape, {}};
    out.bytes.reserve(static_cast<size_t>(out_shape.size()) * element);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t index : indices) {
        MX_CHECK(index >= -extent && index < extent)
            << c.where << ": index " << index << " is out of range for extent " << extent;
        if (index < 0) index += extent;
        const size_t begin = static_cast<size_t>((o * extent + index) * inner) * element;
        out.bytes.insert(out.bytes.end(), data.bytes.begin() + static_cast<ptrdiff_t>(begin),
                         data.bytes.begin() + static_cast<ptrdiff_t>(begin + inner * element));
      }
    }
    DefineConstant(c.node, std::move(out));
  }

  void ConvertSqueeze(const Ctx& c, bool unsqueeze) {
    std::vector<int64_t> axes = c.attrs.Ints("axes");
    if (opset_ >= 13 && !c.In(1).empty()) {
      axes = RequireConstant(c.In(1), c.where, "axes").ToInt64s(c.where + " axes");
    }
    std::vector<int64_t> dims = ShapeOf(c.In(0), c.where).to_vector();
    if (unsqueeze) {
      const int64_t rank = static_cast<int64_t>(dims.size() + axes.size());
      std::vector<bool> inserted(static_cast<size_t>(rank), false);
      for (int64_t axis : axes)
        inserted[static_cast<size_t>(NormalizeAxis(axis, rank, c.where))] = true;
      std::vector<int64_t> out;
      size_t next = 0;
      for (int64_t axis = 0; axis < rank; ++axis) {
        out.push_back(inserted[static_cast<size_t>(axis)] ? 1 : dims.at(next++));
      }
      dims = out;
    } else {
      const int64_t rank = static_cast<int64_t>(dims.size());
      std::vector<bool> removed(static_cast<size_t>(rank), axes.empty());
      for (int64_t axis : axes)
        removed[static_cast<size_t>(NormalizeAxis(axis, rank, c.where))] = true;
      std::vector<int64_t> out;
      for (int64_t axis = 0; axis < rank; ++axis) {
        const bool drop =
            removed[static_cast<size_t>(axis)] && dims[static_cast<size_t>(axis)] == 1;
        MX_CHECK(!(removed[static_cast<size_t>(axis)] && !axes.empty() && !drop))
            << c.where << ": cannot squeeze axis " << axis << " of extent "
            << dims[static_cast<size_t>(axis)];
        if (!drop) out.push_back(dims[static_cast<size_t>(axis)]);
      }
      dims = out;
    }
    ReshapeTo(c, CheckedOnnxShape(dims, c.where + " output"));
  }

  // Output 0 := input 0 with `shape` (folded when the input is a constant).
  void ReshapeTo(const Ctx& c, const Shape& shape) {
    if (const HostTensor* constant = Constant(c.In(0))) {
      DefineConstant(c.node, Reshaped(*constant, shape));
      return;
    }
    Define(
        c.node, 0,
        Emit("Reshape", c.name, {{"shape", Tuple(shape.to_vector())}}, {Entry(c.In(0), c.where)}));
  }

  void ConvertConcat(const Ctx& c) {
    MX_CHECK(c.node.input_size() >= 1) << c.where << ": no inputs";
    const int64_t axis_attr = c.attrs.Int("axis", 1);
    bool all_constant = true;
    for (const std::string& input : c.node.input()) all_constant = all_constant && Constant(input);
    if (!all_constant) {
      std::vector<NodeEntry> inputs;
      for (const std::string& input : c.node.input()) inputs.push_back(Entry(input, c.where));
      Define(c.node, 0,
             Emit("Concat", c.name,
                  {{"dim", std::to_string(axis_attr)}, {"num_args", std::to_string(inputs.size())}},
                  inputs));
      return;
    }
    const HostTensor& first = *Constant(c.In(0));
    const int rank = first.shape.ndim();
    const int axis = static_cast<int>(NormalizeAxis(axis_attr, rank, c.where));
    std::vector<int64_t> out_dims = first.shape.to_vector();
    out_dims[static_cast<size_t>(axis)] = 0;
    for (const std::string& input : c.node.input()) {
      const HostTensor& part = *Constant(input);
      MX_CHECK(part.dtype == first.dtype && part.shape.ndim() == rank)
          << c.where << ": inputs differ in dtype or rank";
      for (int a = 0; a < rank; ++a) {
        MX_CHECK(a == axis || part.shape[a] == first.shape[a])
            << c.where << ": shapes " << first.shape << " and " << part.shape << " do not concat";
      }
      out_dims[static_cast<size_t>(axis)] += part.shape[axis];
    }
    HostTensor out{first.dtype, CheckedOnnxShape(out_dims, c.where + " output"), {}};
    const size_t element = DTypeSize(first.dtype);
    const int64_t outer = first.shape.size(0, axis);
    for (int64_t o = 0; o < outer; ++o) {
      for (const std::string& input : c.node.input()) {
        const HostTensor& part = *Constant(input);
        const size_t chunk = static_cast<size_t>(part.shape.size(axis, rank)) * element;
        const auto begin = part.bytes.begin() + static_cast<ptrdiff_t>(o * chunk);
        out.bytes.insert(out.bytes.end(), begin, begin + static_cast<ptrdiff_t>(chunk));
      }
    }
    DefineConstant(c.node, std::move(out));
  }

  void ConvertReshape(const Ctx& c) {
    std::vector<int64_t> spec = c.attrs.Ints("shape");
    if (opset_ >= 5 && !c.In(1).empty()) {
      spec = RequireConstant(c.In(1), c.where, "the target shape").ToInt64s(c.where + " shape");
    }
    const bool allow_zero = c.attrs.Int("allowzero", 0) != 0;
    const Shape in = ShapeOf(c.In(0), c.where);
    std::vector<int64_t> dims;
    int infer = -1;
    int64_t known = 1;
    for (size_t i = 0; i < spec.size(); ++i) {
      int64_t dim = spec[i];
      if (dim == 0 && !allow_zero) {
        MX_CHECK(static_cast<int>(i) < in.ndim())
            << c.where << ": 0 at axis " << i << " but the input " << in << " has no such axis";
        dim = in[static_cast<int>(i)];
      }
      if (dim == -1) {
        MX_CHECK(infer < 0) << c.where << ": more than one -1 in the shape " << Tuple(spec);
        infer = static_cast<int>(i);
        dims.push_back(1);
        continue;
      }
      MX_CHECK(dim >= 0) << c.where << ": invalid dim " << dim << " in the shape " << Tuple(spec);
      dims.push_back(dim);
      known = dims.back() == 0 ? 0 : known * dims.back();
      MX_CHECK(known <= kMaxOnnxTensorElements)
          << c.where << ": the shape " << Tuple(spec) << " is too large";
    }
    if (infer >= 0) {
      MX_CHECK(known > 0 && in.size() % known == 0)
          << c.where << ": cannot reshape " << in << " to " << Tuple(spec);
      dims[static_cast<size_t>(infer)] = in.size() / known;
    }
    const Shape out = CheckedOnnxShape(dims, c.where + " output");
    MX_CHECK_EQ(out.size(), in.size()) << c.where << ": cannot reshape " << in << " to " << out;
    ReshapeTo(c, out);
  }

  void ConvertSoftmax(const Ctx& c, const std::string& op) {
    const Shape in = ShapeOf(c.In(0), c.where);
    const int64_t rank = in.ndim();
    const int64_t axis = NormalizeAxis(c.attrs.Int("axis", opset_ >= 13 ? -1 : 1), rank, c.where);
    const NodeEntry data = Entry(c.In(0), c.where);
    if (opset_ >= 13 || axis == rank - 1) {
      Define(c.node, 0, Emit(op, c.name, {{"axis", std::to_string(axis)}}, {data}));
      return;
    }
    // Before opset 13 the input is viewed as 2-D (dims before `axis`, dims from it) and
    // normalised along the second; the result has the input's shape.
    const int a = static_cast<int>(axis);
    const Shape flat{in.size(0, a), in.size(a, static_cast<int>(rank))};
    const NodeEntry as_2d =
        Emit("Reshape", c.name + "_2d", {{"shape", Tuple(flat.to_vector())}}, {data});
    const NodeEntry normalised = Emit(op, c.name, {{"axis", "-1"}}, {as_2d});
    Define(c.node, 0,
           Emit("Reshape", c.name + "_restore", {{"shape", Tuple(in.to_vector())}}, {normalised}));
  }

  void ConvertGemm(const Ctx& c) {
    std::vector<NodeEntry> inputs = {Entry(c.In(0), c.where), Entry(c.In(1), c.where)};
    const bool has_c = !c.In(2).empty();
    if (has_c) inputs.push_back(Entry(c.In(2), c.where));
    Define(c.node, 0,
           Emit("Gemm", c.name,
                {{"alpha", Number(c.attrs.Float("alpha", 1))},
                 {"beta", Number(c.attrs.Float("beta", 1))},
                 {"transA", c.attrs.Int("transA", 0) ? "true" : "false"},
                 {"transB", c.attrs.Int("transB", 0) ? "true" : "false"},
                 {"no_bias", has_c ? "false" : "true"}},
                inputs));
  }

  // Window attributes shared by Conv and the pools; `pads` resolved from auto_pad.
  struct Window {
    std::vector<int64_t> kernel, stride, dilation, pads;
  };

  Window ReadWindow(const Ctx& c, std::vector<int64_t> kernel, const Shape& data) {
    const size_t rank = kernel.size();
    MX_CHECK(data.ndim() == static_cast<int>(rank) + 2)
        << c.where << ": input " << data << " does not match a " << rank << "-D kernel";
    Window w{kernel, c.attrs.Ints("strides", std::vector<int64_t>(rank, 1)),
             c.attrs.Ints("dilations", std::vector<int64_t>(rank, 1)),
             c.attrs.Ints("pads", std::vector<int64_t>(2 * rank, 0))};
    MX_CHECK(w.stride.size() == rank && w.dilation.size() == rank && w.pads.size() == 2 * rank)
        << c.where << ": strides/dilations/pads do not match the " << rank << "-D kernel";
    for (size_t i = 0; i < rank; ++i) {
      MX_CHECK(w.kernel[i] > 0 && w.stride[i] > 0 && w.dilation[i] > 0 && w.pads[i] >= 0 &&
               w.pads[i + rank] >= 0)
          << c.where << ": kernel, strides and dilations must be positive and pads non-negative";
    }
    const std::string auto_pad = c.attrs.String("auto_pad", "NOTSET");
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      std::vector<int64_t> spatial;
      for (size_t i = 0; i < rank; ++i) spatial.push_back(data[static_cast<int>(i) + 2]);
      SamePads(spatial, w.kernel, w.stride, w.dilation, auto_pad == "SAME_UPPER", w.pads);
    } else if (auto_pad == "VALID") {
      w.pads.assign(2 * rank, 0);
    } else {
      MX_CHECK(auto_pad == "NOTSET") << c.where << ": unknown auto_pad '" << auto_pad << "'";
    }
    return w;
  }

  // Input 0, padded in front by a Pad op when `w.pads` is asymmetric (then cleared). Max pooling
  // pads with float's lowest value (attributes hold no infinity).
  NodeEntry PaddedData(const Ctx& c, Window& w, double fill) {
    const NodeEntry data = Entry(c.In(0), c.where);
    if (Symmetric(w.pads)) return data;
    const size_t rank = w.kernel.size();
    std::vector<int64_t> width = {0, 0, 0, 0};
    for (size_t i = 0; i < rank; ++i) {
      width.push_back(w.pads[i]);
      width.push_back(w.pads[i + rank]);
    }
    w.pads.assign(2 * rank, 0);
    return Emit(
        "Pad", c.name + "_pad",
        {{"mode", "constant"}, {"pad_width", Tuple(width)}, {"constant_value", Number(fill)}},
        {data});
  }

  static std::vector<int64_t> Begins(const Window& w) {
    return {w.pads.begin(), w.pads.begin() + static_cast<ptrdiff_t>(w.kernel.size())};
  }

  void ConvertConv(const Ctx& c) {
    const Shape weight = ShapeOf(c.In(1), c.where);
    MX_CHECK(weight.ndim() >= 3) << c.where << ": weight " << weight << " has no spatial axes";
    const std::vector<int64_t> weight_dims = weight.to_vector();
    std::vector<int64_t> kernel(weight_dims.begin() + 2, weight_dims.end());
    MX_CHECK(c.attrs.Ints("kernel_shape", kernel) == kernel)
        << c.where << ": kernel_shape does not match the weight " << weight;
    Window w = ReadWindow(c, kernel, ShapeOf(c.In(0), c.where));
    const NodeEntry data = PaddedData(c, w, 0.0);
    std::vector<NodeEntry> inputs = {data, Entry(c.In(1), c.where)};
    const bool has_bias = !c.In(2).empty();
    if (has_bias) inputs.push_back(Entry(c.In(2), c.where));
    Define(c.node, 0,
           Emit("Convolution", c.name,
                {{"kernel", Tuple(w.kernel)},
                 {"stride", Tuple(w.stride)},
                 {"dilate", Tuple(w.dilation)},
                 {"pad", Tuple(Begins(w))},
                 {"num_filter", std::to_string(weight[0])},
                 {"num_group", std::to_string(c.attrs.Int("group", 1))},
                 {"no_bias", has_bias ? "false" : "true"}},
                inputs));
  }

  // ConvTranspose's begin and end padding per axis. With output_shape (or auto_pad SAME_*,
  // whose output is input * stride) the pads come from the ONNX formula
  //   total = stride * (in - 1) + output_padding + dilated kernel - output,
  // split with floor division (SAME_UPPER puts the larger half at the end) — a negative total
  // pads by extending the output, as ONNX's reference does; otherwise from the pads attribute.
  std::vector<int64_t> TransposedPads(const Ctx& c, const Window& w,
                                      const std::vector<int64_t>& output_padding) {
    const size_t rank = w.kernel.size();
    const std::string auto_pad = c.attrs.String("auto_pad", "NOTSET");
    MX_CHECK(auto_pad == "NOTSET" || auto_pad == "VALID" || auto_pad == "SAME_UPPER" ||
             auto_pad == "SAME_LOWER")
        << c.where << ": unknown auto_pad '" << auto_pad << "'";
    const bool same = auto_pad.starts_with("SAME");
    if (!c.attrs.Has("output_shape") && !same) {
      std::vector<int64_t> pads = c.attrs.Ints("pads", std::vector<int64_t>(2 * rank, 0));
      MX_CHECK(pads.size() == 2 * rank)
          << c.where << ": pads " << Tuple(pads) << " do not match the " << rank << "-D kernel";
      return auto_pad == "VALID" ? std::vector<int64_t>(2 * rank, 0) : pads;
    }
    const Shape in = ShapeOf(c.In(0), c.where);
    MX_CHECK(static_cast<size_t>(in.ndim()) == rank + 2)
        << c.where << ": input " << in << " does not match the " << rank << "-D kernel";
    std::vector<int64_t> target = c.attrs.Ints("output_shape");
    if (target.size() == rank + 2) target.erase(target.begin(), target.begin() + 2);
    if (target.empty()) {
      for (size_t i = 0; i < rank; ++i) target.push_back(in[static_cast<int>(i) + 2] * w.stride[i]);
    }
    MX_CHECK(target.size() == rank) << c.where << ": output_shape " << Tuple(target)
                                    << " does not match the " << rank << "-D kernel";
    std::vector<int64_t> pads(2 * rank);
    for (size_t i = 0; i < rank; ++i) {
      const int64_t total = w.stride[i] * (in[static_cast<int>(i) + 2] - 1) + output_padding[i] +
                            (w.kernel[i] - 1) * w.dilation[i] + 1 - target[i];
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor(total / 2)
      pads[i] = auto_pad == "SAME_UPPER" ? half : total - half;
      pads[i + rank] = total - pads[i];
    }
    return pads;
  }

  void ConvertConvTranspose(const Ctx& c) {
    const Shape weight = ShapeOf(c.In(1), c.where);
    MX_CHECK(weight.ndim() >= 3) << c.where << ": weight " << weight << " has no spatial axes";
    const std::vector<int64_t> weight_dims = weight.to_vector();
    std::vector<int64_t> kernel(weight_dims.begin() + 2, weight_dims.end());
    MX_CHECK(c.attrs.Ints("kernel_shape", kernel) == kernel)
        << c.where << ": kernel_shape does not match the weight " << weight;
    const size_t rank = kernel.size();
    const int64_t group = c.attrs.Int("group", 1);
    Window w{kernel,
             c.attrs.Ints("strides", std::vector<int64_t>(rank, 1)),
             c.attrs.Ints("dilations", std::vector<int64_t>(rank, 1)),
             {}};
    MX_CHECK(w.stride.size() == rank && w.dilation.size() == rank)
        << c.where << ": strides/dilations do not match the " << rank << "-D kernel";
    const std::vector<int64_t> output_padding =
        c.attrs.Ints("output_padding", std::vector<int64_t>(rank, 0));
    MX_CHECK(output_padding.size() == rank)
        << c.where << ": output_padding " << Tuple(output_padding) << " does not match the " << rank
        << "-D kernel";
    w.pads = TransposedPads(c, w, output_padding);
    // Deconvolution crops `pad` at both ends and then extends the end by `adj`: a begin pad b
    // and an end pad e (after output_padding o) are pad = b, adj = b + o - e.
    std::vector<int64_t> adj(rank);
    for (size_t i = 0; i < rank; ++i) {
      adj[i] = w.pads[i] + output_padding[i] - w.pads[i + rank];
      MX_CHECK(w.pads[i] >= 0 && adj[i] >= 0)
          << c.where << ": pads " << Tuple(w.pads) << " with output_padding "
          << Tuple(output_padding) << " are not supported for ConvTranspose (a negative begin "
          << "pad, or an end pad larger than the begin pad plus output_padding)";
    }
    AttrText attrs = {{"kernel", Tuple(kernel)},
                      {"stride", Tuple(w.stride)},
                      {"dilate", Tuple(w.dilation)},
                      {"pad", Tuple(Begins(w))},
                      {"adj", Tuple(adj)},
                      {"num_filter", std::to_string(weight[1] * group)},
                      {"num_group", std::to_string(group)}};
    std::vector<NodeEntry> inputs = {Entry(c.In(0), c.where), Entry(c.In(1), c.where)};
    const bool has_bias = !c.In(2).empty();
    if (has_bias) inputs.push_back(Entry(c.In(2), c.where));
    attrs["no_bias"] = has_bias ? "false" : "true";
    Define(c.node, 0, Emit("Deconvolution", c.name, attrs, inputs));
  }

  void ConvertPool(const Ctx& c, bool max) {
    const std::vector<int64_t> kernel = c.attrs.Ints("kernel_shape");
    MX_CHECK(!kernel.empty()) << c.where << ": kernel_shape is required";
    Window w = ReadWindow(c, kernel, ShapeOf(c.In(0), c.where));
    for (int64_t d : w.dilation) MX_CHECK(d == 1) << c.where << ": dilations are not supported";
    MX_CHECK(c.attrs.Int("storage_order", 0) == 0)
        << c.where << ": storage_order=1 is not supported";
    const bool include_pad = c.attrs.Int("count_include_pad", 0) != 0;
    MX_CHECK(max || include_pad || Symmetric(w.pads))
        << c.where << ": asymmetric pads " << Tuple(w.pads)
        << " with count_include_pad=0 are not supported";
    const NodeEntry data =
        PaddedData(c, w, max ? static_cast<double>(std::numeric_limits<float>::lowest()) : 0.0);
    Define(c.node, 0,
           Emit("Pooling", c.name,
                {{"kernel", Tuple(w.kernel)},
                 {"stride", Tuple(w.stride)},
                 {"pad", Tuple(Begins(w))},
                 {"pool_type", max ? "max" : "avg"},
                 {"pooling_convention", c.attrs.Int("ceil_mode", 0) ? "full" : "valid"},
                 {"count_include_pad", include_pad ? "true" : "false"}},
                {data}));
    Unsupported(c.node, 1, "MaxPool's Indices output is not supported");
  }

  void ConvertBatchNorm(const Ctx& c) {
    MX_CHECK(c.attrs.Int("spatial", 1) == 1) << c.where << ": spatial=0 is not supported";
    MX_CHECK(c.attrs.Int("training_mode", 0) == 0)
        << c.where << ": training_mode=1 is not supported (inference only)";
    std::vector<NodeEntry> inputs = {Entry(c.In(0), c.where), Entry(c.In(1), c.where),
                                     Entry(c.In(2), c.where),
                                     Entry(c.In(3), c.where, VariableRole::kAuxiliary),
                                     Entry(c.In(4), c.where, VariableRole::kAuxiliary)};
    Define(c.node, 0,
           Emit("BatchNorm", c.name,
                {{"eps", Number(c.attrs.Float("epsilon", 1e-5))},
                 {"momentum", Number(c.attrs.Float("momentum", 0.9))},
                 {"fix_gamma", "false"},
                 {"use_global_stats", "true"}},
                inputs));
    Unsupported(c.node, 1, "BatchNormalization's training outputs are not supported");
  }

  void ConvertPad(const Ctx& c) {
    std::vector<int64_t> pads = c.attrs.Ints("pads");
    double value = c.attrs.Float("value", 0);
    if (opset_ >= 11) {
      pads = RequireConstant(c.In(1), c.where, "pads").ToInt64s(c.where + " pads");
      if (!c.In(2).empty()) {
        const std::vector<double> fill =
            RequireConstant(c.In(2), c.where, "constant_value").AsDoubles(c.where);
        MX_CHECK(fill.size() == 1) << c.where << ": constant_value must be one value";
        value = fill[0];
      }
      MX_CHECK(c.In(3).empty()) << c.where << ": the axes input is not supported";
    }
    const Shape in = ShapeOf(c.In(0), c.where);
    MX_CHECK(pads.size() == 2 * static_cast<size_t>(in.ndim()))
        << c.where << ": " << pads.size() << " pads for an input of rank " << in.ndim();
    const size_t rank = pads.size() / 2;
    std::vector<int64_t> width;
    for (size_t i = 0; i < rank; ++i) {
      MX_CHECK(pads[i] >= 0 && pads[i + rank] >= 0)
          << c.where << ": negative pads (cropping) " << Tuple(pads) << " are not supported";
      width.push_back(pads[i]);
      width.push_back(pads[i + rank]);
    }
    const std::string mode = c.attrs.String("mode", "constant");
    MX_CHECK(mode == "constant" || mode == "reflect" || mode == "edge")
        << c.where << ": unknown mode '" << mode << "'";
    Define(c.node, 0,
           Emit("Pad", c.name,
                {{"mode", mode}, {"pad_width", Tuple(width)}, {"constant_value", Number(value)}},
                {Entry(c.In(0), c.where)}));
  }

  void ConvertClip(const Ctx& c) {
    AttrText attrs;
    if (opset_ < 11) {
      if (c.attrs.Has("min")) attrs["a_min"] = Number(c.attrs.Float("min", 0));
      if (c.attrs.Has("max")) attrs["a_max"] = Number(c.attrs.Float("max", 0));
    } else {
      const char* keys[] = {"a_min", "a_max"};
      for (int i = 1; i <= 2; ++i) {
        if (c.In(i).empty()) continue;
        const std::vector<double> bound =
            RequireConstant(c.In(i), c.where, i == 1 ? "min" : "max").AsDoubles(c.where);
        MX_CHECK(bound.size() == 1) << c.where << ": a Clip bound must be one value";
        attrs[keys[i - 1]] = Number(bound[0]);
      }
    }
    Define(c.node, 0, Emit("clip", c.name, attrs, {Entry(c.In(0), c.where)}));
  }

  // ---- Outputs and final checks ------------------------------------------------------------

  void AddOutputs(const onnx::GraphProto& graph) {
    MX_CHECK(graph.output_size() > 0) << file_ << ": the graph has no outputs";
    for (const onnx::ValueInfoProto& output : graph.output()) {
      const std::string where = file_ + ": graph output '" + output.name() + "'";
      MX_CHECK(values_.count(output.name()) || graph_inputs_.count(output.name()))
          << where << " is not computed by any node";
      NodeEntry entry = Entry(output.name(), where);
      if (graph_.node(entry.node).is_variable()) {
        entry = Emit("identity", output.name() + "_output", {}, {entry});
      }
      graph_.AddOutput(entry);
      out_.output_names.push_back(output.name());
    }
  }

  // Shape inference over the whole graph: mismatches are errors now, not at bind, and no value
  // may be larger than kMaxOnnxTensorElements.
  void CheckFinalShapes() {
    const GraphShapes shapes = InferGraphShapes(graph_);
    for (int id = 0; id < graph_.num_nodes(); ++id) {
      for (const Shape& shape : shapes.shapes[static_cast<size_t>(id)]) {
        MX_CHECK(shape.size() <= kMaxOnnxTensorElements)
            << file_ << ": node '" << graph_.node(id).name << "' would produce " << shape
            << ", more than " << kMaxOnnxTensorElements << " elements";
      }
    }
  }

  const onnx::ModelProto& model_;
  std::string file_;
  std::string dir_;
  const ImportOptions& options_;
  int64_t opset_ = 0;
  Graph graph_;
  ImportedModel out_;
  std::map<std::string, Value> values_;
  std::map<std::string, const onnx::ValueInfoProto*> graph_inputs_;
  std::set<std::string> reserved_;  // names of initialisers and inputs (future variables)
  GraphShapes shapes_;
  int shapes_nodes_ = -1;
};

}  // namespace

ImportedModel ImportOnnxBytes(const std::string& bytes, const std::string& display_name,
                              const std::string& model_dir, const ImportOptions& options) {
  MX_CHECK(bytes.size() <= kMaxModelBytes)
      << display_name << ": " << bytes.size() << " bytes exceeds protobuf's 2 GiB limit";
  onnx::ModelProto model;
  MX_CHECK(model.ParseFromString(bytes))
      << display_name << ": not a valid ONNX model (truncated or malformed protobuf)";
  return Importer(model, display_name, model_dir, options).Run();
}

ImportedModel ImportOnnx(const std::string& path, const ImportOptions& options) {
  const std::string bytes = ReadFileBytes(path, kMaxModelBytes);
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return ImportOnnxBytes(bytes, path, dir.empty() ? "." : dir, options);
}

std::string OnnxInputInfo::ToString() const {
  std::string text = std::string(DTypeName(dtype)) + " (";
  if (!has_shape) return text + "any shape)";
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    if (axis > 0) text += ",";
    if (dims[axis] >= 0) {
      text += std::to_string(dims[axis]);
    } else {
      text += dim_params[axis].empty() ? "?" : dim_params[axis];
    }
  }
  return text + ")";
}

bool OnnxInputInfo::Accepts(const Shape& shape) const {
  if (!has_shape) return true;
  if (static_cast<size_t>(shape.ndim()) != dims.size()) return false;
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    if (dims[axis] >= 0 && dims[axis] != shape[static_cast<int>(axis)]) return false;
  }
  return true;
}

std::vector<OnnxInputInfo> ReadOnnxInputs(const std::string& path) {
  const std::string bytes = ReadFileBytes(path, kMaxModelBytes);
  onnx::ModelProto model;
  MX_CHECK(model.ParseFromString(bytes))
      << path << ": not a valid ONNX model (truncated or malformed protobuf)";
  MX_CHECK(model.has_graph()) << path << ": the model has no graph (empty or not an ONNX file)";
  std::set<std::string> initializers;
  for (const onnx::TensorProto& tensor : model.graph().initializer()) {
    initializers.insert(tensor.name());
  }
  std::vector<OnnxInputInfo> inputs;
  for (const onnx::ValueInfoProto& input : model.graph().input()) {
    if (initializers.count(input.name())) continue;
    const std::string where = path + ": graph input '" + input.name() + "'";
    MX_CHECK(input.type().has_tensor_type()) << where << " is not a tensor";
    const onnx::TypeProto::Tensor& type = input.type().tensor_type();
    OnnxInputInfo info{.name = input.name(), .dtype = DTypeFromOnnx(type.elem_type(), where)};
    info.has_shape = type.has_shape();
    for (const auto& dim : type.shape().dim()) {
      const bool known = dim.has_dim_value() && dim.dim_value() >= 0;
      info.dims.push_back(known ? dim.dim_value() : -1);
      info.dim_params.push_back(dim.has_dim_param() ? dim.dim_param() : "");
    }
    inputs.push_back(std::move(info));
  }
  return inputs;
}

NDArray ToNDArray(const HostTensor& tensor, Context ctx) {
  NDArray array(tensor.shape, ctx, tensor.dtype);
  array.SyncCopyFromCPU(tensor.bytes.data(), tensor.bytes.size());
  return array;
}

std::map<std::string, NDArray> ParameterArrays(const ImportedModel& model, Context ctx) {
  std::map<std::string, NDArray> arrays;
  for (const auto& [name, tensor] : model.parameters) arrays[name] = ToNDArray(tensor, ctx);
  return arrays;
}

}  // namespace mxlite
