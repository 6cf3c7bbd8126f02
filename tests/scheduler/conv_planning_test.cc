// Convolution planning (scheduler/planning/conv_planning.h): every layout assignment computes the
// same network, forward and backward; the planner's three plans agree on the outputs and the global
// one is predicted no slower than the others; a second bind measures nothing; tuning off plans
// nothing; nodes that run only as written refuse another layout.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>

#include "core/build_info.h"
#include "core/error.h"
#include "core/settings.h"
#include "ops/cpu/avx512.h"
#include "ops/cpu/depthwise_block.h"
#include "scheduler/graph/executor.h"
#include "scheduler/graph/graph_builder.h"
#include "scheduler/planning/conv_planning.h"
#include "tests/scheduler/outputs_near.h"
#include "tests/scheduler/random_arguments.h"

namespace mxlite {
namespace {

namespace fs = std::filesystem;
using L = ActivationLayout;

int Index(L layout) { return static_cast<int>(layout); }

// Every role the planner knows: convolutions (3x3, 1x1, strided), BatchNorm, ReLU, a Concat of two
// branches, max pooling, a residual Add, global pooling, Flatten and FullyConnected (fixed).
Graph PlanningNet() {
  GraphBuilder g;
  Symbol x = g.Input("data", {2, 8, 12, 12});
  // No bias before BatchNorm (its gradient would be rounding noise around zero).
  Symbol y = g.Relu(
      g.BatchNorm(
          g.Conv(x, {.num_filter = 16, .kernel = {3, 3}, .pad = {1, 1}, .no_bias = true}, "stem"),
          {}, "stem_bn"),
      "stem_relu");
  Symbol a = g.Conv(y, {.num_filter = 8, .kernel = {1, 1}}, "branch_a");
  Symbol b = g.Conv(y, {.num_filter = 8, .kernel = {3, 3}, .pad = {1, 1}}, "branch_b");
  Symbol joined = g.Concat({a, b}, 1, "joined");
  Symbol pooled = g.MaxPool(joined, {.kernel = {2, 2}, .stride = {2, 2}}, "pool");
  Symbol main = g.Conv(pooled, {.num_filter = 16, .kernel = {3, 3}, .pad = {1, 1}}, "main");
  Symbol skip = g.Conv(pooled, {.num_filter = 16, .kernel = {1, 1}}, "skip");
  Symbol sum = g.Relu(g.Add(main, skip, "sum"), "sum_relu");
  Symbol down =
      g.Conv(sum, {.num_filter = 8, .kernel = {3, 3}, .stride = {2, 2}, .pad = {1, 1}}, "down");
  Symbol logits =
      g.FullyConnected(g.Flatten(g.GlobalAvgPool(down, "gap"), "flat"), {.num_hidden = 5}, "fc");
  return g.Build({logits, sum});
}

// The nodes of PlanningNet that may run NHWC.
const std::vector<std::string> kMovable = {
    "stem", "stem_bn", "stem_relu", "branch_a", "branch_b", "joined", "pool",
    "main", "skip",    "sum",       "sum_relu", "down",     "gap"};

class ConvPlanningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    folder_ = fs::temp_directory_path() / ("mxlite_conv_planning_test_" + std::to_string(getpid()) +
                                           "_" + std::to_string(counter++));
    fs::remove_all(folder_);
    settings().Set("MXNET_TUNING_DB_PATH", (folder_ / "tuning.sqlite").string());
  }
  void TearDown() override {
    for (const char* name :
         {"MXNET_TUNING_DB_PATH", "MXNET_CUDNN_AUTOTUNE_DEFAULT", "MXNET_CONV_PLAN"}) {
      settings().Reset(name);
    }
    fs::remove_all(folder_);
  }

  fs::path folder_;
};

struct RunResult {
  std::vector<std::vector<float>> outputs;
  std::map<std::string, std::vector<float>> gradients;
};

RunResult RunPlanned(const Graph& graph, bool training, std::optional<ConvPlanKind> plan,
                     const Context& ctx = Context::CPU()) {
  BindOptions options;
  options.ctx = ctx;
  options.training = training;
  options.conv_plan = plan;
  auto exec = Executor::Bind(graph, options);
  // The same values whatever the plan: planning keeps the variables' names and shapes.
  testing_support::FillRandomArguments(*exec, 11);
  exec->Forward(training);
  if (training) exec->Backward();
  RunResult result;
  for (const NDArray& output : exec->outputs()) result.outputs.push_back(output.ToVector<float>());
  if (training) {
    for (const std::string& name : exec->ParameterNames()) {
      result.gradients[name] = exec->Gradient(name).ToVector<float>();
    }
  }
  return result;
}

void ExpectClose(const std::vector<float>& expected, const std::vector<float>& actual,
                 const std::string& what) {
  testing_support::ExpectValuesNear(expected, actual, 1e-4, what);
}

void ExpectSameRun(const RunResult& expected, const RunResult& actual, const std::string& what) {
  ASSERT_EQ(expected.outputs.size(), actual.outputs.size());
  for (size_t i = 0; i < expected.outputs.size(); ++i) {
    ExpectClose(expected.outputs[i], actual.outputs[i], what + " output " + std::to_string(i));
  }
  for (const auto& [name, gradient] : expected.gradients) {
    ExpectClose(gradient, actual.gradients.at(name), what + " gradient of " + name);
  }
}

