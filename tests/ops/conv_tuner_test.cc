// The convolution tuner: mode semantics on fake candidates (times and workspaces chosen here, so
// limited_workspace and fastest cannot silently swap), filters, timing, mode precedence with its
// source, where picks come from (benchmark, cache, DB, heuristic), the report, and the CPU
// candidates and heuristic.
#include "ops/conv/tuner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/error.h"
#include "ops/conv/cpu_conv_tuning.h"
#include "ops/operator.h"

namespace mxlite::conv {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kMB = uint64_t{1} << 20;

// A candidate that needs `workspace_mb`; its time comes from a FakeTimer's table.
Candidate Fake(const std::string& name, uint64_t workspace_mb, bool deterministic = true,
               bool tensor_cores = false) {
  Candidate candidate;
  candidate.algorithm = name;
  candidate.layout = "NCHW";
  candidate.workspace_bytes = workspace_mb * kMB;
  candidate.deterministic = deterministic;
  candidate.tensor_cores = tensor_cores;
  return candidate;
}

// Times from a table; counts the calls so tests can see what was (not) timed.
struct FakeTimer {
  std::map<std::string, double> ms;
  std::shared_ptr<int> calls = std::make_shared<int>(0);

  CandidateTimer AsTimer() const {
    return [table = ms, calls = calls](const Candidate& candidate) {
      ++*calls;
      if (candidate.algorithm == "throws") throw Error("kernel exploded");
      return Timing{table.at(candidate.algorithm), 3, false};
    };
  }
};

// A:  5 ms,  10 MB;  B: 2 ms, 200 MB (fastest, too big for 100 MB);  C: 3 ms, 50 MB.
struct FakeProblem {
  std::vector<Candidate> candidates = {Fake("A", 10), Fake("B", 200), Fake("C", 50)};
  FakeTimer timer{{{"A", 5.0}, {"B", 2.0}, {"C", 3.0}}};
};

TuningPolicy Policy(TuneMode mode, uint64_t limit_mb = 100) {
  TuningPolicy policy;
  policy.mode = mode;
  policy.workspace_limit_bytes = limit_mb * kMB;
  return policy;
}

// Ranks B, A, C: the heuristic likes B best, which does not fit the limit.
std::vector<size_t> RankBAC(const std::vector<Candidate>&) { return {1, 0, 2}; }

const MeasuredCandidate& Entry(const TuningRecord& record, const std::string& name) {
  for (const MeasuredCandidate& candidate : record.candidates) {
    if (candidate.algorithm == name) return candidate;
  }
  throw Error("no candidate " + name);
}

TEST(ConvTunerModes, LimitedWorkspaceTimesOnlyWhatFitsAndPicksTheFastestOfThose) {
  FakeProblem p;
  Selection s = SelectCandidate("conv0 forward", p.candidates, Policy(TuneMode::kLimitedWorkspace),
                                p.timer.AsTimer(), RankBAC);
  EXPECT_EQ(s.record.algorithm, "C");
  EXPECT_EQ(s.record.time_ms, 3.0);
  EXPECT_EQ(s.record.workspace_bytes, 50 * kMB);
  EXPECT_EQ(s.candidates_timed, 2);
  EXPECT_EQ(*p.timer.calls, 2);
  EXPECT_EQ(Entry(s.record, "B").skip_reason, "workspace: needs 200.0 MB > limit 100.0 MB");
  EXPECT_LT(Entry(s.record, "B").time_ms, 0);
  EXPECT_EQ(Entry(s.record, "A").time_ms, 5.0);
  EXPECT_EQ(s.record.tuning_mode, "limited_workspace");
}

TEST(ConvTunerModes, FastestTimesEverythingWhateverItsWorkspace) {
  FakeProblem p;
  Selection s = SelectCandidate("conv0 forward", p.candidates, Policy(TuneMode::kFastest),
                                p.timer.AsTimer(), RankBAC);
  EXPECT_EQ(s.record.algorithm, "B");
  EXPECT_EQ(s.candidates_timed, 3);
  for (const MeasuredCandidate& candidate : s.record.candidates) {
    EXPECT_EQ(candidate.skip_reason, "") << candidate.algorithm;
  }
  EXPECT_EQ(s.record.tuning_mode, "fastest");
}

TEST(ConvTunerModes, OffTimesNothingAndTakesTheHeuristicsFirstCandidateThatFits) {
  FakeProblem p;
  Selection s = SelectCandidate("conv0 forward", p.candidates, Policy(TuneMode::kOff),
                                p.timer.AsTimer(), RankBAC);
  EXPECT_EQ(s.record.algorithm, "A");  // B is ranked first but needs 200 MB
  EXPECT_EQ(*p.timer.calls, 0);
  EXPECT_EQ(s.candidates_timed, 0);
  EXPECT_EQ(Entry(s.record, "C").skip_reason, "not timed (off)");
  EXPECT_EQ(Entry(s.record, "B").skip_reason, "workspace: needs 200.0 MB > limit 100.0 MB");
}

TEST(ConvTunerModes, TheWorkspaceLimitDecidesBetweenTheTwoTimedModes) {
  // With a limit that fits everything, limited_workspace and fastest agree.
  FakeProblem p;
  Selection limited = SelectCandidate("l", p.candidates, Policy(TuneMode::kLimitedWorkspace, 500),
                                      p.timer.AsTimer(), RankBAC);
  EXPECT_EQ(limited.record.algorithm, "B");
  // With one too small for everything, limited_workspace has nothing to run...
  try {
    SelectCandidate("conv7 forward", p.candidates, Policy(TuneMode::kLimitedWorkspace, 1),
                    p.timer.AsTimer(), RankBAC);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("conv7 forward"), std::string::npos) << message;
    EXPECT_NE(message.find("workspace"), std::string::npos) << message;
    EXPECT_NE(message.find("cudnn_tune=fastest"), std::string::npos) << message;
  }
  // ...while fastest ignores the limit.
  Selection fastest =
      SelectCandidate("f", p.candidates, Policy(TuneMode::kFastest, 1), p.timer.AsTimer(), RankBAC);
  EXPECT_EQ(fastest.record.algorithm, "B");
}

