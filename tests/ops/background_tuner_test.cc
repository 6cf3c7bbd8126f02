// Background tuning (MXNET_TUNING_DB_MODE=background) at the tuner: a miss is answered at once with
// the heuristic's pick, nothing timed or run in the caller's thread, while the problem is queued
// once on the background tuner, whose pick lands in the DB for the next Tune; what has no detached
// candidates tunes at once, off stays off, a job that fails is not queued again, and a forked
// child tunes with a thread of its own.
#include "ops/conv/background_tuner.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "core/error.h"
#include "ops/conv/tuner.h"

namespace mxlite::conv {
namespace {

namespace fs = std::filesystem;

const TuningEnvironment kHere{"Test CPU (2 threads)", "mxlite 0.1.0"};

// A, B and an unsupported C; `runs` counts the runs of A and B.
std::vector<Candidate> Candidates(const std::shared_ptr<std::atomic<int>>& runs,
                                  bool a_fails = false, bool b_fails = false) {
  std::vector<Candidate> candidates(3);
  const char* names[] = {"A", "B", "C"};
  for (size_t i = 0; i < candidates.size(); ++i) {
    candidates[i].algorithm = names[i];
    candidates[i].layout = "NCHW";
  }
  candidates[0].run = [runs, a_fails] {
    ++*runs;
    if (a_fails) throw std::runtime_error("A cannot run here");
  };
  candidates[1].run = [runs, b_fails] {
    ++*runs;
    if (b_fails) throw std::runtime_error("B cannot run here");
  };
  candidates[2].unsupported = "not for this shape";
  return candidates;
}

class BackgroundTunerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    folder_ =
        fs::temp_directory_path() / ("mxlite_background_tuner_test_" + std::to_string(getpid()) +
                                     "_" + std::to_string(counter++));
    fs::remove_all(folder_);
    BackgroundTuner::Global().WaitUntilIdle();  // nothing of another test's left
  }
  void TearDown() override {
    BackgroundTuner::Global().Resume();
    BackgroundTuner::Global().WaitUntilIdle();
    fs::remove_all(folder_);
  }

  std::shared_ptr<TuningDb> OpenDb(TuningDbMode mode) const {
    TuningDbOptions options;
    options.user_path = (folder_ / "tuning.sqlite").string();
    options.mode = mode;
    return std::make_shared<TuningDb>(options);
  }

  // conv0's forward over A (heuristic's first), B and C. The foreground's candidates count their
  // runs in foreground_runs_, the detached ones in background_runs_; A fails in the background
  // (so the tuned pick is B whatever the clock says), and with `all_fail` B too.
  ConvTuner::Request MakeRequest(TuneMode mode, bool detached = true, bool all_fail = false) {
    ConvTuner::Request request;
    request.layer = "conv0";
    request.problem.data = Shape{1, 8, 16, 16};
    request.problem.weight = Shape{8, 8, 3, 3};
    request.problem.stride = {1, 1};
    request.problem.pad = {1, 1};
    request.problem.dilation = {1, 1};
    request.environment = kHere;
    request.mode = {mode, SettingSource::kProgram};
    request.policy.mode = mode;
    request.candidates = [runs = foreground_runs_] { return Candidates(runs); };
    if (detached) {
      request.detached_candidates = [runs = background_runs_, all_fail] {
        return Candidates(runs, /*a_fails=*/true, /*b_fails=*/all_fail);
      };
    }
    request.heuristic = [](const std::vector<Candidate>&) { return std::vector<size_t>{0, 1}; };
    request.timer = [calls = timer_calls_](const Candidate&) {
      ++*calls;
      return Timing{1.0, 3, false};
    };
    return request;
  }

  fs::path folder_;
  std::shared_ptr<std::atomic<int>> foreground_runs_ = std::make_shared<std::atomic<int>>(0);
  std::shared_ptr<std::atomic<int>> background_runs_ = std::make_shared<std::atomic<int>>(0);
  std::shared_ptr<int> timer_calls_ = std::make_shared<int>(0);
};

