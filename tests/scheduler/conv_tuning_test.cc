// Convolution tuning as a user meets it: binding tunes every convolution per its cudnn_tune
// attribute or MXNET_CUDNN_AUTOTUNE_DEFAULT, the executor reports what was decided and where it
// came from, a second bind in a new process (a fresh tuner over the same DB file) benchmarks
// nothing, and every mode computes the same network.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>

#include "core/build_info.h"
#include "core/settings.h"
#include "ops/conv/tuner.h"
#include "scheduler/graph/executor.h"
#include "scheduler/graph/graph_builder.h"
#include "tests/scheduler/random_arguments.h"

namespace mxlite {
namespace {

namespace fs = std::filesystem;
using conv::LayerTuning;
using conv::PickOrigin;

// Three convolutions with different best candidates (3x3, 1x1, depthwise) and one with its own
// cudnn_tune.
Graph TuningNet() {
  GraphBuilder g;
  Symbol x = g.Input("data", {2, 8, 12, 12});
  Symbol y = g.Relu(g.Conv(x, {.num_filter = 8, .kernel = {3, 3}, .pad = {1, 1}}, "conv_a"));
  y = g.Conv(y, {.num_filter = 8, .kernel = {1, 1}}, "conv_b");
  y = g.Conv(y, {.num_filter = 8, .kernel = {3, 3}, .pad = {1, 1}, .num_group = 8,
                 .cudnn_tune = "off"},
             "conv_c");
  return g.Build({y});
}

// Every test gets its own DB file and leaves the registry as it found it.
class ConvTuningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    folder_ = fs::temp_directory_path() / ("mxlite_conv_tuning_test_" + std::to_string(getpid()) +
                                           "_" + std::to_string(counter++));
    fs::remove_all(folder_);
    settings().Set("MXNET_TUNING_DB_PATH", (folder_ / "tuning.sqlite").string());
  }
  void TearDown() override {
    for (const char* name : {"MXNET_TUNING_DB_PATH", "MXNET_TUNING_DB_MODE",
                             "MXNET_CUDNN_AUTOTUNE_DEFAULT", "MXNET_ENFORCE_DETERMINISM"}) {
      settings().Reset(name);
    }
    fs::remove_all(folder_);
  }

  fs::path folder_;
};

// One inference pass on reproducible random data and parameters.
std::vector<float> Forward(Executor& exec) {
  testing_support::FillRandomArguments(exec, 5);
  exec.Forward(false);
  return exec.outputs()[0].ToVector<float>();
}

