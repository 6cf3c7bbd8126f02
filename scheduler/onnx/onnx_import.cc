#include "scheduler/onnx/onnx_import.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "core/error.h"
#include "core/settings.h"
#include "onnx/onnx_pb.h"  // defines ONNX_API, then includes onnx/onnx-ml.pb.h
#include "ops/attributes.h"
#include "scheduler/graph/infer_shapes.h"
#include "scheduler/onnx/onnx_converter.h"
#include "scheduler/onnx/onnx_fold.h"
#include "scheduler/onnx/onnx_patterns.h"

namespace mxlite {
namespace {

// The largest model file read (protobuf itself cannot parse messages of 2 GiB or more).
constexpr uint64_t kMaxModelBytes = (uint64_t{1} << 31) - 1;
// Outputs of this many elements are always folded at load (larger ones up to the node's inputs).
constexpr int64_t kMaxFoldElements = int64_t{1} << 20;

// A value of the ONNX graph during import: an entry of the mxlite graph, a constant known at load,
// a sequence (the names of its elements), or an output mxlite cannot produce (with the reason).
struct Value {
  std::optional<NodeEntry> entry;
  std::optional<HostTensor> constant;
  std::optional<std::vector<std::string>> sequence;
  std::string unsupported;
};

// The graphs held by `node`'s attributes (a Loop's body, an If's branches).
std::vector<const onnx::GraphProto*> Subgraphs(const onnx::NodeProto& node) {
  std::vector<const onnx::GraphProto*> graphs;
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.type() == onnx::AttributeProto::GRAPH) graphs.push_back(&attribute.g());
    for (const onnx::GraphProto& graph : attribute.graphs()) graphs.push_back(&graph);
  }
  return graphs;
}

// Every name `graph` defines: its inputs, initialisers and nodes' outputs, nested graphs included.
void CollectDefined(const onnx::GraphProto& graph, std::set<std::string>& defined) {
  for (const onnx::ValueInfoProto& input : graph.input()) defined.insert(input.name());
  for (const onnx::TensorProto& tensor : graph.initializer()) defined.insert(tensor.name());
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& output : node.output()) {
      if (!output.empty()) defined.insert(output);
    }
    for (const onnx::GraphProto* nested : Subgraphs(node)) CollectDefined(*nested, defined);
  }
}

// The names `graph` (nested graphs included) reads from the graphs around it.
void CollectOuterReads(const onnx::GraphProto& graph, const std::set<std::string>& defined,
                       std::set<std::string>& reads) {
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& input : node.input()) {
      if (!input.empty() && !defined.count(input)) reads.insert(input);
    }
    for (const onnx::GraphProto* nested : Subgraphs(node)) {
      CollectOuterReads(*nested, defined, reads);
    }
  }
  for (const onnx::ValueInfoProto& output : graph.output()) {
    if (!defined.count(output.name())) reads.insert(output.name());
  }
}

// What `node` reads: its inputs, and the names its subgraphs read from the enclosing graphs.
std::vector<std::string> NodeReads(const onnx::NodeProto& node) {
  std::vector<std::string> reads(node.input().begin(), node.input().end());
  for (const onnx::GraphProto* graph : Subgraphs(node)) {
    std::set<std::string> defined, outer;
    CollectDefined(*graph, defined);
    CollectOuterReads(*graph, defined, outer);
    reads.insert(reads.end(), outer.begin(), outer.end());
  }
  return reads;
}

// Renames every name `graph` defines or reads through `rename` (which keeps the names it does not
// own), nested graphs included.
void RenameGraph(onnx::GraphProto& graph,
                 const std::function<std::string(const std::string&)>& rename) {
  for (onnx::ValueInfoProto& input : *graph.mutable_input()) input.set_name(rename(input.name()));
  for (onnx::ValueInfoProto& output : *graph.mutable_output()) {
    output.set_name(rename(output.name()));
  }
  for (onnx::TensorProto& tensor : *graph.mutable_initializer()) {
    tensor.set_name(rename(tensor.name()));
  }
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    for (std::string& input : *node.mutable_input()) input = rename(input);
    for (std::string& output : *node.mutable_output()) output = rename(output);
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      if (attribute.type() == onnx::AttributeProto::GRAPH) {
        RenameGraph(*attribute.mutable_g(), rename);
      }
      for (onnx::GraphProto& nested : *attribute.mutable_graphs()) RenameGraph(nested, rename);
    }
  }
}

