#include "ops/conv_attributes.h"

#include <cmath>

#include "core/error.h"

namespace mxlite {
namespace {

// A per-axis tuple: `fallback` on every axis when empty, else exactly one value per axis.
std::vector<int64_t> ReadAxes(const Attributes& attrs, const std::string& name, int rank,
                              int64_t fallback, int64_t minimum, const std::string& owner) {
  std::vector<int64_t> values = attrs.GetInts(name);
  if (values.empty()) return std::vector<int64_t>(static_cast<size_t>(rank), fallback);
  MX_CHECK(static_cast<int>(values.size()) == rank)
      << owner << ": " << name << "=" << FormatIntTuple(values) << " has " << values.size()
      << " values but the kernel " << attrs.Text("kernel") << " has " << rank;
  for (int64_t value : values) {
    MX_CHECK(value >= minimum) << owner << ": " << name << "=" << FormatIntTuple(values)
                               << " must be >= " << minimum << " on every axis";
  }
  return values;
}

}  // namespace

void AddConvTuningAttributes(AttributeSchema& schema, int64_t default_workspace_mb) {
  schema
      .Int("workspace",
           "temporary workspace limit (MB) for the algorithms the tuner may pick; the tuner "
           "and the GPU kernels read it",
           Default(std::to_string(default_workspace_mb)), 0, 8192)
      .Enum("cudnn_tune", {"off", "limited_workspace", "fastest"},
            "algorithm tuning for this layer; absent: MXNET_CUDNN_AUTOTUNE_DEFAULT", Optional())
      .Bool("cudnn_off", "do not use cuDNN for this layer", Default("false"));
}

ConvWindow ReadConvWindow(const Attributes& attrs, const std::string& owner) {
  ConvWindow window;
  window.kernel = attrs.GetInts("kernel");
  const int rank = static_cast<int>(window.kernel.size());
  MX_CHECK(rank >= 1 && rank <= 3)
      << owner << ": kernel=" << FormatIntTuple(window.kernel)
      << " is not supported; expected a 1-D (w,), 2-D (h,w) or 3-D (d,h,w) window";
  window.rank = rank;
  for (int64_t extent : window.kernel) {
    MX_CHECK(extent >= 1) << owner << ": kernel=" << FormatIntTuple(window.kernel)
                          << " must be >= 1 on every axis";
  }
  window.stride = ReadAxes(attrs, "stride", rank, 1, 1, owner);
  window.dilate = ReadAxes(attrs, "dilate", rank, 1, 1, owner);
  window.pad = ReadAxes(attrs, "pad", rank, 0, 0, owner);
  static const char* const kDefaultLayout[] = {"NCW", "NCHW", "NCDHW"};
  // NDHWC, which MXNet runs on cuDNN only, is refused: mxlite's 3-D path is channels first.
  static const char* const kExpected[] = {"NCW or NWC", "NCHW, NHWC or NCHW16c", "NCDHW"};
  window.layout = attrs.GetOptionalString("layout").value_or(kDefaultLayout[rank - 1]);
  const std::string& l = window.layout;
  const bool matches = rank == 1   ? (l == "NCW" || l == "NWC")
                       : rank == 2 ? (l == "NCHW" || l == "NHWC" || l == "NCHW16c")
                                   : l == "NCDHW";
  MX_CHECK(matches) << owner << ": layout=" << window.layout << " does not fit the " << rank
                    << "-D kernel " << FormatIntTuple(window.kernel) << " (expected "
                    << kExpected[rank - 1] << ")";
  window.channels_last = window.layout.back() == 'C';
  window.data_layout = window.layout == "NCHW16c" ? ActivationLayout::kNCHW16c
                       : window.channels_last     ? ActivationLayout::kNHWC
                                                  : ActivationLayout::kNCHW;
  window.num_filter = attrs.GetInt("num_filter");
  window.num_group = attrs.GetInt("num_group");
  return window;
}

ActivationExtents ReadActivation(const ConvWindow& window, const Shape& shape,
                                 const std::string& owner, const std::string& what) {
  MX_CHECK(window.rank <= 2)
      << owner << ": the 3-D kernel " << FormatIntTuple(window.kernel)
      << " reached a path for 1-D and 2-D windows (3-D ones run NCDHW, ops/conv_volume.h)";
  if (window.data_layout == ActivationLayout::kNCHW16c) {
    MX_CHECK(shape.ndim() == 5 && shape[4] == kChannelBlock)
        << owner << ": " << what << " has shape " << shape << " but layout NCHW16c needs a 5-D "
        << "(N, C/16, H, W, 16) tensor";
    return {shape[0], shape[1] * kChannelBlock, shape[2], shape[3]};
  }
  MX_CHECK(shape.ndim() == window.rank + 2)
      << owner << ": " << what << " has shape " << shape << " but the " << window.rank
      << "-D kernel " << FormatIntTuple(window.kernel) << " needs a " << window.rank + 2 << "-D "
      << window.layout << " tensor";
  ActivationExtents extents;
  extents.batch = shape[0];
  if (window.channels_last) {
    extents.channels = shape[window.rank + 1];
    if (window.rank == 2) extents.height = shape[1];
    extents.width = shape[window.rank];
  } else {
    extents.channels = shape[1];
    if (window.rank == 2) extents.height = shape[2];
    extents.width = shape[window.rank + 1];
  }
  return extents;
}

Shape ActivationShape(const ConvWindow& window, const ActivationExtents& e) {
  if (window.data_layout == ActivationLayout::kNCHW16c) {
    return LayoutShape(Shape{e.batch, e.channels, e.height, e.width}, window.data_layout);
  }
  if (window.rank == 1) {
    return window.channels_last ? Shape{e.batch, e.width, e.channels}
                                : Shape{e.batch, e.channels, e.width};
  }
  return window.channels_last ? Shape{e.batch, e.height, e.width, e.channels}
                              : Shape{e.batch, e.channels, e.height, e.width};
}

Shape ConvWeightShape(const ConvWindow& window, int64_t out, int64_t in_per_group) {
  std::vector<int64_t> dims = {out};
  if (!window.channels_last) dims.push_back(in_per_group);
  dims.insert(dims.end(), window.kernel.begin(), window.kernel.end());
  if (window.channels_last) dims.push_back(in_per_group);
  return Shape(dims);
}

ActivationExtents ReadGroupedData(const ConvWindow& window, const Shape& data_shape,
                                  const std::string& owner) {
  const ActivationExtents in = ReadActivation(window, data_shape, owner, "data");
  MX_CHECK(in.channels % window.num_group == 0)
      << owner << ": data " << data_shape << " has " << in.channels
      << " channels, which num_group=" << window.num_group << " does not divide";
  MX_CHECK(window.num_filter % window.num_group == 0)
      << owner << ": num_filter=" << window.num_filter
      << " is not divisible by num_group=" << window.num_group;
  return in;
}

cpu::ConvGeometry ConvolutionGeometry(const ConvWindow& window, const Shape& data_shape,
                                      const std::string& owner) {
  const ActivationExtents in = ReadGroupedData(window, data_shape, owner);
  cpu::ConvGeometry g;
  SetGeometryWindow(window, g);
  g.batch = in.batch;
  g.in_channels = in.channels;
  g.out_channels = window.num_filter;
  g.groups = window.num_group;
  g.in_h = in.height;
  g.in_w = in.width;
  const int64_t extent_h = g.dilate_h * (g.kernel_h - 1) + 1;
  const int64_t extent_w = g.dilate_w * (g.kernel_w - 1) + 1;
  MX_CHECK(extent_h <= g.in_h + 2 * g.pad_h && extent_w <= g.in_w + 2 * g.pad_w)
      << owner << ": the kernel " << FormatIntTuple(window.kernel) << " dilated by "
      << FormatIntTuple(window.dilate) << " spans more than data " << data_shape << " padded by "
      << FormatIntTuple(window.pad);
  g.out_h = (g.in_h + 2 * g.pad_h - extent_h) / g.stride_h + 1;
  g.out_w = (g.in_w + 2 * g.pad_w - extent_w) / g.stride_w + 1;
  if (g.layout == ActivationLayout::kNCHW16c) {
    MX_CHECK(g.out_channels % kChannelBlock == 0)
        << owner << ": layout NCHW16c holds channels in blocks of " << kChannelBlock
        << "; num_filter=" << g.out_channels << " is not a multiple of " << kChannelBlock;
    MX_CHECK(RunsChannelBlocked(g.in_channels, g.out_channels, g.groups))
        << owner << ": layout NCHW16c runs one group, a depthwise layer (num_group == channels "
        << "== num_filter) or groups of whole blocks of " << kChannelBlock
        << " channels and filters, not num_group=" << g.groups << " over " << g.in_channels
        << " -> " << g.out_channels << " channels";
  }
  return g;
}

bool RunsChannelBlocked(int64_t channels, int64_t filters, int64_t groups) {
  if (groups == 1) return true;
  if (groups == channels && filters == channels) return true;
  if (GroupsShareChannelBlocks(channels, filters, groups)) return true;
  return channels % groups == 0 && filters % groups == 0 &&
         (channels / groups) % kChannelBlock == 0 && (filters / groups) % kChannelBlock == 0;
}

void SetGeometryWindow(const ConvWindow& window, cpu::ConvGeometry& geometry) {
  const bool has_height = window.rank >= 2;
  const size_t h = has_height ? static_cast<size_t>(window.rank - 2) : 0;
  geometry.kernel_h = has_height ? window.kernel[h] : 1;
  geometry.stride_h = has_height ? window.stride[h] : 1;
  geometry.dilate_h = has_height ? window.dilate[h] : 1;
  geometry.pad_h = has_height ? window.pad[h] : 0;
  geometry.kernel_w = window.kernel.back();
  geometry.stride_w = window.stride.back();
  geometry.dilate_w = window.dilate.back();
  geometry.pad_w = window.pad.back();
  geometry.layout = window.data_layout;
}

int ConvolutionResidualInput(const Attributes& attrs) { return attrs.GetBool("no_bias") ? 2 : 3; }

void CheckNoFusedResidual(const Attributes& attrs, const std::string& owner) {
  MX_CHECK(!attrs.GetBool("residual"))
      << owner << ": has a fused residual addition (residual=true), which is inference-only: "
      << "backward does not run it. Bind for training without fusion (MXNET_CONV_FUSE_RESIDUAL "
      << "applies to inference executors only) or add the residual with an elementwise op";
}

}  // namespace mxlite
