#include "scheduler/graph/fusion.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "ops/broadcast.h"
#include "scheduler/graph/graph_rewrite.h"

namespace mxlite {
namespace {

// The text of attribute `name` as the node was given it, or nullopt.
std::optional<std::string> AttributeText(const Node& node, const std::string& name) {
  auto found = node.attr_text.find(name);
  if (found == node.attr_text.end()) return std::nullopt;
  return found->second;
}

// The clamp `node` applies (OpDef::fusion.clamp), or nullopt when it is not a clamping activation.
std::optional<ClampBounds> ClampOf(const Node& node) {
  if (node.is_variable() || node.inputs.size() != 1 || !node.op->fusion.clamp) return std::nullopt;
  return node.op->fusion.clamp(node.attrs, node.attr_text);
}

// Whether `node` clamps its output.
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

FusionResult FuseClampActivations(const Graph& graph) {
  const std::map<NodeEntry, int> readers = CountReaders(graph);
  const std::set<NodeEntry> outputs(graph.outputs().begin(), graph.outputs().end());
  std::vector<int> fused_into(graph.num_nodes(), -1);  // activation id -> its producer's id
  std::map<int, ClampBounds> clamp_of;                 // producer id -> its new clamp
  FusionResult result;
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    const std::optional<ClampBounds> clamp = ClampOf(node);
    if (!clamp) continue;
    const NodeEntry source = node.inputs[0];
    const Node& producer = graph.node(source.node);
    if (producer.is_variable() || !producer.op->fusion.takes_clamp ||
        !producer.op->fusion.takes_clamp(producer.attrs)) {
      continue;
    }
    if (HasFusedActivation(producer) || clamp_of.count(source.node) != 0) continue;
    if (source.index != 0 || readers.at(source) != 1) continue;
    if (outputs.count(source) != 0 || outputs.count(NodeEntry{id, 0}) != 0) continue;
    fused_into[id] = source.node;
    clamp_of[source.node] = *clamp;
    result.fused.push_back({producer.name, node.name, clamp->description});
  }

