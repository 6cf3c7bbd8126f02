// LayerNorm (MXNet's name and attributes; ONNX's LayerNormalization imports to it, and so does the
// formula exporters write for it, scheduler/onnx/onnx_patterns.h): each group of the elements
// along `axis` is normalised to mean 0 and variance 1, then scaled by gamma and shifted by beta,
// both of the axis's extent:
//
//   y = (x - mean) / sqrt(var + eps) * gamma + beta,  var the biased variance of the group
//
// Attributes: axis (default -1; negative counts from the end), eps (default 1e-5),
// output_mean_var (default false: also output the mean and the standard deviation sqrt(var + eps)
// of each group, shaped as the data with `axis` at extent 1; they are kept for backward either
// way). Backward gives data, gamma and beta their gradients.
//
// What the attributes mean for a tensor, shared by the CPU kernels (ops/layer_norm.cc) and the
// GPU kernels (ops/cuda/layer_norm_gpu.cc).
#pragma once

#include <cstdint>
#include <string>

#include "core/shape.h"
#include "ops/attributes.h"

namespace mxlite {

// The data as (outer, channels, inner) around the normalised axis: group (o, i) is the
// `channels` elements at o * channels * inner + c * inner + i.
struct LayerNormGroups {
  int64_t outer = 1, channels = 1, inner = 1;
  int axis = 0;  // non-negative
  int64_t groups() const { return outer * inner; }
};

// The split of `data` that `attrs` ask for; an error naming `owner` ("LayerNorm ln0") for an axis
// out of range.
LayerNormGroups LayerNormGroupsOf(const Attributes& attrs, const Shape& data,
                                  const std::string& owner);

}  // namespace mxlite
