// GroupNorm (MXNet's GroupNorm; ONNX's GroupNormalization is the same computation): data of shape
// (N, C, ...) with its C channels in num_groups groups of C / num_groups consecutive channels;
// each (image, group) is normalised to mean 0 and variance 1 over its channels and spatial
// positions together, then each channel scaled by gamma and shifted by beta (C values each):
//
//   y = (x - mean) / sqrt(var + eps) * gamma[c] + beta[c],  var the biased variance of the group
//
// Attributes: num_groups (default 1: layer normalisation over (C, ...) per image), eps (default
// 1e-5), output_mean_var (default false: also output each group's mean and standard deviation
// sqrt(var + eps), shaped (N, num_groups); kept for backward either way). Backward gives data,
// gamma and beta their gradients, summed in double.
//
// An (image, group) is one contiguous row of data: the geometry below is shared by the CPU kernels
// (ops/group_norm.cc) and the GPU kernels (ops/cuda/group_norm_gpu.cc).
#pragma once

#include <cstdint>
#include <string>

#include "core/shape.h"
#include "ops/attributes.h"

namespace mxlite {

// Row r = (n, g) is the `row()` elements from r * row(); its element e is channel
// g * channels_per_group + e / spatial.
struct GroupNormGeometry {
  int64_t batch = 1, groups = 1, channels_per_group = 1, spatial = 1;
  int64_t rows() const { return batch * groups; }
  int64_t row() const { return channels_per_group * spatial; }
  int64_t channels() const { return groups * channels_per_group; }
};

// The geometry of `data`; an error naming `owner` ("GroupNorm gn0") when data has fewer than 2
// axes or num_groups does not divide the channels.
GroupNormGeometry GroupNormGeometryOf(const Attributes& attrs, const Shape& data,
                                      const std::string& owner);

}  // namespace mxlite
