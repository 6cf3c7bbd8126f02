// What the layout planner predicted for each node of its plan beside what profiled passes of the
// planned graph measured (`mxlite tune --explain`), and the totals: the check that the planner's
// cost model matches the passes it plans for.
//
//   PlanExplanation explained = ExplainPlan(executor.conv_plan(), measured_ms_per_node, pass_ms);
//   std::cout << explained.Format();
//
// Rows, in the plan's order: every planned layer (convolution, pooling) in its chosen layout with
// its predicted time (its tuned algorithm's, or the node's measured time there); every depthwise
// block the plan keeps fused, as one row named after its depthwise convolution (the fused op's
// name when it runs) predicted as the plan counts it (its stages' NHWC costs times fused / apart),
// its stages' own rows left out; every agnostic node (element-wise ops, BatchNorm, Concat) in its
// chosen layout with its measured time there, but for those folded into convolutions;
// every transform the plan inserts that runs each pass (a weight's transform at inference is
// computed once and kept: not a per-pass cost, not listed); every fixed node that runs per pass
// (fully connected layers, MatMul, reshapes...) as written, predicted by its time alone (one the
// planner could not time alone has a row saying why, measured only). Then every other node the
// passes ran, measured only.
// Measured times are per pass (the caller's median over profiled passes); a node that did not run
// as its own op (folded into another, e.g. a relu into its convolution) has no measurement.
//
// Totals: the costed rows predicted and measured, the other nodes (a layer the plan lists without
// a cost, such as one with tuning off, among them) measured, and the pass's own
// time, so the report says how much of a pass the planner's model covers and how well.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "scheduler/planning/conv_planning.h"

namespace mxlite {

struct ExplainedNode {
  std::string node;
  std::string what;          // "Convolution NHWC direct_nhwc", "depthwise block", "transform"
  double predicted_ms = -1;  // negative: not costed by the planner
  double measured_ms = -1;   // negative: no op of this name ran
};

struct PlanExplanation {
  std::vector<ExplainedNode> nodes;
  double predicted_costed_ms = 0.0;  // the costed rows
  double measured_costed_ms = 0.0;   // the same rows as the passes ran them
  double measured_other_ms = 0.0;    // the nodes the planner does not cost
  double pass_ms = 0.0;              // a whole pass (the caller's measurement)

  // One line per row ("  /conv1/Conv  Convolution NHWC direct_nhwc  predicted 2.438 ms  measured
  // 2.512 ms  x1.03"), then the totals.
  std::string Format() const;
};

// `measured_ms`: per node name (the engine op's name), the median milliseconds per pass;
// `pass_ms`: the median milliseconds of a whole pass.
PlanExplanation ExplainPlan(const ConvPlanReport& report,
                            const std::map<std::string, double>& measured_ms, double pass_ms);

}  // namespace mxlite
