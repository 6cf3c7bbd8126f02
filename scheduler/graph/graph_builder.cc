#include "scheduler/graph/graph_builder.h"

#include <cctype>
#include <sstream>

#include "core/error.h"

namespace mxlite {

namespace {

std::string BoolText(bool value) { return value ? "true" : "false"; }

std::string FloatText(double value) {
  std::ostringstream out;
  out.precision(17);
  out << value;
  return out.str();
}

// The op's prefix for names it makes up (OpDef::name_prefix), else its lowercased name.
std::string NamePrefix(const OpDef& op, const std::map<std::string, std::string>& attrs) {
  if (op.name_prefix) return op.name_prefix(attrs);
  std::string lower = op.name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

}  // namespace

std::string GraphBuilder::AutoName(const std::string& prefix, const std::string& given) {
  if (!given.empty()) return given;
  while (true) {
    std::string name = prefix + std::to_string(name_counters_[prefix]++);
    if (!graph_.HasName(name)) return name;
  }
}

Symbol GraphBuilder::Input(const std::string& name, const Shape& shape, DType dtype) {
  return {this, {graph_.AddVariable(name, VariableRole::kInput, shape, dtype), 0}};
}

Symbol GraphBuilder::Parameter(const std::string& name, std::optional<Shape> shape,
                               std::optional<DType> dtype) {
  return {this, {graph_.AddVariable(name, VariableRole::kParameter, shape, dtype), 0}};
}

Symbol GraphBuilder::Op(const std::string& op_name, const std::vector<Symbol>& inputs,
                        const std::map<std::string, std::string>& attrs, const std::string& name) {
  const OpDef& op = OpRegistry::Global().Get(op_name);
  const std::string node_name = AutoName(NamePrefix(op, attrs), name);
  const Attributes parsed = ParseOpAttributes(op, attrs, node_name);
  const std::vector<std::string> input_names = InputNames(op, parsed);
  const std::vector<InputRole> roles = InputRoles(op, parsed);
  MX_CHECK(inputs.size() <= input_names.size())
      << op_name << " " << node_name << " takes " << input_names.size() << " inputs, got "
      << inputs.size();
  std::vector<NodeEntry> entries;
  for (const Symbol& input : inputs) {
    MX_CHECK(input.builder == this)
        << op_name << " " << node_name << ": an input comes from another GraphBuilder";
    entries.push_back(input.entry);
  }
  for (size_t i = inputs.size(); i < input_names.size(); ++i) {
    MX_CHECK(roles[i] != InputRole::kData)
        << op_name << " " << node_name << ": data input '" << input_names[i] << "' was not given";
    const VariableRole role =
        roles[i] == InputRole::kAuxiliary ? VariableRole::kAuxiliary : VariableRole::kParameter;
    entries.push_back(
        {graph_.AddVariable(node_name + "_" + input_names[i], role, std::nullopt), 0});
  }
  return {this, {graph_.AddOpNode(op_name, node_name, attrs, entries), 0}};
}

std::vector<Symbol> GraphBuilder::Outputs(Symbol symbol) {
  const Node& node = graph_.node(symbol.entry.node);
  const int visible = node.is_variable() ? 1 : NumVisibleOutputs(*node.op, node.attrs);
  std::vector<Symbol> outputs;
  for (int i = 0; i < visible; ++i) outputs.push_back({this, {symbol.entry.node, i}});
  return outputs;
}

Symbol GraphBuilder::Conv(Symbol x, const ConvOptions& options, const std::string& name) {
  std::map<std::string, std::string> attrs = {{"num_filter", std::to_string(options.num_filter)},
                                              {"kernel", FormatIntTuple(options.kernel)},
                                              {"num_group", std::to_string(options.num_group)},
                                              {"no_bias", BoolText(options.no_bias)}};
  if (!options.stride.empty()) attrs["stride"] = FormatIntTuple(options.stride);
  if (!options.pad.empty()) attrs["pad"] = FormatIntTuple(options.pad);
  if (!options.dilate.empty()) attrs["dilate"] = FormatIntTuple(options.dilate);
  if (options.cudnn_tune) attrs["cudnn_tune"] = *options.cudnn_tune;
  if (options.layout) attrs["layout"] = *options.layout;
  if (options.workspace) attrs["workspace"] = std::to_string(*options.workspace);
  return Op("Convolution", {x}, attrs, name);
}

Symbol GraphBuilder::FullyConnected(Symbol x, const FullyConnectedOptions& options,
                                    const std::string& name) {
  return Op("FullyConnected", {x},
            {{"num_hidden", std::to_string(options.num_hidden)},
             {"no_bias", BoolText(options.no_bias)},
             {"flatten", BoolText(options.flatten)}},
            name);
}

Symbol GraphBuilder::Activation(Symbol x, const std::string& act_type, const std::string& name) {
  return Op("Activation", {x}, {{"act_type", act_type}}, name);
}

namespace {
std::map<std::string, std::string> PoolAttributes(const PoolOptions& options,
                                                  const std::string& type) {
  std::map<std::string, std::string> attrs = {
      {"pool_type", type},
      {"kernel", FormatIntTuple(options.kernel)},
      {"pooling_convention", options.ceil_mode ? "full" : "valid"},
      {"count_include_pad", BoolText(options.count_include_pad)}};
  if (!options.stride.empty()) attrs["stride"] = FormatIntTuple(options.stride);
  if (!options.pad.empty()) attrs["pad"] = FormatIntTuple(options.pad);
  return attrs;
}
}  // namespace

Symbol GraphBuilder::MaxPool(Symbol x, const PoolOptions& options, const std::string& name) {
  return Op("Pooling", {x}, PoolAttributes(options, "max"), name);
}

Symbol GraphBuilder::AvgPool(Symbol x, const PoolOptions& options, const std::string& name) {
  return Op("Pooling", {x}, PoolAttributes(options, "avg"), name);
}

Symbol GraphBuilder::GlobalAvgPool(Symbol x, const std::string& name) {
  return Op("Pooling", {x}, {{"pool_type", "avg"}, {"global_pool", "true"}}, name);
}

Symbol GraphBuilder::BatchNorm(Symbol x, const BatchNormOptions& options, const std::string& name) {
  return Op("BatchNorm", {x},
            {{"eps", FloatText(options.eps)},
             {"momentum", FloatText(options.momentum)},
             {"fix_gamma", BoolText(options.fix_gamma)},
             {"use_global_stats", BoolText(options.use_global_stats)}},
            name);
}

Symbol GraphBuilder::LayerNorm(Symbol x, int axis, double eps, const std::string& name) {
  return Op("LayerNorm", {x}, {{"axis", std::to_string(axis)}, {"eps", FloatText(eps)}}, name);
}

Symbol GraphBuilder::GroupNorm(Symbol x, int64_t groups, double eps, const std::string& name) {
  return Op("GroupNorm", {x}, {{"num_groups", std::to_string(groups)}, {"eps", FloatText(eps)}},
            name);
}

Symbol GraphBuilder::Dropout(Symbol x, double p, const std::string& name) {
  return Op("Dropout", {x}, {{"p", FloatText(p)}}, name);
}

Symbol GraphBuilder::Flatten(Symbol x, const std::string& name) {
  return Op("Flatten", {x}, {}, name);
}

Symbol GraphBuilder::Mean(Symbol x, const std::vector<int64_t>& axis, bool keepdims,
                          const std::string& name) {
  return Op("mean", {x}, {{"axis", FormatIntTuple(axis)}, {"keepdims", keepdims ? "1" : "0"}},
            name);
}

Symbol GraphBuilder::Sum(Symbol x, const std::vector<int64_t>& axis, bool keepdims,
                         const std::string& name) {
  return Op("sum", {x}, {{"axis", FormatIntTuple(axis)}, {"keepdims", keepdims ? "1" : "0"}}, name);
}

Symbol GraphBuilder::Slice(Symbol x, const std::vector<int64_t>& begin,
                           const std::vector<int64_t>& end, const std::vector<int64_t>& step,
                           const std::string& name) {
  return Op("slice", {x},
            {{"begin", FormatIntTuple(begin)},
             {"end", FormatIntTuple(end)},
             {"step", FormatIntTuple(step)}},
            name);
}

Symbol GraphBuilder::Reshape(Symbol x, const std::vector<int64_t>& shape, const std::string& name) {
  return Op("Reshape", {x}, {{"shape", FormatIntTuple(shape)}}, name);
}

Symbol GraphBuilder::Resize(Symbol x, const std::vector<int64_t>& size, const std::string& mode,
                            const std::string& coordinate_transformation_mode,
                            const std::string& name) {
  return Op("Resize", {x},
            {{"size", FormatIntTuple(size)},
             {"mode", mode},
             {"coordinate_transformation_mode", coordinate_transformation_mode}},
            name);
}

Symbol GraphBuilder::Add(Symbol a, Symbol b, const std::string& name) {
  return Op("broadcast_add", {a, b}, {}, name);
}

Symbol GraphBuilder::Concat(const std::vector<Symbol>& inputs, int dim, const std::string& name) {
  return Op("Concat", inputs,
            {{"num_args", std::to_string(inputs.size())}, {"dim", std::to_string(dim)}}, name);
}

Symbol GraphBuilder::SoftmaxOutput(Symbol x, Symbol label, const std::string& name) {
  return Op("SoftmaxOutput", {x, label}, {}, name);
}

Graph GraphBuilder::Build(const std::vector<Symbol>& outputs) const {
  MX_CHECK(!outputs.empty()) << "a graph needs at least one output";
  Graph graph = graph_;
  for (const Symbol& output : outputs) {
    MX_CHECK(output.builder == this) << "an output comes from another GraphBuilder";
    graph.AddOutput(output.entry);
  }
  return graph.Pruned();
}

}  // namespace mxlite
