// What convolution tuning buys on the CPU, in three parts; bench/conv_tuning.sh runs
// them all with PyTorch beside them and writes the tables of bench/RESULTS.md.
//
//   conv_tuning_bench layers [--threads 1,2] [--batch 1]   per layer and direction of the
//       ResNet-50 layer set: im2col_gemm alone, every candidate timed (the tuned pick is the
//       fastest), and the heuristic's pick (what `off` runs) with its distance from the best.
//       One JSON object per line ("layer", "direction", "threads", "im2col_ms", "tuned",
//       "tuned_ms", "heuristic", "heuristic_ms").
//   conv_tuning_bench networks [--threads 1,2]   forward time of the Fashion-MNIST demo network
//       (batch 64) and ResNet-18 (batch 1, 224x224) with im2col only, the heuristic (tuning off)
//       and the tuned plan. JSON lines ("network", "threads", "plan", "forward_ms").
//   conv_tuning_bench heuristic --models A.onnx,B.onnx [--threads 1] [--layouts NCHW,NHWC]
//                               [--directions forward,backward_data,backward_filter]
//       the heuristic tier measured on layers it was not built from: every distinct 2-D
//       convolution of the models (batch 1; the forward with the weight prepared, as inference
//       runs it, the backward directions as training runs them; default forward only) in each
//       layout listed that the layer can run in, every candidate timed; per problem
//       the tuned pick and the heuristic's with their times, then one summary line per thread
//       count and direction: top-1 agreement with the tuned pick, and the mean, geomean and
//       worst slowdown of the heuristic's picks against it. JSON lines ("model", "layer",
//       "layout", "direction", "threads", "tuned", "tuned_ms", "heuristic", "heuristic_ms",
//       "key", "measured", "measured_ms", "neighbours", "candidates_ms"), then "heuristic tier
//       (rules): ...". With --training-db FILE (a DB of other models, bench/system_db.sh) the
//       measured tier (ops/conv/measured_heuristic.h) learns from FILE's entries and is scored
//       beside the rules ("heuristic tier (measured): ..."); problems FILE holds are left out of
//       both scores. --benchdnn FILE,FILE adds (or gives instead of
//       --models) the 2-D convolutions of oneDNN's benchdnn shape lists
//       (tests/benchdnn/inputs/conv/shapes_*), at --batch (default 1) instead of their minibatch.
//   conv_tuning_bench startup --plan cold|warm|off --db FILE   one ResNet-18 bind + first
//       forward in this process, with a fresh DB (cold), the DB a previous run filled (warm) or
//       tuning off; prints {"startup": plan, "ms": ...}. The script runs each in new processes.
//
// Timing is TimeCandidate's (ops/conv/tuner.h): warm-up, then the median of repeated runs until
// they settle (here at least 5 runs, at most 21).
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bench/resnet50_layers.h"
#include "core/error.h"
#include "core/settings.h"
#include "ops/conv/cpu_conv_tuning.h"
#include "ops/conv/measured_heuristic.h"
#include "ops/conv/tuner.h"
#include "ops/conv_attributes.h"
#include "ops/cpu/avx512.h"
#include "ops/cpu/parallel.h"
#include "scheduler/graph/executor.h"
#include "scheduler/graph/infer_shapes.h"
#include "scheduler/onnx/onnx_import.h"
#include "scheduler/train/model_zoo.h"

namespace mxlite {
namespace {

using conv::Candidate;
using conv::ConvDirection;

conv::TimingOptions BenchTiming() {
  conv::TimingOptions options;
  options.warmup_runs = 2;
  options.min_runs = 5;
  options.max_runs = 21;
  options.max_spread = 0.05;
  options.cap_ms = 3000;
  return options;
}

std::vector<int> ParseList(const std::string& text) {
  std::vector<int> values;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) values.push_back(std::stoi(item));
  return values;
}

std::string Flag(const std::vector<std::string>& args, const std::string& name,
                 const std::string& fallback) {
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--" + name) return args[i + 1];
  }
  return fallback;
}