// Binds a rewritten graph without planning it again.
RunResult RunRewritten(const Graph& source, const std::map<std::string, L>& layouts, bool training,
                       std::vector<PlannedTransform>* transforms = nullptr,
                       const Context& ctx = Context::CPU()) {
  const GraphShapes shapes = InferGraphShapes(source);
  return RunPlanned(RewriteLayouts(source, shapes, layouts, training, transforms, ctx), training,
                    ConvPlanKind::kNone, ctx);
}

TEST_F(ConvPlanningTest, AllNhwcComputesTheSameForwardAndGradients) {
  const Graph net = PlanningNet();
  std::map<std::string, L> layouts;
  for (const std::string& name : kMovable) layouts[name] = L::kNHWC;
  std::vector<PlannedTransform> transforms;
  for (bool training : {false, true}) {
    transforms.clear();
    ExpectSameRun(RunPlanned(net, training, ConvPlanKind::kNone),
                  RunRewritten(net, layouts, training, &transforms),
                  training ? "training" : "inference");
  }
  // In: the data. Out: gap (to Flatten) and sum_relu (a graph output). Plus 6 conv weights.
  std::set<std::string> names;
  for (const PlannedTransform& t : transforms) names.insert(t.node);
  EXPECT_EQ(names, (std::set<std::string>{
                       "data_to_nhwc", "gap_output_to_nchw", "sum_relu_output_to_nchw",
                       "stem_weight_to_ohwi", "branch_a_weight_to_ohwi", "branch_b_weight_to_ohwi",
                       "main_weight_to_ohwi", "skip_weight_to_ohwi", "down_weight_to_ohwi"}));
}

TEST_F(ConvPlanningTest, MixedLayoutsInsertTransformsBetweenDisagreeingNeighbours) {
  const Graph net = PlanningNet();
  // Alternate: every edge where neighbours disagree gets a transform, the sum meets two layouts.
  const std::map<std::string, L> layouts = {
      {"stem", L::kNHWC}, {"stem_relu", L::kNHWC}, {"branch_b", L::kNHWC}, {"pool", L::kNHWC},
      {"skip", L::kNHWC}, {"sum_relu", L::kNHWC},  {"gap", L::kNHWC}};
  for (bool training : {false, true}) {
    std::vector<PlannedTransform> transforms;
    ExpectSameRun(RunPlanned(net, training, ConvPlanKind::kNone),
                  RunRewritten(net, layouts, training, &transforms),
                  training ? "training" : "inference");
    // stem's output goes back to NCHW once for stem_bn; stem_relu's output is shared by the
    // two branches: one NCHW copy for branch_a, branch_b reads it as is.
    int from_relu = 0;
    for (const PlannedTransform& t : transforms) from_relu += t.value == "stem_relu_output";
    EXPECT_EQ(from_relu, 1);
    for (const PlannedTransform& t : transforms) EXPECT_GE(t.cost_ms, 0.0) << t.node;
    // The NHWC convolutions' weights are transposed once at inference (constant steps), every
    // pass in training; activations every pass in both.
    int weights = 0;
    for (const PlannedTransform& t : transforms) {
      const bool weight = t.value.size() > 7 && t.value.ends_with("_weight");
      weights += weight;
      EXPECT_EQ(t.once, weight && !training) << t.node;
    }
    EXPECT_GE(weights, 1);
  }
}

TEST_F(ConvPlanningTest, EveryPlanComputesTheSameNetwork) {
  const Graph net = PlanningNet();
  for (bool training : {false, true}) {
    const RunResult none = RunPlanned(net, training, ConvPlanKind::kNone);
    ExpectSameRun(none, RunPlanned(net, training, ConvPlanKind::kLocal), "local");
    ExpectSameRun(none, RunPlanned(net, training, ConvPlanKind::kGlobal), "global");
  }
}

