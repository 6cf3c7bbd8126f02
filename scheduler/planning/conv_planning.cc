#include "scheduler/planning/conv_planning.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <limits>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/settings.h"
#include "ops/cpu/avx512.h"

namespace mxlite {
namespace {

using L = ActivationLayout;
// The layouts planned between; a candidate's index is its layout's (Index).
constexpr auto& kLayouts = kActivationLayouts;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

int Index(L layout) { return static_cast<int>(layout); }

// Input `i` of a tuned layer (written NCHW / OIHW) as it reads it in `layout`: the data laid out
// so, its weight (OpDef::layout.nhwc_weight_input) OHWI in NHWC (OIHW otherwise: the NCHW16c
// algorithms reorder it themselves), the bias as it is.
Shape TunedInputShape(const Node& node, size_t i, const Shape& shape, L layout) {
  if (i == 0) return LayoutShape(shape, layout);
  if (static_cast<int>(i) == node.op->layout.nhwc_weight_input && layout == L::kNHWC) {
    return PermuteShape(shape, L::kNCHW, L::kNHWC);
  }
  return shape;
}

std::string LowerCase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

using Role = LayoutRole;

// Whether input `i` of a node whose op declares `roles` is data (not a parameter or auxiliary).
bool IsDataInput(const std::vector<InputRole>& roles, size_t i) {
  return i >= roles.size() || roles[i] == InputRole::kData;
}

// The data inputs of an op node.
std::vector<NodeEntry> DataInputs(const Node& node) {
  const std::vector<InputRole> roles = InputRoles(*node.op, node.attrs);
  std::vector<NodeEntry> data;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (IsDataInput(roles, i)) data.push_back(node.inputs[i]);
  }
  return data;
}

bool WrittenChannelsFirst(const Node& node) {
  return !node.attrs.Has("layout") || node.attrs.GetString("layout") == "NCHW";
}

// NCHW16c runs on the CPU, forward only (its kernels have no backward).
bool BlockedRuns(bool training, const Context& ctx) {
  return !training && ctx.device_type == DeviceType::kCPU;
}

// The planner offers it where it runs and the CPU has AVX-512F: elsewhere its kernels run as
// plain C++ and would only lengthen the tuning.
bool BlockedOffered(const ConvPlanOptions& options) {
  return BlockedRuns(options.training, options.ctx) && cpu::CpuSupportsAvx512f();
}

// Whether `input` reaches `output` (both 4-D, NCHW) broadcast along the batch and spatial axes
// only: its channels are the output's, so it lies in every layout as the output does (a
// squeeze-excitation gate (N, C, 1, 1) is (N, C/16, 1, 1, 16) beside (N, C/16, H, W, 16) in
// NCHW16c, (N, 1, 1, C) beside (N, H, W, C) in NHWC) and the element-wise broadcast holds there.
bool BroadcastsAlongBatchAndSpace(const Shape& input, const Shape& output) {
  if (input[1] != output[1]) return false;
  for (int axis : {0, 2, 3}) {
    if (input[axis] != output[axis] && input[axis] != 1) return false;
  }
  return true;
}

// The node's role (OpDef::layout) in this graph: only 4-D data makes a layout choice, a flexible
// op only when written channels first, an element-wise one only without broadcasting across
// channels.
Role RoleOf(const Node& node, const GraphShapes& shapes, int id) {
  if (node.is_variable()) return Role::kFixed;
  const std::vector<NodeEntry> data = DataInputs(node);
  if (data.empty() || shapes.of({id, 0}).ndim() != 4) return Role::kFixed;
  for (const NodeEntry& entry : data) {
    if (shapes.of(entry).ndim() != 4) return Role::kFixed;
  }
  const LayoutTraits& traits = node.op->layout;
  if (traits.role == Role::kFlexible) {
    return WrittenChannelsFirst(node) ? Role::kFlexible : Role::kFixed;
  }
  if (traits.role != Role::kAgnostic) return Role::kFixed;
  if (!traits.joins_along_axis) {
    const Shape& output = shapes.of({id, 0});
    for (const NodeEntry& entry : data) {
      if (!BroadcastsAlongBatchAndSpace(shapes.of(entry), output)) return Role::kFixed;
    }
  }
  return Role::kAgnostic;
}

// Whether `node` (flexible or agnostic in NCHW) can run in `layout`: NCHW16c must hold its 4-D
// data inputs and its output, and the op must run blocked (OpDef::layout.runs_channel_blocked).
bool CanRunIn(const Node& node, const GraphShapes& shapes, int id, L layout, bool training,
              const Context& ctx) {
  if (layout != L::kNCHW16c) return true;
  if (!BlockedRuns(training, ctx)) return false;
  if (!LayoutHoldsChannels(layout, shapes.of({id, 0})[1])) return false;
  std::vector<Shape> data;
  for (const NodeEntry& entry : DataInputs(node)) {
    if (!LayoutHoldsChannels(layout, shapes.of(entry)[1])) return false;
    data.push_back(shapes.of(entry));
  }
  const auto& runs_blocked = node.op->layout.runs_channel_blocked;
  return !runs_blocked || runs_blocked(node.attrs, data);
}

// Whether the planner offers `layout` to `node`: it can run there, and NCHW16c is offered.
bool Offered(const Node& node, const GraphShapes& shapes, int id, L layout,
             const ConvPlanOptions& options) {
  return (layout != L::kNCHW16c || BlockedOffered(options)) &&
         CanRunIn(node, shapes, id, layout, options.training, options.ctx);
}

// Whether the graph as written is channels-first throughout (the planner's starting point):
// no node names a layout that is not (only layout-bearing ops have a layout attribute).
bool HasLayerNotChannelsFirst(const Graph& graph) {
  for (const Node& node : graph.nodes()) {
    if (node.is_variable() || !node.attrs.Has("layout")) continue;
    const std::string layout = node.attrs.GetString("layout");
    if (layout != "NCW" && layout != "NCHW" && layout != "NCDHW") return true;
  }
  return false;
}

// The node's attributes in `layout` (OpDef::layout.retarget).
std::map<std::string, std::string> WithLayout(const Node& node, L layout) {
  std::map<std::string, std::string> attrs = node.attr_text;
  if (node.op->layout.retarget) node.op->layout.retarget(node.attrs, layout, attrs);
  return attrs;
}

std::string DirectionShortName(conv::ConvDirection direction) {
  switch (direction) {
    case conv::ConvDirection::kForward:
      return "fwd";
    case conv::ConvDirection::kBackwardData:
      return "bwd-data";
    case conv::ConvDirection::kBackwardFilter:
      return "bwd-filter";
  }
  return "?";
}

// Whether some flexible tuned layer has timings to plan with (its tuning mode is not off).
bool AnyConvolutionTuned(const Graph& graph, const GraphShapes& shapes) {
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    if (node.is_variable() || !node.op->layout.tuned) continue;
    if (RoleOf(node, shapes, id) != Role::kFlexible) continue;
    if (conv::LayerTuningRequestFor(node.attrs, node.name).mode.mode != conv::TuneMode::kOff) {
      return true;
    }
  }
  return false;
}

