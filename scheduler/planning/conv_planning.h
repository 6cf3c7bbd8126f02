// Convolution planning (docs/design.md, Layout planning): the layout — NCHW, NHWC or the blocked
// NCHW16c (ops/activation_layout.h) — that each layout-sensitive op of a network runs in, on the
// device that will run it (CPU kernels or cuDNN), and with it each convolution's algorithm, chosen
// per layer (`local`) or for the whole network at once (`global`), and the graph rewritten so.
//
//   PlannedGraph planned = PlanConvolutions(graph, shapes, {.kind = ConvPlanKind::kGlobal});
//   Executor binds planned.graph;  planned.report.Format(false) says what was decided.
//
// The executor runs this pass at bind (MXNET_CONV_PLAN, or BindOptions::conv_plan per call).
//
// Roles. Every op node touching 4-D activations plays one of three roles:
//   flexible   Convolution (2-D) and Pooling (4-D): a candidate per layout, each costed by
//              measurement — the convolution tuner's pick in that layout (forward, plus both
//              backward directions when training) and, in training, when the layout differs
//              from the weight's as written, the measured transform of the weight (inference
//              transposes a weight once: the executor keeps it); pooling timed as a node
//              (scheduler/planning/layout_costs.h).
//   agnostic   Activation, LeakyReLU, BatchNorm, Dropout, clip, identity, elementwise ops and
//              add_n on inputs of equal shapes, Concat: any layout they can run in, each costed
//              by timing the node alone there (its data inputs in that layout; layout_costs.h's
//              MeasureNodeMs), since their kernels differ per layout; an addition (and the
//              clamp after it) that the executor folds into a convolution afterwards
//              (fuse_residual) is charged on the edge from that convolution (from the addition,
//              for the clamp) where the two layouts differ, and costs nothing where they agree
//              (it runs inside the convolution then). The
//              channel/concat axis is remapped. They pass the layout on.
//   fixed      everything else (Flatten, FullyConnected, Reshape, Softmax, Deconvolution, Pad,
//              broadcasting with unequal shapes, ...): runs as written; its 4-D inputs must be in
//              the layout they had in the original graph.
// A convolution whose tuning mode is `off` has no timings: it stays in its written layout (its
// cost counted as 0 in every plan).
//
// Background tuning (MXNET_TUNING_DB_MODE=background, ops/conv/tuner.h). The convolutions are
// tuned first, every one in each layout offered to it; when some pick came back as the
// heuristic's while its tuning runs in the background (conv::PickOrigin::kBackground), each of
// its other layouts has still been asked for (and so queued), and the graph comes back as written
// with report.layers_tuning_in_background counting those layers: nothing else (pooling, agnostic
// nodes, transforms, depthwise blocks) is timed in that bind, and a later bind that finds every
// tuning plans as usual.
//
// NCHW16c is a candidate for CPU inference on a CPU with AVX-512F (its kernels are forward only;
// without AVX-512 they run as plain C++), for nodes whose 4-D inputs and output all have whole
// blocks of 16 channels: convolutions of one group or depthwise (direct_nchw16c, depthwise_direct
// NCHW16c), pooling, BatchNorm over the channel axis (channel_block=16), Concat (its blocks join),
// Dropout without shared axes, and the elementwise ops. Elsewhere it is +infinity: never chosen.
//
// Costs. An edge — a 4-D value from one node to a consumer — costs the measured transform of the
// value (timed with the caches as a pass leaves them: scheduler/planning/layout_costs.h) between
// the producer's and the consumer's layouts (0 when equal; forward plus inverse in training). Graph
// inputs and fixed consumers, and graph outputs (which the caller receives as written), pin one end
// of the edge. Every cost is in milliseconds. An edge is charged per consumer, while the rewrite
// shares one transform between consumers that want the same layout, so a value with several such
// consumers is predicted dearer than it runs.
//
// Plans.
//   none    the graph as written: each convolution tunes its algorithm alone in its own layout.
//   local   what a per-layer autotuner does: every flexible node takes its own cheapest
//           candidate (written layout on ties), agnostic nodes follow their first 4-D input,
//           and transforms are inserted where neighbours disagree.
//   global  the minimum total of node and edge costs (scheduler/planning/layout_solver.h: exact on
//   chains,
//           trees and series-parallel graphs such as residual and inception networks; the report
//           says whether the optimum is proven).
// Since a candidate's edges depend only on its layout, a convolution's best candidate in a layout
// is its tuner pick in that layout: the candidates of a node are its layouts.
//
// Depthwise blocks. With fuse_depthwise the executor fuses an NHWC depthwise convolution with the
// 1x1 convolutions around it after planning (scheduler/graph/fusion.h), which can run faster than
// its stages one by one: the tensors between them stay in cache and a pass has fewer parallel jobs.
// The planner finds every block that would form were every node NHWC, whatever its size (the
// executor's size rule, ops/cpu/depthwise_block.h, is for blocks nobody measured), times each
// fused and its stages one after the other (MeasureFusedAndApartMs, kept in the DB) and credits
// the saving to keeping its stages NHWC together: the fraction of the time the measurement saw
// fusing save (1 - fused / apart) of the stages' tuned NHWC costs. Each edge between two stages
// costs the saving (split over the block's edges) unless both ends are NHWC, and the predicted
// totals are shifted back by the savings, so a plan that keeps a block whole is predicted at its
// stages' cost times fused / apart (never below zero).
// A block measured slower fused is reported and kept apart.
//
// Rewriting. Chosen layouts become attributes (Convolution/Pooling `layout`, BatchNorm `axis` and
// in NCHW16c `channel_block`, Concat `dim`, Dropout `axes`); a transform node is inserted once per
// value and target layout (named "<value>_to_nhwc" / "_to_nchw" / "_to_nchw16c": a transpose
// between NCHW and NHWC, a layout_transform to or from NCHW16c), and before a convolution's weight
// when it runs NHWC ("<conv>_weight_to_ohwi"; NCHW16c reads the weight OIHW as written). Node,
// parameter and output names, and output layouts, are those of the original graph, so arrays,
// checkpoints and gradients are unaffected. The predicted times count the pass: the work the plans
// decide (convolutions, pooling, agnostic nodes, transforms) and every fixed node that runs per
// pass (fully connected layers, MatMul, LayerNorm, reshapes...), each timed alone as written
// (MeasureNodeMs, kept in the DB), the same in every plan. Not counted: at inference a node
// computed from parameters alone (it runs once), a node the executor folds into a convolution,
// and a fixed node that cannot be timed alone (it says why).
//
// Errors: anything the tuner or a measured op throws (naming the layer). Not thread-safe against
// concurrent tuning (see ConvTuner); the graph is not modified.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ops/conv/tuner.h"
#include "scheduler/graph/fusion.h"
#include "scheduler/graph/graph.h"
#include "scheduler/graph/infer_shapes.h"
#include "scheduler/planning/layout_costs.h"
#include "scheduler/planning/layout_solver.h"

