// ONNX layers: Conv (Convolution), ConvTranspose (Deconvolution), MaxPool, AveragePool, LpPool,
// GlobalAveragePool, GlobalMaxPool (Pooling), BatchNormalization (BatchNorm, inference),
// LayerNormalization (LayerNorm over the trailing axes flattened into one), InstanceNormalization
// (LayerNorm over each channel's flattened spatial extent, then the per-channel scale and bias),
// GroupNormalization (mxlite's GroupNorm where the scale and bias are per channel or known at
// load, else the same composition over each group of channels),
// LRN (a sum pooling of squares down the channels).
// Asymmetric pads, which mxlite's windows do not take, become a Pad node in front.
#include "scheduler/onnx/onnx_converter.h"

#include <algorithm>
#include <limits>

#include "core/error.h"

namespace mxlite {
namespace {

// Pads for auto_pad SAME_UPPER / SAME_LOWER: the output extent is ceil(in / stride).
std::vector<int64_t> SamePads(const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                              const std::vector<int64_t>& stride,
                              const std::vector<int64_t>& dilation, bool upper) {
  const size_t rank = kernel.size();
  std::vector<int64_t> pads(2 * rank, 0);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t out = (in[i] + stride[i] - 1) / stride[i];
    const int64_t total =
        std::max<int64_t>(0, (out - 1) * stride[i] + (kernel[i] - 1) * dilation[i] + 1 - in[i]);
    const int64_t small = total / 2;
    pads[i] = upper ? small : total - small;
    pads[i + rank] = total - pads[i];
  }
  return pads;
}

bool Symmetric(const std::vector<int64_t>& pads) {
  const size_t rank = pads.size() / 2;
  for (size_t i = 0; i < rank; ++i) {
    if (pads[i] != pads[i + rank]) return false;
  }
  return true;
}

// Window attributes shared by Conv and the pools; `pads` resolved from auto_pad.
struct Window {
  std::vector<int64_t> kernel, stride, dilation, pads;

