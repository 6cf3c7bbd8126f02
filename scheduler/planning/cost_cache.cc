#include "scheduler/planning/cost_cache.h"

#include <ctime>

#include "core/settings.h"

namespace mxlite {

conv::TuningEnvironment PlanningEnvironment(const Context& ctx) {
  return ctx.device_type == DeviceType::kCPU ? conv::TuningEnvironment::ForCpu()
                                             : conv::TuningEnvironment::ForGpu(ctx.device_id);
}

PlanningCostCache& PlanningCostCache::Global() {
  static PlanningCostCache* cache = new PlanningCostCache();  // lives until exit
  return *cache;
}

std::shared_ptr<conv::TuningDb> PlanningCostCache::CurrentDb() {
  std::lock_guard<std::mutex> lock(mutex_);
  const conv::TuningDbOptions wanted = conv::TuningDbOptions::FromSettings(Settings::Global());
  const bool same = db_ && db_->options().user_path == wanted.user_path &&
                    db_->options().system_path == wanted.system_path &&
                    db_->options().mode == wanted.mode;
  if (!same) db_ = std::make_shared<conv::TuningDb>(wanted);
  return db_;
}

std::optional<double> PlanningCostCache::Lookup(const std::string& key,
                                                const conv::TuningEnvironment& environment) {
  if (auto hit = CurrentDb()->LookupKey(key, environment)) return hit->record.time_ms;
  return std::nullopt;
}

void PlanningCostCache::Store(const std::string& key, const std::string& what, double ms,
                              const conv::TuningEnvironment& environment) {
  conv::TuningRecord record;
  record.algorithm = what;
  record.time_ms = ms;
  record.tuning_mode = "measured";
  record.timestamp = static_cast<int64_t>(std::time(nullptr));
  CurrentDb()->StoreKey(key, environment, record);
}

}  // namespace mxlite
