// What BatchNorm (ops/batch_norm.cc) reads from its attributes, shared by its CPU and GPU kernels
// (ops/cuda/batch_norm_gpu.cc).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "core/shape.h"
#include "ops/attributes.h"

namespace mxlite {

// The data seen as (outer, channels, inner) around the normalised axis; with channel_block > 1
// as (outer, channels / lanes, inner, lanes), the channel split over `axis` and the last axis.
struct BatchNormChannels {
  int64_t outer = 1, channels = 1, inner = 1, lanes = 1;
  int64_t per_channel() const { return outer * inner; }
  bool blocked() const { return lanes > 1; }
};

// An error naming `owner` when `axis` is out of range for `data` or channel_block does not fit.
BatchNormChannels BatchNormChannelsOf(const Attributes& attrs, const Shape& data,
                                      const std::string& owner);

// The scalar attributes, with their defaults. (axis and channel_block are read by
// BatchNormChannelsOf; output_mean_var only sets the visible outputs, in the op's registration.)
struct BatchNormParams {
  double eps = 1e-3;              // added to the variance before the square root
  double momentum = 0.9;          // weight of the old moving statistics in their update
  bool fix_gamma = true;          // gamma read as 1, its gradient 0
  bool use_global_stats = false;  // the moving statistics in training too

  // Whether a pass normalises with the batch statistics (training without use_global_stats)
  // rather than the moving ones.
  bool UsesBatchStats(bool is_train) const { return is_train && !use_global_stats; }
};

// Reads eps, momentum, fix_gamma and use_global_stats. Errors naming `owner` ("BatchNorm bn0"):
// eps < 0, momentum outside [0, 1].
BatchNormParams BatchNormParamsOf(const Attributes& attrs, const std::string& owner);

// One channel's normalisation as y = x * scale + shift (the fused clamp after it), rounded to T
// from the double arithmetic of BatchNorm's forward: scale = gamma * invstd, shift = beta - mean
// * scale, invstd = InvStd(var, eps). Whatever applies a BatchNorm (its CPU forward, the fused
// _concat_batch_norm) computes them so, and their outputs agree to the bit.
template <typename T>
std::pair<T, T> ChannelScaleShift(double gamma, double beta, double mean, double invstd) {
  const double scale = gamma * invstd;
  return {static_cast<T>(scale), static_cast<T>(beta - mean * scale)};
}

inline double InvStd(double var, double eps) { return 1.0 / std::sqrt(var + eps); }

}  // namespace mxlite