// ---- Node costs ----

// What a tuned layer's op state decided in each layout it was tuned in (empty where it was not).
struct LayerDecisions {
  std::vector<conv::LayerTuning> in[kNumActivationLayouts];
};

// The tuned layers (convolutions) by node id.
using TunedLayers = std::map<int, LayerDecisions>;

bool TunedOff(const std::vector<conv::LayerTuning>& decisions) {
  for (const conv::LayerTuning& decision : decisions) {
    if (decision.origin == conv::PickOrigin::kHeuristic) return true;
  }
  return false;
}

bool TuningInBackground(const LayerDecisions& layer) {
  for (const std::vector<conv::LayerTuning>& decisions : layer.in) {
    for (const conv::LayerTuning& decision : decisions) {
      if (decision.origin == conv::PickOrigin::kBackground) return true;
    }
  }
  return false;
}

// The convolution tuned in `layout` through the op's own state creator, exactly as the executor
// will bind it (so binding the planned graph finds every pick in the tuner's cache): its decisions.
std::vector<conv::LayerTuning> TuneIn(const Node& node, const GraphShapes& shapes, int id, L layout,
                                      const ConvPlanOptions& options) {
  const Attributes attrs = ParseOpAttributes(*node.op, WithLayout(node, layout), node.name);
  StateRequest request{attrs, {}, {}, {}, options.ctx, node.name, options.training};
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    request.input_shapes.push_back(TunedInputShape(node, i, shapes.of(node.inputs[i]), layout));
    request.input_dtypes.push_back(shapes.dtype_of(node.inputs[i]));
  }
  request.output_shapes.push_back(LayoutShape(shapes.of({id, 0}), layout));
  std::unique_ptr<OpState> state = CreateOpState(*node.op, request);
  const auto* tuned = dynamic_cast<const conv::TunedState*>(state.get());
  MX_CHECK(tuned != nullptr) << "Convolution " << node.name << ": the op state on "
                             << options.ctx.ToString() << " has no tuning";
  return tuned->tuning_decisions();
}

// Tunes every flexible convolution in its written layout and, unless its tuning is off, in every
// other layout offered to it. Nothing is timed here but the tuner's own candidates (none at all
// in background mode), so a bind that finds some layer still tuning in the background can stop
// before anything else is measured.
TunedLayers TuneFlexibleConvolutions(const Graph& graph, const GraphShapes& shapes,
                                     const ConvPlanOptions& options) {
  TunedLayers tuned;
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    if (node.is_variable() || !node.op->layout.tuned) continue;
    if (RoleOf(node, shapes, id) != Role::kFlexible) continue;
    LayerDecisions& layer = tuned[id];
    layer.in[Index(L::kNCHW)] = TuneIn(node, shapes, id, L::kNCHW, options);
    if (TunedOff(layer.in[Index(L::kNCHW)])) continue;  // no timings to plan with
    for (L layout : {L::kNHWC, L::kNCHW16c}) {
      if (Offered(node, shapes, id, layout, options)) {
        layer.in[Index(layout)] = TuneIn(node, shapes, id, layout, options);
      }
    }
  }
  return tuned;
}

// The layer's cost in `layout` from its decisions there (forward, plus both backward directions
// when training).
void CostConvolution(const Node& node, const GraphShapes& shapes, L layout,
                     const std::vector<conv::LayerTuning>& decisions,
                     const ConvPlanOptions& options, PlannedLayer& layer, ConvPlanReport& report) {
  double total = 0.0;
  std::ostringstream algorithms;
  const bool several = decisions.size() > 1;
  for (const conv::LayerTuning& decision : decisions) {
    if (decision.origin == conv::PickOrigin::kHeuristic) layer.fixed_reason = "tuning off";
    total += decision.record.time_ms;
    if (algorithms.tellp() > 0) algorithms << ", ";
    if (several) algorithms << DirectionShortName(decision.problem.direction) << ' ';
    algorithms << decision.record.algorithm;
    report.decisions.push_back(decision);
  }
  // The weight is written OIHW. Training transposes it to OHWI every pass; inference once, since
  // the executor keeps values computed from parameters alone (ExecutionPlan: constants).
  if (layout == L::kNHWC && options.training) {
    const MeasuredMs weight =
        LayoutTransformMs(shapes.of(node.inputs[1]), L::kNCHW, layout,
                          shapes.dtype_of(node.inputs[1]), options.training, options.ctx);
    total += weight.ms;
    report.timings_run += weight.timings_run;
  }
  layer.cost_ms[Index(layout)] = total;
  layer.algorithms[Index(layout)] = algorithms.str();
}

