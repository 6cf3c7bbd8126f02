// The convolution tuner (docs/design.md, Convolution tuning): for one convolution problem, which
// candidate algorithm to run, decided per the layer's tuning mode, remembered in the tuning DB.
//
//   const LayerTuningRequest layer = LayerTuningRequestFor(node.attrs, "conv3");  // once, at bind
//   ConvTuner::Request request;
//   request.layer = layer.layer;  request.problem = problem;  request.environment = here;
//   request.mode = layer.mode;  request.policy = layer.policy;
//   request.candidates = [&] { return CandidatesOf(problem); };   // built only on a DB miss
//   request.heuristic = RankByHeuristic;
//   LayerTuning decision = ConvTuner::Global().Tune(request);   // decision.record.algorithm
//
// Modes (per direction; the layer's cudnn_tune attribute, else MXNET_CUDNN_AUTOTUNE_DEFAULT):
//   off                no timing: the heuristic's first candidate that fits the workspace limit;
//   limited_workspace  time every candidate whose workspace fits the limit; pick the fastest;
//   fastest            time every candidate whatever its workspace; pick the fastest.
// MXNET_ENFORCE_DETERMINISM=1 drops non-deterministic candidates in every mode; tensor-core
// candidates are dropped unless the policy allows them. No candidate left is an error naming the
// layer, the problem and why each candidate was dropped.
//
// Where a pick comes from, in order: the in-process cache, the user DB, the system DB (all three
// through TuningDb, keyed by the problem, the policy, the device and the library versions), then —
// in off mode — the heuristic, else a benchmark whose result is stored. Off-mode picks are never
// stored: they cost nothing to recompute. A stored pick the caller no longer accepts
// (Request::usable, e.g. an algorithm that disappeared) counts as a miss.
//
// Background mode (MXNET_TUNING_DB_MODE=background; the DB itself behaves as in update). A miss
// of a layer whose mode is not off, when the request can build detached candidates
// (Request::detached_candidates), is answered at once with the heuristic's pick (as off would
// pick it, nothing timed, nothing stored; origin kBackground) while the problem is queued on the
// process's background tuner (ops/conv/background_tuner.h), which tunes it on a low-priority
// thread with the same policy and timing rules and stores the record in the DB: the next bind
// finds it there. Without detached candidates (cuDNN's, whose Find times on the layer's own
// descriptors and device buffers) the miss is tuned at bind, as in update.
//
// Timing (TimeCandidate): warm-up runs, then repeated runs until the spread of the middle half is
// within TimingOptions::max_spread of the median (noisy results are re-measured, up to max_runs),
// with a cap on the time spent per candidate; the median is reported. A problem's candidates are
// timed against each other (TimeInterleaved: one run of each per round), not one after the other.
// A candidate that throws is recorded as skipped with the error, not fatal.
//
// Thread safety: SelectCandidate and TimeCandidate are reentrant. ConvTuner serialises Tune calls
// (timing two candidates at once would measure the contention, not the algorithms), and every
// timing in the process (TimeInterleaved, SelectCandidate's timer, the background tuner's jobs)
// holds TimingLock(), so a background job never times while a bind does. Lock order: ConvTuner's
// own lock, then TimingLock(); nothing that tunes may run inside a timed run.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/settings.h"
#include "ops/attributes.h"
#include "ops/conv/tuning_db.h"

namespace mxlite::conv {

class MeasuredHeuristic;

// ---- Modes ----

enum class TuneMode { kOff, kLimitedWorkspace, kFastest };
// "off", "limited_workspace", "fastest".
const char* TuneModeName(TuneMode mode);
// "0"/"off", "1"/"limited_workspace", "2"/"fastest"; anything else throws mxlite::Error.
TuneMode ParseTuneMode(std::string_view text);

struct EffectiveMode {
  TuneMode mode = TuneMode::kLimitedWorkspace;
  SettingSource source = SettingSource::kDefault;

