// The plan check at bind (scheduler/planning/plan_check.h): the rule with fake times both ways and
// at the noise margin; times measured once and found in the cost cache by the next bind; the
// fingerprint follows the graph; and an executor bound with the check runs the plan or, refused,
// the graph as written, computing the same outputs either way.
#include "scheduler/planning/plan_check.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "core/error.h"
#include "core/settings.h"
#include "scheduler/graph/executor.h"
#include "scheduler/graph/graph_builder.h"
#include "scheduler/planning/cost_cache.h"
#include "tests/scheduler/outputs_near.h"
#include "tests/scheduler/random_arguments.h"

namespace mxlite {
namespace {

namespace fs = std::filesystem;

class PlanCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A folder per test: the cost cache keeps a DB open while its path stays the same.
    static int counter = 0;
    folder_ = fs::temp_directory_path() / ("mxlite_plan_check_test_" + std::to_string(getpid()) +
                                           "_" + std::to_string(counter++));
    fs::remove_all(folder_);
    settings().Set("MXNET_TUNING_DB_PATH", (folder_ / "tuning.sqlite").string());
  }
  void TearDown() override {
    settings().Reset("MXNET_TUNING_DB_PATH");
    fs::remove_all(folder_);
  }
  fs::path folder_;
};

TEST(PlanKeptTest, ThePlanStaysUnlessWrittenIsFasterBeyondTheMargin) {
  EXPECT_TRUE(PlanKept(5.0, 10.0));    // the plan is faster
  EXPECT_FALSE(PlanKept(10.0, 5.0));   // the plan is slower
  EXPECT_TRUE(PlanKept(10.0, 9.8));    // 2% apart: noise, the plan stays
  EXPECT_FALSE(PlanKept(10.0, 9.6));   // 4% apart
  EXPECT_TRUE(PlanKept(10.0, 10.0));
}

TEST_F(PlanCheckTest, TimesAreMeasuredOnceThenFoundInTheCache) {
  int timed = 0;
  auto slower_plan = [&] {
    ++timed;
    return PassTimes{12.0, 8.0};
  };
  const PlanCheck first = CheckPlan("plan check test-a", Context::CPU(), slower_plan);
  EXPECT_TRUE(first.measured);
  EXPECT_FALSE(first.kept);
  EXPECT_EQ(first.planned_ms, 12.0);
  EXPECT_EQ(first.written_ms, 8.0);
  EXPECT_NE(first.Summary().find("plan refused"), std::string::npos) << first.Summary();
  const PlanCheck again = CheckPlan("plan check test-a", Context::CPU(), slower_plan);
  EXPECT_EQ(timed, 1);
  EXPECT_FALSE(again.measured);
  EXPECT_FALSE(again.kept);
  EXPECT_NE(again.Summary().find("from the DB"), std::string::npos) << again.Summary();

  const PlanCheck faster =
      CheckPlan("plan check test-b", Context::CPU(), [] { return PassTimes{4.0, 8.0}; });
  EXPECT_TRUE(faster.kept);
  EXPECT_NE(faster.Summary().find("planned pass 4.00 ms, as written 8.00 ms (measured): plan kept"),
            std::string::npos)
      << faster.Summary();
}

TEST_F(PlanCheckTest, TimesThatAreNotPositiveAreErrors) {
  for (double bad : {0.0, -1.0, std::nan("")}) {
    EXPECT_THROW(CheckPlan("plan check test-bad", Context::CPU(),
                           [&] { return PassTimes{bad, 1.0}; }),
                 Error);
  }
}

Graph ConvNet(int channels) {
  GraphBuilder g;
  Symbol x = g.Input("data", {1, channels, 28, 28});
  for (int i = 0; i < 3; ++i) {
    x = g.Relu(g.Conv(x, {.num_filter = channels, .kernel = {3, 3}, .pad = {1, 1}},
                      "conv" + std::to_string(i)),
               "relu" + std::to_string(i));
  }
  return g.Build({g.GlobalAvgPool(x, "gap")});
}