TEST_F(ConvTuningTest, BindingTunesEveryDirectionAndReportsModeAndSource) {
  auto exec = Executor::Bind(TuningNet(), {.training = true});
  const std::vector<LayerTuning> decisions = exec->TuningDecisions();
  ASSERT_EQ(decisions.size(), 9u);  // 3 layers x 3 directions
  EXPECT_EQ(decisions[0].layer, "conv_a");
  EXPECT_EQ(decisions[0].mode.mode, conv::TuneMode::kLimitedWorkspace);
  EXPECT_EQ(decisions[0].mode.source, SettingSource::kDefault);
  EXPECT_EQ(decisions[3].layer, "conv_b");
  EXPECT_EQ(decisions[3].record.algorithm.empty(), false);
  // conv_c says cudnn_tune=off: the heuristic picks the depthwise kernel, nothing is timed.
  EXPECT_EQ(decisions[6].layer, "conv_c");
  EXPECT_EQ(decisions[6].mode.source, SettingSource::kAttribute);
  EXPECT_EQ(decisions[6].origin, PickOrigin::kHeuristic);
  EXPECT_EQ(decisions[6].record.algorithm, "depthwise_direct");

  const std::string report = exec->TuningReport(/*verbose=*/true);
  EXPECT_NE(report.find("conv_b backward_filter"), std::string::npos) << report;
  EXPECT_NE(report.find("off (from attribute cudnn_tune)"), std::string::npos) << report;
  EXPECT_NE(report.find("limited_workspace (from default MXNET_CUDNN_AUTOTUNE_DEFAULT)"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("tuned 9 convolution problems of 3 layers:"), std::string::npos) << report;
}

TEST_F(ConvTuningTest, TheEnvironmentDefaultAppliesWhereNoAttributeIsSet) {
  settings().Set("MXNET_CUDNN_AUTOTUNE_DEFAULT", "fastest");
  auto exec = Executor::Bind(TuningNet(), {});
  const std::vector<LayerTuning> decisions = exec->TuningDecisions();
  ASSERT_EQ(decisions.size(), 3u);
  EXPECT_EQ(decisions[0].mode.mode, conv::TuneMode::kFastest);
  EXPECT_EQ(decisions[0].mode.source, SettingSource::kProgram);
  EXPECT_EQ(decisions[2].mode.mode, conv::TuneMode::kOff);  // the attribute still wins
}

TEST_F(ConvTuningTest, EveryModeComputesTheSameNetwork) {
  std::vector<std::vector<float>> results;
  for (const char* mode : {"off", "limited_workspace", "fastest"}) {
    settings().Set("MXNET_CUDNN_AUTOTUNE_DEFAULT", mode);
    auto exec = Executor::Bind(TuningNet(), {});
    results.push_back(Forward(*exec));
  }
  for (size_t m = 1; m < results.size(); ++m) {
    ASSERT_EQ(results[m].size(), results[0].size());
    for (size_t i = 0; i < results[0].size(); ++i) {
      EXPECT_NEAR(results[m][i], results[0][i], 1e-4 * (1 + std::fabs(results[0][i])));
    }
  }
}

TEST_F(ConvTuningTest, AFreshTunerOverTheSameDbBenchmarksNothingAndPicksTheSame) {
  auto first = Executor::Bind(TuningNet(), {.training = true});
  // The tuner reopens its DB when the DB settings change: pointing it elsewhere and back gives a
  // fresh TuningDb (empty in-process cache) over the same file, as a new process would have.
  const std::string path = settings().GetString("MXNET_TUNING_DB_PATH");
  settings().Set("MXNET_TUNING_DB_PATH", (folder_ / "elsewhere.sqlite").string());
  Executor::Bind(TuningNet(), {});
  settings().Set("MXNET_TUNING_DB_PATH", path);

  auto second = Executor::Bind(TuningNet(), {.training = true});
  const std::vector<LayerTuning> before = first->TuningDecisions();
  const std::vector<LayerTuning> after = second->TuningDecisions();
  ASSERT_EQ(before.size(), after.size());
  int benchmarked = 0, from_db = 0;
  for (size_t i = 0; i < after.size(); ++i) {
    benchmarked += after[i].origin == PickOrigin::kBenchmark;
    from_db += after[i].origin == PickOrigin::kUserDb;
    EXPECT_EQ(after[i].record.algorithm, before[i].record.algorithm) << after[i].layer;
  }
  EXPECT_EQ(benchmarked, 0);
  EXPECT_EQ(from_db, 6);  // conv_c is off: its three picks come from the heuristic
  EXPECT_NE(second->TuningReport(false).find("6 from DB, 3 by heuristic (off), 0 benchmarked"),
            std::string::npos)
      << second->TuningReport(false);
}

// A Deconvolution (stride 2, bias, in either layout) and nothing else.
Graph DeconvolutionNet(const std::string& cudnn_tune, const std::string& layout) {
  GraphBuilder g;
  const bool nhwc = layout == "NHWC";
  Symbol x = g.Input("data", nhwc ? Shape{2, 5, 5, 4} : Shape{2, 4, 5, 5});
  std::map<std::string, std::string> attrs = {{"kernel", "(3,3)"},  {"stride", "(2,2)"},
                                              {"pad", "(1,1)"},     {"num_filter", "6"},
                                              {"no_bias", "false"}, {"layout", layout}};
  if (!cudnn_tune.empty()) attrs["cudnn_tune"] = cudnn_tune;
  return g.Build({g.Op("Deconvolution", {x}, attrs, "deconv")});
}

// A Deconvolution is tuned as its adjoint convolution: its forward is the adjoint's backward_data
// (and in training its backward the adjoint's forward and backward_filter), per its cudnn_tune
// attribute, stored in the DB, and every pick computes what the heuristic's does.
TEST_F(ConvTuningTest, DeconvolutionIsTunedAsItsAdjointConvolution) {
  for (const char* layout : {"NCHW", "NHWC"}) {
    SCOPED_TRACE(layout);
    auto fastest = Executor::Bind(DeconvolutionNet("fastest", layout), {});
    const std::vector<LayerTuning> decisions = fastest->TuningDecisions();
    ASSERT_EQ(decisions.size(), 1u);
    EXPECT_EQ(decisions[0].layer, "deconv");
    EXPECT_EQ(decisions[0].problem.direction, conv::ConvDirection::kBackwardData);
    EXPECT_EQ(decisions[0].mode.mode, conv::TuneMode::kFastest);
    EXPECT_EQ(decisions[0].mode.source, SettingSource::kAttribute);
    EXPECT_EQ(decisions[0].origin, PickOrigin::kBenchmark);
    EXPECT_GE(decisions[0].candidates_timed, 1);
    const std::string report = fastest->TuningReport(false);
    EXPECT_NE(report.find("deconv backward_data"), std::string::npos) << report;

    auto again = Executor::Bind(DeconvolutionNet("fastest", layout), {});
    EXPECT_NE(again->TuningDecisions()[0].origin, PickOrigin::kBenchmark);

    auto off = Executor::Bind(DeconvolutionNet("off", layout), {});
    ASSERT_EQ(off->TuningDecisions().size(), 1u);
    EXPECT_EQ(off->TuningDecisions()[0].origin, PickOrigin::kHeuristic);
    EXPECT_EQ(off->TuningDecisions()[0].mode.source, SettingSource::kAttribute);

    const std::vector<float> tuned = Forward(*fastest), heuristic = Forward(*off);
    ASSERT_EQ(tuned.size(), heuristic.size());
    for (size_t i = 0; i < tuned.size(); ++i) {
      EXPECT_NEAR(tuned[i], heuristic[i], 1e-4 * (1 + std::fabs(heuristic[i]))) << i;
    }
  }
  // Without the attribute the environment's default applies.
  settings().Set("MXNET_CUDNN_AUTOTUNE_DEFAULT", "off");
  auto by_default = Executor::Bind(DeconvolutionNet("", "NCHW"), {});
  EXPECT_EQ(by_default->TuningDecisions()[0].mode.source, SettingSource::kProgram);
  EXPECT_EQ(by_default->TuningDecisions()[0].origin, PickOrigin::kHeuristic);
}

// A 3-D convolution (NCDHW, stride 2 in depth) and nothing else.
Graph Convolution3dNet(const std::string& cudnn_tune) {
  GraphBuilder g;
  Symbol x = g.Input("data", {2, 3, 6, 7, 7});
  std::map<std::string, std::string> attrs = {{"kernel", "(3,3,3)"},
                                              {"stride", "(2,1,1)"},
                                              {"pad", "(1,1,1)"},
                                              {"num_filter", "4"},
                                              {"no_bias", "false"}};
  if (!cudnn_tune.empty()) attrs["cudnn_tune"] = cudnn_tune;
  return g.Build({g.Op("Convolution", {x}, attrs, "conv3d")});
}

// A 3-D convolution is tuned as the 2-D problem of its slabs (ops/conv_volume.h): N * OD = 6
// slabs of 3 * 3 channels, its cudnn_tune honoured, the picks stored in the DB, and the tuned
// and heuristic picks compute the same network, forward and backward.
TEST_F(ConvTuningTest, A3dConvolutionIsTunedAsTheProblemOfItsSlabs) {
  const BindOptions training = {.training = true, .input_gradients = {"data"}};
  auto fastest = Executor::Bind(Convolution3dNet("fastest"), training);
  const std::vector<LayerTuning> decisions = fastest->TuningDecisions();
  ASSERT_EQ(decisions.size(), 3u);
  EXPECT_EQ(decisions[0].layer, "conv3d");
  EXPECT_EQ(decisions[0].problem.direction, conv::ConvDirection::kForward);
  EXPECT_EQ(decisions[0].mode.source, SettingSource::kAttribute);
  EXPECT_EQ(decisions[0].origin, PickOrigin::kBenchmark);
  // The slabs' problem: 2 images x 3 output planes, each 3 channels x 3 depths of 7x7.
  EXPECT_EQ(decisions[0].problem.data, Shape({6, 9, 7, 7}));
  EXPECT_EQ(decisions[0].problem.weight, Shape({4, 9, 3, 3}));
  const std::string report = fastest->TuningReport(false);
  EXPECT_NE(report.find("conv3d forward"), std::string::npos) << report;

  auto again = Executor::Bind(Convolution3dNet("fastest"), training);
  for (const LayerTuning& decision : again->TuningDecisions()) {
    EXPECT_NE(decision.origin, PickOrigin::kBenchmark);
  }
  auto off = Executor::Bind(Convolution3dNet("off"), training);
  EXPECT_EQ(off->TuningDecisions()[0].origin, PickOrigin::kHeuristic);
  for (Executor* exec : {fastest.get(), off.get()}) {
    testing_support::FillRandomArguments(*exec, 5);
    exec->Forward(true);
    exec->Backward();
  }
  const std::vector<float> a = fastest->outputs()[0].ToVector<float>();
  const std::vector<float> b = off->outputs()[0].ToVector<float>();
  ASSERT_EQ(a.size(), 2u * 4 * 3 * 7 * 7);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-4 * (1 + std::fabs(b[i])));
  for (const std::string& name : {std::string("data"), std::string("conv3d_weight")}) {
    const std::vector<float> ga = fastest->Gradient(name).ToVector<float>();
    const std::vector<float> gb = off->Gradient(name).ToVector<float>();
    ASSERT_EQ(ga.size(), gb.size());
    for (size_t i = 0; i < ga.size(); ++i) {
      EXPECT_NEAR(ga[i], gb[i], 1e-4 * (1 + std::fabs(gb[i]))) << name << " " << i;
    }
  }
}