TEST(ConvTunerFilters, DeterminismKeepsDeterministicCandidatesOnly) {
  std::vector<Candidate> candidates = {Fake("fast_atomic", 0, /*deterministic=*/false),
                                       Fake("steady", 0)};
  FakeTimer timer{{{"fast_atomic", 1.0}, {"steady", 4.0}}};
  TuningPolicy policy = Policy(TuneMode::kFastest);
  EXPECT_EQ(SelectCandidate("c", candidates, policy, timer.AsTimer(), {}).record.algorithm,
            "fast_atomic");
  policy.deterministic_only = true;
  Selection s = SelectCandidate("c", candidates, policy, timer.AsTimer(), {});
  EXPECT_EQ(s.record.algorithm, "steady");
  EXPECT_EQ(Entry(s.record, "fast_atomic").skip_reason, "determinism");
}

TEST(ConvTunerFilters, NoDeterministicCandidateIsAClearError) {
  std::vector<Candidate> candidates = {Fake("atomic_a", 0, false), Fake("atomic_b", 0, false)};
  TuningPolicy policy = Policy(TuneMode::kLimitedWorkspace);
  policy.deterministic_only = true;
  try {
    SelectCandidate("conv2 backward_filter", candidates, policy, FakeTimer{}.AsTimer(), {});
    FAIL() << "expected an error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("conv2 backward_filter"), std::string::npos) << message;
    EXPECT_NE(message.find("MXNET_ENFORCE_DETERMINISM=1"), std::string::npos) << message;
    EXPECT_NE(message.find("atomic_a (NCHW): determinism"), std::string::npos) << message;
  }
}

TEST(ConvTunerFilters, TensorCoresUnsupportedAndFailingCandidatesAreListedWithTheirReason) {
  std::vector<Candidate> candidates = {Fake("tc", 0, true, /*tensor_cores=*/true), Fake("plain", 0),
                                       Fake("throws", 0), Fake("odd", 0)};
  candidates[3].unsupported = "needs a 1x1 kernel";
  FakeTimer timer{{{"tc", 1.0}, {"plain", 3.0}}};
  TuningPolicy policy = Policy(TuneMode::kFastest);
  policy.allow_tensor_cores = false;
  Selection s = SelectCandidate("c", candidates, policy, timer.AsTimer(), {});
  EXPECT_EQ(s.record.algorithm, "plain");
  EXPECT_EQ(Entry(s.record, "tc").skip_reason, "tensor cores");
  EXPECT_EQ(Entry(s.record, "odd").skip_reason, "unsupported: needs a 1x1 kernel");
  EXPECT_EQ(Entry(s.record, "throws").skip_reason, "failed: kernel exploded");
}