// `tuned`: what TuneFlexibleConvolutions decided for a convolution (null for pooling).
PlannedLayer CostFlexibleNode(const Node& node, const GraphShapes& shapes, int id,
                              const LayerDecisions* tuned, const ConvPlanOptions& options,
                              ConvPlanReport& report) {
  PlannedLayer layer;
  layer.node = node.name;
  layer.op = node.op->name;
  if (tuned != nullptr) {
    for (L layout : kLayouts) {
      const std::vector<conv::LayerTuning>& decisions = tuned->in[Index(layout)];
      if (decisions.empty()) continue;
      CostConvolution(node, shapes, layout, decisions, options, layer, report);
    }
    if (!layer.fixed_reason.empty()) {       // tuning off: no timings to plan with
      layer.cost_ms[Index(L::kNCHW)] = 0.0;  // unknown; the same in every plan
    }
    return layer;
  }
  const Shape& data = shapes.of(node.inputs[0]);
  for (L layout : kLayouts) {
    if (!Offered(node, shapes, id, layout, options)) continue;
    const MeasuredMs cost =
        MeasureNodeMs(node.op->name, WithLayout(node, layout), {LayoutShape(data, layout)},
                      shapes.dtype_of(node.inputs[0]), options.training, options.ctx);
    layer.cost_ms[Index(layout)] = cost.ms;
    report.timings_run += cost.timings_run;
  }
  return layer;
}

// An agnostic node's own time in each layout it can run in, its data inputs in that layout
// (element-wise ops, BatchNorm, Concat: their kernels differ per layout, and one that runs slowly
// in a layout the convolutions favour must weigh against it). A layout the node alone refuses to
// run in (its kernel's error) is not offered; when no layout can be timed the node stays free in
// all and says why. Running out of memory is not a refusal: it propagates.
PlannedLayer CostAgnosticNode(const Node& node, const GraphShapes& shapes, int id,
                              const ConvPlanOptions& options, ConvPlanReport& report) {
  PlannedLayer layer;
  layer.node = node.name;
  layer.op = node.op->name;
  const std::vector<NodeEntry> data = DataInputs(node);
  std::string refusal;
  bool timed = false;
  for (L layout : kLayouts) {
    if (!Offered(node, shapes, id, layout, options)) continue;
    std::vector<Shape> data_shapes;
    for (const NodeEntry& entry : data)
      data_shapes.push_back(LayoutShape(shapes.of(entry), layout));
    try {
      const MeasuredMs cost =
          MeasureNodeMs(node.op->name, WithLayout(node, layout), data_shapes,
                        shapes.dtype_of(data.front()), options.training, options.ctx);
      layer.cost_ms[Index(layout)] = cost.ms;
      report.timings_run += cost.timings_run;
      timed = true;
    } catch (const OutOfMemoryError&) {
      throw;
    } catch (const Error& error) {
      if (refusal.empty())
        refusal = std::string(ActivationLayoutName(layout)) + ": " + error.what();
    }
  }
  if (!timed && !refusal.empty()) {
    layer.fixed_reason = "not timed (" + refusal + ")";
    for (L layout : kLayouts) {
      if (Offered(node, shapes, id, layout, options)) layer.cost_ms[Index(layout)] = 0.0;
    }
  }
  return layer;
}

// Whether node `id` is computed from parameters alone (an imported model's weight arithmetic), by
// the rule of the execution plan's constant steps (scheduler/graph/execution_plan.cc,
// MarkConstantSteps): every input a parameter or such a node (none at all counts), no random
// numbers drawn, not a graph output. At inference the executor computes it once and keeps it, so
// it costs no time per pass. `constant` holds the answer for the nodes before `id`.
bool ComputedFromParameters(const Graph& graph, int id, const std::vector<bool>& constant,
                            const std::set<int>& output_nodes) {
  const Node& node = graph.node(id);
  if (node.is_variable() || node.op->needs_random || output_nodes.count(id) != 0) return false;
  return std::all_of(node.inputs.begin(), node.inputs.end(), [&](const NodeEntry& input) {
    const Node& source = graph.node(input.node);
    return source.is_variable() ? source.role == VariableRole::kParameter : constant[input.node];
  });
}

// Every fixed op node's own time as written (fully connected layers, MatMul, LayerNorm,
// Softmax, reshapes...: what runs the same in every plan), timed alone as a one-node graph like
// the agnostic nodes, so that the predicted totals cover the pass, not only what the plan
// decides. Not listed: at inference a node computed from parameters alone (it runs once, not per
// pass), and a node the executor folds into its convolution after planning (`fold_partner`: a
// residual addition after a convolution the planner does not place, such as a 3-D one). A node
// that cannot be timed alone (its kernel's error on uniform inputs, e.g. indices) is listed with
// a zero cost and the reason; nothing is kept of the failure, so each bind tries it again.
void CostFixedNodes(const Graph& graph, const GraphShapes& shapes, const std::vector<Role>& roles,
                    const std::vector<int>& fold_partner, const ConvPlanOptions& options,
                    ConvPlanReport& report) {
  std::set<int> output_nodes;
  for (const NodeEntry& output : graph.outputs()) output_nodes.insert(output.node);
  std::vector<bool> constant(graph.num_nodes(), false);
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    constant[id] = !options.training && ComputedFromParameters(graph, id, constant, output_nodes);
    if (node.is_variable() || roles[id] != Role::kFixed || constant[id]) continue;
    if (fold_partner[id] >= 0) continue;
    PlannedLayer layer;
    layer.node = node.name;
    layer.op = node.op->name;
    const std::vector<NodeEntry> data = DataInputs(node);
    std::vector<Shape> data_shapes;
    for (const NodeEntry& entry : data) data_shapes.push_back(shapes.of(entry));
    const DType dtype = data.empty() ? shapes.dtype_of({id, 0}) : shapes.dtype_of(data.front());
    try {
      const MeasuredMs cost = MeasureNodeMs(node.op->name, node.attr_text, data_shapes, dtype,
                                            options.training, options.ctx);
      layer.cost_ms[Index(L::kNCHW)] = cost.ms;
      report.timings_run += cost.timings_run;
    } catch (const OutOfMemoryError&) {
      throw;
    } catch (const Error& error) {
      layer.cost_ms[Index(L::kNCHW)] = 0.0;
      layer.fixed_reason = std::string("not timed (") + error.what() + ")";
    }
    report.predicted_fixed_ms += layer.cost_ms[Index(L::kNCHW)];
    report.fixed.push_back(std::move(layer));
  }
}

