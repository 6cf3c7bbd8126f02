#include "ops/conv/tuner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/logging.h"
#include "ops/conv/background_tuner.h"
#include "ops/conv/measured_heuristic.h"

namespace mxlite::conv {
namespace {

constexpr const char* kAutotuneSetting = "MXNET_CUDNN_AUTOTUNE_DEFAULT";

std::string Megabytes(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

double Quantile(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(position);
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] * (1.0 - fraction) + sorted[above] * fraction;
}

double Median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return Quantile(samples, 0.5);
}

// Whether the middle half of `samples` lies within `max_spread` of their median.
bool Settled(std::vector<double> samples, double max_spread) {
  std::sort(samples.begin(), samples.end());
  const double median = Quantile(samples, 0.5);
  if (median <= 0.0) return true;
  return (Quantile(samples, 0.75) - Quantile(samples, 0.25)) / median <= max_spread;
}

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Why `candidate` may not take part under `policy`; empty when it may.
std::string SkipReason(const Candidate& candidate, const TuningPolicy& policy) {
  if (!candidate.unsupported.empty()) return "unsupported: " + candidate.unsupported;
  if (policy.deterministic_only && !candidate.deterministic) return "determinism";
  if (candidate.tensor_cores && !policy.allow_tensor_cores) return "tensor cores";
  if (policy.mode != TuneMode::kFastest &&
      candidate.workspace_bytes > policy.workspace_limit_bytes) {
    return "workspace: needs " + Megabytes(candidate.workspace_bytes) + " > limit " +
           Megabytes(policy.workspace_limit_bytes);
  }
  return "";
}

MeasuredCandidate Describe(const Candidate& candidate) {
  MeasuredCandidate measured;
  measured.algorithm = candidate.algorithm;
  measured.layout = candidate.layout;
  measured.workspace_bytes = candidate.workspace_bytes;
  return measured;
}

[[noreturn]] void ThrowNoneEligible(const std::string& label, const TuningRecord& record,
                                    const TuningPolicy& policy) {
  std::ostringstream reasons;
  for (const MeasuredCandidate& candidate : record.candidates) {
    reasons << "\n  " << candidate.algorithm << " (" << candidate.layout
            << "): " << candidate.skip_reason;
  }
  std::string advice;
  if (policy.deterministic_only) advice += "; MXNET_ENFORCE_DETERMINISM=1 is set";
  if (policy.mode == TuneMode::kLimitedWorkspace || policy.mode == TuneMode::kOff) {
    advice += "; raise the layer's workspace attribute (now " +
              Megabytes(policy.workspace_limit_bytes) + ") or use cudnn_tune=fastest";
  }
  MX_THROW() << label << ": no convolution algorithm is left to run under "
             << TuneModeName(policy.mode) << advice << "; the candidates:" << reasons.str();
}

// The heuristic's first eligible choice, or the first eligible candidate when it ranks none.
size_t HeuristicPick(const std::vector<Candidate>& candidates, const std::vector<bool>& eligible,
                     const HeuristicRanking& heuristic) {
  if (heuristic) {
    for (size_t index : heuristic(candidates)) {
      if (index < candidates.size() && eligible[index]) return index;
    }
  }
  return static_cast<size_t>(std::find(eligible.begin(), eligible.end(), true) - eligible.begin());
}

// What an exception caught while timing says ("unknown error" for a non-std exception).
std::string ErrorText(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

// The candidates `timed` (indices into `candidates`), in that order: each by `timer` when there is
// one (its own timings, e.g. cuDNN's find), else all of them against each other on the clock.
std::vector<InterleavedTiming> TimeEligible(const std::vector<Candidate>& candidates,
                                            const std::vector<size_t>& timed,
                                            const CandidateTimer& timer) {
  if (!timer) {
    std::vector<TimedRun> runs;
    for (size_t i : timed) runs.push_back({candidates[i].run, candidates[i].before_run});
    return TimeInterleaved(runs);
  }
  std::vector<InterleavedTiming> timings(timed.size());
  for (size_t t = 0; t < timed.size(); ++t) {
    try {
      timings[t].timing = timer(candidates[timed[t]]);
    } catch (...) {
      timings[t].error = std::current_exception();
    }
  }
  return timings;
}

void SetPick(TuningRecord& record, const MeasuredCandidate& pick) {
  record.algorithm = pick.algorithm;
  record.layout = pick.layout;
  record.time_ms = pick.time_ms;
  record.workspace_bytes = pick.workspace_bytes;
}

}  // namespace

// ---- Modes ----

const char* TuneModeName(TuneMode mode) {
  switch (mode) {
    case TuneMode::kOff: return "off";
    case TuneMode::kLimitedWorkspace: return "limited_workspace";
    case TuneMode::kFastest: return "fastest";
  }
  return "?";
}

TuneMode ParseTuneMode(std::string_view text) {
  if (text == "0" || text == "off") return TuneMode::kOff;
  if (text == "1" || text == "limited_workspace") return TuneMode::kLimitedWorkspace;
  if (text == "2" || text == "fastest") return TuneMode::kFastest;
  MX_THROW() << "invalid tuning mode '" << text
             << "': expected off, limited_workspace or fastest (or 0, 1, 2)";
}

std::string EffectiveMode::Describe() const {
  std::string text = std::string(TuneModeName(mode)) + " (from ";
  if (source == SettingSource::kAttribute) return text + "attribute cudnn_tune)";
  return text + SettingSourceName(source) + " " + kAutotuneSetting + ")";
}

EffectiveMode ResolveTuneMode(const Settings& settings, const std::optional<std::string>& cudnn_tune,
                              const std::string& layer) {
  std::optional<std::string_view> attribute;
  if (cudnn_tune) attribute = *cudnn_tune;
  const SettingValue value =
      settings.Resolve(kAutotuneSetting, attribute, "attribute cudnn_tune of layer " + layer);
  return {ParseTuneMode(value.text), value.source};
}

LayerTuningRequest LayerTuningRequestFor(const Attributes& attrs, const std::string& layer) {
  LayerTuningRequest request;
  request.layer = layer;
  request.mode = ResolveTuneMode(Settings::Global(), attrs.GetOptionalString("cudnn_tune"), layer);
  const uint64_t workspace_bytes = static_cast<uint64_t>(attrs.GetInt("workspace")) << 20;
  request.policy = TuningPolicy::For(request.mode.mode, workspace_bytes, Settings::Global());
  return request;
}

// ---- Policy and timing ----

TuningPolicy TuningPolicy::For(TuneMode mode, uint64_t workspace_limit_bytes,
                               const Settings& settings) {
  TuningPolicy policy;
  policy.mode = mode;
  policy.workspace_limit_bytes = workspace_limit_bytes;
  policy.deterministic_only = settings.GetBool("MXNET_ENFORCE_DETERMINISM");
  policy.allow_tensor_cores = settings.GetBool("MXNET_CUDA_ALLOW_TENSOR_CORE");
  policy.allow_tf32_conversion = settings.GetBool("MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION");
  return policy;
}

std::string TuningPolicy::KeyText() const {
  std::ostringstream out;
  out << TuneModeName(mode);
  if (mode != TuneMode::kFastest) {
    if (workspace_limit_bytes % (1 << 20) == 0) {
      out << " ws=" << (workspace_limit_bytes >> 20) << "MB";
    } else {
      out << " ws=" << workspace_limit_bytes << "B";
    }
  }
  out << " det=" << (deterministic_only ? 1 : 0) << " tc=" << (allow_tensor_cores ? 1 : 0)
      << " tf32=" << (allow_tf32_conversion ? 1 : 0);
  return out.str();
}

Timing TimeCandidate(const std::function<void()>& run, const TimingOptions& options,
                     const std::function<void()>& before_each) {
  InterleavedTiming result = TimeInterleaved({{run, before_each}}, options).front();
  if (result.error) std::rethrow_exception(result.error);
  return result.timing;
}

std::vector<InterleavedTiming> TimeInterleaved(const std::vector<TimedRun>& runs,
                                               const TimingOptions& options) {
  std::lock_guard<std::recursive_mutex> timing(TimingLock());
  const size_t count = runs.size();
  std::vector<InterleavedTiming> results(count);
  std::vector<std::vector<double>> samples(count);
  const auto start = std::chrono::steady_clock::now();
  const double cap_ms = options.cap_ms * static_cast<double>(count);
  const auto live = [&](size_t i) { return results[i].error == nullptr; };
  // Run i once (its preparation untimed), its time into `timed` when given.
  const auto run_once = [&](size_t i, std::vector<double>* timed) {
    try {
      if (runs[i].before_each) runs[i].before_each();
      const auto run_start = std::chrono::steady_clock::now();
      runs[i].run();
      if (timed != nullptr) timed->push_back(MillisecondsSince(run_start));
    } catch (...) {
      results[i].error = std::current_exception();
    }
  };
  const auto finished = [&](size_t i) {
    const int taken = static_cast<int>(samples[i].size());
    return taken >= options.max_runs ||
           (taken >= options.min_runs && Settled(samples[i], options.max_spread));
  };
  for (int round = 0; round < options.warmup_runs; ++round) {
    for (size_t i = 0; i < count; ++i) {
      if (live(i)) run_once(i, nullptr);
    }
    if (MillisecondsSince(start) > cap_ms) break;
  }
  bool capped = false;
  for (size_t round = 0;; ++round) {
    for (size_t k = 0; k < count; ++k) {
      const size_t i = (round + k) % count;
      if (live(i)) run_once(i, &samples[i]);
    }
    bool all_finished = true;
    for (size_t i = 0; i < count; ++i) all_finished = all_finished && (!live(i) || finished(i));
    if (all_finished) break;
    if (MillisecondsSince(start) > cap_ms) {
      capped = true;
      break;
    }
  }
  for (size_t i = 0; i < count; ++i) {
    if (!live(i)) continue;
    Timing& timing = results[i].timing;
    timing.runs = static_cast<int>(samples[i].size());
    timing.median_ms = Median(samples[i]);
    timing.capped = capped && !finished(i);
  }
  return results;
}

// ---- Selection ----

Selection SelectCandidate(const std::string& label, const std::vector<Candidate>& candidates,
                          const TuningPolicy& policy, const CandidateTimer& timer,
                          const HeuristicRanking& heuristic) {
  Selection selection;
  TuningRecord& record = selection.record;
  record.tuning_mode = TuneModeName(policy.mode);
  record.timestamp = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  std::vector<bool> eligible(candidates.size(), false);
  for (size_t i = 0; i < candidates.size(); ++i) {
    MeasuredCandidate measured = Describe(candidates[i]);
    measured.skip_reason = SkipReason(candidates[i], policy);
    eligible[i] = measured.skip_reason.empty();
    record.candidates.push_back(std::move(measured));
  }
  if (std::find(eligible.begin(), eligible.end(), true) == eligible.end()) {
    ThrowNoneEligible(label, record, policy);
  }

  if (policy.mode == TuneMode::kOff) {
    const size_t pick = HeuristicPick(candidates, eligible, heuristic);
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (eligible[i] && i != pick) record.candidates[i].skip_reason = "not timed (off)";
    }
    SetPick(record, record.candidates[pick]);
    return selection;
  }