void BenchLayers(const std::vector<int>& threads_list, int64_t batch) {
  for (int threads : threads_list) {
    cpu::ScopedIntraOpThreads scoped(threads);
    for (const bench::ConvLayer& layer : bench::kResNet50Layers) {
      const cpu::ConvGeometry g = bench::LayerGeometry(layer, cpu::ConvLayout::kNCHW, batch);
      for (ConvDirection direction : {ConvDirection::kForward, ConvDirection::kBackwardData,
                                      ConvDirection::kBackwardFilter}) {
        const std::vector<Candidate> candidates = CpuConvCandidates(g, direction, DType::kFloat32);
        std::vector<double> ms(candidates.size(), -1.0);
        size_t best = candidates.size(), im2col = candidates.size();
        for (size_t i = 0; i < candidates.size(); ++i) {
          if (!candidates[i].unsupported.empty()) continue;
          ms[i] = conv::TimeCandidate(candidates[i].run, BenchTiming()).median_ms;
          if (best == candidates.size() || ms[i] < ms[best]) best = i;
          if (candidates[i].algorithm == "im2col_gemm") im2col = i;
        }
        const size_t heuristic = conv::RankCpuCandidates(g, direction, candidates).front();
        std::string all;
        for (size_t i = 0; i < candidates.size(); ++i) {
          if (ms[i] < 0) continue;
          all += (all.empty() ? "" : ", ") + ("\"" + candidates[i].algorithm + "\": ") +
                 std::to_string(ms[i]);
        }
        std::printf(
            "{\"layer\": \"%s\", \"batch\": %lld, \"direction\": \"%s\", \"threads\": %d, "
            "\"im2col_ms\": %.4f, \"tuned\": \"%s\", \"tuned_ms\": %.4f, \"heuristic\": \"%s\", "
            "\"heuristic_ms\": %.4f, \"candidates_ms\": {%s}}\n",
            layer.name, static_cast<long long>(batch), conv::ConvDirectionName(direction), threads,
            ms[im2col], candidates[best].algorithm.c_str(), ms[best],
            candidates[heuristic].algorithm.c_str(), ms[heuristic], all.c_str());
        std::fflush(stdout);
      }
    }
  }
}

// One held-out problem: a model's convolution in one layout.
struct HeldOutConvolution {
  std::string model, layer;
  cpu::ConvGeometry geometry;
};

std::vector<std::string> ParseNames(const std::string& text) {
  std::vector<std::string> names;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) names.push_back(item);
  }
  return names;
}

// Adds `geometry` in each of `layouts` it can run in (NCHW16c: whole blocks of 16 and an AVX-512
// CPU), once per distinct problem.
void AddInLayouts(const std::string& model, const std::string& layer, cpu::ConvGeometry geometry,
                  const std::vector<std::string>& layouts, std::set<std::string>& seen,
                  std::vector<HeldOutConvolution>& problems) {
  for (const std::string& layout_name : layouts) {
    const std::optional<ActivationLayout> parsed = ParseActivationLayout(layout_name);
    MX_CHECK(parsed.has_value()) << "heuristic: --layouts names '" << layout_name
                                 << "'; expected NCHW, NHWC, NCHW16c";
    if (*parsed == ActivationLayout::kNCHW16c &&
        (!cpu::CpuSupportsAvx512f() ||
         !RunsChannelBlocked(geometry.in_channels, geometry.out_channels, geometry.groups) ||
         geometry.out_channels % 16 != 0 || geometry.in_channels % 16 != 0)) {
      continue;
    }
    geometry.layout = *parsed;
    const std::string key =
        conv::CpuConvProblem(geometry, ConvDirection::kForward, DType::kFloat32, true).ToString();
    if (seen.insert(key).second) problems.push_back({model, layer, geometry});
  }
}

// Every distinct 2-D convolution of the models at batch 1 (dynamic dims of the inputs as 1), in
// each of `layouts` the layer can run in (NCHW16c: whole blocks of 16 and an AVX-512 CPU).
std::vector<HeldOutConvolution> ModelConvolutions(const std::vector<std::string>& paths,
                                                  const std::vector<std::string>& layouts) {
  std::vector<HeldOutConvolution> problems;
  std::set<std::string> seen;
  for (const std::string& path : paths) {
    const OnnxModelFile file(path);
    ImportOptions options;
    for (const OnnxInputInfo& input : file.Inputs()) {
      std::vector<int64_t> dims = input.dims;
      for (int64_t& dim : dims) dim = dim < 0 ? 1 : dim;
      options.input_shapes[input.name] = Shape(dims);
    }
    const ImportedModel model = file.Import(options);
    const GraphShapes shapes = InferGraphShapes(model.graph);
    const std::string model_name = std::filesystem::path(path).stem().string();
    for (const Node& node : model.graph.nodes()) {
      if (node.is_variable() || node.op->name != "Convolution") continue;
      const Shape& data = shapes.of(node.inputs[0]);
      if (data.ndim() != 4) continue;
      const cpu::ConvGeometry geometry =
          ConvolutionGeometry(ReadConvWindow(node.attrs, node.name), data, node.name);
      AddInLayouts(model_name, node.name, geometry, layouts, seen, problems);
    }
  }
  return problems;
}

