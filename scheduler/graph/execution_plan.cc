#include "scheduler/graph/execution_plan.h"

#include <algorithm>
#include <set>

#include "core/error.h"

namespace mxlite {

const char* StepKindName(StepKind kind) {
  switch (kind) {
    case StepKind::kForward:
      return "forward";
    case StepKind::kRecompute:
      return "recompute";
    case StepKind::kBackward:
      return "backward";
    case StepKind::kAccumulate:
      return "accumulate";
    case StepKind::kZero:
      return "zero";
  }
  return "?";
}

bool ShouldMirror(const Node& node) {
  return !node.is_variable() && node.op->cheap_to_recompute && !node.op->needs_random;
}

namespace {

SlotKind VariableSlotKind(VariableRole role) {
  switch (role) {
    case VariableRole::kInput:
      return SlotKind::kInput;
    case VariableRole::kParameter:
      return SlotKind::kParameter;
    case VariableRole::kAuxiliary:
      return SlotKind::kAuxiliary;
  }
  return SlotKind::kInput;
}

// Builds the plan; one instance per BuildExecutionPlan call.
class PlanBuilder {
 public:
  PlanBuilder(const Graph& graph, const GraphShapes& shapes, const PlanOptions& options)
      : graph_(graph), shapes_(shapes), options_(options) {}

  ExecutionPlan Build() {
    AddForwardSlotsAndSteps();
    for (const NodeEntry& output : graph_.outputs()) {
      plan_.output_slots.push_back(plan_.entry_slot.at(output));
    }
    if (options_.training) {
      AddBackward();
    } else {
      MarkConstantSteps();
    }
    return std::move(plan_);
  }

 private:
  int AddSlot(std::string name, NodeEntry entry, SlotKind kind) {
    plan_.slots.push_back({std::move(name), shapes_.of(entry), shapes_.dtype_of(entry), kind});
    return static_cast<int>(plan_.slots.size()) - 1;
  }

  void AddForwardSlotsAndSteps() {
    for (int id = 0; id < graph_.num_nodes(); ++id) {
      const Node& node = graph_.node(id);
      if (node.is_variable()) {
        plan_.entry_slot[{id, 0}] = AddSlot(node.name, {id, 0}, VariableSlotKind(node.role));
        continue;
      }
      Step step{StepKind::kForward, id, {}, {}, node.name};
      for (const NodeEntry& input : node.inputs) step.reads.push_back(plan_.entry_slot.at(input));
      for (int out = 0; out < node.num_outputs(); ++out) {
        const int slot = AddSlot(graph_.EntryName({id, out}), {id, out}, SlotKind::kActivation);
        plan_.entry_slot[{id, out}] = slot;
        step.writes.push_back(slot);
      }
      plan_.forward.push_back(std::move(step));
    }
  }

  // Forward steps computed from parameters alone, in graph order so that a step reading constants
  // sees them marked already.
  void MarkConstantSteps() {
    std::set<int> outputs(plan_.output_slots.begin(), plan_.output_slots.end());
    for (Step& step : plan_.forward) {
      const bool from_parameters = std::all_of(step.reads.begin(), step.reads.end(), [&](int slot) {
        const SlotKind kind = plan_.slot(slot).kind;
        return kind == SlotKind::kParameter || kind == SlotKind::kConstant;
      });
      const bool writes_output = std::any_of(step.writes.begin(), step.writes.end(),
                                             [&](int slot) { return outputs.count(slot) > 0; });
      if (!from_parameters || writes_output || graph_.node(step.node).op->needs_random) continue;
      step.constant = true;
      for (int slot : step.writes)
        plan_.slots[static_cast<size_t>(slot)].kind = SlotKind::kConstant;
    }
  }

  // Which entries carry a gradient: those that depend on a variable whose gradient is wanted.
  void MarkGradientEntries() {
    std::set<int> wanted(options_.gradient_variables.begin(), options_.gradient_variables.end());
    if (options_.default_gradients) {
      for (int id : graph_.Variables(VariableRole::kParameter)) wanted.insert(id);
    }
    for (int id : wanted) {
      MX_CHECK(id >= 0 && id < graph_.num_nodes() && graph_.node(id).is_variable())
          << "a gradient was asked for node " << id << ", which is not a variable";
      MX_CHECK(graph_.node(id).role != VariableRole::kAuxiliary)
          << "auxiliary state " << graph_.node(id).name << " has no gradient";
      needs_gradient_.insert({id, 0});
    }
    for (int id = 0; id < graph_.num_nodes(); ++id) {
      const Node& node = graph_.node(id);
      if (node.is_variable()) continue;
      const std::vector<bool> has_gradient = InputHasGradient(*node.op, node.attrs);
      bool any = false;
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        any = any || (has_gradient[i] && needs_gradient_.count(node.inputs[i]) > 0);
      }
      if (!any) continue;
      for (int out = 0; out < node.num_outputs(); ++out) needs_gradient_.insert({id, out});
    }
  }

  // Number of gradient contributions each entry will receive: one per consuming edge whose
  // consumer takes a gradient through it, one more for a graph output.
  void CountContributions() {
    for (int id = 0; id < graph_.num_nodes(); ++id) {
      const Node& node = graph_.node(id);
      if (node.is_variable()) continue;
      const std::vector<bool> has_gradient = InputHasGradient(*node.op, node.attrs);
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        if (has_gradient[i] && needs_gradient_.count(node.inputs[i])) {
          ++expected_contributions_[node.inputs[i]];
        }
      }
    }
    for (const NodeEntry& output : graph_.outputs()) {
      if (needs_gradient_.count(output)) ++expected_contributions_[output];
    }
  }