  const auto start = std::chrono::steady_clock::now();
  std::vector<size_t> timed;  // the eligible candidates, in order
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (eligible[i]) timed.push_back(i);
  }
  std::vector<InterleavedTiming> timings;
  {
    std::lock_guard<std::recursive_mutex> timing(TimingLock());
    timings = TimeEligible(candidates, timed, timer);
  }
  std::optional<size_t> best;
  for (size_t t = 0; t < timed.size(); ++t) {
    MeasuredCandidate& measured = record.candidates[timed[t]];
    if (timings[t].error) {
      measured.skip_reason = "failed: " + ErrorText(timings[t].error);
      continue;
    }
    measured.time_ms = timings[t].timing.median_ms;
    ++selection.candidates_timed;
    if (!best || measured.time_ms < record.candidates[*best].time_ms) best = timed[t];
  }
  selection.seconds = MillisecondsSince(start) / 1000.0;
  if (!best) ThrowNoneEligible(label, record, policy);
  SetPick(record, record.candidates[*best]);
  return selection;
}

// ---- Report ----

const char* PickOriginName(PickOrigin origin) {
  switch (origin) {
    case PickOrigin::kCache: return "cache";
    case PickOrigin::kUserDb: return "user DB";
    case PickOrigin::kSystemDb: return "system DB";
    case PickOrigin::kBenchmark: return "benchmark";
    case PickOrigin::kHeuristic: return "heuristic";
    case PickOrigin::kBackground:
      return "heuristic (tuning in background)";
  }
  return "?";
}

