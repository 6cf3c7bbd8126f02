// Depthwise-block fusion (scheduler/graph/fusion.h): which convolutions a depthwise convolution
// takes in (a 1x1 that alone feeds it, a 1x1 that alone reads it; not one read elsewhere, not a
// graph output, not NCHW), the fused node's attributes and inputs, the size threshold, and that
// fused executors compute what unfused ones do on 1 and 2 threads and both GEMMs; a residual
// addition after a block folding into its projection; training executors and
// MXNET_CONV_FUSE_DEPTHWISE=0 do not fuse.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>

#include "core/error.h"
#include "core/settings.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/parallel.h"
#include "scheduler/graph/executor.h"
#include "scheduler/graph/fusion.h"
#include "scheduler/graph/graph_builder.h"
#include "tests/scheduler/outputs_near.h"
#include "tests/scheduler/random_arguments.h"

namespace mxlite {
namespace {

namespace fs = std::filesystem;

// Untimed (cudnn_tune off): the heuristic's algorithms, so binding these large layers is quick.
ConvOptions Pointwise(int64_t filters) {
  return {.num_filter = filters, .kernel = {1, 1}, .cudnn_tune = "off", .layout = "NHWC"};
}
ConvOptions Depthwise(int64_t channels, int64_t stride) {
  return {.num_filter = channels,
          .kernel = {3, 3},
          .stride = {stride, stride},
          .pad = {1, 1},
          .num_group = channels,
          .cudnn_tune = "off",
          .layout = "NHWC"};
}

// b1: e1 -> relu6 -> d1 -> relu6 -> p1, + data (a residual block, fused whole).
// b2: d2 (stride 2) -> p2, p2 also read by the head (so d2 takes in p2 but not more).
// b3: e3 -> d3, d3 a graph output (expansion only).
// e4 -> d4 where e4 is read twice (d4 takes in nothing: no block).
Graph BlocksNet(int64_t size, int64_t channels) {
  GraphBuilder g;
  Symbol x = g.Input("data", {2, size, size, 32});
  const auto relu6 = [&g](Symbol s, const std::string& name) {
    return g.Op("clip", {s}, {{"a_min", "0"}, {"a_max", "6"}}, name);
  };
  Symbol e1 = relu6(g.Conv(x, Pointwise(channels), "e1"), "e1_relu");
  Symbol d1 = relu6(g.Conv(e1, Depthwise(channels, 1), "d1"), "d1_relu");
  Symbol sum = g.Add(g.Conv(d1, Pointwise(32), "p1"), x, "sum");
  Symbol p2 = g.Conv(g.Conv(sum, Depthwise(32, 2), "d2"), Pointwise(16), "p2");
  Symbol d3 = g.Conv(g.Conv(p2, Pointwise(32), "e3"), Depthwise(32, 1), "d3");
  Symbol e4 = g.Conv(p2, Pointwise(16), "e4");
  Symbol d4 = g.Add(g.Conv(e4, Depthwise(16, 1), "d4"), e4, "d4_sum");
  return g.Build({d3, g.Add(p2, p2, "head"), d4});
}

class DepthwiseFusionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    folder_ = fs::temp_directory_path() / ("mxlite_dw_fusion_test_" + std::to_string(getpid()) +
                                           "_" + std::to_string(counter++));
    fs::remove_all(folder_);
    settings().Set("MXNET_TUNING_DB_PATH", (folder_ / "tuning.sqlite").string());
  }
  void TearDown() override {
    for (const char* name : {"MXNET_TUNING_DB_PATH", "MXNET_CONV_FUSE_DEPTHWISE"}) {
      settings().Reset(name);
    }
    cpu::SetGemmImplementation(cpu::GemmImplementation::kAuto);
    cpu::SetIntraOpThreads(0);
    fs::remove_all(folder_);
  }

  fs::path folder_;
};