  GraphRewrite rewrite(graph);
  for (int id = 0; id < graph.num_nodes(); ++id) {
    if (fused_into[id] >= 0) {  // readers of the activation read its producer
      rewrite.ReadAs(id, fused_into[id]);
      continue;
    }
    std::map<std::string, std::string> attrs = graph.node(id).attr_text;
    if (auto clamp = clamp_of.find(id); clamp != clamp_of.end()) {
      if (clamp->second.low) attrs["act_min"] = *clamp->second.low;
      if (clamp->second.high) attrs["act_max"] = *clamp->second.high;
    }
    rewrite.Copy(id, attrs);
  }
  result.graph = rewrite.Finish();
  return result;
}

namespace {

bool IsConvolution(const Node& node) { return !node.is_variable() && node.op->fusion.convolution; }

bool IsNhwc2d(const Node& node) {
  return node.attrs.GetOptionalString("layout").value_or("") == "NHWC" &&
         node.attrs.GetInts("kernel").size() == 2;
}

// Every entry of the tuple is `value` (an empty tuple is the default, 1 or 0 as asked).
bool AllEqual(const std::vector<int64_t>& values, int64_t value) {
  return std::all_of(values.begin(), values.end(), [value](int64_t v) { return v == value; });
}

// A 1x1 NHWC convolution with stride 1, no padding and one group: a GEMM over the pixels.
bool IsPointwiseNhwc(const Node& node, const GraphShapes& shapes, int id) {
  return IsConvolution(node) && IsNhwc2d(node) && AllEqual(node.attrs.GetInts("kernel"), 1) &&
         AllEqual(node.attrs.GetInts("stride"), 1) && AllEqual(node.attrs.GetInts("dilate"), 1) &&
         AllEqual(node.attrs.GetInts("pad"), 0) && node.attrs.GetInt("num_group") == 1 &&
         shapes.dtype_of({id, 0}) == DType::kFloat32;
}

// A multiplier-1 NHWC depthwise convolution on float32.
bool IsDepthwiseNhwc(const Node& node, const GraphShapes& shapes, int id) {
  if (!IsConvolution(node) || !IsNhwc2d(node)) return false;
  const Shape& data = shapes.of(node.inputs[0]);
  const int64_t filters = node.attrs.GetInt("num_filter");
  return node.attrs.GetInt("num_group") == filters && data.ndim() == 4 && data[3] == filters &&
         shapes.dtype_of({id, 0}) == DType::kFloat32;
}

// Whether `rule` fuses the block `names` whose larger intermediate holds `intermediate_bytes`.
bool FusesByRule(const DepthwiseFusionRule& rule, const FusedDepthwiseBlock& names,
                 size_t intermediate_bytes) {
  const auto listed = [&names](const std::vector<FusedDepthwiseBlock>& blocks) {
    return std::find(blocks.begin(), blocks.end(), names) != blocks.end();
  };
  if (listed(rule.measured_slower_fused)) return false;
  return listed(rule.measured_faster_fused) || intermediate_bytes >= rule.min_intermediate_bytes;
}

// The attributes of the fused node: the depthwise convolution's window, bias and clamp, and per
// 1x1 stage its filters, bias and clamp under the stage's prefix.
std::map<std::string, std::string> BlockAttributes(const Node* expand, const Node& depthwise,
                                                   const Node* project) {
  std::map<std::string, std::string> attrs;
  for (const char* name : {"kernel", "stride", "dilate", "pad", "num_filter", "num_group",
                           "no_bias", "layout", "act_min", "act_max"}) {
    if (auto text = AttributeText(depthwise, name)) attrs[name] = *text;
  }
  const auto add_stage = [&attrs](const Node* stage, const std::string& prefix) {
    if (stage == nullptr) return;
    for (const char* name : {"num_filter", "no_bias", "act_min", "act_max"}) {
      if (auto text = AttributeText(*stage, name)) attrs[prefix + name] = *text;
    }
  };
  add_stage(expand, "expand_");
  add_stage(project, "project_");
  return attrs;
}

}  // namespace

DepthwiseFusionResult FuseDepthwiseBlocks(const Graph& graph, const GraphShapes& shapes,
                                          const DepthwiseFusionRule& rule) {
  const std::map<NodeEntry, int> readers = CountReaders(graph);
  const std::set<NodeEntry> outputs(graph.outputs().begin(), graph.outputs().end());
  // The one node reading each entry read by exactly one node input.
  std::map<NodeEntry, int> sole_reader;
  for (int id = 0; id < graph.num_nodes(); ++id) {
    for (const NodeEntry& input : graph.node(id).inputs) {
      if (readers.at(input) == 1) sole_reader[input] = id;
    }
  }
  const auto private_output = [&](int id) {  // read by one node input only, not a graph output
    const NodeEntry entry{id, 0};
    return graph.node(id).num_outputs() == 1 && readers.count(entry) != 0 &&
           readers.at(entry) == 1 && outputs.count(entry) == 0;
  };

  struct Block {
    int expand = -1, depthwise = -1, project = -1;
  };
  std::vector<Block> blocks;
  std::vector<int> absorbed_by(graph.num_nodes(), -1);  // node -> index of its block
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    if (!IsDepthwiseNhwc(node, shapes, id)) continue;
    Block block;
    block.depthwise = id;
    const NodeEntry data = node.inputs[0];
    if (data.index == 0 && absorbed_by[data.node] < 0 && private_output(data.node) &&
        IsPointwiseNhwc(graph.node(data.node), shapes, data.node)) {
      block.expand = data.node;
    }
    if (private_output(id)) {
      const int reader = sole_reader.at({id, 0});
      const Node& next = graph.node(reader);
      if (IsPointwiseNhwc(next, shapes, reader) && next.inputs[0] == NodeEntry{id, 0}) {
        block.project = reader;
      }
    }
    if (block.expand < 0 && block.project < 0) continue;
    // What stays in cache: the expansion's output and / or the depthwise output.
    size_t intermediate = 0;
    if (block.expand >= 0)
      intermediate = static_cast<size_t>(shapes.of(data).size()) * sizeof(float);
    if (block.project >= 0) {
      intermediate =
          std::max(intermediate, static_cast<size_t>(shapes.of({id, 0}).size()) * sizeof(float));
    }
    const auto name_of = [&](int member) { return member >= 0 ? graph.node(member).name : ""; };
    const FusedDepthwiseBlock names{name_of(block.expand), node.name, name_of(block.project)};
    if (!FusesByRule(rule, names, intermediate)) continue;
    for (int member : {block.expand, block.depthwise, block.project}) {
      if (member >= 0) absorbed_by[member] = static_cast<int>(blocks.size());
    }
    blocks.push_back(block);
  }