namespace {

std::string Milliseconds(double ms) {
  if (ms < 0) return "-";
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g ms", ms);
  return text;
}

void WriteDecisionLine(std::ostream& out, const LayerTuning& d) {
  out << d.layer << " " << ConvDirectionName(d.problem.direction) << ": " << d.record.algorithm
      << " " << d.record.layout;
  if (d.record.time_ms >= 0 && d.origin != PickOrigin::kHeuristic &&
      d.origin != PickOrigin::kBackground) {
    out << " " << Milliseconds(d.record.time_ms);
  }
  out << ", workspace " << Megabytes(d.record.workspace_bytes) << "; mode " << d.mode.Describe()
      << "; from " << PickOriginName(d.origin);
  if (d.heuristic_neighbours > 0) {
    out << ", ranked by the " << d.heuristic_neighbours << " nearest tuned problems";
  }
  out << "\n";
}

void WriteCandidates(std::ostream& out, const LayerTuning& d) {
  out << "    problem: " << d.problem.ToString() << "\n";
  char line[256];
  for (const MeasuredCandidate& c : d.record.candidates) {
    const bool pick = c.algorithm == d.record.algorithm && c.layout == d.record.layout;
    const std::string status =
        c.skip_reason.empty() ? (pick ? "<- pick" : "") : "skipped: " + c.skip_reason;
    std::snprintf(line, sizeof(line), "    %-18s %-5s %12s %10s  %s\n", c.algorithm.c_str(),
                  c.layout.c_str(), c.skip_reason.empty() ? Milliseconds(c.time_ms).c_str() : "-",
                  Megabytes(c.workspace_bytes).c_str(), status.c_str());
    out << line;
  }
}

}  // namespace