// Top-1 agreement and slowdowns of one ranking's picks against the tuned pick.
struct PickScore {
  int agreed = 0, counted = 0;
  double log_slowdown = 0.0, sum_slowdown = 0.0, worst = 1.0;
  std::string worst_layer;

  void Add(double slowdown, bool agrees, const std::string& layer) {
    ++counted;
    agreed += agrees ? 1 : 0;
    sum_slowdown += slowdown;
    log_slowdown += std::log(slowdown);
    if (slowdown > worst) {
      worst = slowdown;
      worst_layer = layer;
    }
  }
  void Print(const char* tier, const char* direction, int threads) const {
    if (counted == 0) return;
    std::printf(
        "heuristic tier (%s): %d %s problems, %d thread(s): top-1 agreement %.1f%% (%d of %d); "
        "slowdown of its picks against the tuned pick: mean %.1f%%, geomean %.1f%%, worst %.2fx "
        "(%s)\n",
        tier, counted, direction, threads, 100.0 * agreed / counted, agreed, counted,
        100.0 * (sum_slowdown / counted - 1.0), 100.0 * (std::exp(log_slowdown / counted) - 1.0),
        worst, worst_layer.empty() ? "none" : worst_layer.c_str());
  }
};

// The first of `order` that was timed (ms >= 0), or ms.size().
size_t FirstTimed(const std::vector<size_t>& order, const std::vector<double>& ms) {
  for (size_t i : order) {
    if (ms[i] >= 0.0) return i;
  }
  return ms.size();
}

// The problem's key without its policy: a training DB's entry for the same problem, whatever
// policy it was tuned under.
std::string KeyWithoutPolicy(conv::ConvProblem problem) {
  problem.policy.clear();
  return problem.ToString();
}

