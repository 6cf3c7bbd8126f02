// Activation fusion (scheduler/graph/fusion.h): which relu / clip nodes fold into their convolution
// and which do not (several readers, graph outputs, other activations), the attributes the fused
// node gets, that fused executors compute what unfused ones do under every convolution plan, and
// that training executors, GPU executors and MXNET_CONV_FUSE_ACTIVATION=0 do not fuse.
#include "scheduler/graph/fusion.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>

#include "core/settings.h"
#include "scheduler/graph/executor.h"
#include "scheduler/graph/graph_builder.h"
#include "tests/scheduler/outputs_near.h"
#include "tests/scheduler/random_arguments.h"

namespace mxlite {
namespace {

namespace fs = std::filesystem;

// c1 -> relu (fused); c2 -> clip [0, 6] (fused); c3 read by its relu and by the Add (not fused);
// c4 -> clip with only a_max (fused); c5 -> relu that is a graph output (not fused); c6 -> sigmoid
// (not a clamp).
Graph FusionNet() {
  GraphBuilder g;
  Symbol x = g.Input("data", {2, 4, 10, 10});
  Symbol r1 = g.Relu(g.Conv(x, {.num_filter = 8, .kernel = {3, 3}, .pad = {1, 1}}, "c1"), "r1");
  Symbol k2 = g.Op("clip", {g.Conv(r1, {.num_filter = 8, .kernel = {1, 1}}, "c2")},
                   {{"a_min", "0"}, {"a_max", "6"}}, "k2");
  Symbol c3 = g.Conv(k2, {.num_filter = 8, .kernel = {3, 3}, .pad = {1, 1}}, "c3");
  Symbol sum = g.Add(c3, g.Relu(c3, "r3"), "sum");
  Symbol k4 = g.Op("clip", {g.Conv(sum, {.num_filter = 8, .kernel = {1, 1}}, "c4")},
                   {{"a_max", "1"}}, "k4");
  Symbol r5 = g.Relu(g.Conv(k4, {.num_filter = 4, .kernel = {3, 3}, .stride = {2, 2}}, "c5"), "r5");
  Symbol s6 = g.Sigmoid(g.Conv(k4, {.num_filter = 4, .kernel = {1, 1}}, "c6"), "s6");
  return g.Build({r5, s6});
}

class FusionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    folder_ = fs::temp_directory_path() /
              ("mxlite_fusion_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(folder_);
    settings().Set("MXNET_TUNING_DB_PATH", (folder_ / "tuning.sqlite").string());
  }
  void TearDown() override {
    for (const char* name : {"MXNET_TUNING_DB_PATH", "MXNET_CONV_FUSE_ACTIVATION"}) {
      settings().Reset(name);
    }
    fs::remove_all(folder_);
  }