std::string FormatTuningReport(const std::vector<LayerTuning>& decisions, bool verbose) {
  std::ostringstream out;
  for (const LayerTuning& decision : decisions) {
    WriteDecisionLine(out, decision);
    if (verbose) WriteCandidates(out, decision);
  }
  out << FormatTuningSummary(decisions) << "\n";
  return out.str();
}

std::string FormatTuningSummary(const std::vector<LayerTuning>& decisions) {
  std::map<PickOrigin, int> count, measured;
  double seconds = 0.0;
  for (const LayerTuning& decision : decisions) {
    ++count[decision.origin];
    measured[decision.origin] += decision.heuristic_neighbours > 0 ? 1 : 0;
    seconds += decision.seconds;
  }
  // "(off)" or "(off, 3 ranked by tuned problems)".
  auto heuristic_detail = [&](PickOrigin origin, const char* why) {
    std::string text = std::string(" (") + why;
    if (measured[origin] > 0) {
      text += ", " + std::to_string(measured[origin]) + " ranked by tuned problems";
    }
    return text + ")";
  };
  std::set<std::string> layers;
  for (const LayerTuning& decision : decisions) layers.insert(decision.layer);
  std::ostringstream out;
  out << "tuned " << decisions.size();
  if (layers.size() == decisions.size()) {
    out << (decisions.size() == 1 ? " convolution" : " convolutions");
  } else {  // training: forward and backward problems of each layer
    out << " convolution problems of " << layers.size()
        << (layers.size() == 1 ? " layer" : " layers");
  }
  out << ": " << count[PickOrigin::kUserDb] + count[PickOrigin::kSystemDb] << " from DB";
  if (count[PickOrigin::kCache] > 0) out << ", " << count[PickOrigin::kCache] << " from cache";
  if (count[PickOrigin::kHeuristic] > 0) {
    out << ", " << count[PickOrigin::kHeuristic] << " by heuristic"
        << heuristic_detail(PickOrigin::kHeuristic, "off");
  }
  if (count[PickOrigin::kBackground] > 0) {
    out << ", " << count[PickOrigin::kBackground] << " by heuristic"
        << heuristic_detail(PickOrigin::kBackground, "tuning in background");
  }
  char duration[32];
  std::snprintf(duration, sizeof(duration), "%.1f s", seconds);
  out << ", " << count[PickOrigin::kBenchmark] << " benchmarked in " << duration;
  return out.str();
}