  std::vector<int64_t> begins() const {
    return {pads.begin(), pads.begin() + static_cast<ptrdiff_t>(kernel.size())};
  }
};

Window ReadWindow(const OnnxNode& node, std::vector<int64_t> kernel, const Shape& data) {
  const std::string& where = node.where();
  const NodeAttributes& a = node.attrs();
  const size_t rank = kernel.size();
  MX_CHECK(data.ndim() == static_cast<int>(rank) + 2)
      << where << ": input " << data << " does not match a " << rank << "-D kernel";
  Window w{kernel, a.Ints("strides", std::vector<int64_t>(rank, 1)),
           a.Ints("dilations", std::vector<int64_t>(rank, 1)),
           a.Ints("pads", std::vector<int64_t>(2 * rank, 0))};
  MX_CHECK(w.stride.size() == rank && w.dilation.size() == rank && w.pads.size() == 2 * rank)
      << where << ": strides/dilations/pads do not match the " << rank << "-D kernel";
  for (size_t i = 0; i < rank; ++i) {
    MX_CHECK(w.kernel[i] > 0 && w.stride[i] > 0 && w.dilation[i] > 0 && w.pads[i] >= 0 &&
             w.pads[i + rank] >= 0)
        << where << ": kernel, strides and dilations must be positive and pads non-negative";
  }
  const std::string auto_pad = a.String("auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    std::vector<int64_t> spatial;
    for (size_t i = 0; i < rank; ++i) spatial.push_back(data[static_cast<int>(i) + 2]);
    w.pads = SamePads(spatial, w.kernel, w.stride, w.dilation, auto_pad == "SAME_UPPER");
  } else if (auto_pad == "VALID") {
    w.pads.assign(2 * rank, 0);
  } else {
    MX_CHECK(auto_pad == "NOTSET") << where << ": unknown auto_pad '" << auto_pad << "'";
  }
  return w;
}

// `data` (a convolution's or pooling's input), padded in front by a Pad op when `w.pads` is
// asymmetric (then cleared). Max pooling pads with float's lowest value (attributes hold no
// infinity).
NodeEntry PaddedData(OnnxNode& node, const NodeEntry& data, Window& w, double fill) {
  if (Symmetric(w.pads)) return data;
  const size_t rank = w.kernel.size();
  std::vector<int64_t> width = {0, 0, 0, 0};
  for (size_t i = 0; i < rank; ++i) {
    width.push_back(w.pads[i]);
    width.push_back(w.pads[i + rank]);
  }
  w.pads.assign(2 * rank, 0);
  return node.Emit(
      "Pad", {{"mode", "constant"}, {"pad_width", Tuple(width)}, {"constant_value", Number(fill)}},
      {data}, "_pad");
}

// The kernel extents of a weight (out, in, k...), checked against kernel_shape.
std::vector<int64_t> KernelOf(OnnxNode& node) {
  const Shape weight = node.InputShape(1);
  MX_CHECK(weight.ndim() >= 3) << node.where() << ": weight " << weight << " has no spatial axes";
  const std::vector<int64_t> dims = weight.to_vector();
  std::vector<int64_t> kernel(dims.begin() + 2, dims.end());
  MX_CHECK(node.attrs().Ints("kernel_shape", kernel) == kernel)
      << node.where() << ": kernel_shape does not match the weight " << weight;
  return kernel;
}

void ConvertConv(OnnxNode& node) {
  const std::vector<int64_t> kernel = KernelOf(node);
  Window w = ReadWindow(node, kernel, node.InputShape(0));
  const NodeEntry data = PaddedData(node, node.Input(0), w, 0.0);
  std::vector<NodeEntry> inputs = {data, node.Input(1)};
  const bool has_bias = node.has_input(2);
  if (has_bias) inputs.push_back(node.Input(2));
  node.SetOutput(0, node.Emit("Convolution",
                              {{"kernel", Tuple(w.kernel)},
                               {"stride", Tuple(w.stride)},
                               {"dilate", Tuple(w.dilation)},
                               {"pad", Tuple(w.begins())},
                               {"num_filter", std::to_string(node.InputShape(1)[0])},
                               {"num_group", std::to_string(node.attrs().Int("group", 1))},
                               {"no_bias", has_bias ? "false" : "true"}},
                              inputs));
}

// ConvTranspose's begin and end padding per axis. With output_shape (or auto_pad SAME_*, whose
// output is input * stride) the pads come from the ONNX formula
//   total = stride * (in - 1) + output_padding + dilated kernel - output,
// split with floor division (SAME_UPPER puts the larger half at the end) — a negative total pads
// by extending the output, as ONNX's reference does; otherwise from the pads attribute.
std::vector<int64_t> TransposedPads(OnnxNode& node, const Window& w,
                                    const std::vector<int64_t>& output_padding) {
  const std::string& where = node.where();
  const NodeAttributes& a = node.attrs();
  const size_t rank = w.kernel.size();
  const std::string auto_pad = a.String("auto_pad", "NOTSET");
  MX_CHECK(auto_pad == "NOTSET" || auto_pad == "VALID" || auto_pad == "SAME_UPPER" ||
           auto_pad == "SAME_LOWER")
      << where << ": unknown auto_pad '" << auto_pad << "'";
  const bool same = auto_pad.starts_with("SAME");
  if (!a.Has("output_shape") && !same) {
    std::vector<int64_t> pads = a.Ints("pads", std::vector<int64_t>(2 * rank, 0));
    MX_CHECK(pads.size() == 2 * rank)
        << where << ": pads " << Tuple(pads) << " do not match the " << rank << "-D kernel";
    return auto_pad == "VALID" ? std::vector<int64_t>(2 * rank, 0) : pads;
  }
  const Shape in = node.InputShape(0);
  MX_CHECK(static_cast<size_t>(in.ndim()) == rank + 2)
      << where << ": input " << in << " does not match the " << rank << "-D kernel";
  std::vector<int64_t> target = a.Ints("output_shape");
  if (target.size() == rank + 2) target.erase(target.begin(), target.begin() + 2);
  if (target.empty()) {
    for (size_t i = 0; i < rank; ++i) target.push_back(in[static_cast<int>(i) + 2] * w.stride[i]);
  }
  MX_CHECK(target.size() == rank) << where << ": output_shape " << Tuple(target)
                                  << " does not match the " << rank << "-D kernel";
  std::vector<int64_t> pads(2 * rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t total = w.stride[i] * (in[static_cast<int>(i) + 2] - 1) + output_padding[i] +
                          (w.kernel[i] - 1) * w.dilation[i] + 1 - target[i];
    const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor(total / 2)
    pads[i] = auto_pad == "SAME_UPPER" ? half : total - half;
    pads[i + rank] = total - pads[i];
  }
  return pads;
}

void ConvertConvTranspose(OnnxNode& node) {
  const std::string& where = node.where();
  const NodeAttributes& a = node.attrs();
  const std::vector<int64_t> kernel = KernelOf(node);
  const size_t rank = kernel.size();
  const int64_t group = a.Int("group", 1);
  Window w{kernel,
           a.Ints("strides", std::vector<int64_t>(rank, 1)),
           a.Ints("dilations", std::vector<int64_t>(rank, 1)),
           {}};
  MX_CHECK(w.stride.size() == rank && w.dilation.size() == rank)
      << where << ": strides/dilations do not match the " << rank << "-D kernel";
  const std::vector<int64_t> output_padding =
      a.Ints("output_padding", std::vector<int64_t>(rank, 0));
  MX_CHECK(output_padding.size() == rank) << where << ": output_padding " << Tuple(output_padding)
                                          << " does not match the " << rank << "-D kernel";
  w.pads = TransposedPads(node, w, output_padding);
  // Deconvolution crops `pad` at both ends and then extends the end by `adj`: a begin pad b and
  // an end pad e (after output_padding o) are pad = b, adj = b + o - e; an end pad beyond b + o
  // (auto_pad SAME) is adj = 0 and a slice that crops the rest off the end.
  std::vector<int64_t> adj(rank), crop(rank, 0);
  for (size_t i = 0; i < rank; ++i) {
    adj[i] = w.pads[i] + output_padding[i] - w.pads[i + rank];
    MX_CHECK(w.pads[i] >= 0) << where << ": pads " << Tuple(w.pads) << " with output_padding "
                             << Tuple(output_padding)
                             << " are not supported for ConvTranspose (a negative begin pad)";
    if (adj[i] < 0) crop[i] = -adj[i], adj[i] = 0;
  }
  AttrText attrs = {{"kernel", Tuple(kernel)},
                    {"stride", Tuple(w.stride)},
                    {"dilate", Tuple(w.dilation)},
                    {"pad", Tuple(w.begins())},
                    {"adj", Tuple(adj)},
                    {"num_filter", std::to_string(node.InputShape(1)[1] * group)},
                    {"num_group", std::to_string(group)}};
  std::vector<NodeEntry> inputs = {node.Input(0), node.Input(1)};
  const bool has_bias = node.has_input(2);
  if (has_bias) inputs.push_back(node.Input(2));
  attrs["no_bias"] = has_bias ? "false" : "true";
  const bool crops = std::any_of(crop.begin(), crop.end(), [](int64_t c) { return c > 0; });
  const NodeEntry out = node.Emit("Deconvolution", attrs, inputs, crops ? "_uncropped" : "");
  if (!crops) {
    node.SetOutput(0, out);
    return;
  }
  const Shape in = node.InputShape(0);
  std::vector<int64_t> begin(rank + 2, 0), end = {in[0], node.InputShape(1)[1] * group};
  for (size_t i = 0; i < rank; ++i) {
    const int64_t length = (in[static_cast<int>(i) + 2] - 1) * w.stride[i] +
                           (kernel[i] - 1) * w.dilation[i] + 1 - 2 * w.pads[i];
    end.push_back(length - crop[i]);
  }
  node.SetOutput(0, node.Emit("slice", {{"begin", Tuple(begin)}, {"end", Tuple(end)}}, {out}));
}

// AveragePool over the real elements only (count_include_pad=0) with pads that differ between the
// ends of an axis (auto_pad SAME_UPPER / SAME_LOWER), which mxlite's pooling cannot pad: the sum
// of each window over the zero-padded input, divided by the count of real elements in it, the
// same sum pooling of the padded ones (a constant at load: it folds).
void EmitAverageOfRealElements(OnnxNode& node, Window& w, const std::string& convention) {
  const Shape in = node.InputShape(0);
  std::vector<int64_t> ones_dims = in.to_vector();
  ones_dims[0] = ones_dims[1] = 1;  // broadcast over images and channels
  const Shape ones_shape = CheckedOnnxShape(ones_dims, node.where() + " window counts");
  const NodeEntry ones = node.NewConstant(
      "_ones",
      HostTensorOf(node.InputDType(0), ones_shape,
                   std::vector<double>(static_cast<size_t>(ones_shape.size()), 1.0), node.where()));
  const std::vector<int64_t> pads = w.pads;
  const NodeEntry data = PaddedData(node, node.Input(0), w, 0.0);  // resets w.pads
  const AttrText sum = {{"kernel", Tuple(w.kernel)},   {"stride", Tuple(w.stride)},
                        {"dilate", Tuple(w.dilation)}, {"pad", Tuple(w.begins())},
                        {"pool_type", "sum"},          {"pooling_convention", convention}};
  const NodeEntry sums = node.Emit("Pooling", sum, {data}, "_sums");
  const size_t rank = w.kernel.size();
  std::vector<int64_t> width = {0, 0, 0, 0};
  for (size_t i = 0; i < rank; ++i) {
    width.push_back(pads[i]);
    width.push_back(pads[i + rank]);
  }
  const NodeEntry padded_ones =
      node.Emit("Pad", {{"mode", "constant"}, {"pad_width", Tuple(width)}, {"constant_value", "0"}},
                {ones}, "_ones_padded");
  const NodeEntry counts = node.Emit("Pooling", sum, {padded_ones}, "_counts");
  node.SetOutput(0, node.Emit("broadcast_div", {}, {sums, counts}));
}

void EmitPool(OnnxNode& node, bool max) {
  const std::string& where = node.where();
  const NodeAttributes& a = node.attrs();
  const std::vector<int64_t> kernel = a.Ints("kernel_shape");
  MX_CHECK(!kernel.empty()) << where << ": kernel_shape is required";
  Window w = ReadWindow(node, kernel, node.InputShape(0));
  MX_CHECK(a.Int("storage_order", 0) == 0) << where << ": storage_order=1 is not supported";
  const bool include_pad = a.Int("count_include_pad", 0) != 0;
  const std::string convention = a.Int("ceil_mode", 0) ? "full" : "valid";
  if (!max && !include_pad && !Symmetric(w.pads)) {
    EmitAverageOfRealElements(node, w, convention);
    return;
  }
  const NodeEntry data =
      PaddedData(node, node.Input(0), w,
                 max ? static_cast<double>(std::numeric_limits<float>::lowest()) : 0.0);
  node.SetOutput(0, node.Emit("Pooling",
                              {{"kernel", Tuple(w.kernel)},
                               {"stride", Tuple(w.stride)},
                               {"dilate", Tuple(w.dilation)},
                               {"pad", Tuple(w.begins())},
                               {"pool_type", max ? "max" : "avg"},
                               {"pooling_convention", convention},
                               {"count_include_pad", include_pad ? "true" : "false"}},
                              {data}));
  node.OutputsUnsupported(1, "MaxPool's Indices output is not supported");
}

void ConvertMaxPool(OnnxNode& node) { EmitPool(node, true); }
void ConvertAveragePool(OnnxNode& node) { EmitPool(node, false); }

// LpPool: (the sum over each window of |x|^p)^(1/p), as the sum pooling of |x|^p (padding adds
// 0) raised to 1/p. p is a float attribute in opset 1, an integer from 2 (default 2 in both).
void ConvertLpPool(OnnxNode& node) {
  const std::string& where = node.where();
  const std::vector<int64_t> kernel = node.attrs().Ints("kernel_shape");
  MX_CHECK(!kernel.empty()) << where << ": kernel_shape is required";
  Window w = ReadWindow(node, kernel, node.InputShape(0));
  const double p = node.opset() < 2 ? node.attrs().Float("p", 2.0)
                                    : static_cast<double>(node.attrs().Int("p", 2));
  MX_CHECK(p > 0) << where << ": p is " << p << "; it must be positive";
  NodeEntry powered = node.Emit("abs", {}, {node.Input(0)}, "_abs");
  if (p != 1) powered = node.Emit("_power_scalar", {{"scalar", Number(p)}}, {powered}, "_power");
  const NodeEntry data = PaddedData(node, powered, w, 0.0);
  const NodeEntry sums =
      node.Emit("Pooling",
                {{"kernel", Tuple(w.kernel)},
                 {"stride", Tuple(w.stride)},
                 {"dilate", Tuple(w.dilation)},
                 {"pad", Tuple(w.begins())},
                 {"pool_type", "sum"},
                 {"pooling_convention", node.attrs().Int("ceil_mode", 0) ? "full" : "valid"}},
                {data}, p == 1 ? "" : "_sums");
  node.SetOutput(0,
                 p == 1 ? sums : node.Emit("_power_scalar", {{"scalar", Number(1 / p)}}, {sums}));
}

void EmitGlobalPool(OnnxNode& node, const char* pool_type) {
  node.SetOutput(0, node.Emit("Pooling", {{"global_pool", "true"}, {"pool_type", pool_type}},
                              {node.Input(0)}));
}

void ConvertGlobalAveragePool(OnnxNode& node) { EmitGlobalPool(node, "avg"); }
void ConvertGlobalMaxPool(OnnxNode& node) { EmitGlobalPool(node, "max"); }

void ConvertBatchNormalization(OnnxNode& node) {
  const NodeAttributes& a = node.attrs();
  MX_CHECK(a.Int("spatial", 1) == 1) << node.where() << ": spatial=0 is not supported";
  MX_CHECK(a.Int("training_mode", 0) == 0)
      << node.where() << ": training_mode=1 is not supported (inference only)";
  const std::vector<NodeEntry> inputs = {node.Input(0), node.Input(1), node.Input(2),
                                         node.Input(3, VariableRole::kAuxiliary),
                                         node.Input(4, VariableRole::kAuxiliary)};
  node.SetOutput(0, node.Emit("BatchNorm",
                              {{"eps", Number(a.Float("epsilon", 1e-5))},
                               {"momentum", Number(a.Float("momentum", 0.9))},
                               {"fix_gamma", "false"},
                               {"use_global_stats", "true"}},
                              inputs));
  node.OutputsUnsupported(1, "BatchNormalization's training outputs are not supported");
}

// Scale or B of LayerNormalization as one value per normalised element (`count`): a constant is
// reshaped at load, a computed one by a Reshape node.
NodeEntry PerNormalisedElement(OnnxNode& node, int input, int64_t count, const char* what) {
  const Shape shape = node.InputShape(input);
  MX_CHECK(shape.size() == count) << node.where() << ": " << what << " has shape " << shape
                                  << " but the normalised axes hold " << count
                                  << " elements per group";
  if (shape == Shape{count}) return node.Input(input);
  if (const HostTensor* constant = node.ConstantInput(input)) {
    return node.NewConstant(std::string("_") + what, Reshaped(*constant, Shape{count}));
  }
  return node.Emit("Reshape", {{"shape", Tuple({count})}}, {node.Input(input)},
                   std::string("_") + what);
}

// Opset 17: normalises over the axes from `axis` on. mxlite's LayerNorm normalises one axis, so
// trailing axes are flattened into one around it (a view). Mean and InvStdDev, when asked for,
// come from the op's statistics outputs.
void ConvertLayerNormalization(OnnxNode& node) {
  const Shape in = node.InputShape(0);
  const int rank = in.ndim();
  const int axis = static_cast<int>(NormalizeAxis(node.attrs().Int("axis", -1), rank, node.where()));
  const int64_t count = in.size(axis, rank);
  const std::vector<int64_t> dims = in.to_vector();
  std::vector<int64_t> grouped(dims.begin(), dims.begin() + axis);
  grouped.push_back(count);
  const bool flattens = axis != rank - 1;
  NodeEntry data = node.Input(0);
  if (flattens) data = node.Emit("Reshape", {{"shape", Tuple(grouped)}}, {data}, "_groups");
  const NodeEntry gamma = PerNormalisedElement(node, 1, count, "scale");
  NodeEntry beta;
  if (node.has_input(2)) {
    beta = PerNormalisedElement(node, 2, count, "bias");
  } else {
    const HostTensor* scale = node.ConstantInput(1);
    const DType dtype = scale != nullptr ? scale->dtype : DType::kFloat32;
    beta = node.NewConstant("_bias", HostTensorOf(dtype, Shape{count},
                                                  std::vector<double>(count, 0.0), node.where()));
  }
  const auto wanted = [&](int i) { return i < node.num_outputs() && !node.proto().output(i).empty(); };
  const bool statistics = wanted(1) || wanted(2);
  const NodeEntry y = node.Emit("LayerNorm",
                                {{"axis", "-1"},
                                 {"eps", Number(node.attrs().Float("epsilon", 1e-5))},
                                 {"output_mean_var", statistics ? "true" : "false"}},
                                {data, gamma, beta});
  node.SetOutput(0, flattens ? node.Emit("Reshape", {{"shape", Tuple(dims)}}, {y}, "_restore") : y);
  std::vector<int64_t> stats_shape(dims.begin(), dims.begin() + axis);
  stats_shape.resize(static_cast<size_t>(rank), 1);
  const auto statistic = [&](NodeEntry entry, const char* suffix) {
    return node.Emit("Reshape", {{"shape", Tuple(stats_shape)}}, {entry}, suffix);
  };
  if (wanted(1)) node.SetOutput(1, statistic(NodeEntry{y.node, 1}, "_mean"));
  if (wanted(2)) {
    const NodeEntry inverse = node.Emit("reciprocal", {}, {NodeEntry{y.node, 2}}, "_inv_std");
    node.SetOutput(2, statistic(inverse, "_inv_std_shape"));
  }
}

// Scale or B of InstanceNormalization as (C, 1), to broadcast over (N, C, spatial); the same for
// GroupNormalization's groups.
NodeEntry PerChannelColumn(OnnxNode& node, int input, int64_t channels, const char* what,
                           const char* per = "channel") {
  const Shape shape = node.InputShape(input);
  MX_CHECK(shape == Shape{channels}) << node.where() << ": " << what << " has shape " << shape
                                     << "; expected (" << channels << "), one value per " << per;
  if (const HostTensor* constant = node.ConstantInput(input)) {
    return node.NewConstant(std::string("_") + what, Reshaped(*constant, Shape{channels, 1}));
  }
  return node.Emit("Reshape", {{"shape", Tuple({channels, 1})}}, {node.Input(input)},
                   std::string("_") + what);
}

// Each (image, channel) normalised over its spatial extent, then scaled and shifted per channel:
// mxlite's LayerNorm over the flattened spatial axis (unit scale, zero shift), then the per-channel
// scale and bias broadcast.
void ConvertInstanceNormalization(OnnxNode& node) {
  const Shape in = node.InputShape(0);
  MX_CHECK(in.ndim() >= 3) << node.where() << ": the input has shape " << in
                           << "; InstanceNormalization takes (N, C, D1, ...)";
  const int64_t n = in[0], c = in[1], spatial = in.size(2, in.ndim());
  const HostTensor* scale = node.ConstantInput(1);
  const DType dtype = scale != nullptr ? scale->dtype : DType::kFloat32;
  const auto filled = [&](const char* suffix, double value) {
    return node.NewConstant(suffix, HostTensorOf(dtype, Shape{spatial},
                                                 std::vector<double>(spatial, value), node.where()));
  };
  const NodeEntry rows =
      node.Emit("Reshape", {{"shape", Tuple({n, c, spatial})}}, {node.Input(0)}, "_rows");
  const NodeEntry normalised =
      node.Emit("LayerNorm", {{"axis", "-1"}, {"eps", Number(node.attrs().Float("epsilon", 1e-5))}},
                {rows, filled("_unit", 1.0), filled("_zero", 0.0)}, "_normalised");
  const NodeEntry scaled = node.Emit(
      "broadcast_mul", {}, {normalised, PerChannelColumn(node, 1, c, "scale")}, "_scaled");
  const NodeEntry shifted =
      node.Emit("broadcast_add", {}, {scaled, PerChannelColumn(node, 2, c, "bias")}, "_shifted");
  node.SetOutput(0, node.Emit("Reshape", {{"shape", Tuple(in.to_vector())}}, {shifted}));
}

// GroupNormalization: the channels in num_groups groups, each (image, group) normalised over its
// channels' spatial extents together (LayerNorm over the flattened group, unit scale, zero
// shift), then scaled and shifted per group (opsets 18-20, scale and bias of num_groups values)
// or per channel (21 on, C values).
void EmitGroupNormalization(OnnxNode& node, bool per_channel) {
  const Shape in = node.InputShape(0);
  MX_CHECK(in.ndim() >= 3) << node.where() << ": the input has shape " << in
                           << "; GroupNormalization takes (N, C, D1, ...)";
  const int64_t n = in[0], c = in[1], spatial = in.size(2, in.ndim());
  const int64_t groups = node.attrs().Int("num_groups", 0);
  MX_CHECK(groups >= 1 && c % groups == 0)
      << node.where() << ": num_groups " << groups << " does not divide the " << c << " channels";
  const int64_t group_size = c / groups * spatial;
  const DType dtype = node.InputDType(0);
  const auto filled = [&](const char* suffix, double value) {
    return node.NewConstant(suffix, HostTensorOf(dtype, Shape{group_size},
                                                 std::vector<double>(group_size, value),
                                                 node.where()));
  };
  const NodeEntry rows =
      node.Emit("Reshape", {{"shape", Tuple({n, groups, group_size})}}, {node.Input(0)}, "_groups");
  NodeEntry normalised =
      node.Emit("LayerNorm", {{"axis", "-1"}, {"eps", Number(node.attrs().Float("epsilon", 1e-5))}},
                {rows, filled("_unit", 1.0), filled("_zero", 0.0)}, "_normalised");
  int64_t rows_per_image = groups;
  const char* per = per_channel ? "channel" : "group";
  if (per_channel) {
    normalised = node.Emit("Reshape", {{"shape", Tuple({n, c, spatial})}}, {normalised},
                           "_channels");
    rows_per_image = c;
  }
  const NodeEntry scaled = node.Emit(
      "broadcast_mul", {}, {normalised, PerChannelColumn(node, 1, rows_per_image, "scale", per)},
      "_scaled");
  const NodeEntry shifted = node.Emit(
      "broadcast_add", {}, {scaled, PerChannelColumn(node, 2, rows_per_image, "bias", per)},
      "_shifted");
  node.SetOutput(0, node.Emit("Reshape", {{"shape", Tuple(in.to_vector())}}, {shifted}));
}

// mxlite's GroupNorm op where scale and bias are per channel (opset 21), or per group and known
// at load (opsets 18-20: each group's value repeated over its channels at load); otherwise the
// composition above.
void ConvertGroupNormalizationWith(OnnxNode& node, bool per_channel) {
  const Shape in = node.InputShape(0);
  const int64_t groups = node.attrs().Int("num_groups", 0);
  const bool fits = in.ndim() >= 2 && groups >= 1 && in[1] % groups == 0;
  const HostTensor* scale = node.ConstantInput(1);
  const HostTensor* bias = node.ConstantInput(2);
  if (!fits || (!per_channel && (scale == nullptr || bias == nullptr))) {
    EmitGroupNormalization(node, per_channel);
    return;
  }
  const int64_t channels = in[1];
  const auto per_channel_values = [&](int input, const HostTensor* constant, const char* what) {
    if (per_channel) {
      MX_CHECK(node.InputShape(input) == Shape{channels})
          << node.where() << ": " << what << " has shape " << node.InputShape(input)
          << "; expected (" << channels << "), one value per channel";
      return node.Input(input);
    }
    MX_CHECK(constant->shape == Shape{groups})
        << node.where() << ": " << what << " has shape " << constant->shape << "; expected ("
        << groups << "), one value per group";
    const std::vector<double> values = constant->AsDoubles(node.where() + " " + what);
    std::vector<double> repeated;
    for (int64_t c = 0; c < channels; ++c) repeated.push_back(values[c / (channels / groups)]);
    return node.NewConstant(std::string("_") + what + "_per_channel",
                            HostTensorOf(constant->dtype, Shape{channels}, repeated, node.where()));
  };
  node.SetOutput(0, node.Emit("GroupNorm",
                              {{"num_groups", std::to_string(groups)},
                               {"eps", Number(node.attrs().Float("epsilon", 1e-5))}},
                              {node.Input(0), per_channel_values(1, scale, "scale"),
                               per_channel_values(2, bias, "bias")}));
}

void ConvertGroupNormalizationPerGroup(OnnxNode& node) {
  ConvertGroupNormalizationWith(node, false);
}
void ConvertGroupNormalization(OnnxNode& node) { ConvertGroupNormalizationWith(node, true); }

// LRN: y = x / (bias + alpha / size * (sum of x^2 over the channels [c - floor((size - 1) / 2),
// c + ceil((size - 1) / 2)], cut at the edges))^beta. The window sums are a sum pooling down the
// channels of (N, 1, C, rest) padded with zeros.
void ConvertLRN(OnnxNode& node) {
  const Shape in = node.InputShape(0);
  MX_CHECK(in.ndim() >= 3) << node.where() << ": the input has shape " << in
                           << "; LRN takes (N, C, D1, ...)";
  const int64_t size = node.attrs().Int("size", 0);
  MX_CHECK(size >= 1) << node.where() << ": size " << size << " must be at least 1";
  const double alpha = node.attrs().Float("alpha", 1e-4), beta = node.attrs().Float("beta", 0.75);
  const double bias = node.attrs().Float("bias", 1.0);
  const int64_t n = in[0], c = in[1], rest = in.size(2, in.ndim());
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  const NodeEntry squares = node.Emit("square", {}, {node.Input(0)}, "_squares");
  const NodeEntry column =
      node.Emit("Reshape", {{"shape", Tuple({n, 1, c, rest})}}, {squares}, "_column");
  const NodeEntry padded = node.Emit(
      "Pad",
      {{"mode", "constant"}, {"pad_width", Tuple({0, 0, 0, 0, before, after, 0, 0})},
       {"constant_value", "0"}},
      {column}, "_pad");
  const NodeEntry sums = node.Emit(
      "Pooling", {{"pool_type", "sum"}, {"kernel", Tuple({size, 1})}, {"stride", Tuple({1, 1})}},
      {padded}, "_window_sums");
  const NodeEntry sums_in_place =
      node.Emit("Reshape", {{"shape", Tuple(in.to_vector())}}, {sums}, "_sums");
  // The scalars in the data's type where it is known at load (a computed input is float32 here,
  // as in every model mxlite imports; another type meets a clear dtype error in the product).
  const HostTensor* data = node.ConstantInput(0);
  const DType dtype = data != nullptr ? data->dtype : DType::kFloat32;
  const auto scalar = [&](const char* suffix, double value) {
    return node.NewConstant(
        suffix, HostTensorOf(dtype, Shape{1}, std::vector<double>{value}, node.where()));
  };
  const NodeEntry scaled =
      node.Emit("broadcast_mul", {}, {sums_in_place, scalar("_alpha_over_size", alpha / size)},
                "_scaled");
  const NodeEntry base = node.Emit("broadcast_add", {}, {scaled, scalar("_bias", bias)}, "_base");
  const NodeEntry denominator =
      node.Emit("_power_scalar", {{"scalar", Number(beta)}}, {base}, "_denominator");
  node.SetOutput(0, node.Emit("elemwise_div", {}, {node.Input(0), denominator}));
}

}  // namespace

