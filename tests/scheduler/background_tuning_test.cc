// Background tuning as a program meets it (MXNET_TUNING_DB_MODE=background): the first bind of a
// network runs the heuristic's picks, times nothing and plans nothing, while every layer's tuning
// (in each layout the planner offers it) is queued once; the tunings land in the DB, and the next
// bind runs the tuned picks, plans with them, and computes the same network.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "core/settings.h"
#include "ops/conv/background_tuner.h"
#include "ops/conv/tuner.h"
#include "scheduler/graph/executor.h"
#include "scheduler/graph/graph_builder.h"
#include "tests/scheduler/random_arguments.h"

namespace mxlite {
namespace {

namespace fs = std::filesystem;
using conv::BackgroundTuner;
using conv::LayerTuning;
using conv::PickOrigin;

// Two tuned convolutions (3x3, 1x1) and one with cudnn_tune=off.
Graph Net() {
  GraphBuilder g;
  Symbol x = g.Input("data", {2, 16, 12, 12});
  Symbol y = g.Relu(g.Conv(x, {.num_filter = 16, .kernel = {3, 3}, .pad = {1, 1}}, "conv_a"));
  y = g.Conv(y, {.num_filter = 16, .kernel = {1, 1}}, "conv_b");
  y = g.Conv(
      y, {.num_filter = 16, .kernel = {3, 3}, .pad = {1, 1}, .num_group = 16, .cudnn_tune = "off"},
      "conv_c");
  return g.Build({y});
}

class BackgroundTuningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    folder_ =
        fs::temp_directory_path() / ("mxlite_background_tuning_test_" + std::to_string(getpid()) +
                                     "_" + std::to_string(counter++));
    fs::remove_all(folder_);
    settings().Set("MXNET_TUNING_DB_PATH", (folder_ / "tuning.sqlite").string());
    settings().Set("MXNET_TUNING_DB_MODE", "background");
    BackgroundTuner::Global().WaitUntilIdle();
  }
  void TearDown() override {
    BackgroundTuner::Global().Resume();
    BackgroundTuner::Global().WaitUntilIdle();
    for (const char* name : {"MXNET_TUNING_DB_PATH", "MXNET_TUNING_DB_MODE"}) {
      settings().Reset(name);
    }
    fs::remove_all(folder_);
  }

  // The file as a new process opens it: no cache of this process's.
  std::unique_ptr<conv::TuningDb> OpenFile() const {
    return std::make_unique<conv::TuningDb>(conv::TuningDbOptions{
        (folder_ / "tuning.sqlite").string(), "", conv::TuningDbMode::kUpdate});
  }

  fs::path folder_;
};

std::vector<float> Forward(Executor& exec) {
  testing_support::FillRandomArguments(exec, 5);
  exec.Forward(false);
  return exec.outputs()[0].ToVector<float>();
}

int CountOrigin(const std::vector<LayerTuning>& decisions, PickOrigin origin) {
  int count = 0;
  for (const LayerTuning& decision : decisions) count += decision.origin == origin;
  return count;
}