  DepthwiseFusionResult result;
  GraphRewrite rewrite(graph);
  for (int id = 0; id < graph.num_nodes(); ++id) {
    if (absorbed_by[id] < 0) {
      rewrite.Copy(id);
      continue;
    }
    // The fused node goes where the block's last member was: every input is defined by then.
    const Block& block = blocks[absorbed_by[id]];
    const int last = block.project >= 0 ? block.project : block.depthwise;
    if (id != last) continue;
    const Node* expand = block.expand >= 0 ? &graph.node(block.expand) : nullptr;
    const Node& depthwise = graph.node(block.depthwise);
    const Node* project = block.project >= 0 ? &graph.node(block.project) : nullptr;
    // Inputs in the op's order: data, [expand weight, bias], weight, [bias], [project ...].
    std::vector<NodeEntry> inputs = {expand != nullptr ? expand->inputs[0] : depthwise.inputs[0]};
    for (const Node* stage : {expand, &depthwise, project}) {
      if (stage != nullptr)
        inputs.insert(inputs.end(), stage->inputs.begin() + 1, stage->inputs.end());
    }
    rewrite.Replace(id, "_fused_depthwise_block", depthwise.name,
                    BlockAttributes(expand, depthwise, project), inputs);
    result.blocks.push_back({expand != nullptr ? expand->name : "", depthwise.name,
                             project != nullptr ? project->name : ""});
  }
  result.graph = rewrite.Finish();
  return result;
}

std::string FormatDepthwiseBlocks(const std::vector<FusedDepthwiseBlock>& blocks, bool per_layer) {
  std::ostringstream out;
  out << "fused " << blocks.size()
      << (blocks.size() == 1 ? " depthwise block" : " depthwise blocks")
      << " (MXNET_CONV_FUSE_DEPTHWISE)";
  if (per_layer) {
    for (const FusedDepthwiseBlock& block : blocks) {
      out << "\n  ";
      if (!block.expand.empty()) out << block.expand << " -> ";
      out << block.depthwise;
      if (!block.project.empty()) out << " -> " << block.project;
    }
  }
  return out.str();
}

