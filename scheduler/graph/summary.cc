#include "scheduler/graph/summary.h"

#include <sstream>

namespace mxlite {

namespace {

std::string WithThousands(int64_t value) {
  std::string digits = std::to_string(value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string Pad(const std::string& text, size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
}

}  // namespace

int64_t CountParameters(const Graph& graph, const GraphShapes& shapes) {
  int64_t total = 0;
  for (int id : graph.Variables(VariableRole::kParameter)) total += shapes.of({id, 0}).size();
  return total;
}

std::string GraphSummary(const Graph& graph, const GraphShapes& shapes) {
  std::ostringstream out;
  out << Pad("Layer (type)", 36) << Pad("Output shape", 24) << "Params\n";
  out << std::string(70, '-') << "\n";
  for (int id : graph.Variables(VariableRole::kInput)) {
    const Node& node = graph.node(id);
    out << Pad(node.name + " (input)", 36) << Pad(shapes.of({id, 0}).ToString(), 24) << "0\n";
  }
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    if (node.is_variable()) continue;
    int64_t params = 0;
    for (const NodeEntry& input : node.inputs) {
      const Node& producer = graph.node(input.node);
      if (producer.is_variable() && producer.role == VariableRole::kParameter) {
        params += shapes.of(input).size();
      }
    }
    out << Pad(node.name + " (" + node.op->name + ")", 36) << Pad(shapes.of({id, 0}).ToString(), 24)
        << WithThousands(params) << "\n";
  }
  out << std::string(70, '-') << "\n";
  out << "Total parameters: " << WithThousands(CountParameters(graph, shapes)) << "\n";
  return out.str();
}

}  // namespace mxlite
