#include "scheduler/onnx/onnx_fold.h"

#include <cstring>
#include <map>

#include "core/error.h"
#include "ops/tensor.h"
#include "scheduler/graph/infer_shapes.h"

namespace mxlite {
namespace {

// The nodes to run as a graph of their own: each variable they read (with its known value) and
// the op nodes, in order. nullopt when they read a value computed before `first`.
struct Slice {
  Graph graph;
  std::map<int, int> id_of;                 // original id -> id in `graph`
  std::map<int, const HostTensor*> leaves;  // id in `graph` -> value
};

std::optional<Slice> SliceFrom(const Graph& graph, int first,
                               const std::function<const HostTensor*(int)>& known) {
  Slice slice;
  auto leaf = [&](int id) -> std::optional<int> {
    if (auto it = slice.id_of.find(id); it != slice.id_of.end()) return it->second;
    const Node& node = graph.node(id);
    if (!node.is_variable()) return std::nullopt;  // computed by the model, not known at load
    const HostTensor* value = known(id);
    if (value == nullptr) return std::nullopt;
    const int mini =
        slice.graph.AddVariable(node.name, VariableRole::kParameter, value->shape, value->dtype);
    slice.id_of[id] = mini;
    slice.leaves[mini] = value;
    return mini;
  };
  for (int id = first; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    if (node.is_variable()) continue;  // a leaf, added where it is read
    std::vector<NodeEntry> inputs;
    for (const NodeEntry& input : node.inputs) {
      const std::optional<int> mapped = input.node >= first && !graph.node(input.node).is_variable()
                                            ? std::optional<int>(slice.id_of.at(input.node))
                                            : leaf(input.node);
      if (!mapped) return std::nullopt;
      inputs.push_back({*mapped, input.index});
    }
    slice.id_of[id] = slice.graph.AddOpNode(node.op->name, node.name, node.attr_text, inputs);
  }
  return slice;
}

HostTensor EmptyTensor(const Shape& shape, DType dtype) {
  return HostTensor{dtype, shape,
                    std::vector<uint8_t>(static_cast<size_t>(shape.size()) * DTypeSize(dtype))};
}

TensorView ViewOf(const HostTensor& tensor) {
  return TensorView{const_cast<uint8_t*>(tensor.bytes.data()), tensor.shape, tensor.dtype,
                    Context::CPU()};
}

}  // namespace

std::optional<std::vector<HostTensor>> EvaluateAtLoad(
    const Graph& graph, int first, const std::vector<NodeEntry>& outputs,
    const std::function<const HostTensor*(int variable)>& known, int64_t max_elements) {
  std::optional<Slice> slice = SliceFrom(graph, first, known);
  if (!slice) return std::nullopt;
  try {
    const GraphShapes shapes = InferGraphShapes(slice->graph);
    for (const NodeEntry& output : outputs) {
      const auto it = slice->id_of.find(output.node);
      if (it == slice->id_of.end()) return std::nullopt;
      if (shapes.of({it->second, output.index}).size() > max_elements) return std::nullopt;
    }
    std::map<NodeEntry, HostTensor> values;
    for (int id = 0; id < slice->graph.num_nodes(); ++id) {
      const Node& node = slice->graph.node(id);
      if (node.is_variable()) continue;
      const auto kernel = node.op->forward.find(DeviceType::kCPU);
      if (kernel == node.op->forward.end()) return std::nullopt;
      std::vector<TensorView> inputs, results;
      for (const NodeEntry& input : node.inputs) {
        const auto leaf = slice->leaves.find(input.node);
        inputs.push_back(ViewOf(leaf != slice->leaves.end() ? *leaf->second : values.at(input)));
      }
      const size_t count = shapes.shapes[static_cast<size_t>(id)].size();
      for (size_t i = 0; i < count; ++i) {
        const NodeEntry entry{id, static_cast<int>(i)};
        values[entry] = EmptyTensor(shapes.of(entry), shapes.dtype_of(entry));
        results.push_back(ViewOf(values[entry]));
      }
      ScratchSpace scratch(Context::CPU());
      OpContext ctx{Context::CPU(), false, nullptr, &scratch, nullptr, nullptr, node.name};
      kernel->second(ctx, node.attrs, inputs, results,
                     std::vector<WriteMode>(count, WriteMode::kWrite));
    }
    std::vector<HostTensor> folded;
    for (const NodeEntry& output : outputs) {
      const int id = slice->id_of.at(output.node);
      const auto leaf = slice->leaves.find(id);
      folded.push_back(leaf != slice->leaves.end() ? *leaf->second : values.at({id, output.index}));
    }
    return folded;
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace mxlite