TEST_F(ConvTuningTest, TrainingTunesEveryDirectionOfADeconvolution) {
  auto tuned = Executor::Bind(DeconvolutionNet("fastest", "NCHW"), {.training = true});
  const std::vector<LayerTuning> decisions = tuned->TuningDecisions();
  ASSERT_EQ(decisions.size(), 3u);
  EXPECT_EQ(decisions[0].problem.direction, conv::ConvDirection::kBackwardData);
  EXPECT_EQ(decisions[1].problem.direction, conv::ConvDirection::kForward);
  EXPECT_EQ(decisions[2].problem.direction, conv::ConvDirection::kBackwardFilter);
  auto heuristic = Executor::Bind(DeconvolutionNet("off", "NCHW"), {.training = true});
  for (Executor* exec : {tuned.get(), heuristic.get()}) {
    testing_support::FillRandomArguments(*exec, 9);
    exec->Forward(true);
    exec->Backward();
  }
  for (const std::string& name : {std::string("deconv_weight"), std::string("deconv_bias")}) {
    const std::vector<float> a = tuned->Gradient(name).ToVector<float>();
    const std::vector<float> b = heuristic->Gradient(name).ToVector<float>();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_NEAR(a[i], b[i], 1e-4 * (1 + std::fabs(b[i]))) << name << " " << i;
    }
  }
}