TEST_F(DepthwiseFusionTest, TakesInTheOneByOnesThatAloneFeedOrReadIt) {
  const Graph source = FuseClampActivations(BlocksNet(12, 24)).graph;
  const GraphShapes shapes = InferGraphShapes(source);
  const DepthwiseFusionResult result = FuseDepthwiseBlocks(source, shapes, {});
  ASSERT_EQ(result.blocks.size(), 3u);
  EXPECT_EQ(result.blocks[0].expand, "e1");
  EXPECT_EQ(result.blocks[0].depthwise, "d1");
  EXPECT_EQ(result.blocks[0].project, "p1");
  EXPECT_EQ(result.blocks[1].expand, "");  // sum is an Add
  EXPECT_EQ(result.blocks[1].depthwise, "d2");
  EXPECT_EQ(result.blocks[1].project, "p2");
  EXPECT_EQ(result.blocks[2].expand, "e3");
  EXPECT_EQ(result.blocks[2].project, "");  // d3 is a graph output

  const Graph& fused = result.graph;
  for (const char* gone : {"e1", "p1", "e3"}) EXPECT_FALSE(fused.HasName(gone)) << gone;
  for (const char* kept : {"e4", "d4", "sum"}) EXPECT_TRUE(fused.HasName(kept)) << kept;
  const Node& d1 = fused.node(fused.Find("d1"));
  EXPECT_EQ(d1.op->name, "_fused_depthwise_block");
  EXPECT_EQ(d1.attrs.GetInt("expand_num_filter"), 24);
  EXPECT_EQ(d1.attrs.GetInt("project_num_filter"), 32);
  EXPECT_EQ(d1.attrs.GetFloat("expand_act_max"), 6.0);
  EXPECT_EQ(d1.attrs.GetFloat("act_min"), 0.0);
  EXPECT_FALSE(d1.attrs.Has("project_act_min"));
  // data, e1's weight and bias, d1's, p1's.
  ASSERT_EQ(d1.inputs.size(), 7u);
  EXPECT_EQ(fused.node(d1.inputs[0].node).name, "data");
  EXPECT_EQ(fused.node(d1.inputs[1].node).name, "e1_weight");
  EXPECT_EQ(fused.node(d1.inputs[6].node).name, "p1_bias");
  // Readers of the last stage read the fused node.
  EXPECT_EQ(fused.node(fused.Find("sum")).inputs[0].node, fused.Find("d1"));
  EXPECT_EQ(fused.node(fused.Find("d2")).attrs.GetInt("expand_num_filter"), 0);
  EXPECT_EQ(fused.node(fused.Find("d4")).op->name, "Convolution");
  EXPECT_EQ(FormatDepthwiseBlocks(result.blocks, false),
            "fused 3 depthwise blocks (MXNET_CONV_FUSE_DEPTHWISE)");
  EXPECT_NE(FormatDepthwiseBlocks(result.blocks, true).find("\n  e1 -> d1 -> p1"),
            std::string::npos);

  // A block the planner measured slower fused stays apart; the others fuse as before.
  const DepthwiseFusionResult kept =
      FuseDepthwiseBlocks(source, shapes, {.measured_slower_fused = {{"e1", "d1", "p1"}}});
  ASSERT_EQ(kept.blocks.size(), 2u);
  EXPECT_EQ(kept.blocks[0].depthwise, "d2");
  EXPECT_TRUE(kept.graph.HasName("e1"));
  EXPECT_EQ(kept.graph.node(kept.graph.Find("d1")).op->name, "Convolution");
  // Only the same three stages are kept apart.
  const DepthwiseFusionRule other_d1{.measured_slower_fused = {{"", "d1", "p1"}}};
  EXPECT_EQ(FuseDepthwiseBlocks(source, shapes, other_d1).blocks.size(), 3u);

  // Below the size threshold only a block measured faster fused is fused.
  const size_t expanded_bytes = 2 * 12 * 12 * 24 * sizeof(float);  // the largest intermediate
  const DepthwiseFusionRule small{.min_intermediate_bytes = 64 * expanded_bytes};
  EXPECT_TRUE(FuseDepthwiseBlocks(source, shapes, small).blocks.empty());
  DepthwiseFusionRule measured = small;
  measured.measured_faster_fused = {{"", "d2", "p2"}, {"e1", "d1", ""}};  // d1's is e1 -> d1 -> p1
  const DepthwiseFusionResult only_d2 = FuseDepthwiseBlocks(source, shapes, measured);
  ASSERT_EQ(only_d2.blocks.size(), 1u);
  EXPECT_EQ(only_d2.blocks[0], (FusedDepthwiseBlock{"", "d2", "p2"}));
  // Measured slower wins over the threshold too.
  EXPECT_EQ(FuseDepthwiseBlocks(source, shapes, {.measured_slower_fused = {{"", "d2", "p2"}}})
                .blocks.size(),
            2u);
  // NCHW depthwise convolutions are left alone.
  GraphBuilder nchw;
  Symbol x = nchw.Input("data", {1, 8, 12, 12});
  Symbol e = nchw.Conv(x, {.num_filter = 16, .kernel = {1, 1}}, "e");
  Symbol d =
      nchw.Conv(e, {.num_filter = 16, .kernel = {3, 3}, .pad = {1, 1}, .num_group = 16}, "d");
  const Graph nchw_graph = nchw.Build({d});
  EXPECT_TRUE(FuseDepthwiseBlocks(nchw_graph, InferGraphShapes(nchw_graph), {}).blocks.empty());
}