// ---- The tuner ----

ConvTuner& ConvTuner::Global() {
  static ConvTuner* tuner = [] {
    auto* created = new ConvTuner();
    created->follows_settings_ = true;
    return created;
  }();
  return *tuner;
}

ConvTuner::ConvTuner(std::shared_ptr<TuningDb> db) : db_(std::move(db)) {
  MX_CHECK(db_ != nullptr) << "ConvTuner: no tuning DB given";
}

std::shared_ptr<TuningDb> ConvTuner::db() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return db_;
}

std::shared_ptr<TuningDb> ConvTuner::CurrentDb() {
  // Called with mutex_ held.
  if (!follows_settings_) return db_;
  const TuningDbOptions wanted = TuningDbOptions::FromSettings(Settings::Global());
  const bool same = db_ && db_->options().user_path == wanted.user_path &&
                    db_->options().system_path == wanted.system_path &&
                    db_->options().mode == wanted.mode;
  if (!same) db_ = std::make_shared<TuningDb>(wanted);
  return db_;
}

namespace {

// The heuristic's pick under the layer's policy, made as off makes it (nothing timed): what a miss
// runs in background mode while its problem is tuned.
TuningRecord HeuristicRecord(const std::string& label, const ConvTuner::Request& request,
                             const HeuristicRanking& heuristic) {
  TuningPolicy untimed = request.policy;
  untimed.mode = TuneMode::kOff;
  // fastest lets any workspace run; off would hold the pick to the layer's limit.
  if (request.policy.mode == TuneMode::kFastest) {
    untimed.workspace_limit_bytes = std::numeric_limits<uint64_t>::max();
  }
  TuningRecord record = SelectCandidate(label, request.candidates(), untimed, {}, heuristic).record;
  record.tuning_mode = TuneModeName(request.policy.mode);
  for (MeasuredCandidate& candidate : record.candidates) {
    if (candidate.skip_reason == "not timed (off)") {
      candidate.skip_reason = "not timed (tuning in background)";
    }
  }
  return record;
}

}  // namespace

