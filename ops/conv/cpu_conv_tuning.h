// Tuning a CPU convolution, the CPU's back end of the tuning front (ops/conv/tuner.h, TuneLayer;
// cuDNN's is ops/cuda/cudnn_convolution.h): the candidates of ops/cpu/conv_algorithms.h for one
// problem (each runnable on pooled tensors of the problem's shapes filled with random values), the
// heuristic that `off` uses, and the plan — one algorithm per direction — that the Convolution and
// Deconvolution ops run.
//
//   CpuConvPlan plan = TuneCpuConvolution({.tuning = LayerTuningRequestFor(attrs, "conv3"),
//                                          .geometry = g, .dtype = kFloat32,
//                                          .directions = {ConvDirection::kForward}});
//   plan.forward->Run(ConvDirection::kForward, g, tensors, scratch);
//
// Candidates are the algorithms in the geometry's layout (NCHW or NHWC) that implement the
// direction; one that implements it but not on this shape is listed as unsupported, with why, so
// the report shows it. What `off` runs is ranked by the measured tier
// (ops/conv/measured_heuristic.h: the candidates' times on the nearest problems this machine has
// tuned, read from the DB; nothing is timed). Where the DB has no comparable problem, and for
// imperative calls without a plan (HeuristicCpuAlgorithm), the rules (RankCpuCandidates) prefer, in
// order: the direct depthwise kernel for depthwise layers, plain GEMM for 1x1 stride-1 layers,
// Winograd for 3x3 stride-1 layers where its measured advantage holds (enough channels and pixels),
// then the lowering GEMM of the layout; they are a pure function of the geometry.
//
// In background mode (MXNET_TUNING_DB_MODE=background, ops/conv/tuner.h) a miss runs the
// heuristic's pick and the problem is tuned on the background tuner's thread: the CPU gives it
// detached candidates (CpuConvCandidates over copies of the geometry, direction, dtype and
// prepared-weight flag, with tensors of their own), run with the binding thread's intra-op thread
// count.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "ops/conv/tuner.h"
#include "ops/cpu/conv_algorithms.h"

namespace mxlite::conv {

// The DB key of one direction of a CPU convolution (weights OIHW / OHWI as the layout says);
// `prepared_weight`: a forward whose weight is prepared once for many calls (ConvProblem).
ConvProblem CpuConvProblem(const cpu::ConvGeometry& geometry, ConvDirection direction,
                           DType dtype, bool prepared_weight = false);

// Every CPU algorithm of the geometry's layout that implements `direction`, runnable. With
// `prepared_weight` (forward, float32) each candidate's weight is prepared (ConvAlgorithm::
// PrepareWeight) in its warm-up run and reused by the timed ones, as inference runs it.
std::vector<Candidate> CpuConvCandidates(const cpu::ConvGeometry& geometry,
                                         ConvDirection direction, DType dtype,
                                         bool prepared_weight = false);

// The heuristic's preference over `candidates` (from CpuConvCandidates of the same problem).
std::vector<size_t> RankCpuCandidates(const cpu::ConvGeometry& geometry, ConvDirection direction,
                                      const std::vector<Candidate>& candidates);

// The heuristic's pick among every algorithm for the problem, without tuning or a DB: what a
// Convolution runs when it has no plan (imperative calls).
const cpu::ConvAlgorithm& HeuristicCpuAlgorithm(const cpu::ConvGeometry& geometry,
                                                ConvDirection direction);

struct CpuConvTuningRequest {
  LayerTuningRequest tuning;  // the layer's mode and policy
  cpu::ConvGeometry geometry;
  DType dtype = DType::kFloat32;
  // The directions the layer runs: a Convolution's forward (and both backward directions when
  // training); a Deconvolution's backward_data (its forward), with forward and backward_filter
  // when training.
  std::vector<ConvDirection> directions = {ConvDirection::kForward};
  // The forward will reuse a prepared weight (an inference executor with
  // MXNET_CONV_PREPACK_WEIGHTS): time it so.
  bool prepared_weight = false;
};

struct CpuConvPlan {
  cpu::ConvGeometry geometry;
  const cpu::ConvAlgorithm* forward = nullptr;          // null unless tuned
  const cpu::ConvAlgorithm* backward_data = nullptr;    // null unless tuned
  const cpu::ConvAlgorithm* backward_filter = nullptr;  // null unless tuned
  std::vector<LayerTuning> decisions;

  const cpu::ConvAlgorithm* For(ConvDirection direction) const;
};

// Tunes each requested direction through ConvTuner::Global().
CpuConvPlan TuneCpuConvolution(const CpuConvTuningRequest& request);

}  // namespace mxlite::conv
