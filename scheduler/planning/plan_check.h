// The check a layout plan passes at bind: the planner predicts from parts (each convolution, each
// transform and pooling node timed alone), and a pass can differ from the sum of its parts, so
// before an inference executor keeps a plan that moves layers, whole passes of the planned graph
// and of the graph as written are timed against each other (conv::TimeInterleaved) and the plan
// is kept unless the pass as written is faster by more than the noise margin (3%). The two times
// and the decision are kept in the planner's cost cache (scheduler/planning/cost_cache.h) under
// the graph's fingerprint, so a second bind of the same network measures nothing.
//
//   const PlanCheck check = CheckPlan(PlanFingerprint(graph, shapes, kind, ctx), ctx,
//                                     [&] { return TimePlannedAndWritten(planned, written); });
//   if (!check.kept) ...run the graph as written...
//
// MXNET_CONV_PLAN_GUARD (default 1) turns the check on for every inference bind whose plan moves
// a layer (BindOptions::plan_guard overrides it per bind). Training binds are not checked.
//
// Thread safety: CheckPlan may be called concurrently (the cache is thread-safe), but timing two
// passes at once measures their contention: executors bind one at a time.
#pragma once

#include <functional>
#include <string>

#include "core/context.h"
#include "scheduler/graph/graph.h"
#include "scheduler/graph/infer_shapes.h"
#include "scheduler/planning/conv_planning.h"

namespace mxlite {

// How much faster the pass as written must be for the plan to be refused: within this fraction
// the two are the same pass, timed on a noisy machine.
inline constexpr double kPlanCheckMargin = 0.03;

struct PlanCheck {
  double planned_ms = 0.0;  // median of a planned pass
  double written_ms = 0.0;  // median of a pass as written (no plan)
  bool kept = true;         // the plan stays
  bool measured = false;    // timed in this bind (false: both times from the cost cache)

  // "plan check: planned pass 58.4 ms, as written 91.2 ms (measured): plan kept".
  std::string Summary() const;
};

// Whether a plan whose pass takes `planned_ms` is kept against `written_ms` as written.
bool PlanKept(double planned_ms, double written_ms);

// A key naming everything that decides the two passes' times: every node's op, attributes and
// inputs, every value's shape and dtype (of the planned graph: its layouts and fusions), the
// plan's kind and the device (the cache keeps the CPU's threads beside it).
std::string PlanFingerprint(const Graph& planned, const GraphShapes& shapes, ConvPlanKind kind,
                            const Context& ctx);

// Median milliseconds of a planned pass and of a pass as written (in that order).
struct PassTimes {
  double planned_ms = 0.0;
  double written_ms = 0.0;
};
using PassTimer = std::function<PassTimes()>;

// The check for the plan under `fingerprint` on `ctx`: the stored times when both are in the
// cost cache, else `time_passes()`'s (then stored). A time that is not a positive number is an
// error naming the fingerprint's plan.
PlanCheck CheckPlan(const std::string& fingerprint, const Context& ctx,
                    const PassTimer& time_passes);

}  // namespace mxlite
