// `mxlite tune MODEL.onnx`: binds the model as `mxlite run` would, which plans the layouts
// (--plan / MXNET_CONV_PLAN) and tunes every convolution (per cudnn_tune /
// MXNET_CUDNN_AUTOTUNE_DEFAULT and the tuning DB), and prints the plan and the report: a line per
// layer and direction, every candidate with --verbose, then the one-line summary. A second run
// finds everything in the DB and benchmarks nothing.
#include <iostream>
#include <string>

#include "core/error.h"
#include "core/settings.h"
#include "ops/cpu_runtime.h"
#include "scheduler/graph/executor.h"
#include "scheduler/onnx/onnx_import.h"
#include "tools/mxlite/command_line.h"
#include "tools/mxlite/commands.h"
#include "tools/mxlite/model_session.h"

namespace mxlite::cli {
namespace {

const std::vector<FlagSpec> kTuneFlags = {
    {"verbose", false, "list every candidate with its time and workspace, or why it was skipped"},
    {"batch", true, "batch size: replaces the first dimension of every input (default: as declared)"},
    {"training", false, "tune the backward directions too (backward_data, backward_filter)"},
    {"mode", true,
     "tuning mode for layers without cudnn_tune: off, limited_workspace or fastest "
     "(default: MXNET_CUDNN_AUTOTUNE_DEFAULT)"},
    DeviceFlag(),
    PlanFlag(),
    {"threads", true, "intra-op threads (MXNET_OMP_MAX_THREADS; default: one per core)"},
    {"help", false, "show this help"},
};

constexpr const char* kTuneUsage =
    "usage: mxlite tune MODEL.onnx [--verbose] [--batch N] [--training] [--mode MODE]\n"
    "                              [--device cpu|gpu] [--threads N] [--plan none|local|global]\n\n"
    "Tunes every convolution of the model, plans the layouts (--plan, default MXNET_CONV_PLAN)\n"
    "and prints the plan (per layer its layout and algorithms, the transforms inserted) and the\n"
    "tuning report. Results are stored in the tuning DB (MXNET_TUNING_DB_PATH, mode\n"
    "MXNET_TUNING_DB_MODE), so a second run is instant.\n\n";

}  // namespace

int RunTuneCommand(const std::vector<std::string>& args) {
  const ParsedArgs parsed = Parse("mxlite tune", kTuneFlags, args);
  if (parsed.Has("help")) {
    std::cout << kTuneUsage << FlagsHelp(kTuneFlags);
    return 0;
  }
  if (parsed.positional().size() != 1) {
    std::cerr << "mxlite tune: expected one model file, got " << parsed.positional().size()
              << "\n\n"
              << kTuneUsage;
    return 2;
  }
  if (auto mode = parsed.Value("mode")) settings().Set("MXNET_CUDNN_AUTOTUNE_DEFAULT", *mode);
  const int64_t threads = IntFlag(parsed, "threads", 0, 1, 1024);
  if (threads > 0) {
    settings().Set("MXNET_OMP_MAX_THREADS", std::to_string(threads));
    SetCpuIntraOpThreads(static_cast<int>(threads));
  }
  const int64_t batch = IntFlag(parsed, "batch", 1, 1, 1 << 20);
  const Context ctx = ParseDevice(parsed.Value("device"));

  // Shapes are fixed at import: a dynamic batch dim gets --batch (default 1), and with --batch
  // the first input's batch dim is replaced.
  const std::string model_path = ModelPath(parsed, "mxlite tune");
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
  // The report below replaces the summary binding would log.
  settings().Set("MXNET_TUNING_REPORT", "off");
  const std::unique_ptr<Executor> executor = Executor::Bind(model.graph, options);
  std::cout << executor->conv_plan().Format(parsed.Has("verbose"));
  std::cout << executor->TuningReport(parsed.Has("verbose"));
  return 0;
}

}  // namespace mxlite::cli