MXLITE_REGISTER_ONNX_CONVERTER(LRN, 1, kMaxOnnxOpset, ConvertLRN);
MXLITE_REGISTER_ONNX_CONVERTER(InstanceNormalization, 1, kMaxOnnxOpset,
                               ConvertInstanceNormalization);
MXLITE_REGISTER_ONNX_CONVERTER(Conv, 1, kMaxOnnxOpset, ConvertConv);
MXLITE_REGISTER_ONNX_CONVERTER(ConvTranspose, 1, kMaxOnnxOpset, ConvertConvTranspose);
MXLITE_REGISTER_ONNX_CONVERTER(MaxPool, 1, kMaxOnnxOpset, ConvertMaxPool);
MXLITE_REGISTER_ONNX_CONVERTER(AveragePool, 1, kMaxOnnxOpset, ConvertAveragePool);
MXLITE_REGISTER_ONNX_CONVERTER(LpPool, 1, kMaxOnnxOpset, ConvertLpPool);
MXLITE_REGISTER_ONNX_CONVERTER(GlobalAveragePool, 1, kMaxOnnxOpset, ConvertGlobalAveragePool);
MXLITE_REGISTER_ONNX_CONVERTER(GlobalMaxPool, 1, kMaxOnnxOpset, ConvertGlobalMaxPool);
// Before opset 7 is_test (default 0, training) chose the mode.
MXLITE_REGISTER_ONNX_CONVERTER(BatchNormalization, 7, kMaxOnnxOpset, ConvertBatchNormalization);
MXLITE_REGISTER_ONNX_CONVERTER(GroupNormalization, 18, 20, ConvertGroupNormalizationPerGroup);
MXLITE_REGISTER_ONNX_CONVERTER(GroupNormalization, 21, kMaxOnnxOpset, ConvertGroupNormalization);
MXLITE_REGISTER_ONNX_CONVERTER(LayerNormalization, 17, kMaxOnnxOpset, ConvertLayerNormalization);

}  // namespace mxlite
