// What nll_loss's CPU kernels (ops/nll_loss.cc) and GPU kernels (ops/cuda/nll_loss_gpu.cc)
// share: the sizes and options of a node, and its labels read and checked on the host (they are
// small), so that a label that is no class is the same mxlite::Error on both devices.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/shape.h"
#include "ops/attributes.h"
#include "ops/tensor.h"

namespace mxlite {

// "nll_loss NODE", for errors.
std::string NllLossOwner(const std::string& node);

// How the per-position losses are reduced (the reduction attribute).
enum class NllReduction { kNone, kSum, kMean };

// Sizes and options of one node.
struct NllGeometry {
  int64_t batch = 0, classes = 0, positions = 1;  // positions: d1 * ... * dk
  bool use_weight = false;
  std::optional<int64_t> ignore_index;
  NllReduction reduction = NllReduction::kMean;

  bool Ignored(int64_t label) const { return ignore_index && label == *ignore_index; }
  bool Reduced() const { return reduction != NllReduction::kNone; }
  bool Mean() const { return reduction == NllReduction::kMean; }
};

// Throws mxlite::Error naming `owner` when data has fewer than two axes or label is not data's
// shape without the class axis.
NllGeometry NllGeometryOf(const Attributes& attrs, const Shape& data, const Shape& label,
                          const std::string& owner);

// The labels (host memory: int32, int64, or floating ones holding integers) as int64, each a
// class in [0, classes) or the ignore_index; anything else is an error naming `owner`, the flat
// position and the label.
std::vector<int64_t> ReadNllLabels(const TensorView& label, const NllGeometry& g,
                                   const std::string& owner);

}  // namespace mxlite
