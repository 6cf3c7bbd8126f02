// `mxlite bench MODEL.onnx --batch N`: inference latency percentiles and throughput of an ONNX
// model on random inputs. Binding (where convolutions are tuned) is timed apart; then --warmup
// passes, then --iters timed passes, each one forward pass waited for to the last output.
// --compare-plan binds the model under the local and the global convolution plan, times their
// passes in turn and prints the speedup.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <random>

#include "core/error.h"
#include "core/settings.h"
#include "engine/engine.h"
#include "ops/cpu_runtime.h"
#include "tools/mxlite/command_line.h"
#include "tools/mxlite/commands.h"
#include "tools/mxlite/model_session.h"

namespace mxlite::cli {

namespace {

constexpr uint64_t kInputSeed = 42;

std::vector<FlagSpec> BenchFlags() {
  return {
      {"batch", true, "batch size: replaces the first input's batch (first) dim (default 1)"},
      {"threads", true, "intra-op threads per operator, MXNET_OMP_MAX_THREADS (0: one per core)"},
      DeviceFlag(),
      {"warmup", true, "untimed passes before timing (default 5)"},
      {"iters", true, "timed passes (default 50)"},
      EngineFlag(),
      PlanFlag(),
      DTypeFlag(),
      {"training", false,
       "time training steps instead: forward in training mode and backward (head gradients of "
       "ones, no update)"},
      {"compare-plan", false,
       "bench the local and the global convolution plan one after the other and print the "
       "speedup"},
      {"help", false, "show this help"},
  };
}

void PrintHelp() {
  std::cout << "usage: mxlite bench MODEL.onnx [--batch N] [--threads T] [--device cpu|gpu]\n"
               "                    [--warmup W] [--iters I] [--engine TYPE]\n"
               "                    [--plan none|local|global | --compare-plan] [--training]\n"
               "                    [--dtype float32|float16|float64]\n\n"
               "Measures inference of an ONNX model on random inputs (uniform in [-1, 1), seed "
            << kInputSeed
            << ";\ninteger inputs are zeros). The first input's first dim becomes --batch;\n"
               "other inputs keep their declared shapes (a dynamic first dim also becomes\n"
               "--batch). Binding, where convolutions are tuned, is timed on its own. Then come\n"
               "--warmup untimed passes and --iters timed ones; each pass is one forward run\n"
               "waited for to its last output. Prints latency p50/p90/p99 (nearest rank) and\n"
               "throughput (batch * iters / total timed seconds). With --compare-plan the\n"
               "model is bound under the local plan and the global one, their passes are timed\n"
               "in turn (local, global, local, ...), and a line per plan gives its median\n"
               "latency next to the planner's prediction for the costed work (convolutions,\n"
               "pooling, layout transforms).\n\nflags:\n"
            << FlagsHelp(BenchFlags())
            << "\nexample:\n  mxlite bench resnet18.onnx --batch 8 --threads 2 --iters 20\n";
}

// Uniform [-1, 1) for floating-point inputs, zeros for integers (indices, shapes: 0 is valid).
HostTensor RandomTensor(DType dtype, const Shape& shape, std::mt19937_64& random) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const int64_t count = shape.size();
  if (dtype == DType::kFloat32) {
    std::vector<float> values(static_cast<size_t>(count));
    for (float& value : values) value = static_cast<float>(uniform(random));
    return HostTensor::From(values, shape);
  }
  if (dtype == DType::kFloat64) {
    std::vector<double> values(static_cast<size_t>(count));
    for (double& value : values) value = uniform(random);
    return HostTensor::From(values, shape);
  }
  HostTensor zeros{dtype, shape, {}};
  zeros.bytes.assign(static_cast<size_t>(count) * DTypeSize(dtype), 0);
  return zeros;
}

// "warm-up 3/5" progress on stderr: redrawn in place on a terminal, else a line every 5 s.
class PassProgress {
 public:
  PassProgress(std::string label, int64_t total)
      : label_(std::move(label)),
        total_(total),
        terminal_(isatty(fileno(stderr)) != 0),
        start_(Clock::now()),
        last_(start_) {}

