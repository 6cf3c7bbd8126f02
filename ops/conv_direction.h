// The three convolution problems of one layer, named as the tuning DB and the report spell them.
// Shared by the CPU algorithms (ops/cpu/conv_algorithms.h), the tuning DB and the tuner
// (ops/conv/), so neither folder includes the other for it.
#pragma once

namespace mxlite::conv {

enum class ConvDirection { kForward, kBackwardData, kBackwardFilter };

// "forward", "backward_data", "backward_filter".
constexpr const char* ConvDirectionName(ConvDirection direction) {
  switch (direction) {
    case ConvDirection::kForward:
      return "forward";
    case ConvDirection::kBackwardData:
      return "backward_data";
    case ConvDirection::kBackwardFilter:
      return "backward_filter";
  }
  return "unknown";
}

}  // namespace mxlite::conv