TEST_F(BackgroundTunerTest, AMissRunsTheHeuristicNowAndTheTunedPickNextTime) {
  BackgroundTuner& background = BackgroundTuner::Global();
  ConvTuner tuner(OpenDb(TuningDbMode::kBackground));
  background.Pause();
  const BackgroundTuner::Counts before = background.counts();

  const LayerTuning first = tuner.Tune(MakeRequest(TuneMode::kLimitedWorkspace));
  EXPECT_EQ(first.origin, PickOrigin::kBackground);
  EXPECT_EQ(first.record.algorithm, "A");  // the heuristic's
  EXPECT_EQ(first.candidates_timed, 0);
  EXPECT_EQ(first.seconds, 0.0);
  EXPECT_EQ(*timer_calls_, 0);
  EXPECT_EQ(*foreground_runs_, 0);
  EXPECT_EQ(background.counts().queued, before.queued + 1);
  EXPECT_EQ(background.pending(), 1);
  // Not stored: a DB opened now (no shared cache) misses.
  EXPECT_FALSE(OpenDb(TuningDbMode::kUpdate)->Lookup(first.problem, kHere).has_value());

  // Asked again before its job ran: the same answer, nothing queued twice.
  const LayerTuning again = tuner.Tune(MakeRequest(TuneMode::kLimitedWorkspace));
  EXPECT_EQ(again.origin, PickOrigin::kBackground);
  EXPECT_EQ(background.counts().queued, before.queued + 1);

  background.Resume();
  background.WaitUntilIdle();
  EXPECT_EQ(background.counts().stored, before.stored + 1);
  EXPECT_GT(*background_runs_, 0);
  EXPECT_EQ(*foreground_runs_, 0);
  EXPECT_EQ(*timer_calls_, 0);  // the job times by the clock, not the caller's timer

  const std::optional<TuningDbHit> stored =
      OpenDb(TuningDbMode::kUpdate)->Lookup(first.problem, kHere);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->source, TuningDbSource::kUserDb);
  EXPECT_EQ(stored->record.algorithm, "B");
  EXPECT_EQ(stored->record.tuning_mode, "limited_workspace");
  ASSERT_EQ(stored->record.candidates.size(), 3u);
  EXPECT_EQ(stored->record.candidates[0].skip_reason.rfind("failed: ", 0), 0u)
      << stored->record.candidates[0].skip_reason;
  EXPECT_GE(stored->record.candidates[1].time_ms, 0.0);

  const LayerTuning next = tuner.Tune(MakeRequest(TuneMode::kLimitedWorkspace));
  EXPECT_EQ(next.origin, PickOrigin::kCache);
  EXPECT_EQ(next.record.algorithm, "B");
  ConvTuner fresh(OpenDb(TuningDbMode::kBackground));  // as a new process would open it
  const LayerTuning from_db = fresh.Tune(MakeRequest(TuneMode::kLimitedWorkspace));
  EXPECT_EQ(from_db.origin, PickOrigin::kUserDb);
  EXPECT_EQ(from_db.record.algorithm, "B");
  EXPECT_EQ(background.counts().queued, before.queued + 1);
}

TEST_F(BackgroundTunerTest, FastestMayPickBeyondTheWorkspaceLimitAndOffStaysOff) {
  BackgroundTuner& background = BackgroundTuner::Global();
  ConvTuner tuner(OpenDb(TuningDbMode::kBackground));
  background.Pause();
  const int64_t queued = background.counts().queued;
  ConvTuner::Request fastest = MakeRequest(TuneMode::kFastest);
  fastest.policy.workspace_limit_bytes = 1;
  fastest.candidates = [runs = foreground_runs_] {
    std::vector<Candidate> candidates = Candidates(runs);
    candidates[0].workspace_bytes = 1 << 20;  // over the limit, which fastest ignores
    return candidates;
  };
  EXPECT_EQ(tuner.Tune(fastest).record.algorithm, "A");

  const LayerTuning off = tuner.Tune(MakeRequest(TuneMode::kOff));
  EXPECT_EQ(off.origin, PickOrigin::kHeuristic);
  EXPECT_EQ(background.counts().queued, queued + 1);  // the fastest problem only
  EXPECT_EQ(*foreground_runs_, 0);
}

TEST_F(BackgroundTunerTest, WithoutDetachedCandidatesTheProblemIsTunedAtOnce) {
  ConvTuner tuner(OpenDb(TuningDbMode::kBackground));
  const int64_t queued = BackgroundTuner::Global().counts().queued;
  const LayerTuning decision =
      tuner.Tune(MakeRequest(TuneMode::kLimitedWorkspace, /*detached=*/false));
  EXPECT_EQ(decision.origin, PickOrigin::kBenchmark);
  EXPECT_EQ(decision.candidates_timed, 2);
  EXPECT_EQ(BackgroundTuner::Global().counts().queued, queued);
  EXPECT_TRUE(OpenDb(TuningDbMode::kUpdate)->Lookup(decision.problem, kHere).has_value());
}

