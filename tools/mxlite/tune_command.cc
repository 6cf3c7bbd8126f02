// `mxlite tune MODEL.onnx`: binds the model as `mxlite run` would, which plans the layouts
// (--plan / MXNET_CONV_PLAN) and tunes every convolution (per cudnn_tune /
// MXNET_CUDNN_AUTOTUNE_DEFAULT and the tuning DB), and prints the plan and the report: a line per
// layer and direction, every candidate with --verbose, then the one-line summary. A second run
// finds everything in the DB and benchmarks nothing. In background mode (MXNET_TUNING_DB_MODE)
// it waits for the problems the bind queued, then binds again, so it still tunes everything.
//
// `mxlite tune --system-db OUT.sqlite MODEL...` tunes every model into a DB of its own (OUT's
// entries first, when OUT exists; never the user's DB) and writes it to OUT as a read-only system
// DB for machines of this type (MXNET_TUNING_SYSTEM_DB_PATH), printing one summary per model.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <string>

#include "core/error.h"
#include "core/settings.h"
#include "engine/profiler.h"
#include "ops/conv/background_tuner.h"
#include "ops/conv/tuning_db.h"
#include "ops/cpu_runtime.h"
#include "scheduler/graph/executor.h"
#include "scheduler/onnx/onnx_import.h"
#include "scheduler/planning/plan_explain.h"
#include "scheduler/train/initializer.h"
#include "tools/mxlite/command_line.h"
#include "tools/mxlite/commands.h"
#include "tools/mxlite/model_session.h"