LayerTuning ConvTuner::Tune(const Request& request) {
  LayerTuning decision;
  decision.layer = request.layer;
  decision.problem = request.problem;
  decision.problem.policy = request.policy.KeyText();
  decision.mode = request.mode;
  decision.policy = request.policy;
  const std::string label = request.layer + " " + ConvDirectionName(request.problem.direction);

  std::lock_guard<std::mutex> lock(mutex_);
  std::shared_ptr<TuningDb> db = CurrentDb();
  if (request.policy.mode == TuneMode::kOff) {
    decision.record = SelectCandidate(label, request.candidates(), request.policy, request.timer,
                                      HeuristicFor(request, *db, decision))
                          .record;
    decision.origin = PickOrigin::kHeuristic;
    return decision;
  }
  if (auto hit = db->Lookup(decision.problem, request.environment)) {
    if (!request.usable || request.usable(hit->record)) {
      decision.record = hit->record;
      decision.origin = hit->source == TuningDbSource::kCache      ? PickOrigin::kCache
                        : hit->source == TuningDbSource::kUserDb   ? PickOrigin::kUserDb
                                                                   : PickOrigin::kSystemDb;
      return decision;
    }
  }
  if (db->options().mode == TuningDbMode::kBackground && request.detached_candidates) {
    decision.record = HeuristicRecord(label, request, HeuristicFor(request, *db, decision));
    const BackgroundTuner::Enqueued queued =
        BackgroundTuner::Global().Enqueue({label, decision.problem, request.environment,
                                           request.policy, request.detached_candidates, db});
    // Refused (its tuning failed before, or the process is exiting): nothing will land, so the
    // heuristic's pick stands as it does in off mode, and the planner treats it so.
    decision.origin = queued == BackgroundTuner::Enqueued::kRefused ? PickOrigin::kHeuristic
                                                                    : PickOrigin::kBackground;
    return decision;
  }
  const std::vector<Candidate> candidates = request.candidates();
  const auto runnable = std::count_if(candidates.begin(), candidates.end(),
                                      [](const Candidate& c) { return c.unsupported.empty(); });
  MX_LOG(INFO) << "tuning " << label << ": " << runnable << " of " << candidates.size()
               << " candidates run this problem (" << request.mode.Describe() << ")";
  Selection selection =
      SelectCandidate(label, candidates, request.policy, request.timer, request.heuristic);
  decision.record = std::move(selection.record);
  decision.origin = PickOrigin::kBenchmark;
  decision.candidates_timed = selection.candidates_timed;
  decision.seconds = selection.seconds;
  db->Store(decision.problem, request.environment, decision.record);
  return decision;
}

HeuristicRanking ConvTuner::HeuristicFor(const Request& request, TuningDb& db,
                                         LayerTuning& decision) {
  if (!request.measured_heuristic) return request.heuristic;
  std::shared_ptr<const TunedProblems> tuned = db.Tuned(request.environment);
  MeasuredTier& measured =
      measured_[request.environment.device + '\n' + request.environment.versions];
  if (measured.learned != tuned) {
    measured.tier = std::make_shared<const MeasuredHeuristic>(*tuned);
    measured.learned = std::move(tuned);
  }
  return [tier = measured.tier, &request, &decision](const std::vector<Candidate>& candidates) {
    const std::vector<size_t> rules =
        request.heuristic ? request.heuristic(candidates) : std::vector<size_t>{};
    MeasuredRanking ranked = tier->Rank(request.problem, candidates, rules);
    decision.heuristic_neighbours = ranked.neighbours;
    return ranked.order;
  };
}

// ---- The front ----

CandidateTimer ConvTuningBackend::Timer(ConvDirection) { return {}; }

std::function<std::vector<Candidate>()> ConvTuningBackend::DetachedCandidates(ConvDirection) {
  return {};
}

std::vector<LayerTuning> TuneLayer(const LayerTuningRequest& request,
                                   const std::vector<ConvDirection>& directions,
                                   ConvTuningBackend& backend) {
  std::vector<LayerTuning> decisions;
  for (ConvDirection direction : directions) {
    ConvTuner::Request tune;
    tune.layer = request.layer;
    tune.problem = backend.Problem(direction);
    tune.environment = backend.Environment();
    tune.mode = request.mode;
    tune.policy = request.policy;
    tune.candidates = [&backend, direction] { return backend.Candidates(direction); };
    tune.heuristic = [&backend, direction](const std::vector<Candidate>& candidates) {
      return backend.Rank(direction, candidates);
    };
    tune.measured_heuristic = backend.RanksFromMeasurements();
    tune.timer = backend.Timer(direction);
    tune.detached_candidates = backend.DetachedCandidates(direction);
    tune.usable = [&backend, direction](const TuningRecord& record) {
      return backend.Usable(direction, record);
    };
    decisions.push_back(ConvTuner::Global().Tune(tune));
  }
  return decisions;
}

}  // namespace mxlite::conv