TEST_F(BackgroundTunerTest, AJobThatFailsIsNotQueuedAgainAndItsPickStandsAsOffWould) {
  BackgroundTuner& background = BackgroundTuner::Global();
  ConvTuner tuner(OpenDb(TuningDbMode::kBackground));
  const BackgroundTuner::Counts before = background.counts();
  const ConvTuner::Request request =
      MakeRequest(TuneMode::kLimitedWorkspace, /*detached=*/true, /*all_fail=*/true);
  EXPECT_EQ(tuner.Tune(request).origin, PickOrigin::kBackground);
  background.WaitUntilIdle();
  EXPECT_EQ(background.counts().failed, before.failed + 1);
  EXPECT_EQ(background.counts().stored, before.stored);
  const LayerTuning after = tuner.Tune(request);
  EXPECT_EQ(after.origin, PickOrigin::kHeuristic);  // nothing will land: the planner treats it off
  EXPECT_EQ(after.record.algorithm, "A");
  EXPECT_EQ(background.counts().queued, before.queued + 1);
}

TEST_F(BackgroundTunerTest, AForkedChildTunesWithAThreadOfItsOwn) {
  BackgroundTuner& background = BackgroundTuner::Global();
  ConvTuner tuner(OpenDb(TuningDbMode::kBackground));
  background.Pause();
  tuner.Tune(MakeRequest(TuneMode::kLimitedWorkspace));  // queued in the parent, held there
  ASSERT_EQ(background.pending(), 1);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The parent's queue is not the child's; the child's own miss is tuned by its own thread.
    int status = background.pending() == 0 ? 0 : 1;
    ConvTuner::Request request = MakeRequest(TuneMode::kFastest);
    TuningDbOptions options;
    options.user_path = (folder_ / "child.sqlite").string();
    options.mode = TuningDbMode::kBackground;
    ConvTuner child(std::make_shared<TuningDb>(options));
    if (child.Tune(request).origin != PickOrigin::kBackground) status |= 2;
    background.WaitUntilIdle();
    if (child.Tune(request).origin != PickOrigin::kCache) status |= 4;
    _exit(status);
  }
  int status = -1;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(background.pending(), 1);  // the parent's job is still its own
  background.Resume();
  background.WaitUntilIdle();
  EXPECT_EQ(tuner.Tune(MakeRequest(TuneMode::kLimitedWorkspace)).origin, PickOrigin::kCache);
}

TEST(BackgroundTuningReport, ThePicksSayTheyAreTheHeuristicsWhileTuning) {
  LayerTuning decision;
  decision.layer = "conv3";
  decision.mode = {TuneMode::kLimitedWorkspace, SettingSource::kDefault};
  decision.origin = PickOrigin::kBackground;
  decision.record.algorithm = "im2col_gemm";
  decision.record.layout = "NCHW";
  decision.record.time_ms = -1.0;
  LayerTuning stored = decision;
  stored.layer = "conv4";
  stored.origin = PickOrigin::kUserDb;
  stored.record.time_ms = 2.0;
  EXPECT_EQ(FormatTuningSummary({decision, stored}),
            "tuned 2 convolutions: 1 from DB, 1 by heuristic (tuning in background), 0 "
            "benchmarked in 0.0 s");
  const std::string report = FormatTuningReport({decision}, false);
  EXPECT_NE(report.find("conv3 forward: im2col_gemm NCHW, workspace 0.0 MB"), std::string::npos)
      << report;
  EXPECT_NE(report.find("; from heuristic (tuning in background)\n"), std::string::npos) << report;
}

TEST(BackgroundTuningDb, TheModeParsesAndTheDbStoresAsUpdate) {
  EXPECT_EQ(ParseTuningDbMode("background"), TuningDbMode::kBackground);
  EXPECT_STREQ(TuningDbModeName(TuningDbMode::kBackground), "background");
  const fs::path folder =
      fs::temp_directory_path() / ("mxlite_background_db_" + std::to_string(getpid()));
  fs::remove_all(folder);
  ConvProblem problem;
  problem.data = Shape{1, 4, 8, 8};
  problem.weight = Shape{4, 4, 1, 1};
  TuningRecord record;
  record.algorithm = "gemm_1x1";
  record.layout = "NCHW";
  {
    TuningDb db({(folder / "tuning.sqlite").string(), "", TuningDbMode::kBackground});
    EXPECT_EQ(db.mode(), TuningDbMode::kBackground);
    EXPECT_TRUE(db.Store(problem, kHere, record));
  }
  TuningDb again({(folder / "tuning.sqlite").string(), "", TuningDbMode::kBackground});
  const std::optional<TuningDbHit> hit = again.Lookup(problem, kHere);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->source, TuningDbSource::kUserDb);
  EXPECT_EQ(hit->record.algorithm, "gemm_1x1");
  fs::remove_all(folder);
}

}  // namespace
}  // namespace mxlite::conv