// One benchdnn convolution descriptor ("mb1_g1ic3oc64_ih224oh112kh7sh2dh0ph3_iw224ow112kw7sw2dw0pw3
// _n\"name\"": sizes by letter, width defaults to height, dilation written as d - 1, padding
// derived from the output size when absent) as a 2-D geometry at `batch`; nullopt for 1-D and 3-D
// descriptors and ones whose output size disagrees with symmetric padding.
std::optional<cpu::ConvGeometry> BenchdnnGeometry(std::string line, int64_t batch) {
  const size_t name_at = line.find("n\"");
  if (name_at != std::string::npos) line = line.substr(0, name_at);
  std::map<std::string, int64_t> size;
  std::string letters;
  for (size_t i = 0; i < line.size();) {
    if (std::isalpha(static_cast<unsigned char>(line[i]))) {
      letters += line[i++];
    } else if (std::isdigit(static_cast<unsigned char>(line[i]))) {
      size_t end = i;
      while (end < line.size() && std::isdigit(static_cast<unsigned char>(line[end]))) ++end;
      size[letters] = std::stoll(line.substr(i, end - i));
      letters.clear();
      i = end;
    } else {
      ++i;  // '_' separators
    }
  }
  if (size.count("id") || size.count("kd") || !size.count("ih") || !size.count("ic") ||
      !size.count("oc")) {
    return std::nullopt;
  }
  auto value = [&](const std::string& key, int64_t fallback) {
    auto found = size.find(key);
    return found == size.end() ? fallback : found->second;
  };
  cpu::ConvGeometry g;
  g.batch = batch;
  g.groups = value("g", 1);
  g.in_channels = size["ic"];
  g.out_channels = size["oc"];
  g.in_h = size["ih"];
  // benchdnn copies the height's sizes to the width only when no width size is given at all;
  // otherwise a missing width size takes its own default.
  const bool square = !(size.count("iw") || size.count("ow") || size.count("kw") ||
                        size.count("sw") || size.count("dw") || size.count("pw"));
  g.in_w = square ? g.in_h : value("iw", g.in_h);
  g.kernel_h = value("kh", 1);
  g.kernel_w = square ? g.kernel_h : value("kw", 1);
  g.stride_h = value("sh", 1);
  g.stride_w = square ? g.stride_h : value("sw", 1);
  g.dilate_h = value("dh", 0) + 1;
  g.dilate_w = square ? g.dilate_h : value("dw", 0) + 1;
  auto derived_pad = [](int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilate) {
    return std::max<int64_t>(0, ((out - 1) * stride - in + (kernel - 1) * dilate + 1) / 2);
  };
  std::optional<int64_t> out_h, out_w;
  if (size.count("oh")) out_h = size["oh"];
  if (size.count("ow")) out_w = size["ow"];
  if (!out_w && square) out_w = out_h;
  g.pad_h = size.count("ph") ? size["ph"]
            : out_h          ? derived_pad(g.in_h, *out_h, g.kernel_h, g.stride_h, g.dilate_h)
                             : 0;
  g.pad_w = size.count("pw") ? size["pw"]
            : out_w          ? derived_pad(g.in_w, *out_w, g.kernel_w, g.stride_w, g.dilate_w)
            : square         ? g.pad_h
                             : 0;
  g.out_h = (g.in_h + 2 * g.pad_h - (g.kernel_h - 1) * g.dilate_h - 1) / g.stride_h + 1;
  g.out_w = (g.in_w + 2 * g.pad_w - (g.kernel_w - 1) * g.dilate_w - 1) / g.stride_w + 1;
  if (g.groups < 1 || g.in_channels % g.groups != 0 || g.out_channels % g.groups != 0 ||
      g.out_h < 1 || g.out_w < 1 || (out_h && *out_h != g.out_h) || (out_w && *out_w != g.out_w)) {
    return std::nullopt;
  }
  return g;
}

// Every distinct 2-D convolution of benchdnn shape files (oneDNN's tests/benchdnn/inputs/conv/
// shapes_*), at `batch`, in each of `layouts` it can run in.
std::vector<HeldOutConvolution> BenchdnnConvolutions(const std::vector<std::string>& paths,
                                                     const std::vector<std::string>& layouts,
                                                     int64_t batch) {
  std::vector<HeldOutConvolution> problems;
  std::set<std::string> seen;
  for (const std::string& path : paths) {
    std::ifstream in(path);
    MX_CHECK(in.good()) << "heuristic: --benchdnn file " << path << " cannot be read";
    std::string model = std::filesystem::path(path).filename().string();
    if (model.starts_with("shapes_")) model = model.substr(7);
    std::string line;
    int skipped = 0, number = 0;
    while (std::getline(in, line)) {
      ++number;
      if (line.empty() || line[0] == '#' || line.starts_with("--")) continue;
      const std::optional<cpu::ConvGeometry> geometry = BenchdnnGeometry(line, batch);
      if (!geometry) {
        ++skipped;
        continue;
      }
      const size_t name_at = line.find("n\"");
      const std::string layer =
          name_at == std::string::npos
              ? "line " + std::to_string(number)
              : line.substr(name_at + 2, line.find('"', name_at + 2) - name_at - 2);
      AddInLayouts(model, layer, *geometry, layouts, seen, problems);
    }
    if (skipped > 0) {
      std::printf("%s: %d descriptors skipped (1-D, 3-D or asymmetric padding)\n", path.c_str(),
                  skipped);
    }
  }
  return problems;
}

// The directions named in `names` (forward, backward_data, backward_filter).
std::vector<ConvDirection> ParseDirections(const std::vector<std::string>& names) {
  std::vector<ConvDirection> directions;
  for (const std::string& name : names) {
    bool known = false;
    for (ConvDirection direction :
         {ConvDirection::kForward, ConvDirection::kBackwardData, ConvDirection::kBackwardFilter}) {
      if (name == conv::ConvDirectionName(direction)) {
        directions.push_back(direction);
        known = true;
      }
    }
    MX_CHECK(known) << "heuristic: --directions names '" << name
                    << "'; expected forward, backward_data, backward_filter";
  }
  return directions;
}