std::vector<std::vector<float>> RunInference(const Graph& graph, const BindOptions& options,
                                             size_t* blocks = nullptr) {
  auto exec = Executor::Bind(graph, options);
  testing_support::FillRandomArguments(*exec, 5);
  exec->Forward(false);
  std::vector<std::vector<float>> outputs;
  for (const NDArray& output : exec->outputs()) outputs.push_back(output.ToVector<float>());
  if (blocks != nullptr) *blocks = exec->fused_depthwise_blocks().size();
  return outputs;
}

// Big enough that every fused block's intermediates exceed a core's L2 (d2's output, the smallest,
// holds 2 x 128 x 128 x 32 floats: 4 MB), so the executor fuses on any machine.
TEST_F(DepthwiseFusionTest, FusedExecutorsComputeWhatUnfusedOnesDo) {
  const Graph graph = BlocksNet(256, 48);
  const BindOptions unfused{.conv_plan = ConvPlanKind::kNone, .fuse_depthwise = false};
  BindOptions fused = unfused;
  fused.fuse_depthwise = true;
  const std::vector<std::vector<float>> expected = RunInference(graph, unfused);
  for (auto gemm : {cpu::GemmImplementation::kAuto, cpu::GemmImplementation::kEigen}) {
    cpu::SetGemmImplementation(gemm);
    for (int threads : {1, 2}) {
      SCOPED_TRACE(testing::Message() << threads << " threads, " << cpu::ActiveGemm().name);
      cpu::SetIntraOpThreads(threads);
      size_t blocks = 0;
      const std::vector<std::vector<float>> actual = RunInference(graph, fused, &blocks);
      EXPECT_EQ(blocks, 3u);
      testing_support::ExpectOutputsNear(expected, actual, 1e-5);
    }
  }
}

// The residual fusion after the blocks (MXNET_CONV_FUSE_RESIDUAL): b1's addition of data folds
// into its projection; head reads p2 (b2's output) twice and stays, as does d4_sum (a graph
// output). Executors give the bits of the separate addition.
TEST_F(DepthwiseFusionTest, AnAdditionAfterABlockFoldsIntoItsProjection) {
  const Graph source = FuseClampActivations(BlocksNet(12, 24)).graph;
  const Graph blocks = FuseDepthwiseBlocks(source, InferGraphShapes(source), {}).graph;
  const ResidualFusionResult result = FuseResidualAdditions(blocks, InferGraphShapes(blocks));
  ASSERT_EQ(result.fused.size(), 1u);
  EXPECT_EQ(result.fused[0].convolution, "d1");
  EXPECT_EQ(result.fused[0].addition, "sum");
  const Graph& fused = result.graph;
  EXPECT_FALSE(fused.HasName("sum"));
  EXPECT_TRUE(fused.HasName("head"));
  const Node& d1 = fused.node(fused.Find("d1"));
  EXPECT_EQ(d1.op->name, "_fused_depthwise_block");
  EXPECT_TRUE(d1.attrs.GetBool("residual"));
  ASSERT_EQ(d1.inputs.size(), 8u);  // data, e1's weight and bias, d1's, p1's, the residual
  EXPECT_EQ(fused.node(d1.inputs[7].node).name, "data");
  EXPECT_EQ(InferGraphShapes(fused).of(d1.inputs[7]), (Shape{2, 12, 12, 32}));
  // d2's block (p2 read twice) takes nothing.
  EXPECT_FALSE(fused.node(fused.Find("d2")).attrs.GetBool("residual"));

  const Graph graph = BlocksNet(256, 48);  // large enough to fuse blocks on any machine
  const BindOptions separate{
      .conv_plan = ConvPlanKind::kNone, .fuse_depthwise = true, .fuse_residual = false};
  BindOptions together = separate;
  together.fuse_residual = true;
  for (int threads : {1, 2}) {
    SCOPED_TRACE(testing::Message() << threads << " threads");
    cpu::SetIntraOpThreads(threads);
    auto exec = Executor::Bind(graph, together);
    ASSERT_EQ(exec->fused_residuals().size(), 1u);
    EXPECT_EQ(exec->fused_residuals()[0].convolution, "d1");
    EXPECT_EQ(RunInference(graph, together), RunInference(graph, separate));
  }
}