namespace mxlite {

enum class ConvPlanKind { kNone, kLocal, kGlobal };
const char* ConvPlanKindName(ConvPlanKind kind);  // "none", "local", "global"
// "none", "local" or "global"; anything else throws mxlite::Error listing them.
ConvPlanKind ParseConvPlanKind(std::string_view text);
// MXNET_CONV_PLAN.
ConvPlanKind ConvPlanKindFromSettings();

struct ConvPlanOptions {
  ConvPlanKind kind = ConvPlanKind::kGlobal;
  bool training = false;
  Context ctx = Context::CPU();  // where the graph will run: every cost is measured there
  // The executor will fuse depthwise blocks (CPU inference, MXNET_CONV_FUSE_DEPTHWISE): cost them
  // as they will run (see "Depthwise blocks" above).
  bool fuse_depthwise = false;
  // The executor will fold residual additions into their convolutions (inference,
  // MXNET_CONV_FUSE_RESIDUAL), and with fuse_activations the clamps that then follow them
  // (MXNET_CONV_FUSE_ACTIVATION): those nodes cost nothing in any layout.
  bool fuse_residual = false;
  bool fuse_activations = false;
};

// One flexible node as planned (and, in ConvPlanReport::agnostic, one agnostic node).
struct PlannedLayer {
  std::string node;
  std::string op;  // "Convolution", "Pooling"
  ActivationLayout written = ActivationLayout::kNCHW;
  ActivationLayout chosen = ActivationLayout::kNCHW;
  // Per layout (indexed by ActivationLayout): the predicted cost, and for convolutions the
  // algorithm per direction ("winograd_4x4_3x3" or "fwd im2row_gemm, bwd-data ..., bwd-filter
  // ..."); a negative cost when the layout is not a candidate.
  double cost_ms[kNumActivationLayouts] = {-1.0, -1.0, -1.0};
  std::string algorithms[kNumActivationLayouts];
  std::string fixed_reason;  // why only the written layout was a candidate (e.g. "tuning off")
  // An agnostic node the executor folds into a convolution after planning (a residual addition,
  // the clamp after it), the plan having kept it in its partner's layout: it costs no time of its
  // own.
  bool folded = false;
};

// A depthwise block (scheduler/graph/fusion.h) that fuses when its stages run NHWC, as measured.
struct PlannedDepthwiseBlock {
  FusedDepthwiseBlock stages;
  double apart_ms = 0.0;  // the stages one after the other, timed as a graph
  double fused_ms = 0.0;  // the fused op, timed likewise
  double stages_ms = 0.0;  // the stages' tuned costs in NHWC (the planner's own terms)
  bool fuses() const { return fused_ms < apart_ms; }
  // 1 - fused / apart: what fusing saves of the stages' time (0 when it does not fuse).
  double SavedFraction() const { return fuses() ? 1.0 - fused_ms / apart_ms : 0.0; }
  // What the planner credits a plan that keeps the block whole, and the block's predicted time.
  double SavingMs() const { return stages_ms * SavedFraction(); }
  double PredictedMs() const { return stages_ms - SavingMs(); }
};

// One transform the rewritten graph runs.
struct PlannedTransform {
  std::string node;   // the inserted transpose node
  std::string value;  // what it transforms: "conv3_output", "conv3_weight"
  ActivationLayout from = ActivationLayout::kNCHW;
  ActivationLayout to = ActivationLayout::kNHWC;
  Shape shape;  // of the value, in `from`
  double cost_ms = 0.0;
  // A parameter's transform in an inference plan: a constant step, computed once and kept, so
  // the plan's totals do not charge it per pass (training transposes the weight every pass).
  bool once = false;
};

struct ConvPlanReport {
  ConvPlanKind kind = ConvPlanKind::kNone;
  bool planned = false;  // costs were measured (false for `none` and when nothing is flexible)
  // Layers whose tuning was still running in the background: planning waited (planned false).
  int layers_tuning_in_background = 0;
  // Predicted totals of the three plans: a whole pass, fixed nodes included (0 when !planned).
  double predicted_none_ms = 0.0;
  double predicted_local_ms = 0.0;
  double predicted_global_ms = 0.0;
  double seconds = 0.0;        // spent costing (tuning, measuring) the candidates
  int timings_run = 0;         // transforms and nodes timed (0 when all came from the DB)
  bool proven_optimal = true;  // of the global plan
  ReductionCounts reductions;
  std::vector<PlannedLayer> layers;          // every flexible node, in graph order
  // Every agnostic node, in graph order, with its measured time per layout (no algorithms; an
  // untimed node says why in fixed_reason).
  std::vector<PlannedLayer> agnostic;
  // Every fixed op node that runs per pass, in graph order, with its time as written
  // (cost_ms[NCHW]; one that could not be timed alone costs 0 and says why in fixed_reason). They
  // decide nothing (the same in every plan); predicted_fixed_ms, their sum, is part of each
  // predicted total, so that a prediction is of the whole pass.
  std::vector<PlannedLayer> fixed;
  double predicted_fixed_ms = 0.0;
  std::vector<PlannedTransform> transforms;  // inserted by the chosen plan
  // Every depthwise block costed (fuse_depthwise); those that do not fuse() stay apart.
  std::vector<PlannedDepthwiseBlock> depthwise_blocks;
  // Every convolution tuning decision the planner took (each layer in each candidate layout).
  std::vector<conv::LayerTuning> decisions;

