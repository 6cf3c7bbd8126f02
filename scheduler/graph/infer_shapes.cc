#include "scheduler/graph/infer_shapes.h"

#include <optional>

#include "core/error.h"

namespace mxlite {

namespace {

// Shapes known so far, per entry.
struct KnownShapes {
  std::vector<std::vector<std::optional<Shape>>> shapes;
  std::vector<std::vector<std::optional<DType>>> dtypes;
};

void SeedVariables(const Graph& graph, const std::map<std::string, Shape>& overrides,
                   KnownShapes& known) {
  for (const auto& [name, shape] : overrides) {
    const int id = graph.Find(name);
    MX_CHECK(id >= 0 && graph.node(id).is_variable())
        << "a shape was given for '" << name << "', which is not an input of the graph";
  }
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    known.shapes[id].resize(static_cast<size_t>(node.num_outputs()));
    known.dtypes[id].resize(static_cast<size_t>(node.num_outputs()));
    if (!node.is_variable()) continue;
    auto override_shape = overrides.find(node.name);
    known.shapes[id][0] = override_shape != overrides.end() ? override_shape->second : node.shape;
    known.dtypes[id][0] = node.dtype;
  }
}

void InferNode(const Graph& graph, int id, KnownShapes& known) {
  const Node& node = graph.node(id);
  ShapeInference shapes;
  shapes.node = node.name;
  DTypeInference dtypes;
  dtypes.node = node.name;
  for (const NodeEntry& input : node.inputs) {
    shapes.inputs.push_back(known.shapes[input.node][input.index]);
    dtypes.inputs.push_back(known.dtypes[input.node][input.index]);
  }
  shapes.outputs = known.shapes[id];
  dtypes.outputs = known.dtypes[id];
  InferShapes(*node.op, node.attrs, shapes);
  InferDTypes(*node.op, node.attrs, dtypes);
  // Inference may have fixed the shapes of inputs (parameters); write them back to producers.
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const NodeEntry& input = node.inputs[i];
    std::optional<Shape>& producer = known.shapes[input.node][input.index];
    if (!producer) producer = shapes.inputs[i];
    MX_CHECK(!shapes.inputs[i] || *producer == *shapes.inputs[i])
        << node.op->name << " " << node.name << ": input '" << shapes.input_names[i]
        << "' has shape " << *producer << " but " << *shapes.inputs[i] << " is expected";
    std::optional<DType>& producer_dtype = known.dtypes[input.node][input.index];
    if (!producer_dtype) producer_dtype = dtypes.inputs[i];
  }
  known.shapes[id] = shapes.outputs;
  known.dtypes[id] = dtypes.outputs;
}

}  // namespace

GraphShapes InferGraphShapes(const Graph& graph, const std::map<std::string, Shape>& input_shapes) {
  KnownShapes known;
  known.shapes.resize(static_cast<size_t>(graph.num_nodes()));
  known.dtypes.resize(static_cast<size_t>(graph.num_nodes()));
  SeedVariables(graph, input_shapes, known);
  for (int id = 0; id < graph.num_nodes(); ++id) {
    if (!graph.node(id).is_variable()) InferNode(graph, id, known);
  }
  GraphShapes result;
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    std::vector<Shape> shapes;
    std::vector<DType> dtypes;
    for (int out = 0; out < node.num_outputs(); ++out) {
      MX_CHECK(known.shapes[id][out].has_value())
          << (node.is_variable() ? std::string(VariableRoleName(node.role)) + " " + node.name
                                 : node.op->name + " " + node.name)
          << ": shape unknown (give the input a shape, or use it in an op that determines it)";
      shapes.push_back(*known.shapes[id][out]);
      dtypes.push_back(known.dtypes[id][out].value_or(DType::kFloat32));
    }
    result.shapes.push_back(std::move(shapes));
    result.dtypes.push_back(std::move(dtypes));
  }
  return result;
}

}  // namespace mxlite
