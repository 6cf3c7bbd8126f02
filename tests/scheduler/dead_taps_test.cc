// Dead kernel taps (scheduler/graph/dead_taps.h): a dilation that reaches past the data and a 3x3
// kernel on a 1x1 map are cut to their live taps (the weight sliced, the padding shrunk); taps
// that all read data, and trims that would need uneven padding, stay; NHWC weights are sliced on
// their own axes; trimmed executors compute what untrimmed ones do, forward and backward; the
// setting and the bind option turn it off.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/build_info.h"
#include "core/settings.h"
#include "scheduler/graph/dead_taps.h"
#include "scheduler/graph/executor.h"
#include "scheduler/graph/graph_builder.h"
#include "tests/scheduler/random_arguments.h"

namespace mxlite {
namespace {

// On a 6x6 map: far (dilation 8: only the centre tap reads data), near (dilation 2: every tap
// does); on a 1x1 map: small (3x3, pad 1: the centre); on a 2x2 map: strided (3x3, stride 2,
// pad 1: the first row and column are dead, but the trimmed kernel would need uneven padding).
Graph AtrousNet() {
  GraphBuilder g;
  Symbol x = g.Input("data", {2, 8, 6, 6});
  Symbol far =
      g.Conv(x, {.num_filter = 4, .kernel = {3, 3}, .pad = {8, 8}, .dilate = {8, 8}}, "far");
  Symbol near =
      g.Conv(x, {.num_filter = 4, .kernel = {3, 3}, .pad = {2, 2}, .dilate = {2, 2}}, "near");
  Symbol small = g.Conv(g.GlobalAvgPool(x, "pool"),
                        {.num_filter = 4, .kernel = {3, 3}, .pad = {1, 1}}, "small");
  Symbol pooled = g.AvgPool(x, {.kernel = {3, 3}, .stride = {3, 3}}, "pool2");
  Symbol strided = g.Conv(
      pooled, {.num_filter = 4, .kernel = {3, 3}, .stride = {2, 2}, .pad = {1, 1}}, "strided");
  return g.Build({far, near, small, strided});
}

TEST(DeadTapsTest, CutsOnlyTapsThatReadPaddingAlone) {
  const Graph graph = AtrousNet();
  const DeadTapsResult result = TrimDeadKernelTaps(graph, InferGraphShapes(graph));
  ASSERT_EQ(result.trimmed.size(), 2u);
  EXPECT_EQ(result.trimmed[0], (TrimmedConvolution{"far", {3, 3}, {1, 1}}));
  EXPECT_EQ(result.trimmed[1], (TrimmedConvolution{"small", {3, 3}, {1, 1}}));
  const Graph& trimmed = result.graph;
  const Node& far = trimmed.node(trimmed.Find("far"));
  EXPECT_EQ(far.attr_text.at("kernel"), "(1,1)");
  EXPECT_EQ(far.attr_text.at("pad"), "(0,0)");
  const Node& slice = trimmed.node(far.inputs[1].node);
  EXPECT_EQ(slice.name, "far_live_taps");
  EXPECT_EQ(slice.op->name, "slice");
  EXPECT_EQ(slice.attr_text.at("begin"), "(0,0,1,1)");
  EXPECT_EQ(slice.attr_text.at("end"), "(4,8,2,2)");
  EXPECT_EQ(trimmed.node(slice.inputs[0].node).name, "far_weight");
  EXPECT_EQ(trimmed.node(trimmed.Find("near")).attr_text.at("kernel"), "(3,3)");
  EXPECT_EQ(trimmed.node(trimmed.Find("strided")).attr_text.at("kernel"), "(3,3)");
  // The outputs keep their shapes.
  const GraphShapes before = InferGraphShapes(graph), after = InferGraphShapes(trimmed);
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    EXPECT_EQ(before.of(graph.outputs()[i]), after.of(trimmed.outputs()[i])) << "output " << i;
  }
  EXPECT_EQ(FormatTrimmedTaps(result.trimmed, false),
            "trimmed dead kernel taps of 2 convolutions (MXNET_CONV_TRIM_DEAD_TAPS)");
  EXPECT_NE(FormatTrimmedTaps(result.trimmed, true).find("\n  far: kernel (3,3) -> (1,1)"),
            std::string::npos);
}

TEST(DeadTapsTest, SlicesChannelsLastWeightsOnTheirSpatialAxes) {
  GraphBuilder g;
  Symbol x = g.Input("data", {1, 5, 7, 3});
  // Height 5 at dilation 6: one live row; width 7 at dilation 3: every column reads data.
  Symbol y = g.Conv(
      x, {.num_filter = 2, .kernel = {3, 3}, .pad = {6, 3}, .dilate = {6, 3}, .layout = "NHWC"},
      "y");
  const Graph graph = g.Build({y});
  const DeadTapsResult result = TrimDeadKernelTaps(graph, InferGraphShapes(graph));
  ASSERT_EQ(result.trimmed.size(), 1u);
  EXPECT_EQ(result.trimmed[0].kernel_after, (std::vector<int64_t>{1, 3}));
  const Node& conv = result.graph.node(result.graph.Find("y"));
  EXPECT_EQ(conv.attr_text.at("pad"), "(0,3)");
  const Node& slice = result.graph.node(conv.inputs[1].node);
  EXPECT_EQ(slice.attr_text.at("begin"), "(0,1,0,0)");
  EXPECT_EQ(slice.attr_text.at("end"), "(2,2,3,3)");
}

// Binds AtrousNet with and without trimming on `ctx` and compares outputs (and, training, every
// parameter's gradient).
void ExpectTrimmedComputesWhatUntrimmedDoes(const Context& ctx) {
  const Graph graph = AtrousNet();
  for (bool training : {false, true}) {
    SCOPED_TRACE(training ? "training" : "inference");
    BindOptions whole{.ctx = ctx, .training = training, .trim_dead_taps = false};
    BindOptions trimmed = whole;
    trimmed.trim_dead_taps = true;
    auto whole_exec = Executor::Bind(graph, whole);
    auto trimmed_exec = Executor::Bind(graph, trimmed);
    EXPECT_TRUE(whole_exec->trimmed_convolutions().empty());
    EXPECT_EQ(trimmed_exec->trimmed_convolutions().size(), 2u);
    EXPECT_EQ(whole_exec->ParameterNames(), trimmed_exec->ParameterNames());
    const auto expected = testing_support::OutputsAndGradients(*whole_exec, 5, training);
    const auto actual = testing_support::OutputsAndGradients(*trimmed_exec, 5, training);
    ASSERT_EQ(expected.size(), actual.size());
    // Another algorithm may sum in another order: equal to rounding. The dead taps' weight
    // gradients are zero in both.
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_EQ(expected[i].size(), actual[i].size());
      for (size_t k = 0; k < expected[i].size(); ++k) {
        ASSERT_NEAR(expected[i][k], actual[i][k], 1e-5 * (1 + std::abs(expected[i][k])))
            << "value " << i << " element " << k;
      }
    }
  }
}