  // The slot a new gradient contribution to `entry` goes to: straight into the final gradient
  // slot when it is the only contribution, else a fresh slot summed later.
  int ContributionSlot(NodeEntry entry, const std::string& from) {
    const std::string base = graph_.EntryName(entry);
    if (expected_contributions_.at(entry) == 1) {
      const int slot = FinalGradientSlot(entry);
      contributions_[entry].push_back(slot);
      return slot;
    }
    const int slot = AddSlot(base + "_grad_from_" + from, entry, SlotKind::kGradient);
    contributions_[entry].push_back(slot);
    return slot;
  }

  int FinalGradientSlot(NodeEntry entry) {
    auto it = final_gradient_.find(entry);
    if (it != final_gradient_.end()) return it->second;
    const Node& producer = graph_.node(entry.node);
    const bool variable = producer.is_variable();
    const int slot = AddSlot(graph_.EntryName(entry) + "_grad", entry,
                             variable ? SlotKind::kParameterGradient : SlotKind::kGradient);
    final_gradient_[entry] = slot;
    if (variable) plan_.variable_gradient_slot[entry.node] = slot;
    return slot;
  }

  // The complete gradient of `entry` (all contributions present): sums them when there are
  // several, zero-fills when there are none.
  int CompleteGradient(NodeEntry entry) {
    const std::vector<int>& parts = contributions_[entry];
    const int expected = expected_contributions_.count(entry) ? expected_contributions_[entry] : 0;
    MX_CHECK_EQ(static_cast<int>(parts.size()), expected)
        << "gradient of " << graph_.EntryName(entry) << " is incomplete";
    if (expected == 1) return parts[0];
    const int slot = FinalGradientSlot(entry);
    if (expected == 0) {
      plan_.backward.push_back(
          {StepKind::kZero, -1, {}, {slot}, "zero " + graph_.EntryName(entry)});
    } else {
      plan_.backward.push_back(
          {StepKind::kAccumulate, -1, parts, {slot}, "accumulate " + graph_.EntryName(entry)});
    }
    return slot;
  }

  // The slot holding `entry`'s forward value when backward runs: the forward slot, or with
  // mirroring a recomputed copy (re-running the producer just before first use).
  int ValueForBackward(NodeEntry entry) {
    const Node& producer = graph_.node(entry.node);
    if (!options_.mirror || !ShouldMirror(producer)) return plan_.entry_slot.at(entry);
    if (auto it = mirror_slot_.find(entry); it != mirror_slot_.end()) return it->second;
    Step step{StepKind::kRecompute, entry.node, {}, {}, "recompute " + producer.name};
    for (const NodeEntry& input : producer.inputs) step.reads.push_back(ValueForBackward(input));
    for (int out = 0; out < producer.num_outputs(); ++out) {
      const int slot = AddSlot(graph_.EntryName({entry.node, out}) + "_mirror", {entry.node, out},
                               SlotKind::kActivation);
      mirror_slot_[{entry.node, out}] = slot;
      step.writes.push_back(slot);
      ++plan_.num_mirrored;
    }
    plan_.backward.push_back(std::move(step));
    return mirror_slot_.at(entry);
  }

  void AddBackwardStep(int id) {
    const Node& node = graph_.node(id);
    const std::vector<bool> has_gradient = InputHasGradient(*node.op, node.attrs);
    const int visible = NumVisibleOutputs(*node.op, node.attrs);
    Step step{StepKind::kBackward, id, {}, {}, "backward " + node.name};
    for (int out = 0; out < node.num_outputs(); ++out) {
      step.reads.push_back(out < visible ? CompleteGradient({id, out}) : -1);
    }
    const BackwardDependencies deps = BackwardDependenciesOf(*node.op, node.attrs);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      step.reads.push_back(deps.inputs[i] ? ValueForBackward(node.inputs[i]) : -1);
    }
    for (int out = 0; out < node.num_outputs(); ++out) {
      step.reads.push_back(deps.outputs[out] ? ValueForBackward({id, out}) : -1);
    }
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const bool wanted = has_gradient[i] && needs_gradient_.count(node.inputs[i]) > 0;
      step.writes.push_back(wanted ? ContributionSlot(node.inputs[i], node.name) : -1);
    }
    plan_.backward.push_back(std::move(step));
  }

  void AddBackward() {
    MarkGradientEntries();
    CountContributions();
    for (size_t i = 0; i < graph_.outputs().size(); ++i) {
      const NodeEntry output = graph_.outputs()[i];
      if (!needs_gradient_.count(output)) {
        plan_.head_gradient_slots.push_back(-1);
        continue;
      }
      const int slot = ContributionSlot(output, "head");
      plan_.head_gradient_slots.push_back(slot);
    }
    for (int id = graph_.num_nodes() - 1; id >= 0; --id) {
      const Node& node = graph_.node(id);
      if (node.is_variable() || !needs_gradient_.count({id, 0})) continue;
      AddBackwardStep(id);
    }
    // Variables: their final gradient (the only contribution, a sum, or zeros if unused).
    for (const NodeEntry& entry : needs_gradient_) {
      if (graph_.node(entry.node).is_variable()) CompleteGradient(entry);
    }
  }

  const Graph& graph_;
  const GraphShapes& shapes_;
  const PlanOptions& options_;
  ExecutionPlan plan_;
  std::set<NodeEntry> needs_gradient_;
  std::map<NodeEntry, int> expected_contributions_;
  std::map<NodeEntry, std::vector<int>> contributions_;
  std::map<NodeEntry, int> final_gradient_;
  std::map<NodeEntry, int> mirror_slot_;
};

}  // namespace

ExecutionPlan BuildExecutionPlan(const Graph& graph, const GraphShapes& shapes,
                                 const PlanOptions& options) {
  return PlanBuilder(graph, shapes, options).Build();
}

}  // namespace mxlite