TEST_F(ConvPlanningTest, GlobalIsPredictedNoSlowerAndReportsEveryLayer) {
  auto exec = Executor::Bind(PlanningNet(), {.conv_plan = ConvPlanKind::kGlobal});
  const ConvPlanReport& report = exec->conv_plan();
  ASSERT_TRUE(report.planned);
  EXPECT_EQ(report.kind, ConvPlanKind::kGlobal);
  EXPECT_TRUE(report.proven_optimal);  // residual + concat: series-parallel
  EXPECT_EQ(report.reductions.rn, 0);
  EXPECT_GE(report.predicted_global_ms, 0.0);
  EXPECT_GE(report.predicted_local_ms, 0.0);
  EXPECT_GE(report.predicted_none_ms, 0.0);
  EXPECT_LE(report.predicted_global_ms, report.predicted_local_ms * (1 + 1e-9));
  EXPECT_LE(report.predicted_global_ms, report.predicted_none_ms * (1 + 1e-9));
  EXPECT_DOUBLE_EQ(report.predicted_ms(), report.predicted_global_ms);
  std::vector<std::string> layers;
  // NCHW16c is offered (CPU inference, AVX-512F) where the channels come in whole blocks.
  const bool blocked = cpu::CpuSupportsAvx512f();
  const std::set<std::string> blockable = {"pool", "main", "skip"};
  for (const PlannedLayer& layer : report.layers) {
    layers.push_back(layer.node);
    EXPECT_GE(layer.cost_ms[0], 0.0) << layer.node;
    EXPECT_GE(layer.cost_ms[1], 0.0) << layer.node;
    EXPECT_EQ(layer.cost_ms[2] >= 0.0, blocked && blockable.count(layer.node) == 1) << layer.node;
    if (layer.op == "Convolution") {
      EXPECT_FALSE(layer.algorithms[1].empty()) << layer.node;
    }
  }
  EXPECT_EQ(layers, (std::vector<std::string>{"stem", "branch_a", "branch_b", "pool", "main",
                                              "skip", "down", "gap"}));
  // Each convolution tuned in every layout it may take (main and skip in three); the executor
  // reports the layout that runs.
  EXPECT_EQ(report.decisions.size(), blocked ? 14u : 12u);
  EXPECT_EQ(exec->TuningDecisions().size(), 6u);
  const std::string text = report.Format(/*verbose=*/true);
  EXPECT_NE(text.find("global plan: "), std::string::npos) << text;
  EXPECT_NE(text.find("proven optimal"), std::string::npos) << text;
  EXPECT_NE(text.find("not chosen: "), std::string::npos) << text;
  // Parameter names and output shapes are the source graph's.
  EXPECT_EQ(exec->outputs()[1].shape(), (Shape{2, 16, 6, 6}));
  EXPECT_EQ(exec->ParameterNames().size(),
            PlanningNet().Variables(VariableRole::kParameter).size());
}

// On a GPU every op of PlanningNet runs channels-last through cuDNN and the CUDA kernels
// (BatchNorm on axis 3, Concat on dim 3, transposes of activations and weights) and computes
// what the CPU computes as written, forward and every gradient.
TEST_F(ConvPlanningTest, GpuAllNhwcComputesWhatTheCpuComputes) {
  if (VisibleGpuCount() == 0) GTEST_SKIP() << "no GPU visible: GPU planning not exercised";
  const Graph net = PlanningNet();
  std::map<std::string, L> layouts;
  for (const std::string& name : kMovable) layouts[name] = L::kNHWC;
  for (bool training : {false, true}) {
    std::vector<PlannedTransform> transforms;
    const RunResult cpu = RunPlanned(net, training, ConvPlanKind::kNone);
    ExpectSameRun(cpu, RunRewritten(net, layouts, training, &transforms, Context::GPU(0)),
                  training ? "GPU NHWC training" : "GPU NHWC inference");
    ASSERT_FALSE(transforms.empty());
    for (const PlannedTransform& transform : transforms) {
      EXPECT_GT(transform.cost_ms, 0.0) << transform.node << ": measured on the GPU";
    }
  }
}

// The planner measures on the GPU it plans for (cuDNN's picks per layout, GPU transposes and
// pooling) and every plan computes what the CPU computes.
TEST_F(ConvPlanningTest, GpuPlansAreMeasuredThereAndComputeTheSameNetwork) {
  if (VisibleGpuCount() == 0) GTEST_SKIP() << "no GPU visible: GPU planning not exercised";
  const Graph net = PlanningNet();
  for (bool training : {false, true}) {
    const RunResult cpu = RunPlanned(net, training, ConvPlanKind::kNone);
    for (ConvPlanKind kind : {ConvPlanKind::kLocal, ConvPlanKind::kGlobal}) {
      ExpectSameRun(cpu, RunPlanned(net, training, kind, Context::GPU(0)),
                    std::string("GPU ") + ConvPlanKindName(kind));
    }
  }
  auto exec = Executor::Bind(net, {.ctx = Context::GPU(0), .conv_plan = ConvPlanKind::kGlobal});
  const ConvPlanReport& report = exec->conv_plan();
  ASSERT_TRUE(report.planned);
  EXPECT_GE(report.predicted_global_ms, 0.0);
  EXPECT_GE(report.predicted_local_ms, 0.0);
  EXPECT_GE(report.predicted_none_ms, 0.0);
  EXPECT_LE(report.predicted_global_ms, report.predicted_local_ms * (1 + 1e-9));
  EXPECT_LE(report.predicted_global_ms, report.predicted_none_ms * (1 + 1e-9));
  // Each convolution tuned by cuDNN in both layouts.
  EXPECT_EQ(report.decisions.size(), 12u);
}

