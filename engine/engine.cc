#include "engine/engine.h"

#include <climits>

#include "core/error.h"
#include "core/logging.h"
#include "core/settings.h"
#include "engine/dependency_engine.h"

namespace mxlite {

const char* EngineTypeName(EngineType type) {
  switch (type) {
    case EngineType::kNaive:
      return "NaiveEngine";
    case EngineType::kThreaded:
      return "ThreadedEngine";
    case EngineType::kThreadedPerDevice:
      return "ThreadedEnginePerDevice";
  }
  return "?";
}

EngineType ParseEngineType(std::string_view name) {
  for (EngineType type :
       {EngineType::kNaive, EngineType::kThreaded, EngineType::kThreadedPerDevice}) {
    if (name == EngineTypeName(type)) return type;
  }
  MX_THROW() << "unknown engine type '" << name
             << "'; allowed: ThreadedEnginePerDevice, ThreadedEngine, NaiveEngine";
}

std::unique_ptr<Engine> CreateEngine(EngineType type) {
  switch (type) {
    case EngineType::kNaive:
      return engine_internal::NewNaiveEngine();
    case EngineType::kThreaded:
      return engine_internal::NewThreadedEngine();
    case EngineType::kThreadedPerDevice:
      return engine_internal::NewThreadedEnginePerDevice();
  }
  MX_THROW() << "unknown engine type " << static_cast<int>(type);
}

std::shared_ptr<Engine> Engine::GetShared() {
  // Destroyed at exit once the last holder lets go: pending ops finish and workers are joined.
  static std::shared_ptr<Engine> engine = [] {
    Profiler::Get();  // before the engine, so an autostarted profiler dumps after it drains
    EngineType type = ParseEngineType(settings().GetString("MXNET_ENGINE_TYPE"));
    MX_LOG(DEBUG) << "engine: " << EngineTypeName(type);
    return std::shared_ptr<Engine>(CreateEngine(type));
  }();
  return engine;
}

Engine& Engine::Get() {
  static Engine* engine = GetShared().get();
  return *engine;
}

int BulkSizeFromSettings(bool training) {
  if (training) {
    if (!settings().GetBool("MXNET_EXEC_BULK_EXEC_TRAIN")) return 0;
    return static_cast<int>(settings().GetInt("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN"));
  }
  return settings().GetBool("MXNET_EXEC_BULK_EXEC_INFERENCE") ? INT_MAX : 0;
}

}  // namespace mxlite