TEST(ConvTunerTiming, WarmsUpThenTakesTheMedianOfSeveralRuns) {
  int calls = 0;
  TimingOptions options;
  options.warmup_runs = 2;
  options.min_runs = 3;
  options.max_runs = 9;
  Timing timing = TimeCandidate(
      [&] {
        ++calls;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      },
      options);
  EXPECT_GE(timing.runs, 3);
  EXPECT_LE(timing.runs, 9);
  EXPECT_EQ(calls, 2 + timing.runs);
  EXPECT_GE(timing.median_ms, 2.0);
}

TEST(ConvTunerTiming, NoisyRunsAreRepeatedUpToTheMaximum) {
  int calls = 0;
  TimingOptions options;
  options.warmup_runs = 0;
  options.min_runs = 3;
  options.max_runs = 7;
  options.max_spread = 0.01;
  // Alternating 1 ms and 6 ms never settles within 1%.
  Timing timing = TimeCandidate(
      [&] { std::this_thread::sleep_for(std::chrono::milliseconds(calls++ % 2 == 0 ? 1 : 6)); },
      options);
  EXPECT_EQ(timing.runs, 7);
}

TEST(ConvTunerTiming, BeforeEachPrecedesEveryRunOutsideTheTiming) {
  std::string order;
  TimingOptions options;
  options.warmup_runs = 1;
  options.min_runs = 3;
  options.max_runs = 3;
  // A preparation far slower than the run: were it timed, the median would be >= 30 ms.
  Timing timing = TimeCandidate([&] { order += 'r'; }, options,
                                [&] {
                                  order += 'b';
                                  std::this_thread::sleep_for(std::chrono::milliseconds(30));
                                });
  EXPECT_EQ(order, "brbrbrbr");  // the warm-up and the three timed runs
  EXPECT_EQ(timing.runs, 3);
  EXPECT_LT(timing.median_ms, 30.0);
}

TEST(ConvTunerTiming, SelectionRunsEachCandidatesPreparationBeforeEachOfItsRuns) {
  // Without a timer of its own the tuner times the real runs; a preparation far slower than
  // either run must neither be timed nor decide the pick.
  std::string order;
  auto candidate = [&](const std::string& name, char tag, int run_ms) {
    Candidate c = Fake(name, 0);
    c.run = [&order, tag, run_ms] {
      order += tag;
      std::this_thread::sleep_for(std::chrono::milliseconds(run_ms));
    };
    c.before_run = [&order] {
      order += 'b';
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    };
    return c;
  };
  const std::vector<Candidate> candidates = {candidate("slow", 's', 8), candidate("quick", 'q', 1)};
  Selection selection = SelectCandidate("conv0", candidates, Policy(TuneMode::kFastest),
                                        CandidateTimer{}, [](const std::vector<Candidate>&) {
                                          return std::vector<size_t>{0, 1};
                                        });
  EXPECT_EQ(selection.record.algorithm, "quick");
  EXPECT_LT(Entry(selection.record, "quick").time_ms, 8.0);
  // Timed against each other: the warm-up round, then rounds of one run each, rotating.
  EXPECT_EQ(order.substr(0, 12), "bsbq" "bsbq" "bqbs") << order;
  ASSERT_FALSE(order.empty());
  for (size_t i = 0; i < order.size(); i += 2) {
    ASSERT_EQ(order[i], 'b') << order;
    ASSERT_NE(order[i + 1], 'b') << order;
  }
}

TEST(ConvTunerTiming, InterleavedRunsGoOncePerRoundInRotatingOrder) {
  std::string order;
  const auto tagged = [&order](char tag) {
    return TimedRun{[&order, tag] { order += tag; },
                    [&order] { order += '.'; }};  // each run's preparation: a dot before it
  };
  TimingOptions options;
  options.warmup_runs = 1;
  options.min_runs = 3;
  options.max_runs = 3;
  const std::vector<InterleavedTiming> timings =
      TimeInterleaved({tagged('a'), tagged('b'), tagged('c')}, options);
  // The warm-up round, then three timed rounds, each starting one run further along.
  EXPECT_EQ(order, ".a.b.c" ".a.b.c" ".b.c.a" ".c.a.b");
  ASSERT_EQ(timings.size(), 3u);
  for (const InterleavedTiming& timing : timings) {
    EXPECT_FALSE(timing.error);
    EXPECT_EQ(timing.timing.runs, 3);
    EXPECT_FALSE(timing.timing.capped);
  }
}