  void Done(int64_t passes) {
    const Clock::time_point now = Clock::now();
    if (terminal_) {
      std::cerr << "\r" << label_ << " " << passes << "/" << total_ << std::flush;
      if (passes == total_) std::cerr << "\n";
    } else if (now - last_ > std::chrono::seconds(5) && passes < total_) {
      std::cerr << label_ << " " << passes << "/" << total_ << "\n";
      last_ = now;
    }
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::string label_;
  int64_t total_;
  bool terminal_;
  Clock::time_point start_, last_;
};

double Seconds(std::chrono::steady_clock::duration duration) {
  return std::chrono::duration<double>(duration).count();
}

// Nearest-rank percentile of sorted values: the smallest value with at least p% at or below it.
double Percentile(const std::vector<double>& sorted, double p) {
  const size_t rank =
      static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

// Wall-clock seconds of one forward pass (a training step with `training`), waited for.
double TimeOnePass(Executor& executor, bool training) {
  const auto start = std::chrono::steady_clock::now();
  if (training) {
    RunForwardBackward(executor);
  } else {
    RunForward(executor);
  }
  return Seconds(std::chrono::steady_clock::now() - start);
}

// Wall-clock seconds of each of `passes` passes.
std::vector<double> TimePasses(Executor& executor, int64_t passes, const std::string& label,
                               bool training) {
  PassProgress progress(label, passes);
  std::vector<double> seconds;
  for (int64_t i = 0; i < passes; ++i) {
    seconds.push_back(TimeOnePass(executor, training));
    progress.Done(i + 1);
  }
  return seconds;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return Percentile(values, 50.0);
}

void ReportLatency(const std::vector<double>& seconds, int64_t batch) {
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  double total = 0;
  for (double value : seconds) total += value;
  std::cout << std::fixed << std::setprecision(3);
  for (double p : {50.0, 90.0, 99.0}) {
    std::cout << "latency p" << static_cast<int>(p) << ": " << Percentile(sorted, p) * 1e3
              << " ms\n";
  }
  std::cout << std::setprecision(1) << "throughput: "
            << static_cast<double>(batch) * static_cast<double>(seconds.size()) / total
            << " images/s (batch " << batch << ", " << seconds.size() << " passes in "
            << std::setprecision(3) << total << " s)\n";
}

struct PlanTiming {
  double median_ms = 0.0;     // measured, per forward pass
  double predicted_ms = 0.0;  // the planner's, for the costed work
  std::string summary;        // the plan's summary line
};

// Binds the model under `binding`'s plan, printing the bind time and the plan's summary, and runs
// `warmup` untimed passes.
BoundModel BindAndWarmUp(const OnnxModelFile& model,
                         const std::map<std::string, HostTensor>& inputs,
                         const OnnxBinding& binding, int64_t warmup) {
  std::cerr << "binding " << model.path() << " (shapes, memory plan, convolution tuning)...\n";
  const auto bind_start = std::chrono::steady_clock::now();
  BoundModel bound = BindOnnxModel(model, inputs, binding);
  std::cout << std::fixed << std::setprecision(3)
            << "bind: " << Seconds(std::chrono::steady_clock::now() - bind_start) << " s"
            << std::endl;
  std::cout << bound.executor->conv_plan().Summary() << std::endl;
  const std::vector<double> warm =
      TimePasses(*bound.executor, warmup, "warm-up", binding.training);
  double warm_total = 0;
  for (double value : warm) warm_total += value;
  std::cout << "warm-up: " << warmup << " passes in " << warm_total << " s" << std::endl;
  // After the warm-up: convolutions prepare their weights on their first pass.
  std::cout << bound.executor->memory_report().Summary() << std::endl;
  return bound;
}

// With MXNET_ENABLE_CUDA_GRAPHS on a GPU: how the passes ran (engine/segment_graph.h).
void ReportGraphReplays() {
  const GraphReplayCounts counts = Engine::Get().graph_replay_counts();
  if (counts.captures + counts.replays + counts.failed_captures == 0) return;
  std::cout << "CUDA graphs: " << counts.captures << " captured, " << counts.replays
            << " replayed, " << counts.failed_captures << " captures refused\n";
}

PlanTiming TimingOf(const BoundModel& bound, const std::vector<double>& seconds) {
  const ConvPlanReport& report = bound.executor->conv_plan();
  return {Median(seconds) * 1e3, report.predicted_ms(), report.Summary()};
}

// Binds the model under `binding`'s plan, warms up and times it, printing the latency report.
void BenchPlan(const OnnxModelFile& model, const std::map<std::string, HostTensor>& inputs,
               const OnnxBinding& binding, int64_t warmup, int64_t iters, int64_t batch) {
  BoundModel bound = BindAndWarmUp(model, inputs, binding, warmup);
  ReportLatency(TimePasses(*bound.executor, iters, "timing", binding.training), batch);
  ReportGraphReplays();
}

// --compare-plan: binds the model under the local and the global plan, then times them pass by
// pass in turn (local, global, local, ...), so that a drifting machine or the order of the runs
// weighs on both alike: timed one after the other, the second of two identical plans read up to
// 5% slower here (VGG-16 and ResNet-50 at batch 16). Both executors are alive meanwhile.
std::vector<std::pair<ConvPlanKind, PlanTiming>> ComparePlans(
    const OnnxModelFile& model, const std::map<std::string, HostTensor>& inputs,
    OnnxBinding binding, int64_t warmup, int64_t iters, int64_t batch) {
  const ConvPlanKind plans[] = {ConvPlanKind::kLocal, ConvPlanKind::kGlobal};
  std::vector<BoundModel> bound;
  for (ConvPlanKind plan : plans) {
    std::cout << "--- plan " << ConvPlanKindName(plan) << " ---\n";
    binding.conv_plan = plan;
    bound.push_back(BindAndWarmUp(model, inputs, binding, warmup));
  }
  std::vector<std::vector<double>> seconds(bound.size());
  PassProgress progress("timing (alternating plans)", iters);
  for (int64_t i = 0; i < iters; ++i) {
    for (size_t p = 0; p < bound.size(); ++p) {
      seconds[p].push_back(TimeOnePass(*bound[p].executor, binding.training));
    }
    progress.Done(i + 1);
  }
  std::vector<std::pair<ConvPlanKind, PlanTiming>> timings;
  for (size_t p = 0; p < bound.size(); ++p) {
    std::cout << "--- plan " << ConvPlanKindName(plans[p])
              << ", timed in turn with the other ---\n";
    ReportLatency(seconds[p], batch);
    timings.emplace_back(plans[p], TimingOf(bound[p], seconds[p]));
  }
  return timings;
}

}  // namespace

int RunBenchCommand(const std::vector<std::string>& args) {
  const std::vector<FlagSpec> flags = BenchFlags();
  ParsedArgs parsed = Parse("mxlite bench", flags, args);
  if (parsed.Has("help")) {
    PrintHelp();
    return 0;
  }
  const std::string model_path = ModelPath(parsed, "mxlite bench");
  const int64_t batch = IntFlag(parsed, "batch", 1, 1, 1 << 20);
  const int64_t threads = IntFlag(parsed, "threads", -1, 0, 1024);
  const int64_t warmup = IntFlag(parsed, "warmup", 5, 0, 1 << 20);
  const int64_t iters = IntFlag(parsed, "iters", 50, 1, 1 << 20);
  const Context ctx = ParseDevice(parsed.Value("device"));
  if (threads >= 0) {
    // The setting records the choice (source: program); the override makes it hold even when
    // the thread pool was sized earlier in this process.
    settings().Set("MXNET_OMP_MAX_THREADS", std::to_string(threads));
    SetCpuIntraOpThreads(static_cast<int>(threads));
  }
  ApplyEngine(parsed.Value("engine"));

  const OnnxModelFile model(model_path);  // read and parsed once
  const std::vector<OnnxInputInfo> declared = model.Inputs();
  MX_CHECK(!declared.empty()) << model_path << " has no inputs to feed";
  std::mt19937_64 random(kInputSeed);
  std::map<std::string, HostTensor> inputs;
  for (size_t i = 0; i < declared.size(); ++i) {
    const Shape shape = BatchedInputShape(declared[i], i == 0, batch, "mxlite bench");
    inputs[declared[i].name] = RandomTensor(declared[i].dtype, shape, random);
    std::cout << "input '" << declared[i].name << "': " << DTypeName(declared[i].dtype) << " "
              << shape.ToString() << "\n";
  }
  std::cout << "device " << ctx.ToString() << ", engine "
            << settings().GetString("MXNET_ENGINE_TYPE") << ", intra-op threads "
            << CpuIntraOpThreads() << std::endl;

  OnnxBinding binding{
      .ctx = ctx, .training = parsed.Has("training"), .dtype = ParseDTypeFlag(parsed)};
  if (binding.training) std::cout << "timing training steps (forward + backward)\n";
  if (binding.dtype != DType::kFloat32) {
    std::cout << "computing in " << DTypeName(binding.dtype)
              << " (inputs cast in, outputs cast back to float32)\n";
  }
  if (!parsed.Has("compare-plan")) {
    binding.conv_plan = ParsePlanFlag(parsed);
    BenchPlan(model, inputs, binding, warmup, iters, batch);
    return 0;
  }
  MX_CHECK(!parsed.Has("plan")) << "--compare-plan runs both plans; drop --plan";
  const std::vector<std::pair<ConvPlanKind, PlanTiming>> timings =
      ComparePlans(model, inputs, binding, warmup, iters, batch);
  std::cout << std::fixed << std::setprecision(2);
  for (const auto& [plan, timing] : timings) {
    std::cout << ConvPlanKindName(plan) << ": " << timing.median_ms << " ms (predicted "
              << timing.predicted_ms << " ms) " << timing.summary << "\n";
  }
  std::cout << std::setprecision(3) << "speedup global over local: "
            << timings[0].second.median_ms / timings[1].second.median_ms << "x\n";
  return 0;
}

}  // namespace mxlite::cli