// One problem in one direction: every candidate timed, the rules' and the measured tier's picks
// scored against the fastest, one JSON line.
void ScoreHeldOutProblem(const HeldOutConvolution& problem, ConvDirection direction, int threads,
                         const conv::MeasuredHeuristic* measured, PickScore& rules_score,
                         PickScore& measured_score) {
  const cpu::ConvGeometry& g = problem.geometry;
  // Inference prepares the forward weight; training's passes (and every backward) do not.
  const bool prepared = direction == ConvDirection::kForward;
  const conv::ConvProblem key = conv::CpuConvProblem(g, direction, DType::kFloat32, prepared);
  const std::vector<Candidate> candidates =
      CpuConvCandidates(g, direction, DType::kFloat32, prepared);
  std::vector<double> ms(candidates.size(), -1.0);
  size_t best = candidates.size();
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!candidates[i].unsupported.empty()) continue;
    ms[i] = conv::TimeCandidate(candidates[i].run, BenchTiming()).median_ms;
    if (best == candidates.size() || ms[i] < ms[best]) best = i;
  }
  const std::vector<size_t> rules = conv::RankCpuCandidates(g, direction, candidates);
  const size_t by_rules = FirstTimed(rules, ms);
  if (best == candidates.size() || by_rules == candidates.size()) return;
  const std::string layer = problem.model + " " + problem.layer + " " +
                            ActivationLayoutName(g.layout) + " " +
                            conv::ConvDirectionName(direction);
  rules_score.Add(ms[by_rules] / ms[best], by_rules == best, layer);
  size_t by_measure = by_rules;
  int neighbours = 0;
  if (measured != nullptr) {
    const conv::MeasuredRanking ranked = measured->Rank(key, candidates, rules);
    by_measure = FirstTimed(ranked.order, ms);
    neighbours = ranked.neighbours;
    measured_score.Add(ms[by_measure] / ms[best], by_measure == best, layer);
  }
  std::string all;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (ms[i] < 0.0) continue;
    char entry[96];
    std::snprintf(entry, sizeof(entry), "%s\"%s\": %.4f", all.empty() ? "" : ", ",
                  candidates[i].algorithm.c_str(), ms[i]);
    all += entry;
  }
  std::printf(
      "{\"model\": \"%s\", \"layer\": \"%s\", \"layout\": \"%s\", \"direction\": \"%s\", "
      "\"threads\": %d, \"key\": \"%s\", \"tuned\": \"%s\", \"tuned_ms\": %.4f, "
      "\"heuristic\": \"%s\", \"heuristic_ms\": %.4f, \"measured\": \"%s\", "
      "\"measured_ms\": %.4f, \"neighbours\": %d, \"candidates_ms\": {%s}}\n",
      problem.model.c_str(), problem.layer.c_str(), ActivationLayoutName(g.layout),
      conv::ConvDirectionName(direction), threads, key.ToString().c_str(),
      candidates[best].algorithm.c_str(), ms[best], candidates[by_rules].algorithm.c_str(),
      ms[by_rules], candidates[by_measure].algorithm.c_str(), ms[by_measure], neighbours,
      all.c_str());
  std::fflush(stdout);
}