// A hand-written block with residual=true: the residual takes the output's shape; a wrong shape,
// or a residual without a projection to add it to, is an error naming the node.
TEST_F(DepthwiseFusionTest, ABlocksResidualIsCheckedByName) {
  // Depthwise 8 channels, then a projection to 4; without it, an expansion (a block has one).
  const auto build = [](const Shape& residual_shape, bool project) {
    GraphBuilder g;
    std::vector<Symbol> inputs = {g.Input("data", {1, 6, 6, 8})};
    if (!project) {
      inputs.push_back(g.Parameter("b_expand_weight"));
      inputs.push_back(g.Parameter("b_expand_bias"));
    }
    inputs.push_back(g.Parameter("b_weight"));
    inputs.push_back(g.Parameter("b_bias"));
    if (project) {
      inputs.push_back(g.Parameter("b_project_weight"));
      inputs.push_back(g.Parameter("b_project_bias"));
    }
    inputs.push_back(g.Input("shortcut", residual_shape));
    return g.Build({g.Op("_fused_depthwise_block", inputs,
                         {{"kernel", "(3,3)"},
                          {"pad", "(1,1)"},
                          {"num_filter", "8"},
                          {"num_group", "8"},
                          {"expand_num_filter", project ? "0" : "8"},
                          {"project_num_filter", project ? "4" : "0"},
                          {"residual", "true"}},
                         "b")});
  };
  const Graph good = build(Shape{1, 6, 6, 4}, true);
  EXPECT_EQ(InferGraphShapes(good, {}).of(good.node(good.Find("b")).inputs[5]),
            (Shape{1, 6, 6, 4}));
  const auto error_of = [](const Graph& graph) {
    try {
      InferGraphShapes(graph, {});
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  const std::string wrong_shape = error_of(build(Shape{1, 6, 6, 8}, true));
  EXPECT_NE(wrong_shape.find("_fused_depthwise_block b"), std::string::npos) << wrong_shape;
  EXPECT_NE(wrong_shape.find("residual"), std::string::npos) << wrong_shape;
  const std::string no_projection = error_of(build(Shape{1, 6, 6, 8}, false));
  EXPECT_NE(no_projection.find("_fused_depthwise_block b"), std::string::npos) << no_projection;
  EXPECT_NE(no_projection.find("project_num_filter is 0"), std::string::npos) << no_projection;
}

TEST_F(DepthwiseFusionTest, TrainingAndTheSettingKeepTheConvolutionsApart) {
  const Graph graph = BlocksNet(256, 48);
  auto training = Executor::Bind(graph, {.training = true, .conv_plan = ConvPlanKind::kNone});
  EXPECT_TRUE(training->fused_depthwise_blocks().empty());
  settings().Set("MXNET_CONV_FUSE_DEPTHWISE", "0");
  auto off = Executor::Bind(graph, {.conv_plan = ConvPlanKind::kNone});
  EXPECT_TRUE(off->fused_depthwise_blocks().empty());
  EXPECT_TRUE(off->graph().HasName("e1"));
  settings().Set("MXNET_CONV_FUSE_DEPTHWISE", "1");
  auto on = Executor::Bind(graph, {.conv_plan = ConvPlanKind::kNone});
  EXPECT_EQ(on->fused_depthwise_blocks().size(), 3u);
  EXPECT_FALSE(on->graph().HasName("e1"));
  // The bind option wins over the setting.
  auto option_off =
      Executor::Bind(graph, {.conv_plan = ConvPlanKind::kNone, .fuse_depthwise = false});
  EXPECT_TRUE(option_off->fused_depthwise_blocks().empty());
}

}  // namespace
}  // namespace mxlite
