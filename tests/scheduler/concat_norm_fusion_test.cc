// Concat + BatchNorm fusion (scheduler/graph/fusion.h): which normalisations take in the join
// before them and which do not (a join read twice or a graph output, a join along another axis,
// a BatchNorm whose statistics are read), what the fused node looks like, that CPU inference
// executors compute the bits of unfused ones under every convolution plan, and that training
// executors and MXNET_FUSE_CONCAT_NORM=0 keep the two ops.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <random>

#include "core/settings.h"
#include "scheduler/graph/executor.h"
#include "scheduler/graph/fusion.h"
#include "scheduler/graph/graph_builder.h"
#include "scheduler/graph/infer_shapes.h"
#include "tests/scheduler/random_arguments.h"

namespace mxlite {
namespace {

namespace fs = std::filesystem;

// A DenseNet-like stack: n1 normalises j1 = [data, c1] (fused, with the relu after it); n2
// normalises j2 = [data, c1, c2] (fused); j3 is read by n3 and is a graph output (not fused);
// j4 joins along the height, which n4 does not normalise (not fused).
Graph DenseNet() {
  GraphBuilder g;
  Symbol x = g.Input("data", {1, 16, 6, 6});
  Symbol c1 = g.Conv(x, {.num_filter = 16, .kernel = {3, 3}, .pad = {1, 1}}, "c1");
  Symbol r1 = g.Relu(g.BatchNorm(g.Concat({x, c1}, 1, "j1"), {}, "n1"), "r1");
  Symbol c2 = g.Conv(r1, {.num_filter = 16, .kernel = {1, 1}}, "c2");
  Symbol n2 = g.BatchNorm(g.Concat({x, c1, c2}, 1, "j2"), {}, "n2");
  Symbol c3 = g.Conv(n2, {.num_filter = 16, .kernel = {3, 3}, .pad = {1, 1}}, "c3");
  Symbol j3 = g.Concat({c2, c3}, 1, "j3");
  Symbol n3 = g.BatchNorm(j3, {}, "n3");
  Symbol n4 = g.BatchNorm(g.Concat({c2, c3}, 2, "j4"), {}, "n4");
  return g.Build({n3, j3, n4});
}

class ConcatNormFusionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    folder_ =
        fs::temp_directory_path() / ("mxlite_concat_norm_fusion_test_" + std::to_string(getpid()) +
                                     "_" + std::to_string(counter++));
    fs::remove_all(folder_);
    settings().Set("MXNET_TUNING_DB_PATH", (folder_ / "tuning.sqlite").string());
  }
  void TearDown() override {
    for (const char* name : {"MXNET_TUNING_DB_PATH", "MXNET_FUSE_CONCAT_NORM"}) {
      settings().Reset(name);
    }
    fs::remove_all(folder_);
  }

  fs::path folder_;
};

TEST_F(ConcatNormFusionTest, FusesOnlyJoinsTheirNormalisationAloneReadsAlongItsAxis) {
  const Graph source = FuseClampActivations(DenseNet()).graph;  // r1 joins n1's store
  const ConcatNormFusionResult result = FuseConcatBatchNorms(source, InferGraphShapes(source, {}));
  ASSERT_EQ(result.fused.size(), 2u);
  EXPECT_EQ(result.fused[0].concat, "j1");
  EXPECT_EQ(result.fused[0].batch_norm, "n1");
  EXPECT_EQ(result.fused[1].concat, "j2");
  EXPECT_EQ(result.fused[1].batch_norm, "n2");

  const Graph& fused = result.graph;
  for (const char* gone : {"j1", "j2"}) EXPECT_FALSE(fused.HasName(gone)) << gone;
  for (const char* kept : {"j3", "n3", "j4", "n4"}) EXPECT_TRUE(fused.HasName(kept)) << kept;
  const Node& n1 = fused.node(fused.Find("n1"));
  EXPECT_EQ(n1.op->name, "_concat_batch_norm");
  EXPECT_EQ(n1.attrs.GetInt("num_args"), 2);
  EXPECT_EQ(n1.attrs.GetFloat("act_min"), 0.0);  // the relu's clamp came along
  EXPECT_FALSE(n1.attrs.GetBool("fix_gamma"));
  ASSERT_EQ(n1.inputs.size(), 6u);  // data, c1, gamma, beta, moving_mean, moving_var
  EXPECT_EQ(n1.inputs[0].node, fused.Find("data"));
  EXPECT_EQ(n1.inputs[1].node, fused.Find("c1"));
  EXPECT_EQ(fused.node(n1.inputs[5].node).name, "n1_moving_var");
  EXPECT_EQ(fused.node(fused.Find("n2")).inputs.size(), 7u);
  EXPECT_EQ(fused.node(fused.Find("c2")).inputs[0].node, fused.Find("n1"));
  EXPECT_EQ(fused.node(fused.Find("c3")).inputs[0].node, fused.Find("n2"));
  EXPECT_TRUE(FuseConcatBatchNorms(fused, InferGraphShapes(fused, {})).fused.empty());

  EXPECT_EQ(FormatConcatNormFusions(result.fused, false),
            "fused 2 joins into the normalisations after them (MXNET_FUSE_CONCAT_NORM)");
  EXPECT_NE(FormatConcatNormFusions(result.fused, true).find("\n  n2 <- j2"), std::string::npos);
}

