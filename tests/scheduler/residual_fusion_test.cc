// Residual-addition fusion (scheduler/graph/fusion.h): which additions fold into a convolution and
// which do not (a convolution read twice, one with a fused activation, a graph output, unequal
// shapes), what the fused node looks like, that executors compute the bits of the unfused graph
// under every convolution plan (a relu after the addition folding into the same store) and on the
// GPU, and that training executors and MXNET_CONV_FUSE_RESIDUAL=0 keep the additions; the fused
// Convolution's own errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <map>

#include "core/build_info.h"
#include "core/error.h"
#include "core/settings.h"
#include "scheduler/graph/executor.h"
#include "scheduler/graph/fusion.h"
#include "scheduler/graph/graph_builder.h"
#include "scheduler/graph/infer_shapes.h"
#include "tests/scheduler/random_arguments.h"

namespace mxlite {
namespace {

namespace fs = std::filesystem;

// s1 = c1 + data (fused; a relu reads it); s2 = r1 + c2 (fused: the convolution second);
// s3 = r3 + s2 (r3 is a relu, not a convolution); s4 = c4 + s3 with c4 also read by c5 (not
// fused); s5 = c5 + s4 is a graph output (not fused); b6 = c6 + c7 of unequal shapes (not fused).
Graph ResidualNet() {
  GraphBuilder g;
  Symbol x = g.Input("data", {2, 8, 10, 10});
  Symbol r1 = g.Relu(
      g.Add(g.Conv(x, {.num_filter = 8, .kernel = {3, 3}, .pad = {1, 1}}, "c1"), x, "s1"), "r1");
  Symbol s2 = g.Add(r1, g.Conv(r1, {.num_filter = 8, .kernel = {1, 1}}, "c2"), "s2");
  Symbol r3 = g.Relu(g.Conv(s2, {.num_filter = 8, .kernel = {3, 3}, .pad = {1, 1}}, "c3"), "r3");
  Symbol s3 = g.Add(r3, s2, "s3");
  Symbol c4 = g.Conv(s3, {.num_filter = 8, .kernel = {1, 1}}, "c4");
  Symbol s4 = g.Add(c4, s3, "s4");
  Symbol s5 = g.Add(g.Conv(c4, {.num_filter = 8, .kernel = {1, 1}}, "c5"), s4, "s5");
  Symbol b6 = g.Add(g.Conv(s4, {.num_filter = 8, .kernel = {1, 1}}, "c6"),
                    g.Conv(s4, {.num_filter = 8, .kernel = {10, 10}}, "c7"), "b6");
  return g.Build({s5, b6});
}

class ResidualFusionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    folder_ =
        fs::temp_directory_path() / ("mxlite_residual_fusion_test_" + std::to_string(getpid()) +
                                     "_" + std::to_string(counter++));
    fs::remove_all(folder_);
    settings().Set("MXNET_TUNING_DB_PATH", (folder_ / "tuning.sqlite").string());
  }
  void TearDown() override {
    for (const char* name : {"MXNET_TUNING_DB_PATH", "MXNET_CONV_FUSE_RESIDUAL"}) {
      settings().Reset(name);
    }
    fs::remove_all(folder_);
  }

  fs::path folder_;
};

TEST_F(ResidualFusionTest, FoldsOnlyAdditionsOfAConvolutionItAloneReads) {
  const Graph source = ResidualNet();
  const ResidualFusionResult result = FuseResidualAdditions(source, InferGraphShapes(source, {}));
  ASSERT_EQ(result.fused.size(), 2u);
  EXPECT_EQ(result.fused[0].convolution, "c1");
  EXPECT_EQ(result.fused[0].addition, "s1");
  EXPECT_EQ(result.fused[1].convolution, "c2");
  EXPECT_EQ(result.fused[1].addition, "s2");

  const Graph& fused = result.graph;
  for (const char* gone : {"s1", "s2"}) EXPECT_FALSE(fused.HasName(gone)) << gone;
  for (const char* kept : {"s3", "s4", "s5", "b6", "r1", "r3"}) {
    EXPECT_TRUE(fused.HasName(kept)) << kept;
  }
  // c1 adds the graph input; c2 adds r1, which is also its data; readers of s1 / s2 read them.
  const Node& c1 = fused.node(fused.Find("c1"));
  EXPECT_TRUE(c1.attrs.GetBool("residual"));
  ASSERT_EQ(c1.inputs.size(), 4u);  // data, weight, bias, residual
  EXPECT_EQ(c1.inputs[3].node, fused.Find("data"));
  const Node& c2 = fused.node(fused.Find("c2"));
  ASSERT_EQ(c2.inputs.size(), 4u);
  EXPECT_EQ(c2.inputs[3].node, fused.Find("r1"));
  EXPECT_EQ(fused.node(fused.Find("r1")).inputs[0].node, fused.Find("c1"));
  EXPECT_EQ(fused.node(fused.Find("c3")).inputs[0].node, fused.Find("c2"));
  for (const char* plain : {"c3", "c4", "c5", "c6", "c7"}) {
    EXPECT_FALSE(fused.node(fused.Find(plain)).attrs.GetBool("residual")) << plain;
  }
  EXPECT_TRUE(source.HasName("s1"));  // the source is untouched
  // Nothing left to fold the second time.
  EXPECT_TRUE(FuseResidualAdditions(fused, InferGraphShapes(fused, {})).fused.empty());

  EXPECT_EQ(FormatResidualFusions(result.fused, false),
            "fused 2 residual additions into convolutions (MXNET_CONV_FUSE_RESIDUAL)");
  EXPECT_NE(FormatResidualFusions(result.fused, true).find("\n  c2 <- s2"), std::string::npos);
}

