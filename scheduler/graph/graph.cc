#include "scheduler/graph/graph.h"

#include <set>

#include "core/error.h"

namespace mxlite {

namespace {
std::string JoinNames(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) {
    if (!text.empty()) text += ", ";
    text += name;
  }
  return text;
}
}  // namespace

const char* VariableRoleName(VariableRole role) {
  switch (role) {
    case VariableRole::kInput:
      return "input";
    case VariableRole::kParameter:
      return "parameter";
    case VariableRole::kAuxiliary:
      return "auxiliary";
  }
  return "?";
}

int Node::num_outputs() const {
  return is_variable() ? 1 : static_cast<int>(OutputNames(*op, attrs).size());
}

std::string Node::TypeName() const { return is_variable() ? VariableRoleName(role) : op->name; }

int Graph::AddVariable(const std::string& name, VariableRole role, std::optional<Shape> shape,
                       std::optional<DType> dtype) {
  MX_CHECK(!name.empty()) << "a variable needs a name";
  MX_CHECK(!HasName(name)) << "the graph already has a node named '" << name << "'";
  Node node;
  node.name = name;
  node.role = role;
  node.shape = shape;
  node.dtype = dtype;
  nodes_.push_back(std::move(node));
  names_[name] = num_nodes() - 1;
  return num_nodes() - 1;
}

int Graph::AddOpNode(const std::string& op_name, const std::string& name,
                     const std::map<std::string, std::string>& attr_text,
                     const std::vector<NodeEntry>& inputs) {
  const OpDef& op = OpRegistry::Global().Get(op_name);
  MX_CHECK(!name.empty()) << op_name << ": a node needs a name";
  MX_CHECK(!HasName(name)) << "the graph already has a node named '" << name << "'";
  Node node;
  node.name = name;
  node.op = &op;
  node.attrs = ParseOpAttributes(op, attr_text, name);
  node.attr_text = attr_text;
  const std::vector<std::string> input_names = InputNames(op, node.attrs);
  MX_CHECK_EQ(inputs.size(), input_names.size())
      << op_name << " " << name << " takes inputs (" << JoinNames(input_names) << ")";
  for (size_t i = 0; i < inputs.size(); ++i) {
    const NodeEntry& entry = inputs[i];
    MX_CHECK(entry.node >= 0 && entry.node < num_nodes())
        << op_name << " " << name << ": input '" << input_names[i] << "' refers to node "
        << entry.node << ", which is not an earlier node";
    MX_CHECK(entry.index >= 0 && entry.index < nodes_[entry.node].num_outputs())
        << op_name << " " << name << ": input '" << input_names[i] << "' refers to output "
        << entry.index << " of " << nodes_[entry.node].name << ", which has "
        << nodes_[entry.node].num_outputs();
  }
  node.inputs = inputs;
  nodes_.push_back(std::move(node));
  names_[name] = num_nodes() - 1;
  return num_nodes() - 1;
}

int Graph::Find(const std::string& name) const {
  auto it = names_.find(name);
  return it == names_.end() ? -1 : it->second;
}

std::vector<int> Graph::Variables(VariableRole role) const {
  std::vector<int> ids;
  for (int id = 0; id < num_nodes(); ++id) {
    if (nodes_[id].is_variable() && nodes_[id].role == role) ids.push_back(id);
  }
  return ids;
}

std::string Graph::EntryName(NodeEntry entry) const {
  const Node& producer = node(entry.node);
  if (producer.is_variable()) return producer.name;
  const std::vector<std::string> outputs = OutputNames(*producer.op, producer.attrs);
  return producer.name + "_" + outputs.at(static_cast<size_t>(entry.index));
}

void Graph::Truncate(int num_nodes) {
  MX_CHECK(num_nodes >= 0 && num_nodes <= this->num_nodes())
      << "Graph::Truncate: " << num_nodes << " of " << this->num_nodes() << " nodes";
  for (int id = 0; id < num_nodes; ++id) {
    for (const NodeEntry& input : nodes_[id].inputs) {
      MX_CHECK(input.node < num_nodes)
          << "Graph::Truncate: node '" << nodes_[id].name << "' reads a removed node";
    }
  }
  for (const NodeEntry& output : outputs_) {
    MX_CHECK(output.node < num_nodes) << "Graph::Truncate: an output reads a removed node";
  }
  for (int id = num_nodes; id < this->num_nodes(); ++id) names_.erase(nodes_[id].name);
  nodes_.resize(static_cast<size_t>(num_nodes));
}

Graph Graph::Pruned() const {
  std::vector<bool> needed(nodes_.size(), false);
  for (const NodeEntry& output : outputs_) needed[output.node] = true;
  for (int id = num_nodes() - 1; id >= 0; --id) {
    if (!needed[id]) continue;
    for (const NodeEntry& input : nodes_[id].inputs) needed[input.node] = true;
  }
  Graph pruned;
  std::vector<int> new_id(nodes_.size(), -1);
  for (int id = 0; id < num_nodes(); ++id) {
    if (!needed[id]) continue;
    Node node = nodes_[id];
    for (NodeEntry& input : node.inputs) input.node = new_id[input.node];
    new_id[id] = pruned.num_nodes();
    pruned.names_[node.name] = pruned.num_nodes();
    pruned.nodes_.push_back(std::move(node));
  }
  for (const NodeEntry& output : outputs_)
    pruned.outputs_.push_back({new_id[output.node], output.index});
  return pruned;
}

void Graph::Validate() const {
  std::set<std::string> seen;
  for (int id = 0; id < num_nodes(); ++id) {
    const Node& node = nodes_[id];
    MX_CHECK(seen.insert(node.name).second) << "duplicate node name '" << node.name << "'";
    if (node.is_variable()) {
      MX_CHECK(node.inputs.empty()) << "variable " << node.name << " has inputs";
      continue;
    }
    MX_CHECK_EQ(node.inputs.size(), InputNames(*node.op, node.attrs).size())
        << node.op->name << " " << node.name << ": input count";
    for (const NodeEntry& input : node.inputs) {
      MX_CHECK(input.node >= 0 && input.node < id)
          << node.name << ": input from node " << input.node << " is not earlier in the graph";
      MX_CHECK(input.index < nodes_[input.node].num_outputs())
          << node.name << ": input refers to a missing output of " << nodes_[input.node].name;
    }
  }
  for (const NodeEntry& output : outputs_) {
    MX_CHECK(output.node >= 0 && output.node < num_nodes())
        << "graph output refers to a missing node";
  }
}

}  // namespace mxlite