// Reads the model's declarations, then converts its nodes in topological order, each by the
// converter of its op type at the model's opset (onnx_converter.h).
class Importer final : public OnnxValues {
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
    const OnnxGraphIndex index_of_graph(graph);
    std::set<int> replaced;  // nodes of formulas imported as one op (onnx_patterns.h)
    const bool fuse =
        options_.fuse_formulas.value_or(settings().GetBool("MXNET_ONNX_FUSE_FORMULAS"));
    for (int index : order) {
      if (replaced.count(index)) continue;
      if (fuse && FuseFormulaAt(index, index_of_graph, *this, replaced)) continue;
      const int first = graph_.num_nodes();
      ConvertNode(graph.node(index), index);
      FoldAtLoad(graph.node(index), first);
    }
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
    MX_CHECK(opset_ >= kMinOnnxOpset && opset_ <= kMaxOnnxOpset)
        << file_ << ": opset " << opset_ << " of the default domain is not supported (mxlite "
        << "imports opsets " << kMinOnnxOpset << " to " << kMaxOnnxOpset << ")";
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
      for (const std::string& input : NodeReads(graph.node(i))) {
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

  // Every node needs a converter for its op type at the model's opset: all that lack one are
  // listed in one error, grouped by op type, each type with why and its first few nodes. Nested
  // graphs are checked with their node, but for a converter that chooses its subgraphs at load
  // (OnnxConverterEntry::chooses_subgraphs: an If's branches): only the one it imports is
  // checked, when it is (ConvertSubgraph), so an untaken branch may hold ops mxlite does not
  // import.
  void CheckSupported(const onnx::GraphProto& graph, const std::vector<int>& order) {
    std::vector<std::pair<const onnx::NodeProto*, int>> nodes;
    for (int index : order) nodes.emplace_back(&graph.node(index), index);
    CheckSupportedNodes(nodes, file_ + ": ");
  }

  // `where` starts the error ("model.onnx: ", or "subgraph 'then_branch': " inside the error of
  // the node that imports it).
  void CheckSupportedNodes(const std::vector<std::pair<const onnx::NodeProto*, int>>& nodes,
                           const std::string& where) {
    struct Missing {
      std::string why;
      std::vector<std::string> nodes;
    };
    std::vector<std::string> types;  // in order of first appearance
    std::map<std::string, Missing> missing;
    int count = 0;
    std::function<void(const onnx::NodeProto&, int)> check = [&](const onnx::NodeProto& node,
                                                                 int index) {
      const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
      const OnnxConverterEntry* converter =
          default_domain ? OnnxConverterRegistry::Global().Find(node.op_type(), opset_) : nullptr;
      const bool chosen_later = converter != nullptr && converter->chooses_subgraphs;
      for (const onnx::GraphProto* subgraph :
           chosen_later ? std::vector<const onnx::GraphProto*>{} : Subgraphs(node)) {
        for (int i = 0; i < subgraph->node_size(); ++i) check(subgraph->node(i), i);
      }
      if (converter != nullptr) return;
      const std::string type = default_domain ? node.op_type() : node.domain() + "." + node.op_type();
      auto [it, first] = missing.try_emplace(type);
      if (first) {
        types.push_back(type);
        it->second.why = default_domain ? WhyNotImported(node.op_type(), opset_)
                                        : "not imported (domain " + node.domain() + ')';
      }
      it->second.nodes.push_back(Quoted(NodeName(node, index)));
      ++count;
    };
    for (const auto& [node, index] : nodes) check(*node, index);
    if (count == 0) return;
    constexpr size_t kNodesNamed = 3;
    std::ostringstream list;
    for (size_t t = 0; t < types.size(); ++t) {
      const Missing& m = missing[types[t]];
      list << (t ? "; " : " ") << types[t] << " (" << m.why << "): ";
      for (size_t n = 0; n < std::min(m.nodes.size(), kNodesNamed); ++n) {
        list << (n ? ", " : "") << m.nodes[n];
      }
      if (m.nodes.size() > kNodesNamed) list << " and " << m.nodes.size() - kNodesNamed << " more";
    }
    MX_THROW() << where << count << " node(s) use " << types.size()
               << " op type(s) mxlite does not import:" << list.str();
  }

  static std::string Describe(const onnx::NodeProto& node, int index) {
    std::string text = Quoted(NodeName(node, index));
    text += " (";
    if (!node.domain().empty()) text += node.domain() + ".";
    return text + node.op_type() + ")";
  }
  // 'name' (built by appending: GCC 12 warns falsely on "'" + std::string).
  static std::string Quoted(const std::string& name) {
    std::string text(1, '\'');
    text += name;
    text += '\'';
    return text;
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
    return ValueDTypeFromOnnx(input.type().tensor_type().elem_type(), where);
  }

  // The graph entry holding ONNX value `name`; constants become parameter (or auxiliary)
  // variables and graph inputs input variables the first time they are used as data.
  NodeEntry Entry(const std::string& name, const std::string& where,
                  VariableRole constant_role) override {
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
    MX_CHECK(!value.sequence) << where << ": uses the sequence '" << name
                              << "' where a tensor is expected";
    if (!value.entry) {
      const HostTensor& tensor = *value.constant;
      const std::string var = UniqueName(name, true);
      const int id = graph_.AddVariable(var, constant_role, tensor.shape, tensor.dtype);
      out_.parameters[var] = tensor;
      value.entry = NodeEntry{id, 0};
    }
    return *value.entry;
  }

  const HostTensor* Constant(const std::string& name) override {
    auto it = values_.find(name);
    if (it != values_.end()) return it->second.constant ? &*it->second.constant : nullptr;
    auto given = options_.constant_inputs.find(name);
    return given != options_.constant_inputs.end() ? &given->second : nullptr;
  }

  // Where what is known of `name` comes from: its value known at load, its declaration as a graph
  // input, or the graph entry computing it (then the shapes are inferred up to date).
  struct ValueSource {
    const HostTensor* constant = nullptr;
    const onnx::ValueInfoProto* input = nullptr;
    NodeEntry entry;
  };
  ValueSource SourceOf(const std::string& name, const std::string& where) {
    ValueSource source;
    source.constant = Constant(name);
    if (source.constant != nullptr) return source;
    if (values_.find(name) == values_.end()) {
      auto input = graph_inputs_.find(name);
      MX_CHECK(input != graph_inputs_.end()) << where << ": value '" << name << "' is undefined";
      source.input = input->second;
      return source;
    }
    source.entry = Entry(name, where, VariableRole::kParameter);
    UpdateShapes();
    return source;
  }

  Shape ShapeOf(const std::string& name, const std::string& where) override {
    const ValueSource source = SourceOf(name, where);
    if (source.constant != nullptr) return source.constant->shape;
    if (source.input != nullptr) return DeclaredInputShape(*source.input);
    return shapes_.of(source.entry);
  }

  DType DTypeOf(const std::string& name, const std::string& where) override {
    const ValueSource source = SourceOf(name, where);
    if (source.constant != nullptr) return source.constant->dtype;
    if (source.input != nullptr) return DeclaredInputDType(*source.input);
    return shapes_.dtype_of(source.entry);
  }

  void UpdateShapes() {
    if (shapes_nodes_ != graph_.num_nodes()) {
      shapes_ = InferGraphShapes(graph_);
      shapes_nodes_ = graph_.num_nodes();
    }
  }

  // A definition replaces whatever the name held before (a subgraph imported again).
  void Define(const std::string& name, NodeEntry entry) override {
    values_[name] = Value{};
    values_[name].entry = entry;
  }
  void DefineConstant(const std::string& name, HostTensor tensor) override {
    values_[name] = Value{};
    values_[name].constant = std::move(tensor);
  }
  void MarkUnsupported(const std::string& name, const std::string& why) override {
    values_[name].unsupported = why;
  }
  NodeEntry NewConstant(const std::string& base, HostTensor tensor, VariableRole role) override {
    const std::string var = UniqueName(base, false);
    const int id = graph_.AddVariable(var, role, tensor.shape, tensor.dtype);
    out_.parameters[var] = std::move(tensor);
    return NodeEntry{id, 0};
  }
  NodeEntry Emit(const std::string& op, const std::string& base, const AttrText& attrs,
                 const std::vector<NodeEntry>& inputs) override {
    const int id = graph_.AddOpNode(op, UniqueName(base, false), attrs, inputs);
    return NodeEntry{id, 0};
  }
  const std::string& model_dir() const override { return dir_; }

  const std::vector<std::string>* Sequence(const std::string& name) override {
    auto it = values_.find(name);
    return it != values_.end() && it->second.sequence ? &*it->second.sequence : nullptr;
  }
  void DefineSequence(const std::string& name, std::vector<std::string> elements) override {
    Value value;
    value.sequence = std::move(elements);
    values_[name] = std::move(value);
  }
  void Alias(const std::string& name, const std::string& source) override {
    if (name == source) return;
    if (!values_.count(source)) {
      if (const HostTensor* given = Constant(source)) {
        values_[name].constant = *given;
        return;
      }
      Entry(source, file_ + ": value '" + name + "'", VariableRole::kParameter);
    }
    values_[name] = values_.at(source);
  }

  std::vector<std::string> ConvertSubgraph(const onnx::GraphProto& graph,
                                           const std::vector<std::string>& inputs,
                                           const std::string& prefix) override {
    MX_CHECK(static_cast<int>(inputs.size()) == graph.input_size())
        << file_ << ": subgraph '" << graph.name() << "' takes " << graph.input_size()
        << " inputs, given " << inputs.size();
    {  // an If's branch is checked when it is the one imported (CheckSupported)
      std::vector<std::pair<const onnx::NodeProto*, int>> nodes;
      for (int i = 0; i < graph.node_size(); ++i) nodes.emplace_back(&graph.node(i), i);
      CheckSupportedNodes(nodes, "subgraph '" + graph.name() + "': ");
    }
    std::set<std::string> local;
    CollectDefined(graph, local);
    auto rename = [&](const std::string& name) {
      return name.empty() || !local.count(name) ? name : prefix + name;
    };
    onnx::GraphProto renamed = graph;
    RenameGraph(renamed, rename);
    for (int i = 0; i < renamed.input_size(); ++i) {
      Alias(renamed.input(i).name(), inputs[static_cast<size_t>(i)]);
    }
    for (const onnx::TensorProto& tensor : renamed.initializer()) {
      DefineConstant(
          tensor.name(),
          TensorFromProto(tensor, file_ + ": initializer '" + tensor.name() + "'", dir_));
    }
    for (int i = 0; i < renamed.node_size(); ++i) {
      onnx::NodeProto& node = *renamed.mutable_node(i);
      node.set_name(prefix +
                    (node.name().empty() ? node.op_type() + "_" + std::to_string(i) : node.name()));
      subgraph_nodes_.push_back(node);  // kept: converters may keep pointers into it
      const int first = graph_.num_nodes();
      ConvertNode(subgraph_nodes_.back(), i);
      FoldAtLoad(subgraph_nodes_.back(), first);
    }
    std::vector<std::string> outputs;
    for (const onnx::ValueInfoProto& output : renamed.output()) outputs.push_back(output.name());
    return outputs;
  }

  // ---- Nodes -------------------------------------------------------------------------------

  void ConvertNode(const onnx::NodeProto& node, int index) {
    const std::string where = file_ + ": node " + Describe(node, index);
    try {
      MX_CHECK(node.output_size() >= 1) << where << ": has no output";
      OnnxNode converting(node, NodeName(node, index), where, opset_, *this);
      OnnxConverterRegistry::Global().Find(node.op_type(), opset_)->convert(converting);
    } catch (const Error& error) {
      const std::string message = error.what();
      if (message.find(where) != std::string::npos) throw;
      throw Error(where + ": " + message);
    }
  }

  // A node whose inputs are all known at load is computed now (onnx_fold.h): the mxlite nodes its
  // converter emitted (from id `first` on) run on the CPU kernels, its outputs become constants
  // and the nodes, with the variables made for them, are removed. A fold that cannot run leaves
  // the nodes to the model. Folded outputs are kept up to kMaxFoldElements, or as large as the
  // node's inputs together: a value a model computes from a small constant (a Tile of it) stays a
  // computation rather than a large parameter. (Values given as ImportOptions::constant_inputs
  // stay the model's inputs: nodes that read them are not folded.)
  void FoldAtLoad(const onnx::NodeProto& node, int first) {
    if (graph_.num_nodes() == first || node.input_size() == 0) return;
    // A Loop or If was imported node by node, each folded as it could be; its explicit inputs
    // (a condition, a trip count) say nothing of what its subgraphs read.
    if (!Subgraphs(node).empty()) return;
    int64_t input_elements = 0;
    for (const std::string& input : node.input()) {
      if (input.empty()) continue;
      const HostTensor* value = Constant(input);
      if (value == nullptr) return;
      input_elements += value->num_elements();
    }
    std::vector<std::string> names;
    std::vector<NodeEntry> entries;
    for (const std::string& output : node.output()) {
      auto it = values_.find(output);
      if (output.empty() || it == values_.end() || !it->second.entry) continue;
      if (it->second.constant || it->second.entry->node < first) return;
      names.push_back(output);
      entries.push_back(*it->second.entry);
    }
    if (names.empty()) return;
    std::optional<std::vector<HostTensor>> folded = EvaluateAtLoad(
        graph_, first, entries,
        [&](int id) -> const HostTensor* {
          auto it = out_.parameters.find(graph_.node(id).name);
          return it != out_.parameters.end() ? &it->second : nullptr;
        },
        std::max(kMaxFoldElements, input_elements));
    if (!folded) return;
    for (size_t i = 0; i < names.size(); ++i) {
      values_[names[i]].entry.reset();
      values_[names[i]].constant = std::move((*folded)[i]);
    }
    RemoveNodesFrom(first);
  }

  // Drops the graph's nodes from id `first` on, with what refers to them (variables' values,
  // cached entries of constants first read by them).
  void RemoveNodesFrom(int first) {
    for (int id = first; id < graph_.num_nodes(); ++id) {
      const Node& removed = graph_.node(id);
      if (removed.is_variable()) out_.parameters.erase(removed.name);
    }
    for (auto& [name, value] : values_) {
      if (value.entry && value.entry->node >= first) {
        MX_CHECK(value.constant) << file_ << ": value '" << name << "' lost in a fold";
        value.entry.reset();
      }
    }
    graph_.Truncate(first);
    shapes_nodes_ = -1;
  }

  // ---- Outputs and final checks ------------------------------------------------------------

  void AddOutputs(const onnx::GraphProto& graph) {
    MX_CHECK(graph.output_size() > 0) << file_ << ": the graph has no outputs";
    for (const onnx::ValueInfoProto& output : graph.output()) {
      const std::string where = file_ + ": graph output '" + output.name() + "'";
      MX_CHECK(values_.count(output.name()) || graph_inputs_.count(output.name()))
          << where << " is not computed by any node";
      NodeEntry entry = Entry(output.name(), where, VariableRole::kParameter);
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
  std::deque<onnx::NodeProto> subgraph_nodes_;  // the renamed nodes of converted subgraphs
  GraphShapes shapes_;
  int shapes_nodes_ = -1;
};

}  // namespace

namespace {

std::shared_ptr<const onnx::ModelProto> ParseModel(const std::string& bytes,
                                                   const std::string& display_name) {
  MX_CHECK(bytes.size() <= kMaxModelBytes)
      << display_name << ": " << bytes.size() << " bytes exceeds protobuf's 2 GiB limit";
  auto model = std::make_shared<onnx::ModelProto>();
  MX_CHECK(model->ParseFromString(bytes))
      << display_name << ": not a valid ONNX model (truncated or malformed protobuf)";
  return model;
}

}  // namespace

ImportedModel ImportOnnxBytes(const std::string& bytes, const std::string& display_name,
                              const std::string& model_dir, const ImportOptions& options) {
  return Importer(*ParseModel(bytes, display_name), display_name, model_dir, options).Run();
}

ImportedModel ImportOnnx(const std::string& path, const ImportOptions& options) {
  return OnnxModelFile(path).Import(options);
}

OnnxModelFile::OnnxModelFile(const std::string& path)
    : path_(path), model_(ParseModel(ReadFileBytes(path, kMaxModelBytes), path)) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  dir_ = dir.empty() ? "." : dir;
}

OnnxModelFile::~OnnxModelFile() = default;

ImportedModel OnnxModelFile::Import(const ImportOptions& options) const {
  return Importer(*model_, path_, dir_, options).Run();
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
  return OnnxModelFile(path).Inputs();
}

std::vector<OnnxInputInfo> OnnxModelFile::Inputs() const {
  const onnx::ModelProto& model = *model_;
  const std::string& path = path_;
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
    OnnxInputInfo info{.name = input.name(), .dtype = ValueDTypeFromOnnx(type.elem_type(), where)};
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