// The agnostic nodes the executor may fold into a convolution after planning, each with the
// node whose layout it must share for that (Executor::FuseResiduals: FuseResidualAdditions, then
// FuseClampActivations again): a residual addition with its convolution, and a clamp that
// then follows it with the addition. The fold happens only where the plan leaves the two in one
// layout (a transform between them keeps the node apart), so the planner charges the node's time
// on that edge, where the layouts differ, instead of on the node.
std::map<std::string, std::string> FoldPartners(const Graph& graph, const GraphShapes& shapes,
                                                const ConvPlanOptions& options) {
  std::map<std::string, std::string> partner;
  if (!options.fuse_residual || options.training) return partner;
  const ResidualFusionResult residuals = FuseResidualAdditions(graph, shapes);
  for (const FusedResidual& fused : residuals.fused) partner[fused.addition] = fused.convolution;
  if (!options.fuse_activations) return partner;
  for (const FusedActivation& clamp : FuseClampActivations(residuals.graph).fused) {
    const int id = graph.Find(clamp.activation);
    if (id < 0) continue;
    const std::string& producer = graph.node(graph.node(id).inputs[0].node).name;
    if (partner.count(producer) > 0) partner[clamp.activation] = producer;
  }
  return partner;
}

// ---- The problem ----

struct Planning {
  std::vector<Role> roles;        // per graph node
  std::vector<int> problem_node;  // per graph node: its index in `problem`, or -1
  LayoutProblem problem;
  std::vector<int> layer_of;     // per problem node: index in report.layers, or -1 (agnostic)
  std::vector<int> agnostic_of;  // per problem node: index in report.agnostic, or -1
  // Per graph node: the node it folds into a convolution with when both share a layout
  // (FoldPartners), or -1.
  std::vector<int> fold_partner;
};

// Transform cost matrix of a value (written NCHW shape) between any two layouts; +infinity into
// or out of a layout that cannot hold it here (nothing is timed for those).
std::vector<std::vector<double>> TransformMatrix(const Shape& written, DType dtype,
                                                 const ConvPlanOptions& options,
                                                 ConvPlanReport& report) {
  std::vector<std::vector<double>> matrix(kNumActivationLayouts,
                                          std::vector<double>(kNumActivationLayouts, 0.0));
  auto holds = [&](L layout) {
    return layout != L::kNCHW16c ||
           (BlockedOffered(options) && LayoutHoldsChannels(layout, written[1]));
  };
  for (L from : kLayouts) {
    for (L to : kLayouts) {
      if (!holds(from) || !holds(to)) {
        matrix[Index(from)][Index(to)] = kInfinity;
        continue;
      }
      const MeasuredMs cost = LayoutTransformMs(LayoutShape(written, from), from, to, dtype,
                                                options.training, options.ctx);
      matrix[Index(from)][Index(to)] = cost.ms;
      report.timings_run += cost.timings_run;
    }
  }
  return matrix;
}

Planning BuildProblem(const Graph& graph, const GraphShapes& shapes, const ConvPlanOptions& options,
                      const TunedLayers& tuned, ConvPlanReport& report) {
  Planning p;
  p.fold_partner.assign(graph.num_nodes(), -1);
  for (const auto& [node, partner] : FoldPartners(graph, shapes, options)) {
    const int id = graph.Find(node), partner_id = graph.Find(partner);
    if (id >= 0 && partner_id >= 0) p.fold_partner[id] = partner_id;  // names of this graph
  }
  p.roles.resize(graph.num_nodes(), Role::kFixed);
  p.problem_node.resize(graph.num_nodes(), -1);
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    p.roles[id] = RoleOf(node, shapes, id);
    if (p.roles[id] == Role::kFixed) continue;
    std::vector<double> costs(kNumActivationLayouts, 0.0);
    int layer_index = -1, agnostic_index = -1;
    if (p.roles[id] == Role::kFlexible) {
      const auto decisions = tuned.find(id);
      PlannedLayer layer = CostFlexibleNode(node, shapes, id,
                                            decisions != tuned.end() ? &decisions->second : nullptr,
                                            options, report);
      for (L layout : kLayouts) {
        const double cost = layer.cost_ms[Index(layout)];
        costs[Index(layout)] = cost < 0.0 ? kInfinity : cost;
      }
      layer_index = static_cast<int>(report.layers.size());
      report.layers.push_back(std::move(layer));
    } else {
      PlannedLayer layer = CostAgnosticNode(node, shapes, id, options, report);
      for (L layout : kLayouts) {
        const double cost = layer.cost_ms[Index(layout)];
        // A node that may fold pays on its partner's edge (add_value), not here.
        costs[Index(layout)] = cost < 0.0 ? kInfinity : p.fold_partner[id] >= 0 ? 0.0 : cost;
      }
      agnostic_index = static_cast<int>(report.agnostic.size());
      report.agnostic.push_back(std::move(layer));
    }
    p.problem_node[id] = p.problem.AddNode(node.name, costs);
    p.layer_of.push_back(layer_index);
    p.agnostic_of.push_back(agnostic_index);
  }
  // Edges: every 4-D value into a planned node, or out of one into a fixed consumer or the caller.
  auto add_value = [&](NodeEntry value, int consumer) {
    const int producer = p.problem_node[value.node];
    const int consumer_problem_node = consumer < 0 ? -1 : p.problem_node[consumer];
    if (producer < 0 && consumer_problem_node < 0) return;
    auto matrix = TransformMatrix(shapes.of(value), shapes.dtype_of(value), options, report);
    if (consumer >= 0 && p.fold_partner[consumer] == value.node) {
      // The consumer folds into its producer where they share a layout; elsewhere it runs.
      const PlannedLayer& folding = report.agnostic[p.agnostic_of[consumer_problem_node]];
      for (L from : kLayouts) {
        for (L to : kLayouts) {
          if (from != to)
            matrix[Index(from)][Index(to)] += std::max(folding.cost_ms[Index(to)], 0.0);
        }
      }
    }
    if (producer >= 0 && consumer_problem_node >= 0) {
      p.problem.AddEdge(producer, consumer_problem_node, matrix);
    } else if (producer >= 0) {  // the consumer wants the value as written
      for (L from : kLayouts) {
        p.problem.nodes[producer].costs[Index(from)] += matrix[Index(from)][Index(L::kNCHW)];
      }
    } else {  // the value is as written
      for (L to : kLayouts) {
        p.problem.nodes[consumer_problem_node].costs[Index(to)] +=
            matrix[Index(L::kNCHW)][Index(to)];
      }
    }
  };
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    if (node.is_variable()) continue;
    for (const NodeEntry& value : DataInputs(node)) {
      if (shapes.of(value).ndim() == 4) add_value(value, id);
    }
  }
  for (const NodeEntry& output : graph.outputs()) {
    if (shapes.of(output).ndim() == 4) add_value(output, -1);
  }
  return p;
}

