// GraphTimer (scheduler/planning/graph_timer.h), the planner's runner of the graphs it times:
// a pass computes what an executor of the same graph computes (forward; in training the data's
// gradient), passes repeat, training graphs that are not chains and unknown names are refused with
// errors naming them, and a kernel's error reaches RunPass and leaves the timer usable.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "scheduler/graph/executor.h"
#include "scheduler/graph/graph_builder.h"
#include "scheduler/planning/graph_timer.h"
#include "tests/scheduler/outputs_near.h"

namespace mxlite {
namespace {

using testing_support::ExpectValuesNear;

std::vector<float> HostValues(const NDArray& array) {
  array.WaitToRead();
  std::vector<float> values(static_cast<size_t>(array.size()));
  array.SyncCopyToCPU(values.data(), values.size() * sizeof(float));
  return values;
}

void CopyInto(const NDArray& from, NDArray to) {
  const std::vector<float> values = HostValues(from);
  to.SyncCopyFromCPU(values.data(), values.size() * sizeof(float));
}

// Binds `graph` as written (no planning, no fusion) with every variable uniform in [-1, 1).
std::unique_ptr<Executor> BindAsWritten(const Graph& graph, bool training) {
  BindOptions options;
  options.training = training;
  if (training) options.input_gradients = {"data"};
  options.conv_plan = ConvPlanKind::kNone;
  options.fuse_silu = options.fuse_activations = options.fuse_depthwise = options.fuse_residual =
      false;
  std::unique_ptr<Executor> exec = Executor::Bind(graph, options);
  std::mt19937_64 random(7);
  std::uniform_real_distribution<float> uniform(-1, 1);
  for (const Node& node : graph.nodes()) {
    if (!node.is_variable()) continue;
    NDArray& arg = exec->Arg(node.name);
    std::vector<float> values(static_cast<size_t>(arg.size()));
    for (float& v : values) v = uniform(random);
    arg.SyncCopyFromCPU(values.data(), values.size() * sizeof(float));
  }
  return exec;
}

// The same values in every variable of `timer` as in `exec`.
void CopyVariables(const Graph& graph, Executor& exec, const GraphTimer& timer) {
  for (const Node& node : graph.nodes()) {
    if (node.is_variable()) CopyInto(exec.Arg(node.name), timer.Variable(node.name));
  }
}

// data -> convolution (tuned: it keeps state) -> relu -> max pooling -> batch norm.
Graph ConvReluPoolNorm() {
  GraphBuilder g;
  Symbol x = g.Input("data", {2, 3, 9, 9});
  Symbol conv = g.Conv(x, {.num_filter = 4, .kernel = {3, 3}, .pad = {1, 1}}, "conv");
  Symbol pool = g.Op("Pooling", {g.Activation(conv, "relu", "relu")},
                     {{"kernel", "(2,2)"}, {"stride", "(2,2)"}, {"pool_type", "max"}}, "pool");
  return g.Build({g.Op("BatchNorm", {pool}, {{"fix_gamma", "false"}}, "norm")});
}

TEST(GraphTimer, AForwardPassComputesWhatAnExecutorComputes) {
  const Graph graph = ConvReluPoolNorm();
  std::unique_ptr<Executor> exec = BindAsWritten(graph, false);
  exec->Forward(false);
  GraphTimer timer(graph, Context::CPU(), /*training=*/false);
  CopyVariables(graph, *exec, timer);
  for (int pass = 0; pass < 3; ++pass) {
    timer.RunPass();
    ExpectValuesNear(HostValues(exec->outputs()[0]), HostValues(timer.Output(0)), 1e-6,
                     "pass " + std::to_string(pass));
  }
  // A new weight between passes is seen (the convolution derives its packed weight again).
  NDArray weight = exec->Arg("conv_weight");
  std::vector<float> doubled = HostValues(weight);
  for (float& w : doubled) w *= 2.0f;
  weight.SyncCopyFromCPU(doubled.data(), doubled.size() * sizeof(float));
  CopyInto(weight, timer.Variable("conv_weight"));
  exec->Forward(false);
  timer.RunPass();
  ExpectValuesNear(HostValues(exec->outputs()[0]), HostValues(timer.Output(0)), 1e-6,
                   "after the weight changed");
}

TEST(GraphTimer, ATrainingPassEndsWithTheDataGradientAnExecutorComputes) {
  const Graph graph = ConvReluPoolNorm();
  std::unique_ptr<Executor> exec = BindAsWritten(graph, true);
  GraphTimer timer(graph, Context::CPU(), /*training=*/true);
  CopyVariables(graph, *exec, timer);  // before the executor's pass updates the moving statistics
  exec->Forward(true);
  exec->Backward();
  timer.RunPass();
  ExpectValuesNear(HostValues(exec->outputs()[0]), HostValues(timer.Output(0)), 1e-6, "output");
  ExpectValuesNear(HostValues(exec->Gradient("data")), HostValues(timer.InputGradient("data")),
                   1e-5, "data gradient");
}

TEST(GraphTimer, ATrainingGraphThatIsNotAChainIsRefusedNamingTheValue) {
  GraphBuilder g;
  Symbol x = g.Input("data", {2, 4});
  const Graph graph = g.Build({g.Add(g.Activation(x, "relu", "a"), g.Activation(x, "tanh", "b"))});
  try {
    GraphTimer timer(graph, Context::CPU(), /*training=*/true);
    FAIL() << "a value read twice was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("data"), std::string::npos) << error.what();
  }
  GraphTimer inference(graph, Context::CPU(), /*training=*/false);  // forward needs no chain
  inference.RunPass();
}

TEST(GraphTimer, UnknownNamesAreErrorsNamingThem) {
  const Graph graph = ConvReluPoolNorm();
  GraphTimer timer(graph, Context::CPU(), /*training=*/false);
  EXPECT_THROW(timer.Variable("weights"), Error);
  EXPECT_THROW(timer.InputGradient("data"), Error);  // not training
  EXPECT_THROW(timer.Output(1), Error);
  try {
    timer.Variable("weights");
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("'weights'"), std::string::npos) << error.what();
  }
}

TEST(GraphTimer, AKernelErrorReachesRunPassAndTheTimerStaysUsable) {
  // SoftmaxOutput's backward refuses a label that is not a class index.
  GraphBuilder g;
  Symbol x = g.Input("data", {2, 3});
  Symbol label = g.Input("label", {2});
  const Graph graph = g.Build({g.Op("SoftmaxOutput", {x, label}, {}, "softmax")});
  GraphTimer timer(graph, Context::CPU(), /*training=*/true);
  const std::vector<float> data = {0.5f, -1.0f, 2.0f, 0.0f, 1.0f, -2.0f};
  timer.Variable("data").SyncCopyFromCPU(data.data(), data.size() * sizeof(float));
  const std::vector<float> bad = {1.0f, 7.0f};
  timer.Variable("label").SyncCopyFromCPU(bad.data(), bad.size() * sizeof(float));
  try {
    timer.RunPass();
    FAIL() << "label 7 of 3 classes was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("softmax"), std::string::npos) << error.what();
  }
  const std::vector<float> good = {1.0f, 2.0f};
  timer.Variable("label").SyncCopyFromCPU(good.data(), good.size() * sizeof(float));
  timer.RunPass();
  const std::vector<float> gradient = HostValues(timer.InputGradient("data"));
  EXPECT_LT(gradient[1], 0.0f);  // the labelled class's gradient is p - 1
  EXPECT_LT(gradient[5], 0.0f);
}

}  // namespace
}  // namespace mxlite