TEST_F(BackgroundTuningTest, TheFirstBindRunsTheHeuristicAndTheNextTheTunedPicks) {
  BackgroundTuner& background = BackgroundTuner::Global();
  background.Pause();  // what the first bind queued stays queued until the checks below
  const BackgroundTuner::Counts before = background.counts();

  auto first = Executor::Bind(Net(), {.conv_plan = ConvPlanKind::kGlobal});
  const std::vector<LayerTuning> decisions = first->TuningDecisions();
  ASSERT_EQ(decisions.size(), 3u);
  for (const LayerTuning& decision : decisions) {
    SCOPED_TRACE(decision.layer);
    EXPECT_EQ(decision.origin,
              decision.layer == "conv_c" ? PickOrigin::kHeuristic : PickOrigin::kBackground);
    EXPECT_FALSE(decision.record.algorithm.empty());
    EXPECT_EQ(decision.candidates_timed, 0);
    EXPECT_EQ(decision.seconds, 0.0);
  }
  const std::string report = first->TuningReport(false);
  EXPECT_NE(report.find("from heuristic (tuning in background)"), std::string::npos) << report;
  EXPECT_NE(report.find("2 by heuristic (tuning in background), 0 benchmarked"), std::string::npos)
      << report;
  // Planning waits, and measures nothing meanwhile.
  const ConvPlanReport& plan = first->conv_plan();
  EXPECT_FALSE(plan.planned);
  EXPECT_EQ(plan.layers_tuning_in_background, 2);
  EXPECT_EQ(plan.timings_run, 0);
  EXPECT_NE(plan.Summary().find("planning waits for 2 layers tuning in background"),
            std::string::npos)
      << plan.Summary();
  // Each tuned layer in each layout offered to it (NCHW, NHWC and, with AVX-512, NCHW16c) is
  // queued once, however often planning and binding asked; nothing is stored yet.
  const int asked = CountOrigin(plan.decisions, PickOrigin::kBackground);
  EXPECT_GE(asked, 4);
  EXPECT_EQ(background.counts().queued, before.queued + asked);
  EXPECT_EQ(background.pending(), asked);
  for (const LayerTuning& decision : plan.decisions) {
    EXPECT_FALSE(
        OpenFile()->Lookup(decision.problem, conv::TuningEnvironment::ForCpu()).has_value())
        << decision.problem.ToString();
  }

  // A second bind before the jobs ran queues nothing more.
  auto second = Executor::Bind(Net(), {.conv_plan = ConvPlanKind::kGlobal});
  EXPECT_EQ(CountOrigin(second->TuningDecisions(), PickOrigin::kBackground), 2);
  EXPECT_EQ(background.counts().queued, before.queued + asked);

  background.Resume();
  // The first executor runs while its layers are tuned.
  const std::vector<float> heuristic = Forward(*first);
  background.WaitUntilIdle();
  EXPECT_EQ(background.counts().stored, before.stored + asked);
  // Every tuning is in the file.
  std::map<std::string, conv::TuningRecord> stored;
  for (const LayerTuning& decision : plan.decisions) {
    if (decision.origin != PickOrigin::kBackground) continue;
    const auto hit = OpenFile()->Lookup(decision.problem, conv::TuningEnvironment::ForCpu());
    ASSERT_TRUE(hit.has_value()) << decision.problem.ToString();
    EXPECT_EQ(hit->source, conv::TuningDbSource::kUserDb);
    EXPECT_GE(hit->record.time_ms, 0.0);
    stored[decision.problem.ToString()] = hit->record;
  }

  // The next bind plans with them and runs what was tuned.
  auto next = Executor::Bind(Net(), {.conv_plan = ConvPlanKind::kGlobal});
  EXPECT_TRUE(next->conv_plan().planned);
  EXPECT_EQ(next->conv_plan().layers_tuning_in_background, 0);
  for (const LayerTuning& decision : next->TuningDecisions()) {
    SCOPED_TRACE(decision.layer);
    if (decision.layer == "conv_c") continue;
    EXPECT_EQ(decision.origin, PickOrigin::kCache);
    EXPECT_EQ(decision.candidates_timed, 0);
    const auto found = stored.find(decision.problem.ToString());
    ASSERT_NE(found, stored.end()) << decision.problem.ToString();
    EXPECT_EQ(decision.record.algorithm, found->second.algorithm);
  }
  EXPECT_EQ(background.counts().queued, before.queued + asked);

  const std::vector<float> tuned = Forward(*next);
  ASSERT_EQ(heuristic.size(), tuned.size());
  for (size_t i = 0; i < tuned.size(); ++i) {
    EXPECT_NEAR(tuned[i], heuristic[i], 1e-4 * (1 + std::fabs(heuristic[i]))) << i;
  }
}

TEST_F(BackgroundTuningTest, TrainingQueuesEveryDirection) {
  BackgroundTuner& background = BackgroundTuner::Global();
  background.Pause();
  const int64_t queued = background.counts().queued;
  auto first = Executor::Bind(Net(), {.training = true, .conv_plan = ConvPlanKind::kNone});
  const std::vector<LayerTuning> decisions = first->TuningDecisions();
  ASSERT_EQ(decisions.size(), 9u);  // 3 layers x 3 directions
  EXPECT_EQ(CountOrigin(decisions, PickOrigin::kBackground), 6);
  EXPECT_EQ(CountOrigin(decisions, PickOrigin::kHeuristic), 3);
  EXPECT_EQ(background.counts().queued, queued + 6);
  background.Resume();
  background.WaitUntilIdle();
  auto next = Executor::Bind(Net(), {.training = true, .conv_plan = ConvPlanKind::kNone});
  EXPECT_EQ(CountOrigin(next->TuningDecisions(), PickOrigin::kCache), 6);
  EXPECT_EQ(CountOrigin(next->TuningDecisions(), PickOrigin::kBenchmark), 0);
}

}  // namespace
}  // namespace mxlite