// ---- Depthwise blocks ----

// A block's stages (nodes of `nhwc`, laid out NHWC) as a graph of their own: the first stage's data
// the input, each stage's weight and bias parameters of the shapes they have there; and the tuning
// DB key that names all of it.
std::pair<std::string, Graph> BlockGraph(const Graph& nhwc, const GraphShapes& shapes,
                                         const std::vector<std::string>& stages) {
  Graph block;
  const Node& first = nhwc.node(nhwc.Find(stages.front()));
  const Shape& data_shape = shapes.of(first.inputs[0]);
  const DType dtype = shapes.dtype_of(first.inputs[0]);
  std::ostringstream key;
  key << "depthwise_block data=" << data_shape << " dtype=" << DTypeName(dtype);
  NodeEntry x{block.AddVariable("data", VariableRole::kInput, data_shape, dtype), 0};
  for (const std::string& name : stages) {
    const Node& stage = nhwc.node(nhwc.Find(name));
    std::vector<NodeEntry> inputs = {x};
    for (size_t i = 1; i < stage.inputs.size(); ++i) {
      const int parameter =
          block.AddVariable(name + (i == 1 ? "_weight" : "_bias"), VariableRole::kParameter,
                            shapes.of(stage.inputs[i]), dtype);
      inputs.push_back({parameter, 0});
    }
    x = {block.AddOpNode(stage.op->name, name, stage.attr_text, inputs), 0};
    key << " |";
    for (const auto& [attribute, value] : stage.attr_text) key << ' ' << attribute << '=' << value;
  }
  block.AddOutput(x);
  return {key.str(), std::move(block)};
}

// The stages' tuned costs in NHWC.
double StagesCostMs(const std::vector<std::string>& stages,
                    const std::map<std::string, const PlannedLayer*>& layers) {
  double sum = 0.0;
  for (const std::string& stage : stages) sum += layers.at(stage)->cost_ms[Index(L::kNHWC)];
  return sum;
}

// Costs the depthwise blocks the executor would fuse (header: "Depthwise blocks") and credits
// each one that is faster fused to keeping its stages NHWC together. Returns the credits' sum:
// every assignment's cost in `p.problem` is that much over what it predicts.
double CostDepthwiseBlocks(const Graph& graph, const GraphShapes& shapes,
                           const ConvPlanOptions& options, Planning& p, ConvPlanReport& report) {
  if (!options.fuse_depthwise || options.training || options.ctx.device_type != DeviceType::kCPU) {
    return 0.0;
  }
  std::map<std::string, L> all_nhwc;
  std::map<std::string, const PlannedLayer*> layers;
  for (int id = 0; id < graph.num_nodes(); ++id) {
    if (p.problem_node[id] >= 0) all_nhwc[graph.node(id).name] = L::kNHWC;
  }
  for (const PlannedLayer& layer : report.layers) layers[layer.node] = &layer;
  const Graph nhwc = RewriteLayouts(graph, shapes, all_nhwc, false);
  const GraphShapes nhwc_shapes = InferGraphShapes(nhwc);
  const DepthwiseFusionResult fusion =
      FuseDepthwiseBlocks(nhwc, nhwc_shapes, {.min_intermediate_bytes = 0});  // every block
  double credited = 0.0;
  for (const FusedDepthwiseBlock& block : fusion.blocks) {
    const std::vector<std::string> stages = block.Stages();
    bool costed = true;
    for (const std::string& stage : stages) {
      const auto layer = layers.find(stage);
      costed = costed && layer != layers.end() && layer->second->fixed_reason.empty() &&
               layer->second->cost_ms[Index(L::kNHWC)] >= 0.0;
    }
    if (!costed) continue;  // a stage with tuning off: nothing to weigh it against
    // Both ways as a pass runs them: each stage timed alone leaves the tensor it writes in cache
    // for nobody, and reads its input hot, which is what the fused block saves.
    const auto [key, block_graph] = BlockGraph(nhwc, nhwc_shapes, stages);
    const auto [fused, apart] = MeasureFusedAndApartMs(key, block_graph, options.ctx);
    report.timings_run += fused.timings_run + apart.timings_run;
    const PlannedDepthwiseBlock planned{block, apart.ms, fused.ms, StagesCostMs(stages, layers)};
    report.depthwise_blocks.push_back(planned);
    if (!planned.fuses()) continue;
    // The saving in the planner's own terms (PlannedDepthwiseBlock::SavingMs): the measured
    // difference itself would mix two clocks (a small block's graph pays engine steps its tuned
    // stages never see) and could predict a plan below zero.
    const double saving = planned.SavingMs();
    const size_t edges = stages.size() - 1;
    for (size_t i = 0; i < edges; ++i) {
      CostMatrix broken(kNumActivationLayouts, kNumActivationLayouts,
                        saving / static_cast<double>(edges));
      broken.at(Index(L::kNHWC), Index(L::kNHWC)) = 0.0;
      p.problem.AddEdge(p.problem_node[graph.Find(stages[i])],
                        p.problem_node[graph.Find(stages[i + 1])], std::move(broken));
    }
    credited += saving;
  }
  return credited;
}

