// A graph rebuilt from another node by node, the tool of the bind-time passes (fusion.h,
// dead_taps.h): each source node is copied (perhaps with other attributes), dropped, replaced, or
// read as another new node; entries of later nodes are mapped to the copies'.
//
//   GraphRewrite rewrite(graph);
//   for (int id = 0; id < graph.num_nodes(); ++id) rewrite.Copy(id);  // or Replace, ReadAs, ...
//   Graph rebuilt = rewrite.Finish();                                  // outputs mapped, validated
//
// Nodes must be visited in the source's order, so that every input is mapped when it is read.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/graph/graph.h"

namespace mxlite {

class GraphRewrite {
 public:
  explicit GraphRewrite(const Graph& source)
      : source_(source), new_id_(static_cast<size_t>(source.num_nodes()), -1) {}

  NodeEntry Map(NodeEntry entry) const { return {new_id_[entry.node], entry.index}; }
  // Copies node `id` (a variable as it is; an op with `attrs` and its inputs mapped).
  void Copy(int id, const std::map<std::string, std::string>& attrs) {
    const Node& node = source_.node(id);
    if (node.is_variable()) {
      new_id_[id] = graph_.AddVariable(node.name, node.role, node.shape, node.dtype);
      return;
    }
    new_id_[id] = graph_.AddOpNode(node.op->name, node.name, attrs, MapAll(node.inputs));
  }
  void Copy(int id) { Copy(id, source_.node(id).attr_text); }
  // Copies variable `id` declaring `shape` and `dtype` (a parameter whose shape and type its
  // reader inferred, when that reader moves behind another node).
  void CopyVariable(int id, const Shape& shape, DType dtype) {
    const Node& node = source_.node(id);
    new_id_[id] = graph_.AddVariable(node.name, node.role, shape, dtype);
  }
  // Adds a node of the new graph that readers of source node `id` read from now on.
  void Replace(int id, const std::string& op, const std::string& name,
               const std::map<std::string, std::string>& attrs,
               const std::vector<NodeEntry>& inputs) {
    new_id_[id] = graph_.AddOpNode(op, name, attrs, MapAll(inputs));
  }
  // Readers of source node `id` read the copy of source node `target` (already copied).
  void ReadAs(int id, int target) { new_id_[id] = new_id_[target]; }
  // Adds a node that no source node stands for, reading `inputs` (entries of the new graph);
  // returns its id in the new graph.
  int AddNew(const std::string& op, const std::string& name,
             const std::map<std::string, std::string>& attrs,
             const std::vector<NodeEntry>& inputs) {
    return graph_.AddOpNode(op, name, attrs, inputs);
  }
  // Readers of source node `id` read node `new_id` of the new graph (from AddNew).
  void ReadAsNew(int id, int new_id) { new_id_[id] = new_id; }
  // The new graph with the source's outputs mapped, validated.
  Graph Finish() {
    for (const NodeEntry& output : source_.outputs()) graph_.AddOutput(Map(output));
    graph_.Validate();
    return std::move(graph_);
  }

 private:
  std::vector<NodeEntry> MapAll(const std::vector<NodeEntry>& entries) const {
    std::vector<NodeEntry> mapped;
    for (const NodeEntry& entry : entries) mapped.push_back(Map(entry));
    return mapped;
  }

  const Graph& source_;
  Graph graph_;
  std::vector<int> new_id_;
};

}  // namespace mxlite
