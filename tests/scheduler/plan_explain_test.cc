// ExplainPlan (scheduler/planning/plan_explain.h): rows and totals from a plan report and fake
// measurements — a layer in its chosen layout, a fused depthwise block as one row, per-pass
// transforms listed and weight transforms (once) not, a layer with tuning off not costed, and the
// nodes the planner does not cost measured apart.
#include "scheduler/planning/plan_explain.h"

#include <gtest/gtest.h>

namespace mxlite {
namespace {

using L = ActivationLayout;

PlannedLayer Layer(const std::string& node, L chosen, double nchw_ms, double nhwc_ms) {
  PlannedLayer layer;
  layer.node = node;
  layer.op = "Convolution";
  layer.chosen = chosen;
  layer.cost_ms[static_cast<int>(L::kNCHW)] = nchw_ms;
  layer.cost_ms[static_cast<int>(L::kNHWC)] = nhwc_ms;
  layer.algorithms[static_cast<int>(chosen)] = "im2row_gemm";
  return layer;
}

ConvPlanReport Report() {
  ConvPlanReport report;
  report.kind = ConvPlanKind::kGlobal;
  report.planned = true;
  report.layers = {Layer("stem", L::kNHWC, 3.0, 2.0), Layer("expand", L::kNHWC, 1.0, 0.5),
                   Layer("dw", L::kNHWC, 1.0, 0.6), Layer("project", L::kNHWC, 1.0, 0.4),
                   Layer("head", L::kNCHW, 0.0, -1.0)};
  report.layers.back().fixed_reason = "tuning off";
  // Timed as graphs, apart 3.0 and fused 2.4: fusing saves a fifth.
  report.depthwise_blocks = {{{"expand", "dw", "project"}, 3.0, 2.4, 0.5 + 0.6 + 0.4}};
  PlannedTransform per_pass;
  per_pass.node = "project_output_to_nchw";
  per_pass.from = L::kNHWC;
  per_pass.to = L::kNCHW;
  per_pass.cost_ms = 0.1;
  PlannedTransform weight = per_pass;
  weight.node = "stem_weight_to_ohwi";
  weight.once = true;
  report.transforms = {per_pass, weight};
  return report;
}

TEST(ExplainPlan, RowsFollowThePlanAndTotalsSplitCostedFromTheRest) {
  const std::map<std::string, double> measured = {
      {"stem", 2.2}, {"dw", 1.3}, {"project_output_to_nchw", 0.2}, {"head", 0.7},
      {"relu", 0.1}, {"fc", 0.4}, {"stem_weight_to_ohwi", 0.05}};
  const PlanExplanation explained = ExplainPlan(Report(), measured, 6.0);
  std::vector<std::string> names;
  for (const ExplainedNode& row : explained.nodes) names.push_back(row.node);
  EXPECT_EQ(names, (std::vector<std::string>{"stem", "dw", "head", "project_output_to_nchw", "fc",
                                             "relu"}));
  EXPECT_DOUBLE_EQ(explained.nodes[0].predicted_ms, 2.0);  // the chosen layout's cost
  // The block, fused: its stages' NHWC costs (1.5) times fused / apart (2.4 / 3.0).
  EXPECT_NEAR(explained.nodes[1].predicted_ms, 1.2, 1e-12);
  EXPECT_EQ(explained.nodes[1].what, "depthwise block (fused)");
  EXPECT_LT(explained.nodes[2].predicted_ms, 0.0);  // tuning off: no cost to show
  EXPECT_NEAR(explained.predicted_costed_ms, 2.0 + 1.2 + 0.1, 1e-12);
  EXPECT_NEAR(explained.measured_costed_ms, 2.2 + 1.3 + 0.2, 1e-12);
  EXPECT_NEAR(explained.measured_other_ms, 0.7 + 0.4 + 0.1, 1e-12);  // head (tuning off) too
  EXPECT_DOUBLE_EQ(explained.pass_ms, 6.0);
  const std::string text = explained.Format();
  EXPECT_NE(text.find("predicted 2.000 ms, measured 2.200 ms (x1.10)"), std::string::npos) << text;
  EXPECT_NE(text.find("costed nodes: predicted 3.300 ms, measured 3.700 ms"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("stem_weight_to_ohwi"), std::string::npos) << text;
}

TEST(ExplainPlan, ABlockMeasuredSlowerFusedOrNotAllNhwcKeepsItsStagesRows) {
  ConvPlanReport report = Report();
  report.layers[1].chosen = L::kNCHW;  // the expansion left NCHW: the block cannot form
  const PlanExplanation apart = ExplainPlan(report, {}, 1.0);
  ASSERT_GE(apart.nodes.size(), 4u);
  EXPECT_EQ(apart.nodes[1].node, "expand");
  EXPECT_DOUBLE_EQ(apart.nodes[1].predicted_ms, 1.0);
  EXPECT_LT(apart.nodes[1].measured_ms, 0.0);  // nothing of that name ran

  report = Report();
  report.depthwise_blocks[0].fused_ms = 3.5;  // slower fused than apart (3.0): kept apart
  const PlanExplanation slower = ExplainPlan(report, {}, 1.0);
  EXPECT_EQ(slower.nodes[1].node, "expand");
  EXPECT_EQ(slower.nodes[2].node, "dw");
  EXPECT_DOUBLE_EQ(slower.nodes[2].predicted_ms, 0.6);
}

}  // namespace
}  // namespace mxlite