TEST(ConvTunerTiming, AnInterleavedRunThatThrowsDropsOutAndTheOthersGoOn) {
  int failing_calls = 0, other_calls = 0;
  TimingOptions options;
  options.warmup_runs = 1;
  options.min_runs = 4;
  options.max_runs = 4;
  const std::vector<InterleavedTiming> timings = TimeInterleaved(
      {{[&] {
         if (++failing_calls == 2) throw std::runtime_error("second call failed");
       }, {}},
       {[&] { ++other_calls; }, {}}},
      options);
  ASSERT_TRUE(timings[0].error);
  EXPECT_THROW(std::rethrow_exception(timings[0].error), std::runtime_error);
  EXPECT_EQ(failing_calls, 2);  // the warm-up and the failing first timed run: no more
  EXPECT_FALSE(timings[1].error);
  EXPECT_EQ(timings[1].timing.runs, 4);
  EXPECT_EQ(other_calls, 1 + 4);
  // A lone run's error reaches TimeCandidate's caller as thrown.
  EXPECT_THROW(TimeCandidate([] { throw std::runtime_error("boom"); }), std::runtime_error);
}

TEST(ConvTunerTiming, TheCapStopsASlowCandidateAfterOneTimedRun) {
  int calls = 0;
  TimingOptions options;
  options.warmup_runs = 1;
  options.min_runs = 5;
  options.cap_ms = 10.0;
  Timing timing = TimeCandidate(
      [&] {
        ++calls;
        std::this_thread::sleep_for(std::chrono::milliseconds(15));
      },
      options);
  EXPECT_EQ(timing.runs, 1);
  EXPECT_TRUE(timing.capped);
  EXPECT_EQ(calls, 2);
}

// ---- Mode precedence ----

std::unique_ptr<Settings> SettingsWithEnvironment(EnvironmentMap environment) {
  const Settings& global = Settings::Global();
  return std::make_unique<Settings>(global.specs(), global.recognised_unused(),
                                    std::move(environment));
}

TEST(ConvTunerPrecedence, TheAttributeWinsOverTheEnvironmentAndSaysSo) {
  auto settings = SettingsWithEnvironment({{"MXNET_CUDNN_AUTOTUNE_DEFAULT", "2"}});
  EffectiveMode from_attribute = ResolveTuneMode(*settings, std::string("off"), "conv1");
  EXPECT_EQ(from_attribute.mode, TuneMode::kOff);
  EXPECT_EQ(from_attribute.source, SettingSource::kAttribute);
  EXPECT_EQ(from_attribute.Describe(), "off (from attribute cudnn_tune)");

  EffectiveMode from_environment = ResolveTuneMode(*settings, std::nullopt, "conv1");
  EXPECT_EQ(from_environment.mode, TuneMode::kFastest);
  EXPECT_EQ(from_environment.source, SettingSource::kEnvironment);
  EXPECT_EQ(from_environment.Describe(), "fastest (from environment MXNET_CUDNN_AUTOTUNE_DEFAULT)");

  settings->Set("MXNET_CUDNN_AUTOTUNE_DEFAULT", "limited_workspace");
  EffectiveMode from_program = ResolveTuneMode(*settings, std::nullopt, "conv1");
  EXPECT_EQ(from_program.mode, TuneMode::kLimitedWorkspace);
  EXPECT_EQ(from_program.source, SettingSource::kProgram);
  EXPECT_EQ(ResolveTuneMode(*settings, std::string("fastest"), "conv1").source,
            SettingSource::kAttribute);

  auto plain = SettingsWithEnvironment({});
  EffectiveMode by_default = ResolveTuneMode(*plain, std::nullopt, "conv1");
  EXPECT_EQ(by_default.mode, TuneMode::kLimitedWorkspace);
  EXPECT_EQ(by_default.source, SettingSource::kDefault);
}

