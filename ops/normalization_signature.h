// What the normalisations with per-group statistics share (LayerNorm, GroupNorm): their inputs
// data, gamma and beta; their outputs output, mean and std, the two statistics kept for backward
// and visible with output_mean_var.
#pragma once

#include <cstddef>
#include <vector>

#include "ops/operator.h"

namespace mxlite {

// Declares output_mean_var and sets the op's input and output names, roles and visible outputs.
void SetNormalizationSignature(OpDef& op);

// The gradient of output `index` (mean or std) when backward was given one, else null: a
// statistic nobody read has none.
template <typename T>
const T* StatisticGradient(const std::vector<TensorView>& output_grads, size_t index) {
  return output_grads.size() > index && output_grads[index].data != nullptr
             ? output_grads[index].data_as<T>()
             : nullptr;
}

}  // namespace mxlite
