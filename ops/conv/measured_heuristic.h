// The heuristic tier built from measurements: what a convolution runs when nothing is timed for
// it (tuning off, or a background-mode miss), ranked by how each candidate fared on the nearest
// problems this device has tuned (the user DB, the system DB, this process's tunings), instead of
// a hand-written preference list. It learns on the machine and thread count it ranks for, from
// nothing but what tuning stored there.
//
//   MeasuredHeuristic tier(*db.Tuned(environment));            // once per DB snapshot
//   MeasuredRanking ranked = tier.Rank(problem, candidates, rules);
//   // ranked.order: indices into candidates; ranked.neighbours == 0: the rules' order
//
// Neighbours. A stored problem is comparable when it has the same direction, activation layout,
// element type and prepared-weight flag, is depthwise or not as the problem is, and records at
// least two timed candidates. Among those, nearness is a weighted distance over log2 of the input
// and output channels per group, the output pixels (batch x height x width), the groups and the
// kernel's extents, the strides, dilation and padding (kMeasuredFeatureWeights); the
// kMeasuredNeighbours nearest count. A grouped layer's neighbours may be dense ones: per group it
// is the same GEMM or direct loop, and a DB may hold no grouped layer at all (learning grouped
// layers from grouped ones only, the tier kept the rules' losing picks on ResNeXt's and RegNet's:
// bench/RESULTS.md). The same problem stored under several policies counts once.
//
// Scores. A candidate's score is the mean, over the neighbours that timed it (weighted by
// 1 / (distance + kMeasuredDistanceFloor)), of log(its time / that neighbour's fastest time): how
// far behind the best it ran on problems like this one. Candidates are ranked by score; those no
// neighbour timed follow in the rules' order, so a candidate the DB has never seen keeps the place
// the rules give it. No comparable neighbour: the rules' order, unchanged.
//
// The figures it is measured by (top-1 agreement with tuning, mean and worst slowdown of its
// picks, on models it did not learn from): bench/RESULTS.md, "The heuristic tier on layers it was
// not built from" (`conv_tuning_bench heuristic --training-db`).
//
// Thread safety: immutable after construction; Rank may be called concurrently.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <vector>

#include "ops/conv/tuner.h"
#include "ops/conv/tuning_db.h"

namespace mxlite::conv {

inline constexpr int kMeasuredNeighbours = 8;
inline constexpr double kMeasuredDistanceFloor = 0.5;

struct MeasuredRanking {
  std::vector<size_t> order;  // indices into the candidates, most preferred first
  int neighbours = 0;         // tuned problems it was ranked from; 0: the rules' order
};

class MeasuredHeuristic {
 public:
  // Learns from the problems of `tuned` that record at least two timed candidates.
  explicit MeasuredHeuristic(const TunedProblems& tuned);

  // `candidates` of `problem` ranked as the header says; `rules` is the backend's own order
  // (ConvTuningBackend::Rank), used where the measurements say nothing. The order holds each
  // runnable candidate at most once: neither unsupported candidates nor indices out of range.
  MeasuredRanking Rank(const ConvProblem& problem, const std::vector<Candidate>& candidates,
                       const std::vector<size_t>& rules) const;

  // Convolution problems it learned from.
  size_t size() const { return examples_.size(); }

 private:
  static constexpr size_t kFeatures = 10;
  using Features = std::array<double, kFeatures>;

  // The parts of a problem that must match exactly ("comparable" in the header).
  struct Family {
    ConvDirection direction;
    std::string layout;
    DType dtype;
    bool prepared_weight;
    bool depthwise;  // groups == input channels > 1: its own kernels, nothing dense compares

    bool operator==(const Family&) const = default;
  };
  struct Example {
    Family family;
    Features features;
    std::vector<MeasuredCandidate> timed;  // the candidates with a time
    double fastest_ms = 0.0;
  };
  // The family and features of a 2-D problem; nullopt for another (3-D, an unknown layout).
  static std::optional<std::pair<Family, Features>> Describe(const ConvProblem& problem);

  std::vector<Example> examples_;
};

}  // namespace mxlite::conv