// On a GPU the adjoint's directions are tuned through cuDNN's Find, and the picks compute what the
// CPU computes.
TEST_F(ConvTuningTest, OnTheGpuADeconvolutionIsTunedThroughFind) {
  if (VisibleGpuCount() == 0) GTEST_SKIP() << "no GPU visible: cuDNN tuning not exercised";
  auto gpu = Executor::Bind(DeconvolutionNet("fastest", "NCHW"),
                            {.ctx = Context::GPU(0), .training = true});
  const std::vector<LayerTuning> decisions = gpu->TuningDecisions();
  ASSERT_EQ(decisions.size(), 3u);
  EXPECT_EQ(decisions[0].problem.direction, conv::ConvDirection::kBackwardData);
  EXPECT_EQ(decisions[0].mode.source, SettingSource::kAttribute);
  auto cpu = Executor::Bind(DeconvolutionNet("off", "NCHW"), {.training = true});
  for (Executor* exec : {gpu.get(), cpu.get()}) {
    testing_support::FillRandomArguments(*exec, 13);
    exec->Forward(true);
    exec->Backward();
  }
  const std::vector<float> a = gpu->outputs()[0].ToVector<float>();
  const std::vector<float> b = cpu->outputs()[0].ToVector<float>();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-4 * (1 + std::fabs(b[i])));
  const std::vector<float> ga = gpu->Gradient("deconv_weight").ToVector<float>();
  const std::vector<float> gb = cpu->Gradient("deconv_weight").ToVector<float>();
  for (size_t i = 0; i < ga.size(); ++i) EXPECT_NEAR(ga[i], gb[i], 1e-4 * (1 + std::fabs(gb[i])));
}

TEST_F(ConvTuningTest, DeterminismLeavesOnlyDeterministicCandidates) {
  settings().Set("MXNET_ENFORCE_DETERMINISM", "1");
  auto exec = Executor::Bind(TuningNet(), {});
  for (const LayerTuning& d : exec->TuningDecisions()) {
    EXPECT_TRUE(d.policy.deterministic_only);
    EXPECT_NE(d.problem.ToString().find("det=1"), std::string::npos);
  }
}

}  // namespace
}  // namespace mxlite