// Every setting that changes which candidates may run is part of the key: a pick stored without
// TF32 must not answer a run that allows it (and the other way round).
TEST(ConvTunerPolicy, TheKeyNamesEverySettingThatChangesTheCandidates) {
  auto plain = SettingsWithEnvironment({});
  const TuningPolicy by_default =
      TuningPolicy::For(TuneMode::kLimitedWorkspace, uint64_t{1024} << 20, *plain);
  EXPECT_EQ(by_default.KeyText(), "limited_workspace ws=1024MB det=0 tc=1 tf32=0");

  auto tf32 = SettingsWithEnvironment({{"MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION", "1"}});
  const TuningPolicy converting =
      TuningPolicy::For(TuneMode::kLimitedWorkspace, uint64_t{1024} << 20, *tf32);
  EXPECT_TRUE(converting.allow_tf32_conversion);
  EXPECT_NE(converting.KeyText(), by_default.KeyText());

  auto strict = SettingsWithEnvironment(
      {{"MXNET_ENFORCE_DETERMINISM", "1"}, {"MXNET_CUDA_ALLOW_TENSOR_CORE", "0"}});
  EXPECT_EQ(TuningPolicy::For(TuneMode::kFastest, 0, *strict).KeyText(),
            "fastest det=1 tc=0 tf32=0");
}

TEST(ConvTunerPrecedence, AnInvalidAttributeNamesTheLayer) {
  auto settings = SettingsWithEnvironment({});
  try {
    ResolveTuneMode(*settings, std::string("quickest"), "conv9");
    FAIL() << "expected an error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("conv9"), std::string::npos) << message;
    EXPECT_NE(message.find("quickest"), std::string::npos) << message;
  }
}

// ---- Where picks come from ----

class ConvTunerDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    folder_ = fs::temp_directory_path() / ("mxlite_conv_tuner_test_" + std::to_string(getpid()) +
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

  // A request over FakeProblem whose candidate list counts how often it is built.
  ConvTuner::Request MakeRequest(TuneMode mode, const TuningEnvironment& environment = kHere) {
    ConvTuner::Request request;
    request.layer = "conv0";
    request.problem.data = Shape{1, 8, 16, 16};
    request.problem.weight = Shape{8, 8, 3, 3};
    request.problem.stride = {1, 1};
    request.problem.pad = {1, 1};
    request.problem.dilation = {1, 1};
    request.environment = environment;
    request.mode = {mode, SettingSource::kProgram};
    request.policy = Policy(mode);
    request.candidates = [built = candidate_lists_] {
      ++*built;
      return FakeProblem{}.candidates;
    };
    request.heuristic = RankBAC;
    request.timer = timer_.AsTimer();
    return request;
  }

  inline static const TuningEnvironment kHere{"Test CPU (2 threads)", "mxlite 0.1.0"};
  fs::path folder_;
  FakeTimer timer_ = FakeProblem{}.timer;
  std::shared_ptr<int> candidate_lists_ = std::make_shared<int>(0);
};

TEST_F(ConvTunerDbTest, ASecondProcessBenchmarksNothingAndPicksTheSame) {
  LayerTuning first;
  {
    ConvTuner tuner(OpenDb());
    first = tuner.Tune(MakeRequest(TuneMode::kLimitedWorkspace));
    EXPECT_EQ(first.origin, PickOrigin::kBenchmark);
    EXPECT_EQ(first.candidates_timed, 2);
    // The same process asks again: the in-process cache answers.
    EXPECT_EQ(tuner.Tune(MakeRequest(TuneMode::kLimitedWorkspace)).origin, PickOrigin::kCache);
  }
  const int timed_before = *timer_.calls;
  const int lists_before = *candidate_lists_;
  ConvTuner fresh(OpenDb());  // as a new process would open it
  LayerTuning second = fresh.Tune(MakeRequest(TuneMode::kLimitedWorkspace));
  EXPECT_EQ(second.origin, PickOrigin::kUserDb);
  EXPECT_EQ(second.record.algorithm, first.record.algorithm);
  EXPECT_EQ(second.record.candidates, first.record.candidates);
  EXPECT_EQ(*timer_.calls, timed_before);
  EXPECT_EQ(*candidate_lists_, lists_before);
  EXPECT_EQ(second.candidates_timed, 0);
}

TEST_F(ConvTunerDbTest, EachModeHasItsOwnEntry) {
  ConvTuner tuner(OpenDb());
  EXPECT_EQ(tuner.Tune(MakeRequest(TuneMode::kLimitedWorkspace)).record.algorithm, "C");
  LayerTuning fastest = tuner.Tune(MakeRequest(TuneMode::kFastest));
  EXPECT_EQ(fastest.origin, PickOrigin::kBenchmark);
  EXPECT_EQ(fastest.record.algorithm, "B");
}