// Local: each flexible node takes its own cheapest layout (the earliest of kLayouts on ties: the
// written one first), as a per-layer autotuner would; agnostic nodes follow the producer of their
// first input where they can run in its layout, else run as written.
std::vector<int> LocalChoice(const Graph& graph, const GraphShapes& shapes, const Planning& p,
                             const ConvPlanReport& report, const ConvPlanOptions& options) {
  std::vector<int> choice(p.problem.nodes.size(), Index(L::kNCHW));
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const int v = p.problem_node[id];
    if (v < 0) continue;
    if (p.roles[id] == Role::kFlexible) {
      const PlannedLayer& layer = report.layers[p.layer_of[v]];
      for (L layout : kLayouts) {
        const double cost = layer.cost_ms[Index(layout)];
        if (cost >= 0.0 && cost < layer.cost_ms[choice[v]]) choice[v] = Index(layout);
      }
      continue;
    }
    for (const NodeEntry& input : DataInputs(graph.node(id))) {
      if (shapes.of(input).ndim() != 4) continue;
      const int producer = p.problem_node[input.node];
      const L wanted = producer >= 0 ? kLayouts[choice[producer]] : L::kNCHW;
      if (Offered(graph.node(id), shapes, id, wanted, options)) choice[v] = Index(wanted);
      break;
    }
  }
  return choice;
}

// ---- Rewriting ----

class Rewriter {
 public:
  // `layout_of[id]`: the layout node `id` runs in (NCHW for every node that is not planned).
  // `transforms`, when not null, receives every inserted transform with its cost measured on
  // `ctx`.
  Rewriter(const Graph& source, const GraphShapes& shapes, const std::vector<L>& layout_of,
           bool training, std::vector<PlannedTransform>* transforms, const Context& ctx)
      : source_(source),
        shapes_(shapes),
        layout_of_(layout_of),
        training_(training),
        transforms_(transforms),
        ctx_(ctx) {}

  Graph Rewrite() {
    new_entry_.assign(source_.num_nodes(), {});
    for (int id = 0; id < source_.num_nodes(); ++id) {
      const Node& node = source_.node(id);
      int new_id;
      if (node.is_variable()) {
        // Parameters get their inferred shapes and dtypes: a transform in front of the consumer
        // that used to infer them would otherwise meet unknowns.
        const bool input = node.role == VariableRole::kInput;
        new_id = graph_.AddVariable(
            node.name, node.role, input ? node.shape : std::optional<Shape>(shapes_.of({id, 0})),
            input ? node.dtype : std::optional<DType>(shapes_.dtype_of({id, 0})));
      } else {
        new_id = AddOp(node, layout_of_[id]);
      }
      new_entry_[id] = new_id;
    }
    for (const NodeEntry& output : source_.outputs()) {
      graph_.AddOutput(shapes_.of(output).ndim() == 4 ? EntryIn(output, L::kNCHW) : Plain(output));
    }
    graph_.Validate();
    return std::move(graph_);
  }