  // "limited_workspace (from environment MXNET_CUDNN_AUTOTUNE_DEFAULT)" or
  // "fastest (from attribute cudnn_tune)".
  std::string Describe() const;
};

// The layer's `cudnn_tune` (nullopt when the attribute is absent) in front of
// MXNET_CUDNN_AUTOTUNE_DEFAULT. Errors name the layer.
EffectiveMode ResolveTuneMode(const Settings& settings, const std::optional<std::string>& cudnn_tune,
                              const std::string& layer);

// ---- Candidates and the policy that filters them ----

// One way to run the problem, as the tuner sees it.
struct Candidate {
  std::string algorithm;
  std::string layout;
  uint64_t workspace_bytes = 0;
  bool deterministic = true;
  bool tensor_cores = false;
  std::string unsupported;    // why it cannot run this problem; empty when it can
  std::function<void()> run;  // one complete, synchronous run (waits for the device)
  // Before every run, outside the timed span: puts the caches in the state the run meets in a
  // pass (CPU candidates: weight and outputs flushed, input warm; ops/cpu/cache_state.h).
  // Empty: none.
  std::function<void()> before_run;
};

struct TuningPolicy {
  TuneMode mode = TuneMode::kLimitedWorkspace;
  uint64_t workspace_limit_bytes = uint64_t{1024} << 20;
  bool deterministic_only = false;
  bool allow_tensor_cores = true;
  // float32 on Tensor Cores through TF32 conversion: more (and faster) cuDNN candidates.
  bool allow_tf32_conversion = false;

