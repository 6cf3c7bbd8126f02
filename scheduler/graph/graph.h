// Graph IR: a network as a list of nodes in topological order.
//
// A node is either a variable (a named input fed by the user, a learned parameter, or an auxiliary
// state such as BatchNorm's moving mean) or an operator applied to earlier nodes' outputs. Node
// outputs are addressed by NodeEntry{node, index}. The graph's outputs are entries too.
//
// Invariants (checked by AddOpNode / Validate): every input entry names an earlier node and an
// existing output; node names are unique; attributes are parsed and valid for the op; the number
// of inputs matches the op's input names for those attributes.
//
// Graphs are values: copyable, no shared state, not thread-safe to mutate concurrently.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "ops/operator.h"

namespace mxlite {

struct NodeEntry {
  int node = -1;
  int index = 0;
  bool operator==(const NodeEntry&) const = default;
  auto operator<=>(const NodeEntry&) const = default;
};

enum class VariableRole { kInput, kParameter, kAuxiliary };
const char* VariableRoleName(VariableRole role);

struct Node {
  std::string name;
  const OpDef* op = nullptr;  // nullptr for variables
  Attributes attrs;
  std::map<std::string, std::string> attr_text;  // attributes as given, for printing/export
  std::vector<NodeEntry> inputs;

  // Variables only.
  VariableRole role = VariableRole::kInput;
  std::optional<Shape> shape;  // declared shape (inputs always; parameters once inferred)
  std::optional<DType> dtype;  // declared dtype; unset: inferred from its consumers (float32)

  bool is_variable() const { return op == nullptr; }
  int num_outputs() const;
  // "Convolution", or "input"/"parameter"/"auxiliary" for variables.
  std::string TypeName() const;
};

class Graph {
 public:
  int AddVariable(const std::string& name, VariableRole role, std::optional<Shape> shape,
                  std::optional<DType> dtype = std::nullopt);
  // Parses `attr_text` against the op's schema and checks the inputs; throws mxlite::Error naming
  // the node on any problem.
  int AddOpNode(const std::string& op_name, const std::string& name,
                const std::map<std::string, std::string>& attr_text,
                const std::vector<NodeEntry>& inputs);
  void AddOutput(NodeEntry entry) { outputs_.push_back(entry); }

  const std::vector<Node>& nodes() const { return nodes_; }
  std::vector<Node>& mutable_nodes() { return nodes_; }
  const Node& node(int id) const { return nodes_.at(static_cast<size_t>(id)); }
  const std::vector<NodeEntry>& outputs() const { return outputs_; }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }

  // Node id by name, or -1.
  int Find(const std::string& name) const;
  bool HasName(const std::string& name) const { return Find(name) >= 0; }
  // Variable node ids with the given role, in graph order.
  std::vector<int> Variables(VariableRole role) const;
  // "conv0_output" style name of an entry, for messages.
  std::string EntryName(NodeEntry entry) const;
  // A copy holding only the nodes the outputs depend on (ids renumbered, order kept).
  Graph Pruned() const;
  // Removes the nodes from id `num_nodes` on (the last ones added); no remaining node or output
  // may read them.
  void Truncate(int num_nodes);
  // Re-checks every invariant (after passes that rewrite the graph).
  void Validate() const;

 private:
  std::vector<Node> nodes_;
  std::vector<NodeEntry> outputs_;
  std::map<std::string, int> names_;
};

}  // namespace mxlite
