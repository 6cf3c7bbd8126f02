#include "scheduler/planning/plan_check.h"

#include <cmath>
#include <cstdint>
#include <iomanip>
#include <optional>
#include <sstream>

#include "core/error.h"
#include "scheduler/planning/cost_cache.h"

namespace mxlite {

namespace {

// FNV-1a, 64 bits: the same text gives the same key on every run and machine.
uint64_t Fnv1a(const std::string& text) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

std::string Milliseconds(double ms) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(ms < 10 ? 2 : 1) << ms << " ms";
  return out.str();
}

}  // namespace

std::string PlanCheck::Summary() const {
  std::ostringstream out;
  out << "plan check: planned pass " << Milliseconds(planned_ms) << ", as written "
      << Milliseconds(written_ms) << " (" << (measured ? "measured" : "from the DB") << "): "
      << (kept ? "plan kept" : "plan refused, the graph runs as written");
  return out.str();
}

bool PlanKept(double planned_ms, double written_ms) {
  return !(written_ms < planned_ms * (1.0 - kPlanCheckMargin));
}

std::string PlanFingerprint(const Graph& graph, const GraphShapes& shapes, ConvPlanKind kind,
                            const Context& ctx) {
  std::ostringstream text;
  text << ConvPlanKindName(kind) << " on " << ctx.ToString();
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    text << '|' << node.TypeName();
    for (const auto& [name, value] : node.attr_text) text << ' ' << name << '=' << value;
    for (const NodeEntry& input : node.inputs) text << " <" << input.node << ':' << input.index;
    for (size_t o = 0; o < shapes.shapes.at(id).size(); ++o) {
      text << ' ' << shapes.shapes[id][o] << DTypeName(shapes.dtypes[id][o]);
    }
  }
  for (const NodeEntry& output : graph.outputs()) text << " >" << output.node << ':' << output.index;
  std::ostringstream key;
  key << "plan check " << std::hex << std::setw(16) << std::setfill('0') << Fnv1a(text.str());
  return key.str();
}

PlanCheck CheckPlan(const std::string& fingerprint, const Context& ctx,
                    const PassTimer& time_passes) {
  const conv::TuningEnvironment here = PlanningEnvironment(ctx);
  PlanningCostCache& cache = PlanningCostCache::Global();
  const std::string planned_key = fingerprint + " planned", written_key = fingerprint + " written";
  const std::optional<double> planned = cache.Lookup(planned_key, here);
  const std::optional<double> written = cache.Lookup(written_key, here);
  PlanCheck check;
  if (planned && written) {
    check.planned_ms = *planned;
    check.written_ms = *written;
  } else {
    const PassTimes times = time_passes();
    MX_CHECK(std::isfinite(times.planned_ms) && times.planned_ms > 0 &&
             std::isfinite(times.written_ms) && times.written_ms > 0)
        << fingerprint << ": the timed passes took " << times.planned_ms << " ms (planned) and "
        << times.written_ms << " ms (as written); expected positive times";
    check.planned_ms = times.planned_ms;
    check.written_ms = times.written_ms;
    check.measured = true;
    cache.Store(planned_key, "pass", check.planned_ms, here);
    cache.Store(written_key, "pass", check.written_ms, here);
  }
  check.kept = PlanKept(check.planned_ms, check.written_ms);
  return check;
}

}  // namespace mxlite
