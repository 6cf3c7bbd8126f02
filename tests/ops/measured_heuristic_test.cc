// The heuristic tier built from measurements: problem keys parse back, the DB hands out its
// entries as snapshots, neighbours rank candidates (nearer ones counting more, other families not
// at all, unknown candidates in the rules' order), and the tuner uses it for off-mode picks and
// says so in the report.
#include "ops/conv/measured_heuristic.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <string>

#include "ops/conv/tuner.h"
#include "ops/conv/tuning_db.h"

namespace mxlite::conv {
namespace {

namespace fs = std::filesystem;

// A forward NCHW problem: `channels` in and out, a `kernel` x `kernel` window, 1 group.
ConvProblem Problem(int64_t channels, int64_t size = 28, int64_t kernel = 3) {
  ConvProblem problem;
  problem.data = Shape{1, channels, size, size};
  problem.weight = Shape{channels, channels, kernel, kernel};
  problem.stride = {1, 1};
  problem.pad = {kernel / 2, kernel / 2};
  problem.dilation = {1, 1};
  problem.policy = "limited_workspace ws=1024MB det=0 tc=1 tf32=0";
  return problem;
}

// A record of timed candidates (name -> ms).
TuningRecord Timed(const std::map<std::string, double>& ms) {
  TuningRecord record;
  double best = -1.0;
  for (const auto& [name, time] : ms) {
    record.candidates.push_back({name, "NCHW", time, 0, ""});
    if (best < 0 || time < best) {
      best = time;
      record.algorithm = name;
    }
  }
  record.layout = "NCHW";
  record.time_ms = best;
  return record;
}

Candidate Named(const std::string& name, const std::string& unsupported = "") {
  Candidate candidate;
  candidate.algorithm = name;
  candidate.layout = "NCHW";
  candidate.unsupported = unsupported;
  return candidate;
}

std::vector<std::string> Names(const std::vector<size_t>& order,
                               const std::vector<Candidate>& candidates) {
  std::vector<std::string> names;
  for (size_t i : order) names.push_back(candidates[i].algorithm);
  return names;
}

TEST(ConvProblemText, ParsesWhatToStringWrites) {
  ConvProblem problem = Problem(64);
  problem.direction = ConvDirection::kBackwardData;
  problem.data = Shape{2, 4, 14, 14, 16};
  problem.layout = "NCHW16c";
  problem.groups = 2;
  problem.stride = {2, 1};
  problem.prepared_weight = true;
  const std::optional<ConvProblem> parsed = ConvProblem::Parse(problem.ToString());
  ASSERT_TRUE(parsed.has_value()) << problem.ToString();
  EXPECT_EQ(parsed->ToString(), problem.ToString());
  EXPECT_EQ(parsed->direction, ConvDirection::kBackwardData);
  EXPECT_EQ(parsed->data, problem.data);
  EXPECT_EQ(parsed->weight, problem.weight);
  EXPECT_EQ(parsed->stride, problem.stride);
  EXPECT_EQ(parsed->groups, 2);
  EXPECT_TRUE(parsed->prepared_weight);
  EXPECT_EQ(parsed->policy, problem.policy);
}

TEST(ConvProblemText, OtherKeysAreNotProblems) {
  EXPECT_FALSE(ConvProblem::Parse("transform NCHW->NHWC data=(1,3,8,8) dtype=float32"));
  EXPECT_FALSE(ConvProblem::Parse("forward data=(1,3,8,8)"));
  EXPECT_FALSE(
      ConvProblem::Parse("forward data=(1,x,8,8) weight=(8,3,3,3) stride=1x1 pad=0x0 "
                         "dilation=1x1 groups=1 dtype=float32 layout=NCHW"));
  EXPECT_FALSE(
      ConvProblem::Parse("forward data=(1,3,8,8) weight=(8,3,3,3) stride=1x1 pad=0x0 "
                         "dilation=1x1 groups=1 dtype=float99 layout=NCHW"));
  // A field twice (and another missing), a count with a tail, a trailing comma.
  EXPECT_FALSE(
      ConvProblem::Parse("forward data=(1,3,8,8) data=(1,3,8,8) stride=1x1 pad=0x0 "
                         "dilation=1x1 groups=1 dtype=float32 layout=NCHW"));
  EXPECT_FALSE(
      ConvProblem::Parse("forward data=(1,3,8,8) weight=(8,3,3,3) stride=1x1 pad=0x0 "
                         "dilation=1x1 groups=3x dtype=float32 layout=NCHW"));
  EXPECT_FALSE(
      ConvProblem::Parse("forward data=(1,3,8,) weight=(8,3,3,3) stride=1x1 pad=0x0 "
                         "dilation=1x1 groups=1 dtype=float32 layout=NCHW"));
}

TEST(MeasuredHeuristic, RanksByTheNearestTunedProblems) {
  const TunedProblems tuned = {
      {Problem(64), Timed({{"A", 3.0}, {"B", 1.0}, {"C", 2.0}})},
      {Problem(128), Timed({{"A", 6.0}, {"B", 2.0}, {"C", 5.0}})},
  };
  const MeasuredHeuristic tier(tuned);
  EXPECT_EQ(tier.size(), 2u);
  // The same problem under another policy counts once.
  TunedProblems twice = tuned;
  ConvProblem other_policy = Problem(64);
  other_policy.policy = "fastest ws=1024MB det=0 tc=1 tf32=0";
  twice.push_back({other_policy, Timed({{"A", 1.0}, {"B", 9.0}})});
  EXPECT_EQ(MeasuredHeuristic(twice).size(), 2u);
  // D: no neighbour timed it, so it follows in the rules' order; E cannot run this problem.
  const std::vector<Candidate> candidates = {Named("A"), Named("B"), Named("C"), Named("D"),
                                             Named("E", "needs a 1x1 kernel")};
  // The rules' order may name anything: E (unsupported), 9 (out of range), A twice.
  const MeasuredRanking ranked = tier.Rank(Problem(96), candidates, {4, 3, 9, 0, 1, 2, 0});
  EXPECT_EQ(ranked.neighbours, 2);
  EXPECT_EQ(Names(ranked.order, candidates), (std::vector<std::string>{"B", "C", "A", "D"}));
}

TEST(MeasuredHeuristic, NearerProblemsCountMore) {
  // Alike in all but channels: the 64-channel problem favours A, the 1024-channel one B.
  const TunedProblems tuned = {
      {Problem(64), Timed({{"A", 1.0}, {"B", 2.0}})},
      {Problem(1024), Timed({{"A", 4.0}, {"B", 1.0}})},
  };
  const MeasuredHeuristic tier(tuned);
  const std::vector<Candidate> candidates = {Named("A"), Named("B")};
  EXPECT_EQ(Names(tier.Rank(Problem(64), candidates, {1, 0}).order, candidates),
            (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(Names(tier.Rank(Problem(1024), candidates, {0, 1}).order, candidates),
            (std::vector<std::string>{"B", "A"}));
}

TEST(MeasuredHeuristic, OtherFamiliesAndUntimedRecordsTeachNothing) {
  ConvProblem nhwc = Problem(64);
  nhwc.layout = "NHWC";
  nhwc.data = Shape{1, 28, 28, 64};
  nhwc.weight = Shape{64, 3, 3, 64};
  ConvProblem depthwise = Problem(64);
  depthwise.weight = Shape{64, 1, 3, 3};
  depthwise.groups = 64;
  ConvProblem backward = Problem(64);
  backward.direction = ConvDirection::kBackwardFilter;
  TuningRecord one_timed = Timed({{"B", 1.0}});
  one_timed.candidates.push_back({"A", "NCHW", -1.0, 0, "workspace"});
  const TunedProblems tuned = {
      {nhwc, Timed({{"A", 3.0}, {"B", 1.0}})},
      {depthwise, Timed({{"A", 3.0}, {"B", 1.0}})},
      {backward, Timed({{"A", 3.0}, {"B", 1.0}})},
      {Problem(32), one_timed},
  };
  const MeasuredHeuristic tier(tuned);
  const std::vector<Candidate> candidates = {Named("A"), Named("B")};
  const MeasuredRanking ranked = tier.Rank(Problem(64), candidates, {0, 1});
  EXPECT_EQ(ranked.neighbours, 0);
  EXPECT_EQ(Names(ranked.order, candidates), (std::vector<std::string>{"A", "B"}));
}

class MeasuredTierDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    folder_ =
        fs::temp_directory_path() / ("mxlite_measured_heuristic_test_" + std::to_string(getpid()) +
                                     "_" + std::to_string(counter++));
    fs::remove_all(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }

  std::shared_ptr<TuningDb> OpenDb(TuningDbMode mode = TuningDbMode::kUpdate) const {
    TuningDbOptions options;
    options.user_path = (folder_ / "tuning.sqlite").string();
    options.mode = mode;
    return std::make_shared<TuningDb>(options);
  }

  // Candidates A, B, C over `problem`: timed A 5 ms, B 2 ms, C 3 ms; the rules rank A first.
  static ConvTuner::Request Request(const ConvProblem& problem, TuneMode mode) {
    ConvTuner::Request request;
    request.layer = "conv0";
    request.problem = problem;
    request.problem.policy.clear();
    request.environment = kHere;
    request.mode = {mode, SettingSource::kProgram};
    request.policy.mode = mode;
    request.candidates = [] { return std::vector<Candidate>{Named("A"), Named("B"), Named("C")}; };
    request.heuristic = [](const std::vector<Candidate>&) { return std::vector<size_t>{0, 1, 2}; };
    request.measured_heuristic = true;
    request.timer = [](const Candidate& candidate) {
      const std::map<std::string, double> ms = {{"A", 5.0}, {"B", 2.0}, {"C", 3.0}};
      return Timing{ms.at(candidate.algorithm), 3, false};
    };
    return request;
  }

  inline static const TuningEnvironment kHere{"Test CPU (2 threads)", "mxlite 0.1.0"};
  fs::path folder_;
};

TEST_F(MeasuredTierDbTest, TheDbHandsOutSnapshotsThatStoresRenew) {
  auto db = OpenDb();
  db->Store(Problem(64), kHere, Timed({{"A", 1.0}, {"B", 2.0}}));
  const auto first = db->Tuned(kHere);
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ((*first)[0].problem, Problem(64));  // parsed back from its key
  EXPECT_EQ(db->Tuned(kHere), first);           // unchanged: the same snapshot
  db->Store(Problem(128), kHere, Timed({{"A", 1.0}, {"B", 2.0}}));
  db->StoreKey("transform NCHW->NHWC data=(1,8,8,8) dtype=float32", kHere, Timed({{"x", 1.0}}));
  EXPECT_EQ(first->size(), 1u);  // a snapshot never changes
  EXPECT_EQ(db->Tuned(kHere)->size(), 2u);  // problems only: not the planner's transform
  // Another process reads the file; another environment sees nothing.
  EXPECT_EQ(OpenDb()->Tuned(kHere)->size(), 2u);
  EXPECT_TRUE(OpenDb()->Tuned({"Other CPU (2 threads)", "mxlite 0.1.0"})->empty());
  EXPECT_TRUE(OpenDb(TuningDbMode::kOff)->Tuned(kHere)->empty());
}

TEST_F(MeasuredTierDbTest, OffPicksWhatTheNearestTunedProblemsFavour) {
  // A problem tuned before (in another process): B fastest, then C, then A.
  ConvTuner(OpenDb()).Tune(Request(Problem(64), TuneMode::kFastest));
  ConvTuner tuner(OpenDb());
  // Off, on a problem the DB does not hold: ranked from the tuned one, nothing timed. B's
  // workspace rule is the policy's: with no limit it runs.
  ConvTuner::Request off = Request(Problem(96), TuneMode::kOff);
  off.timer = [](const Candidate&) -> Timing { throw std::logic_error("off timed something"); };
  LayerTuning decision = tuner.Tune(off);
  EXPECT_EQ(decision.origin, PickOrigin::kHeuristic);
  EXPECT_EQ(decision.record.algorithm, "B");
  EXPECT_EQ(decision.heuristic_neighbours, 1);
  EXPECT_NE(FormatTuningReport({decision}, false)
                .find("from heuristic, ranked by the 1 nearest tuned problems\n"),
            std::string::npos)
      << FormatTuningReport({decision}, false);
  EXPECT_NE(
      FormatTuningSummary({decision}).find("1 by heuristic (off, 1 ranked by tuned problems)"),
      std::string::npos)
      << FormatTuningSummary({decision});
  // The backend's rules alone where it does not rank from measurements.
  off.measured_heuristic = false;
  decision = tuner.Tune(off);
  EXPECT_EQ(decision.record.algorithm, "A");
  EXPECT_EQ(decision.heuristic_neighbours, 0);
  EXPECT_NE(FormatTuningReport({decision}, false).find("; from heuristic\n"), std::string::npos);
}

}  // namespace
}  // namespace mxlite::conv