  // The layer's mode and workspace limit with MXNET_ENFORCE_DETERMINISM,
  // MXNET_CUDA_ALLOW_TENSOR_CORE and MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION from `settings`.
  static TuningPolicy For(TuneMode mode, uint64_t workspace_limit_bytes, const Settings& settings);
  // What shapes the choice, e.g. "limited_workspace ws=1024MB det=0 tc=1 tf32=0": part of the DB
  // key, because a pick under one policy is not the answer under another (a float32 pick made
  // without TF32 is not the answer once TF32 candidates may run). fastest ignores the limit.
  std::string KeyText() const;
};

// What one layer asks of the tuner, read once from its attributes (cudnn_tune, workspace) and
// the settings (MXNET_CUDNN_AUTOTUNE_DEFAULT, MXNET_ENFORCE_DETERMINISM, the Tensor Core
// settings): every direction, on every device, and the layout planner tune from this, never from
// the attributes. Convolution and Deconvolution ask alike (a Deconvolution's directions are its
// adjoint convolution's).
struct LayerTuningRequest {
  std::string layer;
  EffectiveMode mode;
  TuningPolicy policy;  // the mode, the workspace limit, determinism, Tensor Cores
};

// The request of the layer `layer` whose attributes are `attrs` (a schema with cudnn_tune and
// workspace, ops/conv_attributes.h). Errors name the layer.
LayerTuningRequest LayerTuningRequestFor(const Attributes& attrs, const std::string& layer);

struct TimingOptions {
  int warmup_runs = 1;
  int min_runs = 3;
  int max_runs = 11;
  double cap_ms = 2000.0;    // per candidate; at least one timed run always happens
  double max_spread = 0.1;   // (q3 - q1) / median above which more runs are taken
};

struct Timing {
  double median_ms = 0.0;
  int runs = 0;
  bool capped = false;  // stopped by cap_ms before the spread settled
};

// Times `run` per `options` (see the header comment). `before_each`, when given, runs before every
// run (warm-up included) outside the timed span: to put the caches in the state the real call
// meets (scheduler/planning/layout_costs.cc evicts them before timing a layout transform). What
// `run` throws propagates.
Timing TimeCandidate(const std::function<void()>& run, const TimingOptions& options = {},
                     const std::function<void()>& before_each = {});

// One of the runs TimeInterleaved compares, and its preparation (as TimeCandidate's before_each).
struct TimedRun {
  std::function<void()> run;
  std::function<void()> before_each;  // or empty
};

// A run's timing, or what it threw (then it was timed no further and `timing` means nothing).
struct InterleavedTiming {
  Timing timing;
  std::exception_ptr error;
};

// Times runs against each other. Timed one after the other, each run would meet whatever the
// machine was doing in its own stretch of time; on a shared host speed drifts for seconds at a
// time (other tenants, clocks), and which of two close alternatives won depended on when each was
// timed: two tunings of MobileNet-V2 on 2 threads measured one depthwise block fused 0.43 and
// 0.71 ms, apart 0.46 and 0.77, and kept it apart in one of them. Here every run goes once per
// round, the order rotating from round to round, so all of them sample the same stretch and a
// slow spell slows them alike. Per run the rules of TimeCandidate: options.warmup_runs rounds
// untimed, then rounds until every run has min_runs samples within max_spread (or max_runs
// samples), with cap_ms per run for all of them together (at least one timed round always
// happens). A run that throws stays out of later rounds; the others go on.
std::vector<InterleavedTiming> TimeInterleaved(const std::vector<TimedRun>& runs,
                                               const TimingOptions& options = {});

// Held by every timing in the process while it runs (recursive: TimeInterleaved inside a held
// SelectCandidate takes it again), so that no two timings overlap: a foreground tune, the
// planner's transforms, the plan check and the background tuner take turns.
std::recursive_mutex& TimingLock();

// How candidates are timed: the real clock in production, chosen times in tests.
using CandidateTimer = std::function<Timing(const Candidate&)>;
// The heuristic: indices into `candidates`, most preferred first (it may leave some out).
using HeuristicRanking = std::function<std::vector<size_t>(const std::vector<Candidate>&)>;

struct Selection {
  TuningRecord record;
  int candidates_timed = 0;
  double seconds = 0.0;  // wall time spent timing
};

// Filters `candidates` per `policy` and picks: by the heuristic in off mode, else by timing the
// eligible ones with `timer`. Every candidate appears in record.candidates, timed or with the
// reason it was skipped ("workspace: needs 12.0 MB > limit 8.0 MB", "determinism", "tensor cores",
// "unsupported: ...", "not timed (off)", "failed: ..."). Throws mxlite::Error naming `label` when
// nothing is eligible.
Selection SelectCandidate(const std::string& label, const std::vector<Candidate>& candidates,
                          const TuningPolicy& policy, const CandidateTimer& timer,
                          const HeuristicRanking& heuristic);

// ---- Decisions and the tuner ----

// kBackground: the heuristic's pick, run while the problem is tuned in the background (a miss in
// background mode); the next bind finds the tuned pick.
enum class PickOrigin { kCache, kUserDb, kSystemDb, kBenchmark, kHeuristic, kBackground };
// "cache", "user DB", "system DB", "benchmark", "heuristic", "heuristic (tuning in background)".
const char* PickOriginName(PickOrigin origin);

// What was decided for one layer and direction, for the report.
struct LayerTuning {
  std::string layer;
  ConvProblem problem;
  EffectiveMode mode;
  TuningPolicy policy;
  TuningRecord record;
  PickOrigin origin = PickOrigin::kHeuristic;
  // A heuristic pick (kHeuristic, kBackground) ranked by the measured tier
  // (ops/conv/measured_heuristic.h): the tuned problems it was ranked from; 0: by the backend's
  // rules.
  int heuristic_neighbours = 0;
  int candidates_timed = 0;
  double seconds = 0.0;  // spent benchmarking this decision
};

// The report: one line per decision, or with `verbose` every candidate with its time and
// workspace or why it was skipped.
std::string FormatTuningReport(const std::vector<LayerTuning>& decisions, bool verbose);
// "tuned 53 convolutions: 41 from DB, 12 benchmarked in 3.2 s" (cache hits, heuristic picks and
// picks made while tuning in the background are named when there are any: "2 by heuristic (tuning
// in background)", "81 by heuristic (off, 81 ranked by tuned problems)" where the measured tier
// ranked them; "0 benchmarked" when nothing was timed). With backward problems: "tuned 159
// convolution problems of 53 layers: ...".
std::string FormatTuningSummary(const std::vector<LayerTuning>& decisions);

// What an op state that ran the tuner exposes to the executor's report.
class TunedState {
 public:
  virtual ~TunedState() = default;
  virtual const std::vector<LayerTuning>& tuning_decisions() const = 0;
};

class ConvTuner {
 public:
  struct Request {
    std::string layer;  // "conv3", for the report and errors
    ConvProblem problem;
    TuningEnvironment environment;
    EffectiveMode mode;
    TuningPolicy policy;
    std::function<std::vector<Candidate>()> candidates;  // called on a miss only
    // Background mode: builds the candidates again, owning everything they use (copies of the
    // problem's geometry, their own tensors), so that it may be called later on another thread
    // after the caller and its state are gone; they are timed by the clock (TimeInterleaved).
    // Empty: this backend cannot, and a miss is tuned at bind as in update.
    std::function<std::vector<Candidate>()> detached_candidates;
    HeuristicRanking heuristic;
    // Whether a heuristic pick is ranked by the measured tier (ops/conv/measured_heuristic.h)
    // from the DB's tuned problems of this environment, `heuristic` serving where they say
    // nothing; false: `heuristic` alone.
    bool measured_heuristic = false;
    CandidateTimer timer;  // empty: TimeCandidate with default options
    // Whether a stored pick can still be run (empty: any).
    std::function<bool(const TuningRecord&)> usable;
  };