 private:
  int AddOp(const Node& node, L layout) {
    std::map<std::string, std::string> attrs = node.attr_text;
    std::vector<NodeEntry> inputs;
    const std::vector<InputRole> roles = InputRoles(*node.op, node.attrs);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const NodeEntry input = node.inputs[i];
      const bool activation = IsDataInput(roles, i) && shapes_.of(input).ndim() == 4;
      inputs.push_back(activation ? EntryIn(input, layout) : Plain(input));
    }
    if (layout != L::kNCHW) Retarget(node, layout, attrs, inputs);
    return graph_.AddOpNode(node.op->name, node.name, attrs, inputs);
  }

  // Attributes (OpDef::layout.retarget) and the weight (nhwc_weight_input) of a node moved from
  // NCHW to `layout`. NCHW16c convolutions read the weight OIHW as written.
  void Retarget(const Node& node, L layout, std::map<std::string, std::string>& attrs,
                std::vector<NodeEntry>& inputs) {
    const LayoutTraits& traits = node.op->layout;
    if (traits.retarget) traits.retarget(node.attrs, layout, attrs);
    const int weight = traits.nhwc_weight_input;
    if (weight >= 0 && layout == L::kNHWC) {
      inputs[weight] = Transformed(node.inputs[weight], Plain(node.inputs[weight]), L::kNCHW,
                                   layout, node.name + "_weight", "ohwi", /*once=*/!training_);
    }
  }

  NodeEntry Plain(NodeEntry source_entry) const {
    return {new_entry_[source_entry.node], source_entry.index};
  }

  // The value `source_entry` laid out as `layout`: the producer's output, or a transform of it
  // (one per value and layout, shared by every consumer).
  NodeEntry EntryIn(NodeEntry source_entry, L layout) {
    const L produced = layout_of_[source_entry.node];
    if (produced == layout) return Plain(source_entry);
    const auto key = std::make_pair(source_entry, layout);
    if (auto found = transformed_.find(key); found != transformed_.end()) return found->second;
    const NodeEntry entry =
        Transformed(source_entry, Plain(source_entry), produced, layout,
                    source_.EntryName(source_entry), LowerCase(ActivationLayoutName(layout)));
    transformed_[key] = entry;
    return entry;
  }

  NodeEntry Transformed(NodeEntry source_entry, NodeEntry input, L from, L to,
                        const std::string& value, const std::string& suffix, bool once = false) {
    const std::string name = UniqueName(value + "_to_" + suffix);
    // A blocked layout is no permutation of four axes: layout_transform moves it; the CPU and the
    // GPU both transpose between NCHW and NHWC.
    const bool blocked = from == L::kNCHW16c || to == L::kNCHW16c;
    const int id = blocked ? graph_.AddOpNode("layout_transform", name,
                                              {{"src_layout", ActivationLayoutName(from)},
                                               {"dst_layout", ActivationLayoutName(to)}},
                                              {input})
                           : graph_.AddOpNode("transpose", name,
                                              {{"axes", LayoutPermutationText(from, to)}}, {input});
    if (transforms_ == nullptr) return {id, 0};  // nobody asked for the costs
    PlannedTransform transform;
    transform.node = name;
    transform.value = value;
    transform.from = from;
    transform.to = to;
    transform.shape = LayoutShape(shapes_.of(source_entry), from);
    transform.cost_ms = LayoutTransformMs(transform.shape, from, to, shapes_.dtype_of(source_entry),
                                          training_, ctx_)
                            .ms;
    transform.once = once;
    transforms_->push_back(transform);
    return {id, 0};
  }

  std::string UniqueName(const std::string& base) const {
    std::string name = base;
    for (int n = 1; source_.HasName(name) || graph_.HasName(name); ++n) {
      name = base + "_" + std::to_string(n);
    }
    return name;
  }

  const Graph& source_;
  const GraphShapes& shapes_;
  const std::vector<L>& layout_of_;  // per source node: the layout it runs in and outputs
  const bool training_;
  std::vector<PlannedTransform>* transforms_;  // may be null
  const Context ctx_;
  Graph graph_;
  std::vector<int> new_entry_;  // per source node: its node in graph_
  std::map<std::pair<NodeEntry, L>, NodeEntry> transformed_;
};

std::string FormatMs(double ms) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(ms < 10.0 ? 3 : 1) << ms << " ms";
  return out.str();
}

}  // namespace

Graph RewriteLayouts(const Graph& graph, const GraphShapes& shapes,
                     const std::map<std::string, ActivationLayout>& layouts, bool training,
                     std::vector<PlannedTransform>* transforms, const Context& ctx) {
  MX_CHECK(!HasLayerNotChannelsFirst(graph))
      << "layouts can only be rewritten in a graph written channels-first (NCHW)";
  std::vector<L> layout_of(graph.num_nodes(), L::kNCHW);
  for (const auto& [name, layout] : layouts) {
    const int id = graph.Find(name);
    MX_CHECK(id >= 0) << "a layout was given for '" << name << "', which is not a node";
    const Node& node = graph.node(id);
    MX_CHECK(layout == L::kNCHW || RoleOf(node, shapes, id) != Role::kFixed)
        << "node '" << name << "' (" << node.TypeName() << ") runs only as written (NCHW), not "
        << ActivationLayoutName(layout);
    MX_CHECK(layout == L::kNCHW || CanRunIn(node, shapes, id, layout, training, ctx))
        << "node '" << name << "' (" << node.TypeName() << ") cannot run in "
        << ActivationLayoutName(layout) << " here (NCHW16c: CPU inference, every 4-D input and "
        << "the output in whole blocks of " << kChannelBlock
        << " channels, convolutions of one group or depthwise)";
    layout_of[id] = layout;
  }
  return Rewriter(graph, shapes, layout_of, training, transforms, ctx).Rewrite();
}

const char* ConvPlanKindName(ConvPlanKind kind) {
  switch (kind) {
    case ConvPlanKind::kNone:
      return "none";
    case ConvPlanKind::kLocal:
      return "local";
    case ConvPlanKind::kGlobal:
      return "global";
  }
  return "?";
}

ConvPlanKind ParseConvPlanKind(std::string_view text) {
  for (ConvPlanKind kind : {ConvPlanKind::kNone, ConvPlanKind::kLocal, ConvPlanKind::kGlobal}) {
    if (text == ConvPlanKindName(kind)) return kind;
  }
  MX_THROW() << "unknown convolution plan '" << text << "'; expected none, local or global";
}

ConvPlanKind ConvPlanKindFromSettings() {
  return ParseConvPlanKind(settings().GetString("MXNET_CONV_PLAN"));
}

double ConvPlanReport::predicted_ms() const {
  switch (kind) {
    case ConvPlanKind::kNone:
      return predicted_none_ms;
    case ConvPlanKind::kLocal:
      return predicted_local_ms;
    case ConvPlanKind::kGlobal:
      return predicted_global_ms;
  }
  return 0.0;
}

std::string ConvPlanReport::Summary() const {
  std::ostringstream out;
  out << ConvPlanKindName(kind) << " plan: ";
  if (!planned) {
    out << "layouts as written";
    if (layers_tuning_in_background > 0) {
      out << " (planning waits for " << layers_tuning_in_background
          << (layers_tuning_in_background == 1 ? " layer" : " layers") << " tuning in background)";
    }
    return out.str();
  }
  int nhwc = 0, blocked = 0;
  for (const PlannedLayer& layer : layers) {
    nhwc += layer.chosen == L::kNHWC;
    blocked += layer.chosen == L::kNCHW16c;
  }
  out << nhwc << " of " << layers.size() << " layers NHWC, " << blocked << " NCHW16c, "
      << transforms.size() << " transforms; predicted " << FormatMs(predicted_ms()) << " (none "
      << FormatMs(predicted_none_ms) << ", local " << FormatMs(predicted_local_ms) << ", global "
      << FormatMs(predicted_global_ms);
  if (!fixed.empty()) out << "; each with " << FormatMs(predicted_fixed_ms) << " as written";
  out << ")";
  out << std::fixed << std::setprecision(1) << ", measured in " << seconds << " s";
  if (kind == ConvPlanKind::kGlobal) {
    out << (proven_optimal ? ", proven optimal" : ", not proven optimal (RN heuristic used)");
  }
  return out.str();
}

