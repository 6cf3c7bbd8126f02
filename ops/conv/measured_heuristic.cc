#include "ops/conv/measured_heuristic.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <utility>

namespace mxlite::conv {

namespace {

// How much a unit of each feature's difference counts (features in Describe's order). Channels,
// pixels and groups move an algorithm's speed smoothly; the kernel's shape, the stride and
// dilation decide which code paths run, so a neighbour that differs there is a poor guide;
// padding only adds edge work.
constexpr std::array<double, 10> kMeasuredFeatureWeights = {1, 1, 1, 1, 4, 4, 2, 2, 4, 0.25};

double Log2(int64_t value) { return std::log2(static_cast<double>(std::max<int64_t>(value, 1))); }

int64_t OutputExtent(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation) {
  return (in + 2 * pad - dilation * (kernel - 1) - 1) / std::max<int64_t>(stride, 1) + 1;
}

}  // namespace

std::optional<std::pair<MeasuredHeuristic::Family, MeasuredHeuristic::Features>>
MeasuredHeuristic::Describe(const ConvProblem& problem) {
  const Shape& d = problem.data;
  const Shape& w = problem.weight;
  if (w.ndim() != 4 || problem.stride.size() != 2 || problem.pad.size() != 2 ||
      problem.dilation.size() != 2 || problem.groups < 1) {
    return std::nullopt;
  }
  int64_t batch, channels, height, width, kernel_h, kernel_w;
  if (problem.layout == "NCHW" && d.ndim() == 4) {
    batch = d[0], channels = d[1], height = d[2], width = d[3];
    kernel_h = w[2], kernel_w = w[3];
  } else if (problem.layout == "NHWC" && d.ndim() == 4) {
    batch = d[0], height = d[1], width = d[2], channels = d[3];
    kernel_h = w[1], kernel_w = w[2];
  } else if (problem.layout == "NCHW16c" && d.ndim() == 5) {
    batch = d[0], channels = d[1] * d[4], height = d[2], width = d[3];
    kernel_h = w[2], kernel_w = w[3];
  } else {
    return std::nullopt;
  }
  const int64_t groups = problem.groups;
  const int64_t out_channels = w[0];
  const int64_t out_h =
      OutputExtent(height, kernel_h, problem.stride[0], problem.pad[0], problem.dilation[0]);
  const int64_t out_w =
      OutputExtent(width, kernel_w, problem.stride[1], problem.pad[1], problem.dilation[1]);
  Family family{problem.direction, problem.layout, problem.dtype, problem.prepared_weight,
                groups > 1 && groups == channels};
  Features features = {Log2(channels / groups),
                       Log2(out_channels / groups),
                       Log2(batch * out_h * out_w),
                       Log2(groups),
                       Log2(kernel_h),
                       Log2(kernel_w),
                       static_cast<double>(problem.stride[0] - 1),
                       static_cast<double>(problem.stride[1] - 1),
                       problem.dilation[0] > 1 || problem.dilation[1] > 1 ? 1.0 : 0.0,
                       problem.pad[0] > 0 || problem.pad[1] > 0 ? 1.0 : 0.0};
  return std::pair{family, features};
}

MeasuredHeuristic::MeasuredHeuristic(const TunedProblems& tuned) {
  // One example per problem: the same problem tuned under several policies would fill several of
  // the nearest places with one measurement's story.
  std::set<std::string> seen;
  for (const TunedProblem& stored : tuned) {
    ConvProblem problem = stored.problem;
    problem.policy.clear();
    if (!seen.insert(problem.ToString()).second) continue;
    const auto described = Describe(problem);
    if (!described) continue;
    Example example{described->first, described->second, {}, 0.0};
    for (const MeasuredCandidate& candidate : stored.record.candidates) {
      if (candidate.skip_reason.empty() && std::isfinite(candidate.time_ms) &&
          candidate.time_ms > 0.0) {
        example.timed.push_back(candidate);
      }
    }
    if (example.timed.size() < 2) continue;  // nothing to compare: it teaches no preference
    example.fastest_ms =
        std::min_element(example.timed.begin(), example.timed.end(),
                         [](const auto& a, const auto& b) { return a.time_ms < b.time_ms; })
            ->time_ms;
    examples_.push_back(std::move(example));
  }
}

MeasuredRanking MeasuredHeuristic::Rank(const ConvProblem& problem,
                                        const std::vector<Candidate>& candidates,
                                        const std::vector<size_t>& rules) const {
  MeasuredRanking ranking;
  const auto described = Describe(problem);
  // The nearest comparable examples, by distance.
  std::vector<std::pair<double, const Example*>> nearest;
  if (described) {
    for (const Example& example : examples_) {
      if (!(example.family == described->first)) continue;
      double squared = 0.0;
      for (size_t i = 0; i < kFeatures; ++i) {
        const double difference = example.features[i] - described->second[i];
        squared += kMeasuredFeatureWeights[i] * difference * difference;
      }
      nearest.emplace_back(std::sqrt(squared), &example);
    }
  }
  const size_t kept = std::min<size_t>(nearest.size(), kMeasuredNeighbours);
  std::partial_sort(nearest.begin(), nearest.begin() + kept, nearest.end(),
                    [](const auto& a, const auto& b) { return a.first < b.first; });
  nearest.resize(kept);

  // The runnable candidates, the rules' order first, so that equal scores keep it.
  std::vector<size_t> visit;
  auto add = [&](size_t i) {
    if (i < candidates.size() && candidates[i].unsupported.empty() &&
        std::find(visit.begin(), visit.end(), i) == visit.end()) {
      visit.push_back(i);
    }
  };
  for (size_t i : rules) add(i);
  const size_t ranked_by_rules = visit.size();
  for (size_t i = 0; i < candidates.size(); ++i) add(i);
  std::vector<std::pair<double, size_t>> scored;
  for (size_t i : visit) {
    if (nearest.empty()) break;
    const Candidate& candidate = candidates[i];
    double weighted = 0.0, weights = 0.0;
    for (const auto& [distance, example] : nearest) {
      for (const MeasuredCandidate& timed : example->timed) {
        if (timed.algorithm != candidate.algorithm || timed.layout != candidate.layout) continue;
        const double weight = 1.0 / (distance + kMeasuredDistanceFloor);
        weighted += weight * std::log(timed.time_ms / example->fastest_ms);
        weights += weight;
      }
    }
    if (weights > 0.0) scored.emplace_back(weighted / weights, i);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [score, index] : scored) ranking.order.push_back(index);
  // Then what the rules rank and no neighbour timed, in their order.
  for (size_t v = 0; v < ranked_by_rules; ++v) {
    if (std::find(ranking.order.begin(), ranking.order.end(), visit[v]) == ranking.order.end()) {
      ranking.order.push_back(visit[v]);
    }
  }
  ranking.neighbours = scored.empty() ? 0 : static_cast<int>(nearest.size());
  return ranking;
}

}  // namespace mxlite::conv