  // The process-wide tuner, its DB opened from the settings (MXNET_TUNING_DB_*) and reopened when
  // they change.
  static ConvTuner& Global();

  explicit ConvTuner(std::shared_ptr<TuningDb> db);
  ConvTuner(const ConvTuner&) = delete;
  ConvTuner& operator=(const ConvTuner&) = delete;

  LayerTuning Tune(const Request& request);
  std::shared_ptr<TuningDb> db() const;

 private:
  ConvTuner() = default;  // Global(): the DB follows the settings
  std::shared_ptr<TuningDb> CurrentDb();
  // The ranking a heuristic pick of `request` uses (see Request::measured_heuristic); it notes
  // the neighbours it ranked from in `decision`. It refers to both, which must outlive it (it is
  // called within Tune). Called with mutex_ held.
  HeuristicRanking HeuristicFor(const Request& request, TuningDb& db, LayerTuning& decision);

  struct MeasuredTier {
    std::shared_ptr<const TunedProblems> learned;  // what `tier` learned from
    std::shared_ptr<const MeasuredHeuristic> tier;
  };

  mutable std::mutex mutex_;
  bool follows_settings_ = false;
  std::shared_ptr<TuningDb> db_;  // GUARDED_BY(mutex_)
  // The measured tier by environment ("device\nversions"), rebuilt when the DB's snapshot changes.
  std::map<std::string, MeasuredTier> measured_;  // GUARDED_BY(mutex_)
};

// ---- The front: a layer's directions, for any device ----

// One device's side of tuning a convolution layer (the CPU's, ops/conv/cpu_conv_tuning.h; cuDNN's,
// ops/cuda/cudnn_convolution.h): how a direction's problem is keyed, its candidates (built on a DB
// miss only), their heuristic order, whether a stored pick still runs, and how a candidate is
// timed. Everything else (modes, the DB, the report, the errors) is the front's, the same for every
// device.
class ConvTuningBackend {
 public:
  virtual ~ConvTuningBackend() = default;
  virtual TuningEnvironment Environment() const = 0;
  virtual ConvProblem Problem(ConvDirection direction) const = 0;
  virtual std::vector<Candidate> Candidates(ConvDirection direction) = 0;
  virtual std::vector<size_t> Rank(ConvDirection direction,
                                   const std::vector<Candidate>& candidates) const = 0;
  virtual bool Usable(ConvDirection direction, const TuningRecord& record) const = 0;
  // Whether heuristic picks are ranked by the measured tier (ConvTuner::Request::
  // measured_heuristic), Rank's order serving where the DB says nothing; false (the default):
  // Rank's order alone.
  virtual bool RanksFromMeasurements() const { return false; }
  // How a candidate of `direction` is timed; empty (the default): TimeCandidate.
  virtual CandidateTimer Timer(ConvDirection direction);
  // The candidates of `direction` built detached (ConvTuner::Request::detached_candidates), for
  // background tuning; empty (the default): none, the direction is tuned at bind.
  virtual std::function<std::vector<Candidate>()> DetachedCandidates(ConvDirection direction);
};

// Tunes `directions` of the layer, in order, through ConvTuner::Global() (one decision each).
std::vector<LayerTuning> TuneLayer(const LayerTuningRequest& request,
                                   const std::vector<ConvDirection>& directions,
                                   ConvTuningBackend& backend);

}  // namespace mxlite::conv