void BenchHeuristic(const std::vector<HeldOutConvolution>& problems,
                    const std::vector<ConvDirection>& directions,
                    const std::vector<int>& threads_list, const std::string& training_db) {
  std::unique_ptr<conv::TuningDb> training;
  if (!training_db.empty()) {
    MX_CHECK(std::filesystem::exists(training_db))
        << "heuristic: --training-db " << training_db << " does not exist";
    training = std::make_unique<conv::TuningDb>(conv::TuningDbOptions{
        .user_path = "", .system_path = training_db, .mode = conv::TuningDbMode::kReadOnly});
  }
  for (int threads : threads_list) {
    cpu::ScopedIntraOpThreads scoped(threads);
    // The measured tier learns from the training DB's entries of this thread count; problems
    // the DB holds are left out of the score (they are not held out).
    std::unique_ptr<conv::MeasuredHeuristic> measured;
    std::set<std::string> trained;
    if (training) {
      const auto tuned = training->Tuned(conv::TuningEnvironment::ForCpu(threads));
      measured = std::make_unique<conv::MeasuredHeuristic>(*tuned);
      for (const conv::TunedProblem& stored : *tuned)
        trained.insert(KeyWithoutPolicy(stored.problem));
      std::printf("measured tier: learned from %zu problems of %s (%d thread(s))\n",
                  measured->size(), training_db.c_str(), threads);
    }
    for (ConvDirection direction : directions) {
      PickScore rules_score, measured_score;
      int left_out = 0;
      for (const HeldOutConvolution& problem : problems) {
        const conv::ConvProblem key = conv::CpuConvProblem(
            problem.geometry, direction, DType::kFloat32, direction == ConvDirection::kForward);
        if (trained.count(KeyWithoutPolicy(key)) > 0) {
          ++left_out;
          continue;
        }
        ScoreHeldOutProblem(problem, direction, threads, measured.get(), rules_score,
                            measured_score);
      }
      const char* name = conv::ConvDirectionName(direction);
      if (training)
        std::printf("left out (%s): %d problems the training DB holds\n", name, left_out);
      rules_score.Print("rules", name, threads);
      if (training) measured_score.Print("measured", name, threads);
      std::fflush(stdout);
    }
  }
}

void FillRandom(NDArray& array, std::mt19937_64& random) {
  std::uniform_real_distribution<float> uniform(-0.1f, 0.1f);
  std::vector<float> values(static_cast<size_t>(array.size()));
  for (float& value : values) value = uniform(random);
  array.SyncCopyFromCPU(values.data(), values.size() * sizeof(float));
}

std::unique_ptr<Executor> BindRandom(const Graph& graph) {
  auto exec = Executor::Bind(graph, {});
  std::mt19937_64 random(1);
  FillRandom(exec->Arg("data"), random);
  for (const std::string& name : exec->ParameterNames()) FillRandom(exec->Arg(name), random);
  for (const std::string& name : exec->AuxiliaryNames()) {
    // Moving variance 1, mean 0: BatchNorm in inference passes values through, scaled by gamma.
    std::vector<float> values(static_cast<size_t>(exec->Arg(name).size()),
                              name.find("var") != std::string::npos ? 1.0f : 0.0f);
    exec->Arg(name).SyncCopyFromCPU(values.data(), values.size() * sizeof(float));
  }
  return exec;
}

double ForwardMs(Executor& exec) {
  return conv::TimeCandidate(
             [&] {
               exec.Forward(false);
               exec.outputs()[0].WaitToRead();
             },
             BenchTiming())
      .median_ms;
}

// Stores im2col_gemm as the pick for every problem `decisions` tuned, so a read-only bind over
// `db` runs the network with im2col alone through the normal tuned path.
void SeedIm2colOnly(const std::vector<conv::LayerTuning>& decisions, conv::TuningDb& db) {
  for (const conv::LayerTuning& decision : decisions) {
    conv::TuningRecord record = decision.record;
    record.algorithm = decision.problem.layout == "NHWC" ? "im2row_gemm" : "im2col_gemm";
    record.layout = decision.problem.layout;
    db.Store(decision.problem, conv::TuningEnvironment::ForCpu(), record);
  }
}

void BenchNetworks(const std::vector<int>& threads_list, const std::filesystem::path& folder) {
  struct Network {
    const char* name;
    Graph graph;
  };
  std::vector<Network> networks;
  networks.push_back({"fashion_mnist_demo (batch 64)", FashionMnistNet(64, false)});
  networks.push_back({"resnet18 (batch 1)", ResNet18({.batch = 1})});
  settings().Set("MXNET_TUNING_REPORT", "off");
  for (int threads : threads_list) {
    cpu::ScopedIntraOpThreads scoped(threads);
    for (const Network& network : networks) {
      const std::string tag = std::string(network.name) + " " + std::to_string(threads);
      // tuned: a fresh DB, timed candidates within the default workspace limit
      settings().Set("MXNET_TUNING_DB_PATH", (folder / (tag + " tuned.sqlite")).string());
      settings().Set("MXNET_TUNING_DB_MODE", "update");
      settings().Set("MXNET_CUDNN_AUTOTUNE_DEFAULT", "limited_workspace");
      auto tuned = BindRandom(network.graph);
      const double tuned_ms = ForwardMs(*tuned);
      // im2col only: the same problems, answered by a DB that holds im2col for each
      {
        conv::TuningDbOptions options;
        options.user_path = (folder / (tag + " im2col.sqlite")).string();
        conv::TuningDb db(options);
        SeedIm2colOnly(tuned->TuningDecisions(), db);
        settings().Set("MXNET_TUNING_DB_PATH", options.user_path);
        settings().Set("MXNET_TUNING_DB_MODE", "read_only");
      }
      auto im2col = BindRandom(network.graph);
      const double im2col_ms = ForwardMs(*im2col);
      settings().Set("MXNET_CUDNN_AUTOTUNE_DEFAULT", "off");
      auto heuristic = BindRandom(network.graph);
      const double heuristic_ms = ForwardMs(*heuristic);
      for (const auto& [plan, ms] : {std::pair<const char*, double>{"im2col", im2col_ms},
                                     {"heuristic", heuristic_ms},
                                     {"tuned", tuned_ms}}) {
        std::printf(
            "{\"network\": \"%s\", \"threads\": %d, \"plan\": \"%s\", \"forward_ms\": %.3f}\n",
            network.name, threads, plan, ms);
      }
      std::fflush(stdout);
    }
  }
}

