// `mxlite info`: every setting with its effective value and where it came from, then the build.
#include <algorithm>
#include <iostream>
#include <sstream>

#include "core/build_info.h"
#include "core/error.h"
#include "core/settings.h"
#include "ops/cpu_runtime.h"
#include "tools/mxlite/command_line.h"
#include "tools/mxlite/commands.h"

namespace mxlite::cli {

namespace {

const std::vector<FlagSpec> kInfoFlags = {
    {"markdown", false, "print the settings as docs/settings.md's Markdown table"},
    {"help", false, "show this help"},
};

std::string Join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

void PrintBuild(std::ostream& out, const Settings& registry) {
  BuildInfo info = GetBuildInfo();
  out << "mxlite " << info.version << " (" << info.build_type << "), " << info.compiler << "\n";
  if (info.cuda_enabled) {
    out << "CUDA:    on (runtime " << info.cuda_runtime_version << ", cuDNN " << info.cudnn_version
        << ", cuBLAS " << info.cublas_version << ")\n";
  } else {
    out << "CUDA:    off (built without CUDA)\n";
  }
  if (info.gpus.empty()) {
    out << "GPUs:    none visible (" << info.gpu_probe_error << ")\n";
  }
  for (const GpuInfo& gpu : info.gpus) {
    out << "GPU " << gpu.id << ":   " << gpu.name << ", sm_" << gpu.compute_major
        << gpu.compute_minor << ", " << (gpu.total_memory >> 20) << " MiB\n";
  }
  out << "CPU:     " << info.cpu_model << "; " << info.hardware_threads
      << " hardware threads; features " << Join(info.cpu_features, " ") << "\n";
  out << "GEMM:    " << CpuGemmDescription() << "\n";
  out << "Threads: engine " << registry.GetString("MXNET_ENGINE_TYPE") << ", CPU workers "
      << registry.GetInt("MXNET_CPU_WORKER_NTHREADS") << ", CPU priority "
      << registry.GetInt("MXNET_CPU_PRIORITY_NTHREADS") << ", GPU workers "
      << registry.GetInt("MXNET_GPU_WORKER_NTHREADS") << ", GPU copy "
      << registry.GetInt("MXNET_GPU_COPY_NTHREADS") << "\n";
}

void PrintSettings(std::ostream& out, const Settings& registry) {
  size_t name_width = 4, value_width = 5;
  for (const SettingSpec& spec : registry.specs()) {
    name_width = std::max(name_width, spec.name.size());
    value_width = std::max(value_width, registry.Get(spec.name).text.size());
  }
  value_width = std::min<size_t>(value_width, 32);
  auto pad = [](const std::string& text, size_t width) {
    return text + std::string(text.size() < width ? width - text.size() : 0, ' ');
  };
  out << pad("SETTING", name_width) << "  " << pad("VALUE", value_width) << "  "
      << pad("SOURCE", 11) << "  " << pad("DEFAULT", 24) << "  DESCRIPTION\n";
  for (const SettingSpec& spec : registry.specs()) {
    SettingValue value = registry.Get(spec.name);
    std::string shown = value.text.empty() ? "(unset)" : value.text;
    std::string shown_default = spec.default_value.empty() ? "(unset)" : spec.default_value;
    out << pad(spec.name, name_width) << "  " << pad(shown, value_width) << "  "
        << pad(SettingSourceName(value.source), 11) << "  " << pad(shown_default, 24) << "  "
        << spec.doc << "\n";
  }
}

}  // namespace

int RunInfoCommand(const std::vector<std::string>& args) {
  ParsedArgs parsed = Parse("mxlite info", kInfoFlags, args);
  if (parsed.Has("help")) {
    std::cout << "usage: mxlite info [--markdown]\n\n"
                 "Prints every setting: its effective value, where that value came from\n"
                 "(program, environment or default), the default and a one-line description;\n"
                 "then the build (CUDA, cuDNN, cuBLAS, GPUs, CPU features, threads).\n\nflags:\n"
              << FlagsHelp(kInfoFlags);
    return 0;
  }
  MX_CHECK(parsed.positional().empty())
      << "'mxlite info' takes no arguments, got '" << parsed.positional().front() << "'";
  Settings& registry = Settings::Global();
  if (parsed.Has("markdown")) {
    std::cout << SettingsMarkdownTable(registry);
    return 0;
  }
  std::vector<std::string> errors = registry.Validate();
  if (!errors.empty()) {
    for (const std::string& error : errors) std::cerr << "mxlite: error: " << error << "\n";
    std::cerr << "mxlite: fix the environment variables above (or unset them) and try again\n";
    return 1;
  }
  PrintSettings(std::cout, registry);
  std::cout << "\n";
  PrintBuild(std::cout, registry);
  return 0;
}

}  // namespace mxlite::cli
