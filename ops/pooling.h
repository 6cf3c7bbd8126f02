// What Pooling (ops/pooling.cc) reads from its attributes for a data shape, shared by its CPU and
// GPU kernels (ops/cuda/pooling_gpu.cc): the layout, the reduction, the window per spatial dim and
// the output extents the pooling convention gives.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "core/shape.h"
#include "ops/activation_layout.h"
#include "ops/attributes.h"

namespace mxlite {

enum class PoolingType { kMax, kAvg, kSum };

constexpr int kMaxPoolingSpatialDims = 3;

using PoolingExtents = std::array<int64_t, kMaxPoolingSpatialDims>;

// Everything a kernel needs about one pooling call. Spatial dims are right-aligned into three
// (depth, height, width); missing leading dims have extent 1, kernel 1, stride 1, pad 0.
struct PoolingGeometry {
  int64_t batch = 0, channels = 0;
  PoolingExtents in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1}, pad{0, 0, 0},
      dilate{1, 1, 1};
  int spatial_dims = 0;
  bool channels_last = false;
  bool blocked = false;  // NCHW16c: (N, C/16, H, W, 16)
  PoolingType type = PoolingType::kMax;
  bool count_include_pad = true;

  int64_t in_positions() const { return in[0] * in[1] * in[2]; }
  bool dilated() const { return dilate[0] != 1 || dilate[1] != 1 || dilate[2] != 1; }
  int64_t out_positions() const { return out[0] * out[1] * out[2]; }

  // Where a task's channels live, in elements, for planes of `plane` positions: the step between
  // positions, between the task's channels, and the offset of channel c0 (a task's first) in an
  // image.
  int64_t position_step() const { return channels_last ? channels : blocked ? kChannelBlock : 1; }
  int64_t lane_stride(int64_t plane) const { return channels_last || blocked ? 1 : plane; }
  int64_t channel_offset(int64_t c0, int64_t plane) const {
    return channels_last ? c0 : c0 * plane;
  }
};

// The geometry of pooling `data` as `attrs` ask (layout, pool_type, count_include_pad,
// global_pool, kernel, stride, pad, dilate, pooling_convention), the output extents included.
// Errors name `owner` ("Pooling pool0"): data not 3-D to 5-D, a layout that does not fit it, a
// missing kernel, a tuple of the wrong length or below its minimum, a kernel larger than the padded
// data.
PoolingGeometry PoolingGeometryOf(const Attributes& attrs, const Shape& data,
                                  const std::string& owner);

}  // namespace mxlite