// Element-wise ops, BatchNorm and Concat are timed in each layout they can run in, as the
// convolutions are: the plan weighs what a layout costs them. The addition the executor folds into
// its convolution at inference runs inside it when the plan keeps the two in one layout (the
// planner charges its time on their edge otherwise); in training nothing folds.
TEST_F(ConvPlanningTest, AgnosticNodesAreCostedInEveryLayoutTheyRunIn) {
  for (bool training : {false, true}) {
    SCOPED_TRACE(training ? "training" : "inference");
    // stem_relu would fold into stem_bn at inference (FuseClampActivations): kept as a node here.
    auto exec = Executor::Bind(
        PlanningNet(),
        {.training = training, .conv_plan = ConvPlanKind::kGlobal, .fuse_activations = false});
    const ConvPlanReport& report = exec->conv_plan();
    ASSERT_TRUE(report.planned);
    std::map<std::string, const PlannedLayer*> agnostic, layers;
    for (const PlannedLayer& node : report.agnostic) agnostic[node.node] = &node;
    for (const PlannedLayer& layer : report.layers) layers[layer.node] = &layer;
    for (const char* name : {"stem_bn", "stem_relu", "joined", "sum", "sum_relu"}) {
      ASSERT_EQ(agnostic.count(name), 1u) << name;
      const PlannedLayer& node = *agnostic[name];
      EXPECT_TRUE(node.fixed_reason.empty()) << name << ": " << node.fixed_reason;
      for (L layout : {L::kNCHW, L::kNHWC}) {
        EXPECT_GT(node.cost_ms[Index(layout)], 0.0)
            << name << " in " << ActivationLayoutName(layout);
      }
    }
    // "sum" folds into the convolution the residual fusion picks ("main" or "skip") exactly when
    // the plan gave them one layout; sum_relu never does (its output is one of the graph's).
    const bool shares_a_layout = agnostic["sum"]->chosen == layers["main"]->chosen ||
                                 agnostic["sum"]->chosen == layers["skip"]->chosen;
    EXPECT_EQ(agnostic["sum"]->folded, !training && shares_a_layout);
    EXPECT_FALSE(agnostic["sum_relu"]->folded);
    EXPECT_FALSE(agnostic["stem_bn"]->folded);
  }
}

// The nodes that run as written (here Flatten and FullyConnected) are timed alone once and are
// part of every predicted total, so that a prediction is of the whole pass; a node computed from
// parameters alone (a weight's transpose) runs once at inference and is not counted there, but is
// in training, where the parameters change every step.
TEST_F(ConvPlanningTest, FixedNodesAreTimedAsWrittenIntoEveryTotal) {
  GraphBuilder g;
  Symbol x = g.Input("data", {2, 8, 12, 12});
  Symbol conv = g.Conv(x, {.num_filter = 16, .kernel = {3, 3}, .pad = {1, 1}}, "conv");
  Symbol flat = g.Flatten(g.GlobalAvgPool(conv, "gap"), "flat");
  Symbol weight = g.Op("transpose", {g.Parameter("fc_weight_t", Shape{16, 5}, DType::kFloat32)},
                       {{"axes", "(1,0)"}}, "weight_t");
  Symbol fc = g.Op("FullyConnected", {flat, weight, g.Parameter("fc_bias", Shape{5})},
                   {{"num_hidden", "5"}}, "fc");
  const Graph graph = g.Build({fc});
  for (bool training : {false, true}) {
    SCOPED_TRACE(training ? "training" : "inference");
    auto exec = Executor::Bind(graph, {.training = training, .conv_plan = ConvPlanKind::kGlobal});
    const ConvPlanReport& report = exec->conv_plan();
    ASSERT_TRUE(report.planned);
    std::vector<std::string> fixed;
    double sum = 0.0;
    for (const PlannedLayer& node : report.fixed) {
      fixed.push_back(node.node);
      EXPECT_TRUE(node.fixed_reason.empty()) << node.node << ": " << node.fixed_reason;
      EXPECT_GT(node.cost_ms[Index(L::kNCHW)], 0.0) << node.node;
      sum += node.cost_ms[Index(L::kNCHW)];
    }
    EXPECT_EQ(fixed, training ? (std::vector<std::string>{"flat", "weight_t", "fc"})
                              : (std::vector<std::string>{"flat", "fc"}));
    EXPECT_DOUBLE_EQ(report.predicted_fixed_ms, sum);
    for (double total :
         {report.predicted_none_ms, report.predicted_local_ms, report.predicted_global_ms}) {
      EXPECT_GT(total, report.predicted_fixed_ms);
    }
    EXPECT_NE(report.Summary().find(" as written)"), std::string::npos) << report.Summary();
  }
}

TEST_F(ConvPlanningTest, SecondBindMeasuresNothing) {
  for (bool training : {false, true}) {
    auto first = Executor::Bind(PlanningNet(), {.training = training});
    EXPECT_GT(first->conv_plan().timings_run, 0);
    auto second = Executor::Bind(PlanningNet(), {.training = training});
    EXPECT_EQ(second->conv_plan().timings_run, 0);
    for (const conv::LayerTuning& decision : second->conv_plan().decisions) {
      EXPECT_NE(decision.origin, conv::PickOrigin::kBenchmark) << decision.layer;
    }
    // The same measurements give the same plan.
    ASSERT_EQ(first->conv_plan().layers.size(), second->conv_plan().layers.size());
    for (size_t i = 0; i < first->conv_plan().layers.size(); ++i) {
      EXPECT_EQ(first->conv_plan().layers[i].chosen, second->conv_plan().layers[i].chosen);
    }
  }
}