namespace {

// Whether `node` adds two values of one shape elementwise.
bool IsSameShapeAddition(const Node& node, const GraphShapes& shapes) {
  if (node.is_variable() || node.inputs.size() != 2 || !node.op->fusion.adds) return false;
  return shapes.of(node.inputs[0]) == shapes.of(node.inputs[1]) &&
         shapes.dtype_of(node.inputs[0]) == shapes.dtype_of(node.inputs[1]);
}

// A node whose last store may add a residual (OpDef::fusion.takes_residual).
bool TakesResidual(const Node& node) {
  return !node.is_variable() && node.op->fusion.takes_residual &&
         node.op->fusion.takes_residual(node.attrs);
}

// A node whose store may add a bias along its output's last axis (OpDef::fusion.takes_bias).
bool TakesBias(const Node& node, const GraphShapes& shapes) {
  if (node.is_variable() || !node.op->fusion.takes_bias) return false;
  std::vector<Shape> inputs;
  for (const NodeEntry& input : node.inputs) inputs.push_back(shapes.of(input));
  return node.op->fusion.takes_bias(node.attrs, inputs);
}

// What a fold of additions into their producers did: (producer, addition) names in graph order.
struct FoldedAdditions {
  Graph graph;
  std::vector<std::pair<std::string, std::string>> pairs;
};

// The shared rewrite of the residual and bias fusions. Every two-input addition (FusionTraits::
// adds) that `wanted` accepts and whose output is not a graph output takes in the producer of its
// first operand that may take it: output 0 of a node, read by that addition alone, not a graph
// output, and `takes(producer entry, other operand)`. The producer keeps its name and goes where
// the addition was (the other operand is defined by then), with attribute `attribute` = true and
// the other operand as one more input; readers of the addition read it.
template <typename Wanted, typename Takes>
FoldedAdditions FoldAdditionsIntoProducers(const Graph& graph, Wanted&& wanted, Takes&& takes,
                                           const std::string& attribute) {
  const std::map<NodeEntry, int> readers = CountReaders(graph);
  const std::set<NodeEntry> outputs(graph.outputs().begin(), graph.outputs().end());
  struct Fold {
    int producer;
    NodeEntry operand;
  };
  std::map<int, Fold> fold_at;  // addition id -> what it becomes
  std::set<int> deferred;       // producers emitted at their addition
  FoldedAdditions result;
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    if (node.is_variable() || node.inputs.size() != 2 || !node.op->fusion.adds) continue;
    if (!wanted(node) || outputs.count(NodeEntry{id, 0}) != 0) continue;
    for (int side = 0; side < 2; ++side) {
      const NodeEntry producer = node.inputs[side], operand = node.inputs[1 - side];
      if (producer.index != 0 || readers.at(producer) != 1 || outputs.count(producer) != 0 ||
          !takes(producer, operand)) {
        continue;
      }
      fold_at[id] = {producer.node, operand};
      deferred.insert(producer.node);
      result.pairs.emplace_back(graph.node(producer.node).name, node.name);
      break;
    }
  }
  GraphRewrite rewrite(graph);
  for (int id = 0; id < graph.num_nodes(); ++id) {
    if (deferred.count(id) != 0) continue;
    auto fold = fold_at.find(id);
    if (fold == fold_at.end()) {
      rewrite.Copy(id);
      continue;
    }
    const Node& producer = graph.node(fold->second.producer);
    std::map<std::string, std::string> attrs = producer.attr_text;
    attrs[attribute] = "true";
    std::vector<NodeEntry> inputs = producer.inputs;
    inputs.push_back(fold->second.operand);
    rewrite.Replace(id, producer.op->name, producer.name, attrs, inputs);
  }
  result.graph = rewrite.Finish();
  return result;
}

}  // namespace

ResidualFusionResult FuseResidualAdditions(const Graph& graph, const GraphShapes& shapes) {
  FoldedAdditions folded = FoldAdditionsIntoProducers(
      graph, [&](const Node& addition) { return IsSameShapeAddition(addition, shapes); },
      [&](const NodeEntry& convolution, const NodeEntry&) {
        return TakesResidual(graph.node(convolution.node));
      },
      "residual");
  ResidualFusionResult result{std::move(folded.graph), {}};
  for (auto& [convolution, addition] : folded.pairs)
    result.fused.push_back({convolution, addition});
  return result;
}

// A product takes the addition of a vector along its last axis, of its element type.
BiasFusionResult FuseBiasAdditions(const Graph& graph, const GraphShapes& shapes) {
  FoldedAdditions folded = FoldAdditionsIntoProducers(
      graph, [](const Node&) { return true; },
      [&](const NodeEntry& product, const NodeEntry& vector) {
        return TakesBias(graph.node(product.node), shapes) &&
               shapes.dtype_of(product) == shapes.dtype_of(vector) &&
               IsLastAxisVector(shapes.of(vector), shapes.of(product));
      },
      "bias");
  BiasFusionResult result{std::move(folded.graph), {}};
  for (auto& [product, addition] : folded.pairs) result.fused.push_back({product, addition});
  return result;
}