// clamp(conv) + x is not clamp(conv + x): a convolution with a fused activation keeps its addition.
TEST_F(ResidualFusionTest, AConvolutionWithAFusedActivationKeepsItsAddition) {
  GraphBuilder g;
  Symbol x = g.Input("data", {1, 4, 6, 6});
  Symbol r = g.Relu(g.Conv(x, {.num_filter = 4, .kernel = {1, 1}}, "c"), "r");
  const Graph source = g.Build({g.Add(r, x, "s")});
  const Graph activated = FuseClampActivations(source).graph;
  ASSERT_FALSE(activated.HasName("r"));
  EXPECT_TRUE(FuseResidualAdditions(activated, InferGraphShapes(activated, {})).fused.empty());
}

std::vector<std::vector<float>> RunInference(const Graph& graph, const BindOptions& options,
                                             const Executor** keep = nullptr,
                                             std::unique_ptr<Executor>* owner = nullptr) {
  auto exec = Executor::Bind(graph, options);
  testing_support::FillRandomArguments(*exec, 7);
  exec->Forward(false);
  std::vector<std::vector<float>> outputs;
  for (const NDArray& output : exec->outputs()) outputs.push_back(output.ToVector<float>());
  if (owner != nullptr) {
    *keep = exec.get();
    *owner = std::move(exec);
  }
  return outputs;
}

// The fused store computes ((sum + bias) + residual) then the clamp, as the separate ops do, and
// the unfused executor under the same plan tunes the same algorithms (one tuning DB): equal bits
// as written. A planned executor may place a layer otherwise when fused (the planner charges a
// foldable addition on its partner's edge, and close costs are decided by timing), and another
// layout runs another algorithm: there the sums agree to rounding.
TEST_F(ResidualFusionTest, FusedExecutorsComputeTheBitsOfUnfusedOnes) {
  const Graph graph = ResidualNet();
  for (ConvPlanKind plan : {ConvPlanKind::kNone, ConvPlanKind::kLocal, ConvPlanKind::kGlobal}) {
    SCOPED_TRACE(ConvPlanKindName(plan));
    const std::vector<std::vector<float>> expected =
        RunInference(graph, {.conv_plan = plan, .fuse_residual = false});
    const Executor* fused = nullptr;
    std::unique_ptr<Executor> owner;
    const std::vector<std::vector<float>> actual =
        RunInference(graph, {.conv_plan = plan, .fuse_residual = true}, &fused, &owner);
    if (plan == ConvPlanKind::kNone) {
      EXPECT_EQ(actual, expected);
    } else {
      ASSERT_EQ(actual.size(), expected.size());
      for (size_t o = 0; o < actual.size(); ++o) {
        ASSERT_EQ(actual[o].size(), expected[o].size());
        for (size_t i = 0; i < actual[o].size(); ++i) {
          // Winograd's transforms round differently from a direct sum: up to about 2e-5 of
          // values near 1 here (seen when a loaded machine's timings picked it in one executor).
          ASSERT_NEAR(actual[o][i], expected[o][i], 1e-4f * (1.0f + std::abs(expected[o][i])))
              << "output " << o << " element " << i;
        }
      }
    }
    // A plan that moves c1 and data to different layouts puts a transform between c1 and s1,
    // which then reads no convolution.
    if (plan != ConvPlanKind::kNone) continue;
    ASSERT_EQ(fused->fused_residuals().size(), 2u);
    // r1 read s1, which is c1 now: the activation fusion after it folds r1 into c1 too.
    const Graph& run = fused->graph();
    EXPECT_FALSE(run.HasName("s1"));
    EXPECT_FALSE(run.HasName("r1"));
    const Node& c1 = run.node(run.Find("c1"));
    EXPECT_TRUE(c1.attrs.GetBool("residual"));
    EXPECT_EQ(c1.attrs.GetFloat("act_min"), 0.0);
  }
}

