#include "scheduler/planning/plan_explain.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

namespace mxlite {
namespace {

double MeasuredOf(const std::map<std::string, double>& measured_ms, const std::string& node) {
  const auto it = measured_ms.find(node);
  return it == measured_ms.end() ? -1.0 : it->second;
}

// The blocks that run fused: measured faster fused, and every stage NHWC in the plan.
std::vector<const PlannedDepthwiseBlock*> FusedBlocks(const ConvPlanReport& report) {
  std::map<std::string, ActivationLayout> chosen;
  for (const PlannedLayer& layer : report.layers) chosen[layer.node] = layer.chosen;
  std::vector<const PlannedDepthwiseBlock*> fused;
  for (const PlannedDepthwiseBlock& block : report.depthwise_blocks) {
    if (!block.fuses()) continue;
    bool all_nhwc = true;
    for (const std::string& stage : block.stages.Stages()) {
      const auto it = chosen.find(stage);
      all_nhwc = all_nhwc && it != chosen.end() && it->second == ActivationLayout::kNHWC;
    }
    if (all_nhwc) fused.push_back(&block);
  }
  return fused;
}

std::string LayerWhat(const PlannedLayer& layer) {
  const int chosen = static_cast<int>(layer.chosen);
  std::string what = layer.op + " " + ActivationLayoutName(layer.chosen);
  if (!layer.algorithms[chosen].empty()) what += " " + layer.algorithms[chosen];
  if (!layer.fixed_reason.empty()) what += " (" + layer.fixed_reason + ")";
  return what;
}

std::string Ms(double ms) {
  if (ms < 0.0) return "-";
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f ms", ms);
  return text;
}

}  // namespace

PlanExplanation ExplainPlan(const ConvPlanReport& report,
                            const std::map<std::string, double>& measured_ms, double pass_ms) {
  PlanExplanation explained;
  explained.pass_ms = pass_ms;
  std::set<std::string> listed;
  std::map<std::string, const PlannedDepthwiseBlock*> block_of_stage;
  for (const PlannedDepthwiseBlock* block : FusedBlocks(report)) {
    for (const std::string& stage : block->stages.Stages()) block_of_stage[stage] = block;
  }
  auto add = [&](const std::string& node, const std::string& what, double predicted) {
    const double measured = MeasuredOf(measured_ms, node);
    explained.nodes.push_back({node, what, predicted, measured});
    listed.insert(node);
    if (predicted < 0.0) {  // listed in the plan, yet not costed (a layer with tuning off)
      explained.measured_other_ms += std::max(measured, 0.0);
      return;
    }
    explained.predicted_costed_ms += predicted;
    explained.measured_costed_ms += std::max(measured, 0.0);
  };
  for (const PlannedLayer& layer : report.layers) {
    const auto block = block_of_stage.find(layer.node);
    if (block != block_of_stage.end()) {
      // The block's row, once, where its depthwise stage is.
      if (layer.node == block->second->stages.depthwise) {
        add(layer.node, "depthwise block (fused)", block->second->PredictedMs());
      } else {
        listed.insert(layer.node);
      }
      continue;
    }
    const double cost = layer.cost_ms[static_cast<int>(layer.chosen)];
    add(layer.node, LayerWhat(layer), layer.fixed_reason.empty() ? cost : -1.0);
  }
  for (const PlannedLayer& node : report.agnostic) {
    const int chosen = static_cast<int>(node.chosen);
    if (node.folded) {  // runs inside its convolution: no row of its own
      listed.insert(node.node);
      continue;
    }
    add(node.node, LayerWhat(node), node.fixed_reason.empty() ? node.cost_ms[chosen] : -1.0);
  }
  for (const PlannedTransform& transform : report.transforms) {
    if (transform.once) {  // computed once and kept: not a per-pass cost
      listed.insert(transform.node);
      continue;
    }
    add(transform.node,
        std::string("transform ") + ActivationLayoutName(transform.from) + " -> " +
            ActivationLayoutName(transform.to),
        transform.cost_ms);
  }
  for (const PlannedLayer& node : report.fixed) {
    add(node.node,
        node.op + " as written" + (node.fixed_reason.empty() ? "" : " (" + node.fixed_reason + ")"),
        node.fixed_reason.empty() ? node.cost_ms[static_cast<int>(ActivationLayout::kNCHW)] : -1.0);
  }
  for (const auto& [node, ms] : measured_ms) {
    if (listed.count(node) > 0) continue;
    explained.nodes.push_back({node, "not costed", -1.0, ms});
    explained.measured_other_ms += ms;
  }
  return explained;
}

std::string PlanExplanation::Format() const {
  size_t width = 4;
  for (const ExplainedNode& row : nodes) width = std::max(width, row.node.size());
  std::ostringstream out;
  for (const ExplainedNode& row : nodes) {
    out << "  " << row.node << std::string(width - row.node.size(), ' ') << "  predicted "
        << Ms(row.predicted_ms) << ", measured " << Ms(row.measured_ms);
    if (row.predicted_ms > 0.0 && row.measured_ms >= 0.0) {
      char ratio[32];
      std::snprintf(ratio, sizeof(ratio), " (x%.2f)", row.measured_ms / row.predicted_ms);
      out << ratio;
    }
    out << "  " << row.what << '\n';
  }
  char totals[256];
  std::snprintf(totals, sizeof(totals),
                "costed nodes: predicted %.3f ms, measured %.3f ms; other nodes: measured %.3f "
                "ms (not costed by the planner); a whole pass: %.3f ms\n",
                predicted_costed_ms, measured_costed_ms, measured_other_ms, pass_ms);
  out << totals;
  return out.str();
}

}  // namespace mxlite
