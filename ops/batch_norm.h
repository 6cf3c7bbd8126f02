// What BatchNorm (ops/batch_norm.cc) reads from its attributes, shared by its CPU and GPU kernels
// (ops/cuda/batch_norm_gpu.cc).
#pragma once

#include <cstdint>
#include <string>

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

}  // namespace mxlite