std::string FormatBiasFusions(const std::vector<FusedBias>& fused, bool per_layer) {
  std::ostringstream out;
  out << "fused " << fused.size() << (fused.size() == 1 ? " bias addition" : " bias additions")
      << " into their products (MXNET_FUSE_BIAS)";
  if (per_layer) {
    for (const FusedBias& pair : fused) out << "\n  " << pair.product << " <- " << pair.addition;
  }
  return out.str();
}

std::string FormatResidualFusions(const std::vector<FusedResidual>& fused, bool per_layer) {
  std::ostringstream out;
  out << "fused " << fused.size()
      << (fused.size() == 1 ? " residual addition" : " residual additions")
      << " into convolutions (MXNET_CONV_FUSE_RESIDUAL)";
  if (per_layer) {
    for (const FusedResidual& pair : fused) {
      out << "\n  " << pair.convolution << " <- " << pair.addition;
    }
  }
  return out.str();
}

std::string FormatFusions(const std::vector<FusedActivation>& fused, bool per_layer) {
  std::ostringstream out;
  out << "fused " << fused.size() << (fused.size() == 1 ? " activation" : " activations")
      << " into the ops before them (MXNET_CONV_FUSE_ACTIVATION)";
  if (per_layer) {
    for (const FusedActivation& pair : fused) {
      out << "\n  " << pair.producer << " <- " << pair.activation << " (" << pair.clamp << ")";
    }
  }
  return out.str();
}

namespace {

// The axis `dim` / `axis` names in data of `ndim` dims (negative counts from the end).
int64_t AxisIn(int64_t given, int ndim) { return given < 0 ? given + ndim : given; }

// Whether BatchNorm node `id` normalises the output of a Concat that it alone reads, joined along
// its channel axis, in a type the fused op runs (see the header).
bool NormalisesItsJoinAlone(const Graph& graph, const GraphShapes& shapes, int id,
                            const std::map<NodeEntry, int>& readers,
                            const std::set<NodeEntry>& outputs) {
  const Node& norm = graph.node(id);
  if (norm.is_variable() || norm.op->fusion.with_join.empty() || norm.inputs.empty()) {
    return false;
  }
  const NodeEntry data = norm.inputs[0];
  const Node& join = graph.node(data.node);
  if (join.is_variable() || !join.op->layout.joins_along_axis || data.index != 0) return false;
  if (readers.at(data) != 1 || outputs.count(data) != 0) return false;
  for (int hidden : {1, 2}) {
    const NodeEntry statistic{id, hidden};
    if (readers.count(statistic) != 0 || outputs.count(statistic) != 0) return false;
  }
  const DType dtype = shapes.dtype_of(data);
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64) return false;
  const int ndim = shapes.of(data).ndim();
  return AxisIn(join.attrs.GetInt("dim"), ndim) == AxisIn(norm.attrs.GetInt("axis"), ndim);
}

// The fused node's attributes: the Concat's join and the BatchNorm's normalisation and clamp.
std::map<std::string, std::string> ConcatNormAttributes(const Node& join, const Node& norm) {
  std::map<std::string, std::string> attrs;
  for (const char* name : {"num_args", "dim"}) {
    if (auto text = AttributeText(join, name)) attrs[name] = *text;
  }
  for (const char* name : {"eps", "fix_gamma", "axis", "channel_block", "act_min", "act_max"}) {
    if (auto text = AttributeText(norm, name)) attrs[name] = *text;
  }
  return attrs;
}

}  // namespace

