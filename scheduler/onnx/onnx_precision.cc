#include "scheduler/onnx/onnx_precision.h"

#include <cstring>

#include "core/error.h"
#include "core/half.h"
#include "scheduler/graph/infer_shapes.h"

namespace mxlite {
namespace {

// A name not yet in `graph`, from `base`.
std::string FreshName(const Graph& graph, const std::string& base) {
  std::string name = base;
  for (int suffix = 1; graph.HasName(name); ++suffix) name = base + "_" + std::to_string(suffix);
  return name;
}

int AddCast(Graph& graph, const std::string& base, NodeEntry input, DType dtype) {
  return graph.AddOpNode("Cast", FreshName(graph, base), {{"dtype", DTypeName(dtype)}}, {input});
}

// `tensor` (float32) as `dtype` (float16 or float64).
HostTensor ConvertFloat32(const HostTensor& tensor, DType dtype, const std::string& name) {
  MX_CHECK(tensor.dtype == DType::kFloat32)
      << "parameter '" << name << "' holds " << tensor.dtype << ", not float32";
  const int64_t count = tensor.num_elements();
  const float* values = reinterpret_cast<const float*>(tensor.bytes.data());
  HostTensor converted{dtype, tensor.shape,
                       std::vector<uint8_t>(static_cast<size_t>(count) * DTypeSize(dtype))};
  for (int64_t i = 0; i < count; ++i) {
    if (dtype == DType::kFloat16) {
      const uint16_t half = FloatToHalf(values[i]);
      std::memcpy(converted.bytes.data() + i * 2, &half, 2);
    } else {
      const double wide = values[i];
      std::memcpy(converted.bytes.data() + i * 8, &wide, 8);
    }
  }
  return converted;
}

}  // namespace

ImportedModel CastModelTo(const ImportedModel& model, DType dtype) {
  if (dtype == DType::kFloat32) return model;
  MX_CHECK(dtype == DType::kFloat16 || dtype == DType::kFloat64)
      << "a model's body can compute in float16 or float64 (or float32 as imported), not " << dtype;
  const Graph& source = model.graph;
  ImportedModel result;
  result.inputs = model.inputs;
  result.output_names = model.output_names;
  result.opset = model.opset;
  result.producer = model.producer;
  Graph& graph = result.graph;
  std::vector<NodeEntry> remap;  // source node id -> the entry its consumers now read
  for (const Node& node : source.nodes()) {
    if (node.is_variable()) {
      const bool float32 = node.dtype.value_or(DType::kFloat32) == DType::kFloat32;
      const bool input = node.role == VariableRole::kInput;
      const int id = graph.AddVariable(node.name, node.role, node.shape,
                                       float32 && !input ? std::nullopt : node.dtype);
      remap.push_back({id, 0});
      if (float32 && input) {
        remap.back() = {AddCast(graph, node.name + "_to_" + DTypeName(dtype), {id, 0}, dtype), 0};
      }
      continue;
    }
    std::vector<NodeEntry> inputs;
    for (const NodeEntry& input : node.inputs) {
      inputs.push_back({remap.at(static_cast<size_t>(input.node)).node,
                        remap.at(static_cast<size_t>(input.node)).index + input.index});
    }
    const int id = graph.AddOpNode(node.op->name, node.name, node.attr_text, inputs);
    graph.mutable_nodes().back().attrs = node.attrs;  // as imported, passes included
    remap.push_back({id, 0});
  }
  for (const NodeEntry& output : source.outputs()) {
    const NodeEntry entry{remap.at(static_cast<size_t>(output.node)).node, output.index};
    graph.AddOutput(
        {AddCast(graph, source.node(output.node).name + "_to_float32", entry, DType::kFloat32), 0});
  }
  graph.Validate();
  // Parameter values in the dtypes inference gives them.
  const GraphShapes shapes = InferGraphShapes(graph);
  for (const auto& [name, tensor] : model.parameters) {
    const int id = graph.Find(name);
    MX_CHECK(id >= 0) << "parameter '" << name << "' is not a variable of the model";
    const DType wanted = shapes.dtypes.at(static_cast<size_t>(id)).at(0);
    result.parameters[name] =
        wanted == tensor.dtype ? tensor : ConvertFloat32(tensor, wanted, name);
  }
  return result;
}

}  // namespace mxlite