TEST(PlanFingerprintTest, FollowsTheGraphAndThePlan) {
  const Graph a = ConvNet(16), b = ConvNet(32);
  const GraphShapes shapes_a = InferGraphShapes(a), shapes_b = InferGraphShapes(b);
  const std::string key = PlanFingerprint(a, shapes_a, ConvPlanKind::kGlobal, Context::CPU());
  EXPECT_EQ(key, PlanFingerprint(a, shapes_a, ConvPlanKind::kGlobal, Context::CPU()));
  EXPECT_NE(key, PlanFingerprint(b, shapes_b, ConvPlanKind::kGlobal, Context::CPU()));
  EXPECT_NE(key, PlanFingerprint(a, shapes_a, ConvPlanKind::kLocal, Context::CPU()));
}

std::vector<std::vector<float>> Outputs(Executor& exec) {
  testing_support::FillRandomArguments(exec, 7);
  exec.Forward(false);
  std::vector<std::vector<float>> outputs;
  for (const NDArray& output : exec.outputs()) outputs.push_back(output.ToVector<float>());
  return outputs;
}

bool MovesALayer(const ConvPlanReport& report) {
  for (const PlannedLayer& layer : report.layers) {
    if (layer.chosen != layer.written) return true;
  }
  return !report.transforms.empty();
}

// The executor's side, with the decision fixed by times stored under the plan's fingerprint:
// refused, it runs the graph as written; kept, the plan; the outputs are the same.
TEST_F(PlanCheckTest, AnExecutorRunsThePlanOrTheGraphAsWritten) {
  const Graph graph = ConvNet(64);
  BindOptions options;
  options.conv_plan = ConvPlanKind::kGlobal;
  options.plan_guard = false;
  std::unique_ptr<Executor> unchecked = Executor::Bind(graph, options);
  if (!MovesALayer(unchecked->conv_plan())) {
    GTEST_SKIP() << "the planner keeps every layer as written on this machine: nothing to check";
  }
  const std::vector<std::vector<float>> expected = Outputs(*unchecked);
  const std::string fingerprint = PlanFingerprint(unchecked->graph(), unchecked->shapes(),
                                                  ConvPlanKind::kGlobal, Context::CPU());
  const conv::TuningEnvironment cpu = PlanningEnvironment(Context::CPU());
  options.plan_guard = true;

  PlanningCostCache::Global().Store(fingerprint + " planned", "pass", 10.0, cpu);
  PlanningCostCache::Global().Store(fingerprint + " written", "pass", 5.0, cpu);
  std::unique_ptr<Executor> refused = Executor::Bind(graph, options);
  ASSERT_TRUE(refused->plan_check().has_value());
  EXPECT_FALSE(refused->plan_check()->kept);
  EXPECT_FALSE(refused->plan_check()->measured);
  EXPECT_FALSE(refused->conv_plan().planned);
  testing_support::ExpectOutputsNear(expected, Outputs(*refused), 1e-4);

  PlanningCostCache::Global().Store(fingerprint + " planned", "pass", 5.0, cpu);
  PlanningCostCache::Global().Store(fingerprint + " written", "pass", 10.0, cpu);
  std::unique_ptr<Executor> kept = Executor::Bind(graph, options);
  ASSERT_TRUE(kept->plan_check().has_value());
  EXPECT_TRUE(kept->plan_check()->kept);
  EXPECT_TRUE(kept->conv_plan().planned);
  testing_support::ExpectOutputsNear(expected, Outputs(*kept), 1e-4);
}

// With nothing stored, the check times real passes (and keeps their times).
TEST_F(PlanCheckTest, AFirstBindMeasuresBothPasses) {
  BindOptions options;
  options.conv_plan = ConvPlanKind::kGlobal;
  options.plan_guard = true;
  std::unique_ptr<Executor> exec = Executor::Bind(ConvNet(64), options);
  if (!exec->plan_check()) {
    EXPECT_FALSE(MovesALayer(exec->conv_plan()));
    GTEST_SKIP() << "the planner keeps every layer as written on this machine: nothing to check";
  }
  EXPECT_TRUE(exec->plan_check()->measured);
  EXPECT_GT(exec->plan_check()->planned_ms, 0.0);
  EXPECT_GT(exec->plan_check()->written_ms, 0.0);
  EXPECT_EQ(exec->plan_check()->kept, exec->conv_plan().planned);
  std::unique_ptr<Executor> again = Executor::Bind(ConvNet(64), options);
  ASSERT_TRUE(again->plan_check().has_value());
  EXPECT_FALSE(again->plan_check()->measured);
}

}  // namespace
}  // namespace mxlite