TEST_F(ConvTunerDbTest, AnotherDevicesEntriesAreIgnored) {
  ConvTuner(OpenDb()).Tune(MakeRequest(TuneMode::kFastest));
  ConvTuner other(OpenDb());
  LayerTuning there =
      other.Tune(MakeRequest(TuneMode::kFastest, {"Other CPU (2 threads)", "mxlite 0.1.0"}));
  EXPECT_EQ(there.origin, PickOrigin::kBenchmark);
  LayerTuning newer =
      other.Tune(MakeRequest(TuneMode::kFastest, {"Test CPU (2 threads)", "mxlite 9.9.9"}));
  EXPECT_EQ(newer.origin, PickOrigin::kBenchmark);
}

TEST_F(ConvTunerDbTest, OffUsesTheHeuristicAndStoresNothing) {
  ConvTuner tuner(OpenDb());
  LayerTuning off = tuner.Tune(MakeRequest(TuneMode::kOff));
  EXPECT_EQ(off.origin, PickOrigin::kHeuristic);
  EXPECT_EQ(off.record.algorithm, "A");
  EXPECT_EQ(*timer_.calls, 0);
  EXPECT_FALSE(OpenDb()->Lookup(off.problem, kHere).has_value());
}

TEST_F(ConvTunerDbTest, AStoredPickTheCallerCannotRunIsTunedAgain) {
  ConvTuner(OpenDb()).Tune(MakeRequest(TuneMode::kFastest));
  ConvTuner tuner(OpenDb());
  ConvTuner::Request request = MakeRequest(TuneMode::kFastest);
  request.usable = [](const TuningRecord& record) { return record.algorithm != "B"; };
  // B is stored; the caller refuses it, so it is timed again (and B still wins the timing).
  EXPECT_EQ(tuner.Tune(request).origin, PickOrigin::kBenchmark);
}

TEST_F(ConvTunerDbTest, RefreshModeReTunesWhatIsStored) {
  ConvTuner(OpenDb()).Tune(MakeRequest(TuneMode::kFastest));
  ConvTuner refreshing(OpenDb(TuningDbMode::kRefresh));
  EXPECT_EQ(refreshing.Tune(MakeRequest(TuneMode::kFastest)).origin, PickOrigin::kBenchmark);
}

// ---- The report ----

LayerTuning Decision(const std::string& layer, PickOrigin origin, double seconds) {
  LayerTuning d;
  d.layer = layer;
  d.mode = {TuneMode::kLimitedWorkspace, SettingSource::kDefault};
  d.origin = origin;
  d.seconds = seconds;
  d.record.algorithm = "winograd_4x4_3x3";
  d.record.layout = "NCHW";
  d.record.time_ms = 1.5;
  d.record.candidates = {{"im2col_gemm", "NCHW", 2.0, 7 * kMB, ""},
                         {"winograd_4x4_3x3", "NCHW", 1.5, 4 * kMB, ""},
                         {"gemm_1x1", "NCHW", -1, 0, "unsupported: needs a 1x1 kernel"}};
  return d;
}

TEST(ConvTunerReport, TheSummaryCountsWherePicksCameFrom) {
  std::vector<LayerTuning> decisions = {
      Decision("a", PickOrigin::kUserDb, 0), Decision("b", PickOrigin::kSystemDb, 0),
      Decision("c", PickOrigin::kBenchmark, 1.25), Decision("d", PickOrigin::kBenchmark, 2.0)};
  EXPECT_EQ(FormatTuningSummary(decisions),
            "tuned 4 convolutions: 2 from DB, 2 benchmarked in 3.2 s");
  EXPECT_EQ(FormatTuningSummary({Decision("a", PickOrigin::kUserDb, 0)}),
            "tuned 1 convolution: 1 from DB, 0 benchmarked in 0.0 s");
  EXPECT_EQ(FormatTuningSummary(
                {Decision("a", PickOrigin::kCache, 0), Decision("b", PickOrigin::kHeuristic, 0)}),
            "tuned 2 convolutions: 0 from DB, 1 from cache, 1 by heuristic (off), 0 benchmarked "
            "in 0.0 s");
  // Training: forward and backward problems of the same layers.
  EXPECT_EQ(FormatTuningSummary({Decision("a", PickOrigin::kUserDb, 0),
                                 Decision("a", PickOrigin::kUserDb, 0),
                                 Decision("a", PickOrigin::kBenchmark, 0.5)}),
            "tuned 3 convolution problems of 1 layer: 2 from DB, 1 benchmarked in 0.5 s");
}