namespace mxlite::cli {
namespace {

const std::vector<FlagSpec> kTuneFlags = {
    {"verbose", false, "list every candidate with its time and workspace, or why it was skipped"},
    {"batch", true,
     "batch size: replaces the first dimension of every input (default: as declared)"},
    {"training", false, "tune the backward directions too (backward_data, backward_filter)"},
    {"mode", true,
     "tuning mode for layers without cudnn_tune: off, limited_workspace or fastest "
     "(default: MXNET_CUDNN_AUTOTUNE_DEFAULT)"},
    DeviceFlag(),
    PlanFlag(),
    {"threads", true, "intra-op threads (MXNET_OMP_MAX_THREADS; default: one per core)"},
    {"explain", false,
     "after tuning, run profiled passes and print per node the planner's predicted time beside "
     "the measured one, with the totals"},
    {"passes", true, "profiled passes for --explain (default 20)"},
    {"system-db", true,
     "tune every MODEL given into this file, a system DB to install on machines of this type "
     "(MXNET_TUNING_SYSTEM_DB_PATH); its entries are kept and added to"},
    {"help", false, "show this help"},
};

constexpr const char* kTuneUsage =
    "usage: mxlite tune MODEL.onnx [--verbose] [--batch N] [--training] [--mode MODE]\n"
    "                              [--device cpu|gpu] [--threads N] [--plan none|local|global]\n"
    "                              [--explain [--passes N]]\n"
    "       mxlite tune --system-db OUT.sqlite MODEL.onnx... [the flags above]\n\n"
    "Tunes every convolution of the model, plans the layouts (--plan, default MXNET_CONV_PLAN)\n"
    "and prints the plan (per layer its layout and algorithms, the transforms inserted) and the\n"
    "tuning report. Results are stored in the tuning DB (MXNET_TUNING_DB_PATH, mode\n"
    "MXNET_TUNING_DB_MODE), so a second run is instant.\n\n"
    "With --explain, the planned graph then runs --passes profiled inference passes (after 5\n"
    "untimed ones, inputs uniform in [-1, 1)) and each node's predicted time is printed beside\n"
    "its measured median, with the totals of what the planner costs and of what it does not.\n\n"
    "With --system-db, every model is tuned into OUT.sqlite instead (starting from its entries\n"
    "when it exists; the user DB is neither read nor written), one summary line per model, and\n"
    "OUT.sqlite is written as a read-only system DB: install it on machines of the same CPU (or\n"
    "GPU) and library versions with MXNET_TUNING_SYSTEM_DB_PATH. Run it once per thread count\n"
    "and batch size to cover them.\n\n";

// The model at `model_path`, imported as `mxlite run` would (a dynamic batch dim gets --batch,
// default 1; with --batch the first input's batch dim is replaced) and bound per the flags: the
// binding plans and tunes.
std::unique_ptr<Executor> BindForTuning(const ParsedArgs& parsed, const std::string& model_path,
                                        const Context& ctx) {
  const int64_t batch = IntFlag(parsed, "batch", 1, 1, 1 << 20);
  const OnnxModelFile file(model_path);  // read and parsed once
  const std::vector<OnnxInputInfo> declared = file.Inputs();
  ImportOptions import;
  for (size_t i = 0; i < declared.size(); ++i) {
    const bool set_batch = parsed.Has("batch") && i == 0;
    import.input_shapes[declared[i].name] =
        BatchedInputShape(declared[i], set_batch, batch, "mxlite tune");
  }
  const ImportedModel model = file.Import(import);
  BindOptions options;
  options.ctx = ctx;
  options.training = parsed.Has("training");
  options.conv_plan = ParsePlanFlag(parsed);
  return Executor::Bind(model.graph, options);
}

// Median of `values` (not empty).
double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// --explain: `passes` profiled inference passes of the bound model after five untimed ones; per
// node the median of its ops' durations per pass, and the median wall time of a pass.
void Explain(Executor& executor, int64_t passes) {
  std::mt19937_64 random(42);
  for (int id : executor.graph().Variables(VariableRole::kInput)) {
    FillArray(executor.Arg(executor.graph().node(id).name), Uniform{1.0}, random);
  }
  for (int i = 0; i < 5; ++i) RunForward(executor);
  // The profiler records the passes (it keeps what it recorded before, and stays as it was).
  Profiler& profiler = Profiler::Get();
  const size_t recorded_before = profiler.RecordedOps().size();
  const bool was_running = profiler.running();
  if (!was_running) profiler.Start(ProfilerMode::kSymbolic);
  std::vector<double> pass_ms;
  try {
    for (int64_t i = 0; i < passes; ++i) {
      const auto start = std::chrono::steady_clock::now();
      RunForward(executor);
      pass_ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    }
  } catch (...) {
    if (!was_running) profiler.Stop();
    throw;
  }
  if (!was_running) profiler.Stop();
  std::vector<Profiler::RecordedOp> recorded = profiler.RecordedOps();
  recorded.erase(recorded.begin(), recorded.begin() + static_cast<ptrdiff_t>(recorded_before));
  std::map<std::string, std::vector<double>> per_pass;  // an op's total per pass, by node
  std::map<std::string, int> seen;
  for (const Profiler::RecordedOp& op : recorded) {
    if (op.category != "operator") continue;
    const size_t pass = static_cast<size_t>(seen[op.name]++);
    std::vector<double>& totals = per_pass[op.name];
    if (totals.size() <= pass) totals.resize(pass + 1, 0.0);
    totals[pass] += static_cast<double>(op.duration_us) / 1e3;
  }
  std::map<std::string, double> measured;
  for (const auto& [node, totals] : per_pass) measured[node] = Median(totals);
  std::cout << "explain: " << passes << " profiled passes, medians per pass\n"
            << ExplainPlan(executor.conv_plan(), measured, Median(pass_ms)).Format();
}

// --system-db: every model tuned into a DB beside `out` that starts as a copy of it, then written
// over `out` (conv::ExportTuningDb: one self-contained file, renamed into place).
int BuildSystemDb(const ParsedArgs& parsed, const std::string& out, const Context& ctx) {
  namespace fs = std::filesystem;
  const fs::path target = fs::absolute(out);
  MX_CHECK(fs::is_directory(target.parent_path()))
      << out << ": the folder " << target.parent_path().string() << " does not exist";
  const std::string building = target.string() + ".building-" + std::to_string(getpid());
  auto remove_building = [&] {
    std::error_code ignored;  // never in place of the error being reported
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(building + suffix, ignored);
  };
  if (fs::exists(target)) {
    // Refused before anything is written: the tuning DB would set a foreign file aside and start
    // afresh, and the rename at the end would replace it.
    if (std::optional<std::string> problem = conv::TuningDbFileProblem(target.string())) {
      MX_THROW() << out << " is not a tuning DB (" << *problem
                 << "); name a new file or an earlier system DB";
    }
  }
  remove_building();
  // Its entries as one writable file (a copy would drop a WAL file's frames beside it and keep a
  // read-only file read-only).
  if (fs::exists(target)) conv::ExportTuningDb(target.string(), building);
  settings().Set("MXNET_TUNING_DB_PATH", building);
  settings().Set("MXNET_TUNING_SYSTEM_DB_PATH", "");
  if (settings().GetString("MXNET_TUNING_DB_MODE") != "refresh") {
    settings().Set("MXNET_TUNING_DB_MODE", "update");
  }
  try {
    const conv::TuningDbMode mode =
        conv::TuningDb(conv::TuningDbOptions::FromSettings(settings())).mode();
    MX_CHECK(mode == conv::TuningDbMode::kUpdate || mode == conv::TuningDbMode::kRefresh)
        << building << " cannot be written (the tuning DB is " << conv::TuningDbModeName(mode)
        << "); nothing was tuned into " << out;
    for (const std::string& model_path : parsed.positional()) {
      const std::unique_ptr<Executor> executor = BindForTuning(parsed, model_path, ctx);
      std::cout << model_path << ": " << conv::FormatTuningSummary(executor->TuningDecisions())
                << "\n";
    }
    conv::ExportTuningDb(building, target.string());
  } catch (...) {
    remove_building();
    throw;
  }
  remove_building();
  std::cout << "wrote the system DB " << out
            << " (install with MXNET_TUNING_SYSTEM_DB_PATH=" << target.string() << ")\n";
  return 0;
}

// How many of the bind's tuning decisions ran the heuristic while their problem tunes in the
// background (MXNET_TUNING_DB_MODE=background).
int PendingInBackground(const Executor& executor) {
  int pending = 0;
  for (const conv::LayerTuning& decision : executor.TuningDecisions()) {
    pending += decision.origin == conv::PickOrigin::kBackground ? 1 : 0;
  }
  return pending;
}

}  // namespace

int RunTuneCommand(const std::vector<std::string>& args) {
  const ParsedArgs parsed = Parse("mxlite tune", kTuneFlags, args);
  if (parsed.Has("help")) {
    std::cout << kTuneUsage << FlagsHelp(kTuneFlags);
    return 0;
  }
  const std::optional<std::string> system_db = parsed.Value("system-db");
  const size_t models = parsed.positional().size();
  if (system_db ? models == 0 : models != 1) {
    std::cerr << "mxlite tune: expected "
              << (system_db ? "at least one model file" : "one model file") << ", got " << models
              << "\n\n"
              << kTuneUsage;
    return 2;
  }
  MX_CHECK(!(parsed.Has("explain") && parsed.Has("training")))
      << "--explain runs inference passes: drop --training";
  MX_CHECK(!(system_db && (parsed.Has("explain") || parsed.Has("passes"))))
      << "--explain and --passes do not apply with --system-db";
  MX_CHECK(!parsed.Has("passes") || parsed.Has("explain")) << "--passes needs --explain";
  if (auto mode = parsed.Value("mode")) settings().Set("MXNET_CUDNN_AUTOTUNE_DEFAULT", *mode);
  const int64_t threads = IntFlag(parsed, "threads", 0, 1, 1024);
  if (threads > 0) {
    settings().Set("MXNET_OMP_MAX_THREADS", std::to_string(threads));
    SetCpuIntraOpThreads(static_cast<int>(threads));
  }
  const Context ctx = ParseDevice(parsed.Value("device"));
  // The report below replaces the summary binding would log.
  settings().Set("MXNET_TUNING_REPORT", "off");
  if (system_db) return BuildSystemDb(parsed, *system_db, ctx);

  const int64_t passes = IntFlag(parsed, "passes", 20, 1, 1 << 20);
  const std::string model_path = ModelPath(parsed, "mxlite tune");
  std::unique_ptr<Executor> executor = BindForTuning(parsed, model_path, ctx);
  if (const int pending = PendingInBackground(*executor); pending > 0) {
    // Background mode: the bind ran the heuristic's picks and queued the rest. Tuning is what was
    // asked for, so wait for the queue, then bind again: every tuning from the DB, and the plan.
    std::cout << "waiting for " << pending << " convolution problem" << (pending == 1 ? "" : "s")
              << " tuning in background (MXNET_TUNING_DB_MODE=background)\n";
    conv::BackgroundTuner::Global().WaitUntilIdle();
    executor = BindForTuning(parsed, model_path, ctx);
  }
  std::cout << executor->conv_plan().Format(parsed.Has("verbose"));
  std::cout << executor->TuningReport(parsed.Has("verbose"));
  if (parsed.Has("explain")) Explain(*executor, passes);
  return 0;
}

}  // namespace mxlite::cli
