#include "scheduler/fusion.h"

#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace mxlite {
namespace {

// The act_min / act_max texts an activation becomes (absent bound: nullopt).
struct Clamp {
  std::optional<std::string> low, high;
  std::string description;
};

std::optional<std::string> AttributeText(const Node& node, const std::string& name) {
  auto found = node.attr_text.find(name);
  if (found == node.attr_text.end()) return std::nullopt;
  return found->second;
}

// The clamp `node` applies, or nullopt when it is not a clamping activation.
std::optional<Clamp> ClampOf(const Node& node) {
  if (node.is_variable() || node.inputs.size() != 1) return std::nullopt;
  if (node.op->name == "Activation" && node.attrs.GetString("act_type") == "relu") {
    return Clamp{"0", std::nullopt, "relu"};
  }
  if (node.op->name == "clip") {
    Clamp clamp{AttributeText(node, "a_min"), AttributeText(node, "a_max"), ""};
    clamp.description =
        "clip [" + clamp.low.value_or("-inf") + ", " + clamp.high.value_or("inf") + "]";
    return clamp;
  }
  return std::nullopt;
}

bool HasFusedActivation(const Node& node) {
  return node.attrs.Has("act_min") || node.attrs.Has("act_max");
}

// How many node inputs read each entry.
std::map<NodeEntry, int> CountReaders(const Graph& graph) {
  std::map<NodeEntry, int> readers;
  for (const Node& node : graph.nodes()) {
    for (const NodeEntry& input : node.inputs) ++readers[input];
  }
  return readers;
}

}  // namespace

FusionResult FuseConvolutionActivations(const Graph& graph) {
  const std::map<NodeEntry, int> readers = CountReaders(graph);
  const std::set<NodeEntry> outputs(graph.outputs().begin(), graph.outputs().end());
  std::vector<int> fused_into(graph.num_nodes(), -1);  // activation id -> its convolution's id
  std::map<int, Clamp> clamp_of;                       // convolution id -> its new clamp
  FusionResult result;
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    const std::optional<Clamp> clamp = ClampOf(node);
    if (!clamp) continue;
    const NodeEntry source = node.inputs[0];
    const Node& producer = graph.node(source.node);
    if (producer.is_variable() || producer.op->name != "Convolution") continue;
    if (HasFusedActivation(producer) || clamp_of.count(source.node) != 0) continue;
    if (source.index != 0 || readers.at(source) != 1) continue;
    if (outputs.count(source) != 0 || outputs.count(NodeEntry{id, 0}) != 0) continue;
    fused_into[id] = source.node;
    clamp_of[source.node] = *clamp;
    result.fused.push_back({producer.name, node.name, clamp->description});
  }

  std::vector<int> new_id(graph.num_nodes(), -1);
  const auto remap = [&new_id](NodeEntry entry) { return NodeEntry{new_id[entry.node], entry.index}; };
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    if (node.is_variable()) {
      new_id[id] = result.graph.AddVariable(node.name, node.role, node.shape, node.dtype);
      continue;
    }
    if (fused_into[id] >= 0) {  // readers of the activation read the convolution
      new_id[id] = new_id[fused_into[id]];
      continue;
    }
    std::map<std::string, std::string> attrs = node.attr_text;
    if (auto clamp = clamp_of.find(id); clamp != clamp_of.end()) {
      if (clamp->second.low) attrs["act_min"] = *clamp->second.low;
      if (clamp->second.high) attrs["act_max"] = *clamp->second.high;
    }
    std::vector<NodeEntry> inputs;
    for (const NodeEntry& input : node.inputs) inputs.push_back(remap(input));
    new_id[id] = result.graph.AddOpNode(node.op->name, node.name, attrs, inputs);
  }
  for (const NodeEntry& output : graph.outputs()) result.graph.AddOutput(remap(output));
  result.graph.Validate();
  return result;
}

std::string FormatFusions(const std::vector<FusedActivation>& fused, bool per_layer) {
  std::ostringstream out;
  out << "fused " << fused.size() << (fused.size() == 1 ? " activation" : " activations")
      << " into convolutions (MXNET_CONV_FUSE_ACTIVATION)";
  if (per_layer) {
    for (const FusedActivation& pair : fused) {
      out << "\n  " << pair.convolution << " <- " << pair.activation << " (" << pair.clamp << ")";
    }
  }
  return out.str();
}

}  // namespace mxlite