TEST_F(ConcatNormFusionTest, ABatchNormWhoseStatisticsAreReadKeepsItsJoin) {
  GraphBuilder g;
  Symbol x = g.Input("data", {1, 4, 3, 3});
  Symbol norm = g.Op("BatchNorm", {g.Concat({x, x}, 1, "j")}, {{"output_mean_var", "true"}}, "n");
  const std::vector<Symbol> outputs = g.Outputs(norm);
  const Graph graph = g.Build({outputs[0], outputs[1]});
  EXPECT_TRUE(FuseConcatBatchNorms(graph, InferGraphShapes(graph, {})).fused.empty());
}

// Random data and parameters, and variances in [0.5, 1.5) (a negative one would give NaNs, which
// compare unequal to themselves).
std::vector<std::vector<float>> RunInference(const Graph& graph, const BindOptions& options,
                                             std::vector<FusedConcatNorm>* fused = nullptr) {
  auto exec = Executor::Bind(graph, options);
  testing_support::FillRandomArguments(*exec, 11);
  std::mt19937_64 random(5);
  std::uniform_real_distribution<float> uniform(0.5f, 1.5f);
  for (const std::string& name : exec->AuxiliaryNames()) {
    std::vector<float> values(static_cast<size_t>(exec->Arg(name).size()));
    for (float& v : values) v = uniform(random);
    exec->Arg(name).SyncCopyFromCPU(values.data(), values.size() * sizeof(float));
  }
  exec->Forward(false);
  std::vector<std::vector<float>> outputs;
  for (const NDArray& output : exec->outputs()) outputs.push_back(output.ToVector<float>());
  if (fused != nullptr) *fused = exec->fused_concat_norms();
  return outputs;
}

// The fusion runs after planning, which it does not change; with one tuning DB (the second bind
// reads the first's timings) both executors run the same layouts and algorithms: the same bits.
TEST_F(ConcatNormFusionTest, FusedExecutorsComputeTheBitsOfUnfusedOnes) {
  const Graph graph = DenseNet();
  for (ConvPlanKind plan : {ConvPlanKind::kNone, ConvPlanKind::kLocal, ConvPlanKind::kGlobal}) {
    SCOPED_TRACE(ConvPlanKindName(plan));
    std::vector<FusedConcatNorm> unfused_list, fused_list;
    const auto expected =
        RunInference(graph, {.conv_plan = plan, .fuse_concat_norm = false}, &unfused_list);
    const auto actual = RunInference(graph, {.conv_plan = plan}, &fused_list);
    EXPECT_TRUE(unfused_list.empty());
    // Planned by measurement, a join and its normalisation may land in two layouts (a transform
    // between them: not fused); as written both pairs fuse.
    if (plan == ConvPlanKind::kNone) {
      EXPECT_EQ(fused_list.size(), 2u);
    }
    EXPECT_EQ(actual, expected);
  }
}

TEST_F(ConcatNormFusionTest, TrainingAndTheSettingKeepTheTwoOps) {
  const Graph graph = DenseNet();
  settings().Set("MXNET_FUSE_CONCAT_NORM", "0");
  std::vector<FusedConcatNorm> fused;
  RunInference(graph, {}, &fused);
  EXPECT_TRUE(fused.empty());
  settings().Reset("MXNET_FUSE_CONCAT_NORM");
  auto training = Executor::Bind(graph, {.training = true});
  EXPECT_TRUE(training->fused_concat_norms().empty());
}

}  // namespace
}  // namespace mxlite