// In NCHW16c the fused convolution writes its output over its residual (Convolution's
// inplace_with): the same bits as with in-place sharing off, and the residual's block is shared.
TEST_F(ResidualFusionTest, Nchw16cResidualsAreAddedInPlace) {
  GraphBuilder g;
  const std::map<std::string, std::string> attrs = {
      {"kernel", "(3,3)"}, {"pad", "(1,1)"}, {"num_filter", "32"}, {"layout", "NCHW16c"}};
  Symbol x = g.Relu(g.Input("data", {2, 2, 7, 9, 16}), "x");
  Symbol c1 = g.Op("Convolution", {x}, attrs, "c1");
  Symbol c2 = g.Op("Convolution", {g.Relu(c1, "r1")}, attrs, "c2");
  const Graph graph = g.Build({g.Relu(g.Add(c2, x, "s"), "out")});
  const BindOptions options{.conv_plan = ConvPlanKind::kNone, .fuse_residual = true};
  const Executor* in_place = nullptr;
  std::unique_ptr<Executor> owner;
  const std::vector<std::vector<float>> actual = RunInference(graph, options, &in_place, &owner);
  ASSERT_EQ(in_place->fused_residuals().size(), 1u);
  // c2 over x, and one more that the plan makes whether or not the residual is shared.
  EXPECT_EQ(in_place->memory_report().inplace_count, 2);
  settings().Set("MXNET_EXEC_ENABLE_INPLACE", "0");
  const std::vector<std::vector<float>> expected = RunInference(graph, options);
  settings().Reset("MXNET_EXEC_ENABLE_INPLACE");
  EXPECT_EQ(actual, expected);
}

// On the GPU the fused convolution adds its bias and residual and clamps in one kernel after
// cuDNN's, rounding as the separate bias, addition and relu kernels do: the same bits again (one
// tuning DB, so both executors run the same cuDNN algorithms).
TEST_F(ResidualFusionTest, OnTheGpuFusedExecutorsComputeTheBitsOfUnfusedOnes) {
  if (VisibleGpuCount() == 0) GTEST_SKIP() << "no GPU visible: GPU fusion not exercised";
  const Graph graph = ResidualNet();
  const BindOptions apart = {.ctx = Context::GPU(0),
                             .conv_plan = ConvPlanKind::kNone,
                             .fuse_activations = false,
                             .fuse_residual = false};
  BindOptions together = apart;
  together.fuse_activations = together.fuse_residual = true;
  const std::vector<std::vector<float>> expected = RunInference(graph, apart);
  const Executor* fused = nullptr;
  std::unique_ptr<Executor> owner;
  EXPECT_EQ(RunInference(graph, together, &fused, &owner), expected);
  EXPECT_EQ(fused->fused_residuals().size(), 2u);
  EXPECT_FALSE(fused->fused_activations().empty());
  EXPECT_FALSE(fused->graph().HasName("r1"));
}

TEST_F(ResidualFusionTest, TrainingAndTheSettingKeepAdditionsSeparate) {
  const Graph graph = ResidualNet();
  constexpr ConvPlanKind kNone = ConvPlanKind::kNone;  // layouts as written: no transforms
  auto training =
      Executor::Bind(graph, {.training = true, .conv_plan = kNone, .fuse_residual = true});
  EXPECT_TRUE(training->fused_residuals().empty());
  EXPECT_TRUE(training->graph().HasName("s1"));

  settings().Set("MXNET_CONV_FUSE_RESIDUAL", "0");
  auto off = Executor::Bind(graph, {.conv_plan = kNone});
  EXPECT_TRUE(off->fused_residuals().empty());
  EXPECT_TRUE(off->graph().HasName("s1"));
  settings().Set("MXNET_CONV_FUSE_RESIDUAL", "1");
  auto on = Executor::Bind(graph, {.conv_plan = kNone});
  EXPECT_EQ(on->fused_residuals().size(), 2u);
  EXPECT_FALSE(on->graph().HasName("s1"));
  // The bind option wins over the setting.
  auto option_off = Executor::Bind(graph, {.conv_plan = kNone, .fuse_residual = false});
  EXPECT_TRUE(option_off->fused_residuals().empty());
}

// A hand-written fused Convolution: its residual input takes the output's shape, a wrong one is
// an error naming the node, and a training executor refuses it (no backward).
TEST_F(ResidualFusionTest, AFusedConvolutionChecksItsResidualAndRefusesTraining) {
  const auto build = [](const Shape& residual_shape) {
    GraphBuilder g;
    Symbol x = g.Input("data", {1, 4, 6, 6});
    Symbol shortcut = g.Input("shortcut", residual_shape);
    Symbol w = g.Parameter("c_weight");
    Symbol b = g.Parameter("c_bias");
    return g.Build({g.Op(
        "Convolution", {x, w, b, shortcut},
        {{"kernel", "(3,3)"}, {"pad", "(1,1)"}, {"num_filter", "5"}, {"residual", "true"}}, "c")});
  };
  const Graph good = build(Shape{1, 5, 6, 6});
  EXPECT_EQ(InferGraphShapes(good, {}).of(good.node(good.Find("c")).inputs[3]),
            (Shape{1, 5, 6, 6}));
  try {
    const Graph bad = build(Shape{1, 4, 6, 6});
    InferGraphShapes(bad, {});
    FAIL() << "a residual of the wrong shape was accepted";
  } catch (const Error& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("Convolution c"), std::string::npos) << what;
    EXPECT_NE(what.find("residual"), std::string::npos) << what;
  }
  auto training = Executor::Bind(good, {.training = true, .input_gradients = {"data"}});
  training->Forward(true);
  try {
    training->Backward();
    training->Gradient("data").WaitToRead();
    FAIL() << "a fused residual ran backward";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("fused residual addition"), std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace mxlite
