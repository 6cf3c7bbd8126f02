// Attributes shared by Convolution and Deconvolution (MXNet's spelling and defaults), read into one
// validated description of the spatial window, and the shape helpers both ops use.
//
//   kernel (required), stride / dilate (default 1 per axis), pad (default 0 per axis),
//   num_filter, num_group (default 1), workspace (MB), cudnn_tune (off | limited_workspace |
//   fastest; absent = MXNET_CUDNN_AUTOTUNE_DEFAULT), cudnn_off, layout (absent = NCW / NCHW /
//   NCDHW by the kernel's rank).
//
// The kernels run 1-D (NCW, NWC) and 2-D (NCHW, NHWC, NCHW16c: ops/activation_layout.h) windows,
// and 3-D ones in NCDHW (ops/conv_volume.h on the CPU, cuDNN's N-d descriptors on the GPU); the
// 2-D helpers below (ReadActivation and what calls it) refuse a 3-D window, ReadConvWindow NDHWC,
// each with an error naming the layer. workspace, cudnn_tune and cudnn_off are validated here and
// read by the convolution tuner and the GPU kernels.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/shape.h"
#include "ops/attributes.h"
#include "ops/cpu/im2col.h"
#include "ops/output_clamp.h"

namespace mxlite {

// Adds workspace (MB, [0, 8192]), cudnn_tune (optional) and cudnn_off (default false).
void AddConvTuningAttributes(AttributeSchema& schema, int64_t default_workspace_mb);

// The window of a 1-D, 2-D or 3-D convolution after defaults; every tuple has `rank` entries.
struct ConvWindow {
  int rank = 2;
  std::vector<int64_t> kernel, stride, dilate, pad;
  std::string layout;                                      // NCW, NWC, NCHW, NHWC, NCHW16c, NCDHW
  bool channels_last = false;                              // NWC or NHWC
  ActivationLayout data_layout = ActivationLayout::kNCHW;  // 1-D ones as their 2-D kin
  int64_t num_filter = 1, num_group = 1;
};

// Reads kernel/stride/dilate/pad/layout/num_filter/num_group. Errors (naming `owner`, e.g.
// "Convolution conv0"): a kernel that is not 1-D, 2-D or 3-D, a tuple whose length differs from
// the kernel's, a kernel/stride/dilate below 1 or pad below 0, a layout of another rank, NDHWC.
ConvWindow ReadConvWindow(const Attributes& attrs, const std::string& owner);

// Activation extents read from / written to a shape in the window's layout.
struct ActivationExtents {
  int64_t batch = 1, channels = 1, height = 1, width = 1;
};

// Reads `shape` as the window's layout; an error naming `owner`, `what` and the shape when the
// rank does not match, and one naming the kernel for a 3-D window.
ActivationExtents ReadActivation(const ConvWindow& window, const Shape& shape,
                                 const std::string& owner, const std::string& what);
Shape ActivationShape(const ConvWindow& window, const ActivationExtents& extents);

// The data of a grouped layer (convolution or its adjoint): ReadActivation of "data", and errors
// naming `owner` and the shape when num_group does not divide its channels or num_filter.
ActivationExtents ReadGroupedData(const ConvWindow& window, const Shape& data_shape,
                                  const std::string& owner);

// The weight of a convolution from `in_per_group` to `out` channels: (out, in_per_group, KH, KW)
// channels-first (NCHW16c too: its algorithms block the weight themselves), (out, KH, KW,
// in_per_group) channels-last (KH dropped in 1-D).
Shape ConvWeightShape(const ConvWindow& window, int64_t out, int64_t in_per_group);

// Copies the window's kernel, stride, dilate and pad into `geometry` (1-D as height 1; 3-D: the
// height and width axes, the plane of ops/conv_volume.h).
void SetGeometryWindow(const ConvWindow& window, cpu::ConvGeometry& geometry);

// Whether NCHW16c's convolutions run `groups` groups from `channels` to `filters` channels: one
// group, a depthwise layer (groups == channels == filters), groups whose channels and filters
// come in whole blocks of 16, or groups of 2, 4 or 8 that share blocks (GroupsShareChannelBlocks).
bool RunsChannelBlocked(int64_t channels, int64_t filters, int64_t groups);

// The convolution of `window` over data of `data_shape` (num_filter output channels in num_group
// groups). Errors name `owner` and the data shape: channels num_group does not divide, a
// num_filter it does not divide, a dilated kernel wider than the padded data; in NCHW16c a
// num_filter that is no multiple of 16, or groups RunsChannelBlocked refuses.
cpu::ConvGeometry ConvolutionGeometry(const ConvWindow& window, const Shape& data_shape,
                                      const std::string& owner);

// The same for Convolution's fused residual addition (`residual`).
void CheckNoFusedResidual(const Attributes& attrs, const std::string& owner);
// The input index of a Convolution's fused residual: after data, weight and the bias if any.
int ConvolutionResidualInput(const Attributes& attrs);

}  // namespace mxlite