TEST_F(ConvPlanningTest, ReshapePlansTheNewShapes) {
  auto exec = Executor::Bind(PlanningNet(), {.conv_plan = ConvPlanKind::kGlobal});
  auto reshaped = exec->Reshape({{"data", Shape{3, 8, 12, 12}}});
  EXPECT_EQ(reshaped->outputs()[1].shape(), (Shape{3, 16, 6, 6}));
  EXPECT_TRUE(reshaped->conv_plan().planned);
}

TEST_F(ConvPlanningTest, TuningOffPlansNothing) {
  settings().Set("MXNET_CUDNN_AUTOTUNE_DEFAULT", "off");
  // The fusions would fold the net's addition and stem_relu: the graph as planned is the point.
  auto exec = Executor::Bind(
      PlanningNet(),
      {.conv_plan = ConvPlanKind::kGlobal, .fuse_activations = false, .fuse_residual = false});
  EXPECT_FALSE(exec->conv_plan().planned);
  EXPECT_EQ(exec->graph().num_nodes(), PlanningNet().num_nodes());
  EXPECT_NE(exec->conv_plan().Summary().find("layouts as written"), std::string::npos);
}

TEST_F(ConvPlanningTest, PlanNoneKeepsTheGraph) {
  settings().Set("MXNET_CONV_PLAN", "none");
  auto exec = Executor::Bind(PlanningNet(), {.fuse_activations = false, .fuse_residual = false});
  EXPECT_FALSE(exec->conv_plan().planned);
  EXPECT_EQ(exec->conv_plan().kind, ConvPlanKind::kNone);
  EXPECT_EQ(exec->graph().num_nodes(), PlanningNet().num_nodes());
}

