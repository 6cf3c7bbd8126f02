// The layout planner's cost cache: the measured times the planner weighs (layout transforms,
// layout-sensitive nodes, subgraphs fused and apart), per device and library versions, kept across
// processes so that a second run measures nothing. It is the planner's own: a TuningDb of its own
// (ops/conv/tuning_db.h, the same durability and concurrency rules) over the tuning DB's file and
// mode (MXNET_TUNING_DB_PATH, MXNET_TUNING_DB_MODE, MXNET_TUNING_SYSTEM_DB_PATH), reopened when
// those settings change; its keys ("transform ...", "node ...", "graph ...") never meet a
// convolution problem's.
//
//   const TuningEnvironment here = PlanningEnvironment(ctx);
//   if (auto ms = PlanningCostCache::Global().Lookup(key, here)) return *ms;
//   PlanningCostCache::Global().Store(key, "transpose", measured_ms, here);
//
// Thread safety: every method may be called concurrently.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "core/context.h"
#include "ops/conv/tuning_db.h"

namespace mxlite {

// The device and library versions a cost measured on `ctx` is kept under.
conv::TuningEnvironment PlanningEnvironment(const Context& ctx);

class PlanningCostCache {
 public:
  static PlanningCostCache& Global();

  // The milliseconds stored under `key` for `environment`, if any.
  std::optional<double> Lookup(const std::string& key, const conv::TuningEnvironment& environment);
  // Keeps `ms`, the measured time of `what` (an op name, "graph"), under `key`.
  void Store(const std::string& key, const std::string& what, double ms,
             const conv::TuningEnvironment& environment);

 private:
  PlanningCostCache() = default;
  std::shared_ptr<conv::TuningDb> CurrentDb();

  std::mutex mutex_;
  std::shared_ptr<conv::TuningDb> db_;  // GUARDED_BY(mutex_)
};

}  // namespace mxlite