ConcatNormFusionResult FuseConcatBatchNorms(const Graph& graph, const GraphShapes& shapes) {
  const std::map<NodeEntry, int> readers = CountReaders(graph);
  const std::set<NodeEntry> outputs(graph.outputs().begin(), graph.outputs().end());
  std::set<int> norms, joins;
  ConcatNormFusionResult result;
  for (int id = 0; id < graph.num_nodes(); ++id) {
    if (!NormalisesItsJoinAlone(graph, shapes, id, readers, outputs)) continue;
    const Node& norm = graph.node(id);
    norms.insert(id);
    joins.insert(norm.inputs[0].node);
    result.fused.push_back({graph.node(norm.inputs[0].node).name, norm.name});
  }
  GraphRewrite rewrite(graph);
  for (int id = 0; id < graph.num_nodes(); ++id) {
    if (joins.count(id) != 0) continue;  // its only reader, the BatchNorm, takes it in
    if (norms.count(id) == 0) {
      rewrite.Copy(id);
      continue;
    }
    const Node& norm = graph.node(id);
    const Node& join = graph.node(norm.inputs[0].node);
    std::vector<NodeEntry> inputs = join.inputs;
    inputs.insert(inputs.end(), norm.inputs.begin() + 1, norm.inputs.end());
    rewrite.Replace(id, norm.op->fusion.with_join, norm.name, ConcatNormAttributes(join, norm),
                    inputs);
  }
  result.graph = rewrite.Finish();
  return result;
}

std::string FormatConcatNormFusions(const std::vector<FusedConcatNorm>& fused, bool per_layer) {
  std::ostringstream out;
  out << "fused " << fused.size() << (fused.size() == 1 ? " join" : " joins")
      << " into the normalisations after them (MXNET_FUSE_CONCAT_NORM)";
  if (per_layer) {
    for (const FusedConcatNorm& pair : fused) {
      out << "\n  " << pair.batch_norm << " <- " << pair.concat;
    }
  }
  return out.str();
}

GateFusionResult FuseSigmoidGates(const Graph& graph) {
  const std::map<NodeEntry, int> readers = CountReaders(graph);
  const std::set<NodeEntry> outputs(graph.outputs().begin(), graph.outputs().end());
  // The gate node a product takes in, or -1, and the op the product becomes.
  std::vector<int> gate_of(graph.num_nodes(), -1);
  std::vector<SelfGate> becomes(graph.num_nodes());
  std::vector<bool> folded(graph.num_nodes(), false);
  GateFusionResult result;
  auto self_gate = [&](NodeEntry entry) -> std::optional<SelfGate> {
    const Node& node = graph.node(entry.node);
    if (node.is_variable() || !node.op->fusion.self_gate || entry.index != 0) return std::nullopt;
    return node.op->fusion.self_gate(node.attrs, node.attr_text);
  };
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    if (node.is_variable() || !node.op->fusion.multiplies || node.inputs.size() != 2) continue;
    for (int side = 0; side < 2; ++side) {
      const NodeEntry gate = node.inputs[side], value = node.inputs[1 - side];
      const std::optional<SelfGate> fused = self_gate(gate);
      if (!fused || folded[gate.node]) continue;
      if (graph.node(gate.node).inputs[0] != value) continue;
      if (readers.at(gate) != 1 || outputs.count(gate) != 0) continue;
      gate_of[id] = gate.node;
      becomes[id] = *fused;
      folded[gate.node] = true;
      result.fused.push_back({node.name, graph.node(gate.node).name});
      break;
    }
  }
  GraphRewrite rewrite(graph);
  for (int id = 0; id < graph.num_nodes(); ++id) {
    if (folded[id]) continue;  // read only by its product, which no longer reads it
    if (gate_of[id] >= 0) {
      rewrite.Replace(id, becomes[id].op, graph.node(id).name, becomes[id].attrs,
                      graph.node(gate_of[id]).inputs);
    } else {
      rewrite.Copy(id);
    }
  }
  result.graph = rewrite.Finish();
  return result;
}

std::string FormatGateFusions(const std::vector<FusedGate>& fused, bool per_layer) {
  std::ostringstream out;
  out << "fused " << fused.size() << (fused.size() == 1 ? " gate" : " gates")
      << " x * gate(x) into silu / hard_swish (MXNET_FUSE_SILU)";
  if (per_layer) {
    for (const FusedGate& pair : fused) out << "\n  " << pair.product << " <- " << pair.gate;
  }
  return out.str();
}

}  // namespace mxlite