void BenchStartup(const std::string& plan, const std::string& db_path) {
  MX_CHECK(plan == "cold" || plan == "warm" || plan == "off")
      << "startup: --plan expects cold, warm or off, got '" << plan << "'";
  settings().Set("MXNET_TUNING_REPORT", "off");
  settings().Set("MXNET_TUNING_DB_PATH", db_path);
  if (plan == "cold") std::filesystem::remove(db_path);
  if (plan == "off") settings().Set("MXNET_CUDNN_AUTOTUNE_DEFAULT", "off");
  const Graph graph = ResNet18({.batch = 1});
  const auto start = std::chrono::steady_clock::now();
  auto exec = Executor::Bind(graph, {});
  exec->Forward(false);
  exec->outputs()[0].WaitToRead();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("{\"startup\": \"%s\", \"threads\": %d, \"ms\": %.1f}\n", plan.c_str(),
              cpu::IntraOpThreads(), ms);
}

int Main(const std::vector<std::string>& args) {
  const std::string part = args.empty() ? "" : args[0];
  const std::vector<int> threads = ParseList(Flag(args, "threads", "1,2"));
  if (part == "layers") {
    BenchLayers(threads, std::stoll(Flag(args, "batch", "1")));
  } else if (part == "networks") {
    const auto folder = std::filesystem::temp_directory_path() / "mxlite_conv_tuning_bench";
    std::filesystem::remove_all(folder);
    std::filesystem::create_directories(folder);
    BenchNetworks(threads, folder);
    std::filesystem::remove_all(folder);
  } else if (part == "heuristic") {
    const std::vector<std::string> models = ParseNames(Flag(args, "models", ""));
    const std::vector<std::string> shape_files = ParseNames(Flag(args, "benchdnn", ""));
    MX_CHECK(!models.empty() || !shape_files.empty())
        << "heuristic: --models A.onnx,B.onnx or --benchdnn FILE,FILE names the held-out layers";
    const std::vector<std::string> layouts = ParseNames(Flag(args, "layouts", "NCHW,NHWC"));
    std::vector<HeldOutConvolution> problems = ModelConvolutions(models, layouts);
    for (HeldOutConvolution& problem :
         BenchdnnConvolutions(shape_files, layouts, std::stoll(Flag(args, "batch", "1")))) {
      problems.push_back(std::move(problem));
    }
    BenchHeuristic(problems, ParseDirections(ParseNames(Flag(args, "directions", "forward"))),
                   ParseList(Flag(args, "threads", "1")), Flag(args, "training-db", ""));
  } else if (part == "startup") {
    BenchStartup(Flag(args, "plan", ""), Flag(args, "db", ""));
  } else {
    std::cerr << "usage: conv_tuning_bench layers|networks|heuristic|startup [flags] (see the "
                 "source)\n";
    return 2;
  }
  return 0;
}

}  // namespace
}  // namespace mxlite

int main(int argc, char** argv) try {
  return mxlite::Main(std::vector<std::string>(argv + 1, argv + argc));
} catch (const std::exception& error) {
  std::cerr << "conv_tuning_bench: " << error.what() << "\n";
  return 1;
}