  fs::path folder_;
};

TEST_F(FusionTest, FoldsOnlyClampsThatAloneReadAConvolution) {
  const Graph source = FusionNet();
  const FusionResult result = FuseClampActivations(source);
  ASSERT_EQ(result.fused.size(), 3u);
  EXPECT_EQ(result.fused[0].producer, "c1");
  EXPECT_EQ(result.fused[0].activation, "r1");
  EXPECT_EQ(result.fused[0].clamp, "relu");
  EXPECT_EQ(result.fused[1].producer, "c2");
  EXPECT_EQ(result.fused[1].clamp, "clip [0, 6]");
  EXPECT_EQ(result.fused[2].producer, "c4");
  EXPECT_EQ(result.fused[2].clamp, "clip [-inf, 1]");

  const Graph& fused = result.graph;
  for (const char* gone : {"r1", "k2", "k4"}) EXPECT_FALSE(fused.HasName(gone)) << gone;
  for (const char* kept : {"r3", "r5", "s6", "c3", "c5", "c6"}) {
    EXPECT_TRUE(fused.HasName(kept)) << kept;
  }
  const Attributes& c1 = fused.node(fused.Find("c1")).attrs;
  EXPECT_EQ(c1.GetFloat("act_min"), 0.0);
  EXPECT_FALSE(c1.Has("act_max"));
  const Attributes& c2 = fused.node(fused.Find("c2")).attrs;
  EXPECT_EQ(c2.GetFloat("act_min"), 0.0);
  EXPECT_EQ(c2.GetFloat("act_max"), 6.0);
  const Attributes& c4 = fused.node(fused.Find("c4")).attrs;
  EXPECT_FALSE(c4.Has("act_min"));
  EXPECT_EQ(c4.GetFloat("act_max"), 1.0);
  for (const char* plain : {"c3", "c5", "c6"}) {
    EXPECT_FALSE(fused.node(fused.Find(plain)).attrs.Has("act_min")) << plain;
  }
  // Readers of a folded activation read its convolution; the source graph is untouched.
  EXPECT_EQ(fused.node(fused.Find("c2")).inputs[0].node, fused.Find("c1"));
  EXPECT_EQ(fused.node(fused.Find("c3")).inputs[0].node, fused.Find("c2"));
  EXPECT_TRUE(source.HasName("r1"));
  EXPECT_FALSE(source.node(source.Find("c1")).attrs.Has("act_min"));
  // Nothing left to fold the second time.
  EXPECT_TRUE(FuseClampActivations(fused).fused.empty());

  EXPECT_EQ(FormatFusions(result.fused, false),
            "fused 3 activations into the ops before them (MXNET_CONV_FUSE_ACTIVATION)");
  EXPECT_NE(FormatFusions(result.fused, true).find("\n  c2 <- k2 (clip [0, 6])"),
            std::string::npos);
}

std::vector<std::vector<float>> RunInference(const Graph& graph, const BindOptions& options,
                                             std::vector<FusedActivation>* fused = nullptr) {
  auto exec = Executor::Bind(graph, options);
  testing_support::FillRandomArguments(*exec, 5);
  exec->Forward(false);
  std::vector<std::vector<float>> outputs;
  for (const NDArray& output : exec->outputs()) outputs.push_back(output.ToVector<float>());
  if (fused != nullptr) *fused = exec->fused_activations();
  return outputs;
}

// Against the unfused executor under the same plan. Another plan may run a layer with another
// algorithm (Winograd F(4x4) is good to ~1e-4 relative, ops/cpu/conv_algorithms.h), hence the bound
// relative to the output's largest magnitude, as in conv_planning_test.cc.
TEST_F(FusionTest, FusedExecutorsComputeWhatUnfusedOnesDo) {
  const Graph graph = FusionNet();
  for (ConvPlanKind plan : {ConvPlanKind::kNone, ConvPlanKind::kLocal, ConvPlanKind::kGlobal}) {
    SCOPED_TRACE(ConvPlanKindName(plan));
    const std::vector<std::vector<float>> expected =
        RunInference(graph, {.conv_plan = plan, .fuse_activations = false});
    std::vector<FusedActivation> fused;
    const std::vector<std::vector<float>> actual =
        RunInference(graph, {.conv_plan = plan, .fuse_activations = true}, &fused);
    EXPECT_EQ(fused.size(), 3u);
    testing_support::ExpectOutputsNear(expected, actual, 1e-4);
  }
}

// DenseNet's pre-activation: a BatchNorm of a concatenation, then a relu, then a convolution. The
// relu folds into the BatchNorm (it cannot fold into a convolution: none writes the concatenation);
// a BatchNorm read twice keeps its relu. 32 channels, so planned executors may run the
// BatchNorms in NCHW16c, where the blocked kernel clamps.
Graph DenseNet() {
  GraphBuilder g;
  Symbol x = g.Input("data", {1, 16, 8, 8});
  Symbol c1 = g.Conv(x, {.num_filter = 16, .kernel = {3, 3}, .pad = {1, 1}}, "c1");
  Symbol cat = g.Concat({x, c1}, 1, "cat");
  Symbol r1 = g.Relu(g.BatchNorm(cat, {}, "bn1"), "r1");
  Symbol c2 = g.Conv(r1, {.num_filter = 32, .kernel = {1, 1}}, "c2");
  Symbol bn2 = g.BatchNorm(c2, {}, "bn2");
  Symbol r2 = g.Relu(bn2, "r2");
  return g.Build({g.Add(r2, bn2, "both"), g.Relu(g.BatchNorm(cat, {}, "bn3"), "r3")});
}

TEST_F(FusionTest, ClampsFoldIntoBatchNorms) {
  const FusionResult result = FuseClampActivations(DenseNet());
  ASSERT_EQ(result.fused.size(), 1u);
  EXPECT_EQ(result.fused[0].producer, "bn1");
  EXPECT_EQ(result.fused[0].activation, "r1");
  EXPECT_EQ(result.graph.node(result.graph.Find("bn1")).attrs.GetFloat("act_min"), 0.0);
  EXPECT_TRUE(result.graph.HasName("r2"));  // bn2 is read twice
  EXPECT_TRUE(result.graph.HasName("r3"));  // r3 is a graph output

  for (ConvPlanKind plan : {ConvPlanKind::kNone, ConvPlanKind::kGlobal}) {
    SCOPED_TRACE(ConvPlanKindName(plan));
    const Graph graph = DenseNet();
    const std::vector<std::vector<float>> expected =
        RunInference(graph, {.conv_plan = plan, .fuse_activations = false});
    std::vector<FusedActivation> fused;
    const std::vector<std::vector<float>> actual =
        RunInference(graph, {.conv_plan = plan, .fuse_activations = true}, &fused);
    ASSERT_FALSE(fused.empty());
    EXPECT_EQ(fused[0].producer, "bn1");
    testing_support::ExpectOutputsNear(expected, actual, 1e-5);
  }
}

TEST_F(FusionTest, TrainingAndTheSettingKeepActivationsSeparate) {
  const Graph graph = FusionNet();
  auto training = Executor::Bind(graph, {.training = true, .fuse_activations = true});
  EXPECT_TRUE(training->fused_activations().empty());
  EXPECT_TRUE(training->graph().HasName("r1"));

  settings().Set("MXNET_CONV_FUSE_ACTIVATION", "0");
  auto off = Executor::Bind(graph, {});
  EXPECT_TRUE(off->fused_activations().empty());
  EXPECT_TRUE(off->graph().HasName("r1"));
  settings().Set("MXNET_CONV_FUSE_ACTIVATION", "1");
  auto on = Executor::Bind(graph, {});
  EXPECT_EQ(on->fused_activations().size(), 3u);
  EXPECT_FALSE(on->graph().HasName("r1"));
  // The bind option wins over the setting.
  auto option_off = Executor::Bind(graph, {.fuse_activations = false});
  EXPECT_TRUE(option_off->fused_activations().empty());
}

}  // namespace
}  // namespace mxlite