  double predicted_ms() const;  // of `kind`
  // "global plan: 14 of 53 layers NHWC, 20 NCHW16c, 3 transforms; predicted 40.8 ms (none 44.0
  // ms, local 47.3 ms, global 40.8 ms; each with 2.1 ms as written), measured in 2.1 s, proven
  // optimal"; unplanned, "global
  // plan: layouts as written" (with "(planning waits for 3 layers tuning in background)").
  std::string Summary() const;
  // The summary, then per layer its layout and algorithms (with `verbose`, both layouts' costs),
  // then the transforms.
  std::string Format(bool verbose) const;
};

struct PlannedGraph {
  Graph graph;
  ConvPlanReport report;
};

// The rewrite alone: `graph` with the nodes named in `layouts` run in the given layout (every
// other node as written, NCHW), transforms inserted as described above; `transforms` receives
// them with their cost measured on `ctx`. Only flexible and agnostic nodes may be moved, and only
// to a layout they can run in (NCHW16c: CPU inference, whole blocks of channels; on any CPU,
// AVX-512 or not): another node or layout, an unknown name, or a graph whose layers are not written
// channels-first is an error naming it.
Graph RewriteLayouts(const Graph& graph, const GraphShapes& shapes,
                     const std::map<std::string, ActivationLayout>& layouts, bool training,
                     std::vector<PlannedTransform>* transforms = nullptr,
                     const Context& ctx = Context::CPU());

// Plans `graph` (whose shapes are `shapes`) per `options`. For `none`, a graph with no flexible
// convolution whose tuning mode is not off, one with layers not written channels-first, or one
// with a layer tuning in the background, the graph comes back unchanged with report.planned
// false.
PlannedGraph PlanConvolutions(const Graph& graph, const GraphShapes& shapes,
                              const ConvPlanOptions& options);

}  // namespace mxlite