std::string ConvPlanReport::Format(bool verbose) const {
  std::ostringstream out;
  out << Summary() << '\n';
  if (!planned) return out.str();
  for (const PlannedLayer& layer : layers) {
    const int chosen = Index(layer.chosen);
    out << "  " << layer.node << " (" << layer.op << "): " << ActivationLayoutName(layer.chosen);
    if (!layer.algorithms[chosen].empty()) out << ' ' << layer.algorithms[chosen];
    out << ", " << FormatMs(layer.cost_ms[chosen]);
    if (!layer.fixed_reason.empty()) out << " (fixed: " << layer.fixed_reason << ")";
    out << '\n';
    if (!verbose) continue;
    for (L layout : kLayouts) {
      const int i = Index(layout);
      if (i == chosen || layer.cost_ms[i] < 0.0) continue;
      out << "      not chosen: " << ActivationLayoutName(layout);
      if (!layer.algorithms[i].empty()) out << ' ' << layer.algorithms[i];
      out << ", " << FormatMs(layer.cost_ms[i]) << '\n';
    }
  }
  for (const PlannedTransform& t : transforms) {
    out << "  transform " << t.node << ": " << t.value << ' ' << t.shape << ' '
        << ActivationLayoutName(t.from) << " -> " << ActivationLayoutName(t.to) << ", "
        << FormatMs(t.cost_ms) << (t.once ? " once (a constant at inference)" : "") << '\n';
  }
  for (const PlannedDepthwiseBlock& block : depthwise_blocks) {
    out << "  depthwise block";
    const std::vector<std::string> stages = block.stages.Stages();
    for (size_t i = 0; i < stages.size(); ++i) out << (i == 0 ? " " : " -> ") << stages[i];
    out << ": fused " << FormatMs(block.fused_ms) << ", apart " << FormatMs(block.apart_ms)
        << (block.fuses() ? "" : " (kept apart: slower fused)") << '\n';
  }
  if (kind == ConvPlanKind::kGlobal && verbose) {
    out << "  solver: " << reductions.ToString() << '\n';
  }
  return out.str();
}

PlannedGraph PlanConvolutions(const Graph& graph, const GraphShapes& shapes,
                              const ConvPlanOptions& options) {
  PlannedGraph planned{graph, {}};
  ConvPlanReport& report = planned.report;
  report.kind = options.kind;
  if (options.kind == ConvPlanKind::kNone || HasLayerNotChannelsFirst(graph) ||
      !AnyConvolutionTuned(graph, shapes)) {
    return planned;  // nothing to choose, or nothing measured to choose by
  }
  const auto start = std::chrono::steady_clock::now();
  const TunedLayers tuned = TuneFlexibleConvolutions(graph, shapes, options);
  for (const auto& [id, layer] : tuned) {
    report.layers_tuning_in_background += TuningInBackground(layer) ? 1 : 0;
  }
  if (report.layers_tuning_in_background > 0) {
    // Background mode, and some layer runs its heuristic pick while it is tuned: planning waits
    // for the bind that finds every tuning (a plan now would rest on guesses, and costing the
    // pooling and transforms would time in this bind).
    for (const auto& [id, layer] : tuned) {
      for (const std::vector<conv::LayerTuning>& decisions : layer.in) {
        report.decisions.insert(report.decisions.end(), decisions.begin(), decisions.end());
      }
    }
    return planned;
  }
  Planning p = BuildProblem(graph, shapes, options, tuned, report);
  const double credited = CostDepthwiseBlocks(graph, shapes, options, p, report);
  CostFixedNodes(graph, shapes, p.roles, p.fold_partner, options, report);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.planned = true;

  const std::vector<int> written(p.problem.nodes.size(), Index(L::kNCHW));
  const std::vector<int> local = LocalChoice(graph, shapes, p, report, options);
  const LayoutSolution global = SolveLayoutProblem(p.problem);
  report.predicted_none_ms =
      AssignmentCost(p.problem, written) - credited + report.predicted_fixed_ms;
  report.predicted_local_ms =
      AssignmentCost(p.problem, local) - credited + report.predicted_fixed_ms;
  report.predicted_global_ms = global.total_cost - credited + report.predicted_fixed_ms;
  report.proven_optimal = global.proven_optimal;
  report.reductions = global.reductions;
  MX_CHECK(global.feasible) << "convolution planning found no finite plan: "
                            << global.infeasibility;

  const std::vector<int>& choice = options.kind == ConvPlanKind::kLocal ? local : global.choice;
  std::vector<L> layout_of(graph.num_nodes(), L::kNCHW);
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const int v = p.problem_node[id];
    if (v < 0) continue;
    layout_of[id] = kLayouts[choice[v]];
    if (p.layer_of[v] >= 0) report.layers[p.layer_of[v]].chosen = layout_of[id];
    if (p.agnostic_of[v] >= 0) report.agnostic[p.agnostic_of[v]].chosen = layout_of[id];
  }
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const int v = p.problem_node[id], partner = p.fold_partner[id];
    if (v < 0 || partner < 0 || p.agnostic_of[v] < 0) continue;
    report.agnostic[p.agnostic_of[v]].folded = layout_of[id] == layout_of[partner];
  }
  planned.graph =
      Rewriter(graph, shapes, layout_of, options.training, &report.transforms, options.ctx)
          .Rewrite();
  return planned;
}

}  // namespace mxlite