TEST_F(ConvPlanningTest, FixedNodesRefuseAnotherLayout) {
  const Graph net = PlanningNet();
  const GraphShapes shapes = InferGraphShapes(net);
  try {
    RewriteLayouts(net, shapes, {{"flat", L::kNHWC}}, false);
    FAIL() << "Flatten moved to NHWC";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'flat' (Flatten) runs only as written"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(RewriteLayouts(net, shapes, {{"nothing", L::kNHWC}}, false), Error);
}

TEST_F(ConvPlanningTest, ChannelAndSharedAxesFollowTheLayout) {
  GraphBuilder g;
  Symbol x = g.Input("data", {2, 4, 6, 6});
  Symbol y = g.Conv(x, {.num_filter = 4, .kernel = {1, 1}}, "conv");
  y = g.BatchNorm(y, {}, "bn");
  y = g.Op("Dropout", {y}, {{"p", "0.5"}, {"axes", "(2,3)"}}, "drop");
  y = g.Concat({y, y}, 1, "cat");
  const Graph net = g.Build({y});
  const Graph nhwc = RewriteLayouts(
      net, InferGraphShapes(net),
      {{"conv", L::kNHWC}, {"bn", L::kNHWC}, {"drop", L::kNHWC}, {"cat", L::kNHWC}}, false);
  EXPECT_EQ(nhwc.node(nhwc.Find("conv")).attrs.GetString("layout"), "NHWC");
  EXPECT_EQ(nhwc.node(nhwc.Find("bn")).attrs.GetInt("axis"), 3);
  EXPECT_EQ(nhwc.node(nhwc.Find("drop")).attrs.GetInts("axes"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(nhwc.node(nhwc.Find("cat")).attrs.GetInt("dim"), 3);
  EXPECT_EQ(InferGraphShapes(nhwc).of(nhwc.outputs()[0]), (Shape{2, 8, 6, 6}));
}

// Whole blocks of 16 channels everywhere but `narrow` (8 filters) and what follows it: NCHW16c's
// roles (dense, 1x1, strided and depthwise convolutions, BatchNorm, ReLU, clip, Dropout, Concat,
// max and global pooling, a residual Add) and the fixed Flatten / FullyConnected.
Graph BlockedNet() {
  GraphBuilder g;
  Symbol x = g.Input("data", {2, 16, 10, 10});
  Symbol y = g.Relu(
      g.BatchNorm(
          g.Conv(x, {.num_filter = 32, .kernel = {3, 3}, .pad = {1, 1}, .no_bias = true}, "stem"),
          {}, "stem_bn"),
      "stem_relu");
  Symbol a = g.Conv(y, {.num_filter = 16, .kernel = {1, 1}}, "branch_a");
  Symbol b =
      g.Op("clip", {g.Conv(y, {.num_filter = 16, .kernel = {3, 3}, .pad = {1, 1}}, "branch_b")},
           {{"a_min", "-0.5"}, {"a_max", "0.5"}}, "branch_b_clip");
  Symbol joined = g.Dropout(g.Concat({a, b}, 1, "joined"), 0.5, "drop");
  Symbol pooled = g.MaxPool(joined, {.kernel = {3, 3}, .stride = {2, 2}, .pad = {1, 1}}, "pool");
  Symbol dw = g.Conv(pooled, {.num_filter = 32, .kernel = {3, 3}, .pad = {1, 1}, .num_group = 32},
                     "depthwise");
  Symbol sum =
      g.Relu(g.Add(g.Conv(dw, {.num_filter = 32, .kernel = {1, 1}}, "project"), pooled, "sum"),
             "sum_relu");
  Symbol down =
      g.Conv(sum, {.num_filter = 48, .kernel = {3, 3}, .stride = {2, 2}, .pad = {1, 1}}, "down");
  Symbol narrow = g.Conv(down, {.num_filter = 8, .kernel = {1, 1}}, "narrow");
  Symbol logits =
      g.FullyConnected(g.Flatten(g.GlobalAvgPool(narrow, "gap"), "flat"), {.num_hidden = 5}, "fc");
  return g.Build({logits, g.GlobalAvgPool(down, "down_gap")});
}

// BlockedNet's nodes that NCHW16c can hold (all 4-D inputs and the output in whole blocks).
const std::vector<std::string> kBlockable = {
    "stem", "stem_bn",   "stem_relu", "branch_a", "branch_b", "branch_b_clip", "joined",  "drop",
    "pool", "depthwise", "project",   "sum",      "sum_relu", "down",          "down_gap"};

// Every node that can run in NCHW16c does: the inference outputs are those of the graph as
// written; the transforms are layout_transform nodes at the edges only (the data in, `down` out
// to `narrow`, the graph output back to NCHW, nothing for the weights, which stay OIHW), and
// BatchNorm reads the blocks.
TEST_F(ConvPlanningTest, AllBlockedComputesTheSameInference) {
  const Graph net = BlockedNet();
  std::map<std::string, L> layouts;
  for (const std::string& name : kBlockable) layouts[name] = L::kNCHW16c;
  std::vector<PlannedTransform> transforms;
  ExpectSameRun(RunPlanned(net, false, ConvPlanKind::kNone),
                RunRewritten(net, layouts, false, &transforms), "inference");
  std::set<std::string> names;
  for (const PlannedTransform& t : transforms) names.insert(t.node);
  EXPECT_EQ(names, (std::set<std::string>{"data_to_nchw16c", "down_output_to_nchw",
                                          "down_gap_output_to_nchw"}));
  const Graph rewritten = RewriteLayouts(net, InferGraphShapes(net), layouts, false);
  const Node& into = rewritten.node(rewritten.Find("data_to_nchw16c"));
  EXPECT_EQ(into.op->name, "layout_transform");
  EXPECT_EQ(into.attrs.GetString("dst_layout"), "NCHW16c");
  EXPECT_EQ(rewritten.node(rewritten.Find("stem_bn")).attrs.GetInt("channel_block"), 16);
  EXPECT_EQ(rewritten.node(rewritten.Find("joined")).attrs.GetInt("dim"), 1);
  EXPECT_EQ(rewritten.node(rewritten.Find("depthwise")).attrs.GetString("layout"), "NCHW16c");
  const GraphShapes shapes = InferGraphShapes(rewritten);
  EXPECT_EQ(shapes.of({rewritten.Find("sum_relu"), 0}), (Shape{2, 2, 5, 5, 16}));
  const Node& stem = rewritten.node(rewritten.Find("stem"));
  EXPECT_EQ(shapes.of(stem.inputs[1]), (Shape{32, 16, 3, 3}));  // the weight as written
}

// A squeeze-excitation gate (global pooling, two 1x1 convolutions, a hard sigmoid) multiplies its
// block's output broadcast along the image: the product follows the block into NHWC and NCHW16c
// with its gate, so no transform surrounds it, and computes the same network.
TEST_F(ConvPlanningTest, GatesBroadcastAlongTheImageFollowTheLayout) {
  GraphBuilder g;
  Symbol x = g.Input("data", {2, 16, 6, 6});
  Symbol y = g.Conv(x, {.num_filter = 32, .kernel = {3, 3}, .pad = {1, 1}}, "conv");
  Symbol gate = g.GlobalAvgPool(y, "squeeze");
  gate = g.Relu(g.Conv(gate, {.num_filter = 16, .kernel = {1, 1}}, "reduce"), "reduce_relu");
  gate = g.HardSigmoid(g.Conv(gate, {.num_filter = 32, .kernel = {1, 1}}, "expand"), "gate");
  y = g.Multiply(y, gate, "scale");
  const Graph net = g.Build({g.Conv(y, {.num_filter = 16, .kernel = {1, 1}}, "project")});
  const GraphShapes shapes = InferGraphShapes(net);
  const std::vector<std::string> nodes = {"conv",   "squeeze", "reduce", "reduce_relu",
                                          "expand", "gate",    "scale",  "project"};
  for (L layout : {L::kNHWC, L::kNCHW16c}) {
    SCOPED_TRACE(ActivationLayoutName(layout));
    std::map<std::string, L> layouts;
    for (const std::string& name : nodes) layouts[name] = layout;
    std::vector<PlannedTransform> transforms;
    ExpectSameRun(RunPlanned(net, false, ConvPlanKind::kNone),
                  RunRewritten(net, layouts, false, &transforms), "inference");
    std::set<std::string> names;  // of the activations' transforms (NHWC's weights move too)
    for (const PlannedTransform& t : transforms) {
      if (t.node.find("_weight_") == std::string::npos) names.insert(t.node);
    }
    const std::string into = std::string("data_to_") + (layout == L::kNHWC ? "nhwc" : "nchw16c");
    EXPECT_EQ(names, (std::set<std::string>{into, "project_output_to_nchw"}));
  }
  // A product broadcast across channels stays as written.
  GraphBuilder across;
  Symbol a = across.Input("data", {2, 16, 6, 6});
  Symbol c = across.Conv(a, {.num_filter = 16, .kernel = {1, 1}}, "conv");
  Symbol per_pixel = across.Mean(c, {1}, true, "per_pixel");
  const Graph mixed = across.Build({across.Multiply(c, per_pixel, "scale")});
  EXPECT_THROW(RewriteLayouts(mixed, InferGraphShapes(mixed), {{"scale", L::kNHWC}}, false),
               Error);
}

// All three layouts side by side: transforms between NHWC and NCHW16c too, a residual Add whose
// inputs arrive in two layouts.
TEST_F(ConvPlanningTest, MixedLayoutsWithBlockedComputeTheSameInference) {
  const Graph net = BlockedNet();
  const std::map<std::string, L> layouts = {
      {"stem", L::kNCHW16c},  {"stem_bn", L::kNHWC},     {"stem_relu", L::kNCHW16c},
      {"branch_a", L::kNHWC}, {"branch_b", L::kNCHW16c}, {"joined", L::kNHWC},
      {"pool", L::kNCHW16c},  {"depthwise", L::kNHWC},   {"project", L::kNCHW16c},
      {"sum", L::kNHWC},      {"down", L::kNCHW16c},     {"down_gap", L::kNHWC}};
  std::vector<PlannedTransform> transforms;
  ExpectSameRun(RunPlanned(net, false, ConvPlanKind::kNone),
                RunRewritten(net, layouts, false, &transforms), "inference");
  int between_nhwc_and_blocked = 0;
  for (const PlannedTransform& t : transforms) {
    between_nhwc_and_blocked +=
        (t.from == L::kNHWC && t.to == L::kNCHW16c) || (t.from == L::kNCHW16c && t.to == L::kNHWC);
    EXPECT_GE(t.cost_ms, 0.0) << t.node;
  }
  EXPECT_GT(between_nhwc_and_blocked, 3);
}

TEST_F(ConvPlanningTest, BlockedIsRefusedWhereItCannotRun) {
  const Graph net = BlockedNet();
  const GraphShapes shapes = InferGraphShapes(net);
  auto expect_refused = [&](const std::map<std::string, L>& layouts, bool training,
                            const Context& ctx, const std::string& fragment) {
    try {
      RewriteLayouts(net, shapes, layouts, training, nullptr, ctx);
      ADD_FAILURE() << "rewritten: expected an error with '" << fragment << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  // 8 filters: no whole block; training: no backward kernels; the GPU: no kernels.
  expect_refused({{"narrow", L::kNCHW16c}}, false, Context::CPU(),
                 "'narrow' (Convolution) cannot run in NCHW16c");
  expect_refused({{"stem", L::kNCHW16c}}, true, Context::CPU(), "'stem' (Convolution)");
  expect_refused({{"pool", L::kNCHW16c}}, false, Context::GPU(0), "'pool' (Pooling)");
  // The planner does not offer it in training.
  const PlannedGraph training = PlanConvolutions(
      net, shapes, {.kind = ConvPlanKind::kGlobal, .training = true, .ctx = Context::CPU()});
  for (const PlannedLayer& layer : training.report.layers) {
    EXPECT_LT(layer.cost_ms[Index(L::kNCHW16c)], 0.0) << layer.node;
    EXPECT_NE(layer.chosen, L::kNCHW16c) << layer.node;
  }
}

// With AVX-512F the planner offers NCHW16c to every node that can run in it, and the three plans
// compute the same network.
TEST_F(ConvPlanningTest, PlansOfferBlockedForCpuInference) {
  if (!cpu::CpuSupportsAvx512f()) GTEST_SKIP() << "NCHW16c is offered on CPUs with AVX-512F only";
  const Graph net = BlockedNet();
  const PlannedGraph planned =
      PlanConvolutions(net, InferGraphShapes(net), {.kind = ConvPlanKind::kGlobal});
  ASSERT_TRUE(planned.report.planned);
  const std::set<std::string> blockable(kBlockable.begin(), kBlockable.end());
  for (const PlannedLayer& layer : planned.report.layers) {
    EXPECT_EQ(layer.cost_ms[Index(L::kNCHW16c)] >= 0.0, blockable.count(layer.node) == 1)
        << layer.node;
    if (layer.op == "Convolution" && blockable.count(layer.node) == 1) {
      EXPECT_NE(layer.algorithms[Index(L::kNCHW16c)].find(
                    layer.node == "depthwise" ? "depthwise_direct" : "direct_nchw16c"),
                std::string::npos)
          << layer.node;
    }
  }
  EXPECT_NE(planned.report.Summary().find(" NCHW16c, "), std::string::npos)
      << planned.report.Summary();
  EXPECT_LE(planned.report.predicted_global_ms, planned.report.predicted_local_ms * (1 + 1e-9));
  const RunResult none = RunPlanned(net, false, ConvPlanKind::kNone);
  ExpectSameRun(none, RunPlanned(net, false, ConvPlanKind::kLocal), "local");
  ExpectSameRun(none, RunPlanned(net, false, ConvPlanKind::kGlobal), "global");
}

// With the depthwise fusion on (CPU inference), the planner times the MobileNet block that would
// fuse in NHWC both fused and apart, credits the fraction fusing saves of the stages' costs to
// keeping it NHWC (no plan is predicted below zero), and the executor keeps apart a block
// measured slower fused; every plan still computes the network.
TEST_F(ConvPlanningTest, DepthwiseBlocksAreCostedAsTheyRun) {
  GraphBuilder g;
  // The expanded tensor (1 x 96 x 16 x 16 floats, 96 KB) is far below the size from which the
  // executor fuses an unmeasured block (DepthwiseBlockFusionMinBytes): the planner measures every
  // block whatever its size.
  Symbol x = g.Input("data", {1, 16, 16, 16});
  Symbol y = g.Conv(x, {.num_filter = 96, .kernel = {1, 1}}, "expand");
  y = g.Conv(y, {.num_filter = 96, .kernel = {3, 3}, .pad = {1, 1}, .num_group = 96},
             "depthwise");
  y = g.Conv(y, {.num_filter = 16, .kernel = {1, 1}}, "project");
  const Graph net = g.Build({y});
  ASSERT_LT(size_t{96 * 16 * 16 * 4}, cpu::DepthwiseBlockFusionMinBytes());
  auto exec = Executor::Bind(net, {.conv_plan = ConvPlanKind::kGlobal});
  const ConvPlanReport& report = exec->conv_plan();
  ASSERT_EQ(report.depthwise_blocks.size(), 1u);
  const PlannedDepthwiseBlock& block = report.depthwise_blocks[0];
  EXPECT_EQ(block.stages, (FusedDepthwiseBlock{"expand", "depthwise", "project"}));
  EXPECT_GT(block.fused_ms, 0.0);
  EXPECT_GT(block.apart_ms, 0.0);
  EXPECT_NE(report.Format(false).find("depthwise block expand -> depthwise -> project: fused "),
            std::string::npos)
      << report.Format(false);
  EXPECT_GE(report.predicted_global_ms, 0.0);
  EXPECT_GE(report.predicted_local_ms, 0.0);
  EXPECT_GE(report.predicted_none_ms, 0.0);
  EXPECT_LE(report.predicted_global_ms, report.predicted_local_ms * (1 + 1e-9));
  EXPECT_LE(report.predicted_global_ms, report.predicted_none_ms * (1 + 1e-9));
  // The executor fuses the block only if it was measured faster fused (and planned NHWC whole),
  // small as it is.
  const bool fused = !exec->fused_depthwise_blocks().empty();
  EXPECT_TRUE(!fused || block.fuses());
  const bool planned_nhwc = std::all_of(report.layers.begin(), report.layers.end(),
                                        [](const PlannedLayer& layer) {
                                          return layer.chosen == ActivationLayout::kNHWC;
                                        });
  EXPECT_EQ(fused, block.fuses() && planned_nhwc);
  // Both ways were kept: binding again times nothing and weighs the block the same.
  auto again = Executor::Bind(net, {.conv_plan = ConvPlanKind::kGlobal});
  EXPECT_EQ(again->conv_plan().timings_run, 0);
  ASSERT_EQ(again->conv_plan().depthwise_blocks.size(), 1u);
  EXPECT_EQ(again->conv_plan().depthwise_blocks[0].fused_ms, block.fused_ms);
  EXPECT_EQ(again->conv_plan().depthwise_blocks[0].apart_ms, block.apart_ms);
  // Planned without the fusion (its setting off), no block is costed.
  auto apart = Executor::Bind(net, {.conv_plan = ConvPlanKind::kGlobal, .fuse_depthwise = false});
  EXPECT_TRUE(apart->conv_plan().depthwise_blocks.empty());
  ExpectSameRun(RunPlanned(net, false, ConvPlanKind::kNone),
                RunPlanned(net, false, ConvPlanKind::kGlobal), "global");
}

TEST_F(ConvPlanningTest, UnknownPlanNamesTheChoices) {
  try {
    ParseConvPlanKind("best");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("none, local or global"), std::string::npos) << e.what();
  }
  EXPECT_THROW(settings().Set("MXNET_CONV_PLAN", "best"), Error);
}

// (In the fixture: the timings go to its temporary tuning DB.)
TEST_F(ConvPlanningTest, TransformsAreMeasuredBetweenEveryPair) {
  const Shape nchw{2, 32, 4, 5};
  EXPECT_EQ(LayoutTransformMs(nchw, L::kNCHW, L::kNCHW, DType::kFloat32, true, Context::CPU()).ms,
            0.0);
  for (L from : kActivationLayouts) {
    for (L to : kActivationLayouts) {
      if (from == to) continue;
      const MeasuredMs cost = LayoutTransformMs(LayoutShape(nchw, from), from, to, DType::kFloat32,
                                                false, Context::CPU());
      EXPECT_GT(cost.ms, 0.0) << ActivationLayoutName(from) << " -> " << ActivationLayoutName(to);
    }
  }
  EXPECT_EQ(LayoutPermutationText(L::kNCHW, L::kNHWC), "(0,2,3,1)");
}

}  // namespace
}  // namespace mxlite