TEST(ConvTunerReport, VerboseListsEveryCandidateWithItsTimeOrWhyItWasSkipped) {
  const std::string report =
      FormatTuningReport({Decision("conv3", PickOrigin::kBenchmark, 0.5)}, true);
  EXPECT_NE(report.find("conv3 forward: winograd_4x4_3x3 NCHW 1.5 ms"), std::string::npos)
      << report;
  EXPECT_NE(report.find("limited_workspace (from default MXNET_CUDNN_AUTOTUNE_DEFAULT)"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("from benchmark"), std::string::npos) << report;
  EXPECT_NE(report.find("2 ms"), std::string::npos) << report;
  EXPECT_NE(report.find("<- pick"), std::string::npos) << report;
  EXPECT_NE(report.find("skipped: unsupported: needs a 1x1 kernel"), std::string::npos) << report;
  const std::string brief =
      FormatTuningReport({Decision("conv3", PickOrigin::kBenchmark, 0.5)}, false);
  EXPECT_EQ(brief.find("im2col_gemm"), std::string::npos) << brief;
}

// ---- CPU candidates and heuristic ----

cpu::ConvGeometry Geometry(int64_t channels, int64_t filters, int64_t kernel, int64_t stride,
                           int64_t pad, int64_t size, int64_t groups = 1, bool nhwc = false) {
  cpu::ConvGeometry g;
  g.batch = 2;
  g.in_channels = channels;
  g.out_channels = filters;
  g.groups = groups;
  g.in_h = g.in_w = size;
  g.kernel_h = g.kernel_w = kernel;
  g.stride_h = g.stride_w = stride;
  g.pad_h = g.pad_w = pad;
  g.out_h = g.out_w = (size + 2 * pad - kernel) / stride + 1;
  g.layout = nhwc ? cpu::ConvLayout::kNHWC : cpu::ConvLayout::kNCHW;
  return g;
}

std::string HeuristicName(const cpu::ConvGeometry& g, ConvDirection direction) {
  return std::string(HeuristicCpuAlgorithm(g, direction).name());
}

TEST(CpuConvTuning, TheHeuristicFollowsTheLayerShape) {
  EXPECT_EQ(HeuristicName(Geometry(32, 32, 3, 1, 1, 16, 32), ConvDirection::kForward),
            "depthwise_direct");
  EXPECT_EQ(HeuristicName(Geometry(64, 32, 1, 1, 0, 8), ConvDirection::kForward), "gemm_1x1");
  EXPECT_EQ(HeuristicName(Geometry(64, 32, 1, 2, 0, 8), ConvDirection::kForward), "im2col_gemm");
  EXPECT_EQ(HeuristicName(Geometry(3, 16, 7, 2, 3, 32), ConvDirection::kForward), "direct_nchw");
  EXPECT_EQ(HeuristicName(Geometry(3, 16, 7, 2, 3, 32), ConvDirection::kBackwardData),
            "im2col_gemm");  // direct_nchw is forward only
  EXPECT_EQ(HeuristicName(Geometry(16, 16, 5, 1, 2, 12), ConvDirection::kForward), "im2col_gemm");
  EXPECT_EQ(HeuristicName(Geometry(3, 16, 7, 2, 3, 32, 1, true), ConvDirection::kForward),
            "im2row_gemm");
  EXPECT_EQ(HeuristicName(Geometry(64, 64, 3, 1, 1, 8), ConvDirection::kBackwardFilter),
            "im2col_gemm");
}

TEST(CpuConvTuning, EveryCandidateRunsAndWorkspacesMatchTheAlgorithms) {
  const std::vector<cpu::ConvGeometry> geometries = {
      Geometry(8, 8, 3, 1, 1, 9), Geometry(8, 16, 1, 1, 0, 7), Geometry(8, 8, 3, 2, 1, 9, 8),
      Geometry(6, 4, 3, 1, 0, 8, 2, true), Geometry(4, 4, 1, 1, 0, 5, 1, true)};
  for (const cpu::ConvGeometry& g : geometries) {
    for (ConvDirection direction :
         {ConvDirection::kForward, ConvDirection::kBackwardData, ConvDirection::kBackwardFilter}) {
      SCOPED_TRACE(cpu::DescribeGeometry(g) + " " + ConvDirectionName(direction));
      std::vector<Candidate> candidates = CpuConvCandidates(g, direction, DType::kFloat32);
      ASSERT_FALSE(candidates.empty());
      int runnable = 0;
      for (const Candidate& candidate : candidates) {
        const cpu::ConvAlgorithm* algorithm =
            cpu::FindCpuConvAlgorithm(candidate.algorithm, g.layout);
        ASSERT_NE(algorithm, nullptr) << candidate.algorithm;
        EXPECT_EQ(candidate.layout, ActivationLayoutName(g.layout));
        if (!candidate.unsupported.empty()) {
          EXPECT_FALSE(algorithm->Supports(g, direction)) << candidate.algorithm;
          continue;
        }
        ++runnable;
        EXPECT_EQ(candidate.workspace_bytes,
                  algorithm->WorkspaceBytes(g, direction, DType::kFloat32));
        // Timed as a pass runs it: the caches set before every run.
        ASSERT_TRUE(candidate.before_run) << candidate.algorithm;
        EXPECT_NO_THROW(candidate.before_run()) << candidate.algorithm;
        EXPECT_NO_THROW(candidate.run()) << candidate.algorithm;
      }
      EXPECT_GE(runnable, 1);
      const std::vector<size_t> ranking = RankCpuCandidates(g, direction, candidates);
      ASSERT_FALSE(ranking.empty());
      EXPECT_EQ(candidates[ranking[0]].algorithm, HeuristicName(g, direction));
    }
  }
}

TEST(CpuConvTuning, ThePlanTunesTheRequestedDirections) {
  Settings::Global().Set("MXNET_TUNING_DB_MODE", "off");
  const OpDef& op = OpRegistry::Global().Get("Convolution");
  CpuConvTuningRequest request;
  request.tuning = LayerTuningRequestFor(
      ParseOpAttributes(op, {{"kernel", "(3,3)"}, {"num_filter", "9"}, {"cudnn_tune", "fastest"}},
                        "convT"),
      "convT");
  request.geometry = Geometry(8, 8, 3, 1, 1, 9);
  CpuConvPlan inference = TuneCpuConvolution(request);
  ASSERT_EQ(inference.decisions.size(), 1u);
  EXPECT_NE(inference.forward, nullptr);
  EXPECT_EQ(inference.backward_data, nullptr);
  EXPECT_EQ(inference.decisions[0].layer, "convT");
  EXPECT_EQ(inference.decisions[0].mode.source, SettingSource::kAttribute);
  EXPECT_EQ(inference.decisions[0].mode.mode, TuneMode::kFastest);

  request.directions = {ConvDirection::kForward, ConvDirection::kBackwardData,
                        ConvDirection::kBackwardFilter};
  CpuConvPlan training = TuneCpuConvolution(request);
  ASSERT_EQ(training.decisions.size(), 3u);
  EXPECT_EQ(training.decisions[1].problem.direction, ConvDirection::kBackwardData);
  EXPECT_EQ(training.decisions[2].problem.direction, ConvDirection::kBackwardFilter);
  EXPECT_EQ(training.backward_filter->name(), training.decisions[2].record.algorithm);

  // A Deconvolution's forward is its adjoint convolution's backward_data, tuned alone.
  request.directions = {ConvDirection::kBackwardData};
  CpuConvPlan adjoint = TuneCpuConvolution(request);
  ASSERT_EQ(adjoint.decisions.size(), 1u);
  EXPECT_EQ(adjoint.forward, nullptr);
  EXPECT_NE(adjoint.backward_data, nullptr);

  // A forward that will reuse a prepared weight is timed, and keyed, as such.
  request.directions = {ConvDirection::kForward};
  request.prepared_weight = true;
  CpuConvPlan prepared = TuneCpuConvolution(request);
  ASSERT_EQ(prepared.decisions.size(), 1u);
  EXPECT_TRUE(prepared.decisions[0].problem.prepared_weight);
  EXPECT_NE(prepared.forward, nullptr);
  Settings::Global().Reset("MXNET_TUNING_DB_MODE");
}

}  // namespace
}  // namespace mxlite::conv