TEST(DeadTapsTest, TrimmedExecutorsComputeWhatUntrimmedOnesDo) {
  ExpectTrimmedComputesWhatUntrimmedDoes(Context::CPU());
}

TEST(DeadTapsTest, OnTheGpuTrimmedExecutorsComputeWhatUntrimmedOnesDo) {
  if (VisibleGpuCount() == 0) GTEST_SKIP() << "no GPU visible: GPU trimming not exercised";
  ExpectTrimmedComputesWhatUntrimmedDoes(Context::GPU(0));
}

TEST(DeadTapsTest, TheSettingAndTheBindOptionTurnItOff) {
  settings().Set("MXNET_CONV_TRIM_DEAD_TAPS", "0");
  EXPECT_TRUE(Executor::Bind(AtrousNet(), {})->trimmed_convolutions().empty());
  EXPECT_EQ(Executor::Bind(AtrousNet(), {.trim_dead_taps = true})->trimmed_convolutions().size(),
            2u);
  settings().Reset("MXNET_CONV_TRIM_DEAD_TAPS");
  EXPECT_EQ(Executor::Bind(AtrousNet(), {})->trimmed_convolutions().size(), 2u);
  EXPECT_TRUE(
      Executor::Bind(AtrousNet(), {.trim_dead_taps = false})->trimmed_convolutions().empty());
}

}  // namespace
}  // namespace mxlite
