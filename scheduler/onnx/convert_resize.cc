// ONNX Resize (opsets 10-21) and Upsample (7-9) import to mxlite's Resize (ops/resize.h). The
// output extents come from `sizes`, or from `scales` (floor(in * scale), the scale then kept for
// the coordinate transform), both known at load; the axes from the first that changes on are
// resized. From opset 18 `axes` names the axes sizes or scales are given for (the others keep
// their extent), antialias filters linear and cubic downsampling, and keep_aspect_ratio_policy
// not_larger / not_smaller turns `sizes` into one scale for the named axes (the smallest or
// largest of out / in; extents round(in * scale), halves up). exclude_outside changes nothing for
// nearest within the axis and plain linear, so only cubic and antialiased filters are given it.
// tf_crop_and_resize takes its roi (known at load) into Resize's `roi` and adds the extrapolation
// value where an output falls outside the input (a constant at load).
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "scheduler/onnx/onnx_converter.h"

namespace mxlite {
namespace {

struct ResizeRequest {
  std::string mode = "nearest";
  std::string transform = "half_pixel";
  std::string rounding = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  std::vector<double> roi_start, roi_end;  // tf_crop_and_resize, every axis
  double extrapolation = 0;                // tf_crop_and_resize: the value outside the input
  std::vector<int64_t> out;   // every axis
  std::vector<double> scale;  // every axis, empty when the extents were given
};

std::string NumbersText(const std::vector<double>& values) {
  std::string text = "(";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ',';
    text += Number(values[i]);
  }
  return text + ")";
}

void EmitResize(OnnxNode& node, const ResizeRequest& r) {
  const Shape in = node.InputShape(0);
  MX_CHECK(r.mode == "nearest" || r.mode == "linear" || r.mode == "cubic")
      << node.where() << ": mode '" << r.mode
      << "' is not supported (nearest, linear and cubic are)";
  MX_CHECK(r.transform == "half_pixel" || r.transform == "pytorch_half_pixel" ||
           r.transform == "align_corners" || r.transform == "asymmetric" ||
           r.transform == "half_pixel_symmetric" || r.transform == "tf_half_pixel_for_nn" ||
           r.transform == "tf_crop_and_resize")
      << node.where() << ": coordinate_transformation_mode '" << r.transform
      << "' is not one of half_pixel, pytorch_half_pixel, align_corners, asymmetric, "
         "half_pixel_symmetric, tf_half_pixel_for_nn and tf_crop_and_resize";
  MX_CHECK(static_cast<int>(r.out.size()) == in.ndim())
      << node.where() << ": " << r.out.size() << " output extents for data of shape " << in;
  const bool cropping = !r.roi_start.empty();
  int first = in.ndim();
  for (int axis = 0; axis < in.ndim(); ++axis) {
    const bool scaled = !r.scale.empty() && r.scale[axis] != 1.0;
    const bool windowed = cropping && (r.roi_start[axis] != 0.0 || r.roi_end[axis] != 1.0);
    if (r.out[axis] != in[axis] || scaled || windowed) {
      first = axis;
      break;
    }
  }
  if (first == in.ndim()) {  // nothing changes
    node.SetOutput(0, node.Input(0));
    return;
  }
  AttrText attrs = {{"size", Tuple(std::vector<int64_t>(r.out.begin() + first, r.out.end()))},
                    {"mode", r.mode},
                    {"coordinate_transformation_mode", r.transform},
                    {"nearest_mode", r.rounding}};
  const bool filtered = r.antialias && r.mode != "nearest";  // ONNX: antialias is for linear, cubic
  if (r.mode == "cubic") attrs["cubic_coeff_a"] = Number(r.cubic_a);
  if (r.mode == "cubic" || filtered)
    attrs["exclude_outside"] = r.exclude_outside ? "true" : "false";
  if (filtered) attrs["antialias"] = "true";
  if (!r.scale.empty()) {
    attrs["scale"] = NumbersText(std::vector<double>(r.scale.begin() + first, r.scale.end()));
  }
  if (!cropping) {
    node.SetOutput(0, node.Emit("Resize", attrs, {node.Input(0)}));
    return;
  }
  std::vector<double> roi(r.roi_start.begin() + first, r.roi_start.end());
  roi.insert(roi.end(), r.roi_end.begin() + first, r.roi_end.end());
  attrs["roi"] = NumbersText(roi);
  const NodeEntry resized =
      node.Emit("Resize", attrs, {node.Input(0)}, r.extrapolation != 0.0 ? "_resized" : "");
  if (r.extrapolation == 0.0) {
    node.SetOutput(0, resized);
    return;
  }
  // The extrapolation value where some resized axis maps outside the input (Resize gives 0
  // there): a constant at load over the resized axes, broadcast over the others.
  std::vector<int64_t> dims(static_cast<size_t>(in.ndim()), 1);
  std::vector<std::vector<bool>> outside_on(static_cast<size_t>(in.ndim()));
  for (int axis = first; axis < in.ndim(); ++axis) {
    dims[axis] = r.out[axis];
    const double n = static_cast<double>(in[axis]);
    const double resized_length =
        r.scale.empty() ? static_cast<double>(r.out[axis]) : n * r.scale[axis];
    const double span = (r.roi_end[axis] - r.roi_start[axis]) * (n - 1);
    for (int64_t x = 0; x < r.out[axis]; ++x) {
      const double c =
          r.roi_start[axis] * (n - 1) +
          (resized_length == 1.0 ? span / 2 : static_cast<double>(x) * span / (resized_length - 1));
      outside_on[axis].push_back(c < 0.0 || c > n - 1);
    }
  }
  const Shape mask_shape(dims);
  std::vector<double> mask(static_cast<size_t>(mask_shape.size()), 0.0);
  for (int64_t flat = 0; flat < mask_shape.size(); ++flat) {
    for (int axis = first; axis < in.ndim(); ++axis) {
      const int64_t x = flat / mask_shape.size(axis + 1, in.ndim()) % dims[axis];
      if (outside_on[axis][static_cast<size_t>(x)]) mask[flat] = r.extrapolation;
    }
  }
  node.SetOutput(
      0, node.Emit("broadcast_add", {},
                   {resized,
                    node.NewConstant("_extrapolated", HostTensorOf(node.InputDType(0), mask_shape,
                                                                   mask, node.where()))}));
}

// Output extents floor(in * scale) for `scales` known at load.
void FromScales(OnnxNode& node, const std::vector<double>& scales, ResizeRequest& r) {
  const Shape in = node.InputShape(0);
  MX_CHECK(static_cast<int>(scales.size()) == in.ndim())
      << node.where() << ": " << scales.size() << " scales for data of shape " << in;
  for (int axis = 0; axis < in.ndim(); ++axis) {
    MX_CHECK(scales[axis] > 0) << node.where() << ": scale " << scales[axis] << " of axis "
                               << axis << " is not positive";
    r.out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(in[axis]) * scales[axis])));
  }
  r.scale = scales;
}

// Values given for the axes of Resize's `axes` attribute (opset 18) spread over every axis of the
// data, the others `fill(axis)`; without the attribute, `values` as they are.
template <typename Value, typename Fill>
std::vector<Value> OverEveryAxis(OnnxNode& node, const std::vector<Value>& values,
                                 const char* what, Fill&& fill) {
  if (!node.attrs().Has("axes")) return values;
  const int rank = node.InputShape(0).ndim();
  const std::vector<int64_t> axes = node.attrs().Ints("axes");
  MX_CHECK(values.size() == axes.size())
      << node.where() << ": " << values.size() << " " << what << " for axes " << Tuple(axes);
  std::vector<Value> every(static_cast<size_t>(rank));
  std::vector<bool> given(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = NormalizeAxis(axes[i], rank, node.where());
    MX_CHECK(!given[static_cast<size_t>(axis)])
        << node.where() << ": axes " << Tuple(axes) << " name axis " << axis << " twice";
    given[static_cast<size_t>(axis)] = true;
    every[static_cast<size_t>(axis)] = values[i];
  }
  for (int axis = 0; axis < rank; ++axis) {
    if (!given[static_cast<size_t>(axis)]) every[static_cast<size_t>(axis)] = fill(axis);
  }
  return every;
}

// keep_aspect_ratio_policy not_larger / not_smaller (opset 18): the smallest / largest of the
// named axes' out / in as one scale for all of them, extents round(in * scale) with halves up.
void KeepAspectRatio(OnnxNode& node, const std::string& policy, ResizeRequest& r) {
  const Shape in = node.InputShape(0);
  const bool every_axis = !node.attrs().Has("axes");
  std::vector<bool> named(static_cast<size_t>(in.ndim()), every_axis);
  if (!every_axis) {
    for (int64_t axis : node.attrs().Ints("axes")) {
      named[static_cast<size_t>(NormalizeAxis(axis, in.ndim(), node.where()))] = true;
    }
  }
  const auto is_named = [&](int axis) { return named[static_cast<size_t>(axis)]; };
  double scale = policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
  for (int axis = 0; axis < in.ndim(); ++axis) {
    if (!is_named(axis)) continue;
    MX_CHECK(in[axis] > 0) << node.where() << ": keep_aspect_ratio_policy '" << policy
                           << "' on the empty axis " << axis << " of the data " << in;
    const double ratio = static_cast<double>(r.out[axis]) / static_cast<double>(in[axis]);
    scale = policy == "not_larger" ? std::min(scale, ratio) : std::max(scale, ratio);
  }
  r.scale.assign(static_cast<size_t>(in.ndim()), 1.0);
  for (int axis = 0; axis < in.ndim(); ++axis) {
    if (!is_named(axis)) continue;
    r.scale[axis] = scale;
    r.out[axis] = static_cast<int64_t>(std::floor(scale * static_cast<double>(in[axis]) + 0.5));
  }
}

// Opsets 11-21: X, roi, scales, sizes (scales and sizes, one of them, known at load).
void ConvertResize(OnnxNode& node) {
  const NodeAttributes& a = node.attrs();
  const int64_t antialias = a.Int("antialias", 0);
  MX_CHECK(antialias == 0 || antialias == 1)
      << node.where() << ": antialias is " << antialias << "; it must be 0 or 1";
  const std::string policy = a.String("keep_aspect_ratio_policy", "stretch");
  MX_CHECK(policy == "stretch" || policy == "not_larger" || policy == "not_smaller")
      << node.where() << ": keep_aspect_ratio_policy '" << policy
      << "' is not one of stretch, not_larger and not_smaller";
  ResizeRequest r;
  r.antialias = antialias == 1;
  r.mode = a.String("mode", "nearest");
  r.transform = a.String("coordinate_transformation_mode", "half_pixel");
  r.rounding = a.String("nearest_mode", "round_prefer_floor");
  r.cubic_a = a.Float("cubic_coeff_a", -0.75);
  const int64_t exclude_outside = a.Int("exclude_outside", 0);
  MX_CHECK(exclude_outside == 0 || exclude_outside == 1)
      << node.where() << ": exclude_outside is " << exclude_outside << "; it must be 0 or 1";
  r.exclude_outside = exclude_outside == 1;
  const Shape in = node.InputShape(0);
  if (r.transform == "tf_crop_and_resize") {
    // roi: the starts of the axes, then their ends (of the `axes` only, from opset 18).
    const std::vector<double> roi = node.RequireConstant(1, "roi").AsDoubles(node.where() + " roi");
    MX_CHECK(roi.size() % 2 == 0) << node.where() << ": roi holds " << roi.size()
                                  << " values; it needs a start and an end per axis";
    const size_t half = roi.size() / 2;
    r.roi_start = OverEveryAxis(node, std::vector<double>(roi.begin(), roi.begin() + half),
                                "roi starts", [](int) { return 0.0; });
    r.roi_end = OverEveryAxis(node, std::vector<double>(roi.begin() + half, roi.end()), "roi ends",
                              [](int) { return 1.0; });
    MX_CHECK(static_cast<int>(r.roi_start.size()) == in.ndim())
        << node.where() << ": roi holds " << roi.size() << " values for data of shape " << in;
    r.extrapolation = a.Float("extrapolation_value", 0.0);
  }
  const HostTensor* sizes = node.has_input(3) ? node.ConstantInput(3) : nullptr;
  if (node.has_input(3) && (sizes == nullptr || sizes->shape.size() > 0)) {
    const HostTensor& known = node.RequireConstant(3, "sizes");
    r.out = OverEveryAxis(node, known.ToInt64s(node.where() + " sizes"), "sizes",
                          [&](int axis) { return in[axis]; });
    if (policy != "stretch") KeepAspectRatio(node, policy, r);
  } else {
    const HostTensor& scales = node.RequireConstant(2, "scales (or sizes)");
    FromScales(node,
               OverEveryAxis(node, scales.AsDoubles(node.where() + " scales"), "scales",
                             [](int) { return 1.0; }),
               r);
  }
  EmitResize(node, r);
}

// Opset 10 Resize and opset 9 Upsample: X, scales; asymmetric coordinates, nearest floors.
void ConvertScalesInput(OnnxNode& node) {
  ResizeRequest r;
  r.mode = node.attrs().String("mode", "nearest");
  r.transform = "asymmetric";
  r.rounding = "floor";
  FromScales(node, node.RequireConstant(1, "scales").AsDoubles(node.where() + " scales"), r);
  EmitResize(node, r);
}

// Opsets 7-8 Upsample: the scales are an attribute.
void ConvertUpsampleAttribute(OnnxNode& node) {
  ResizeRequest r;
  r.mode = node.attrs().String("mode", "nearest");
  r.transform = "asymmetric";
  r.rounding = "floor";
  const std::vector<float> scales = node.attrs().Floats("scales");
  FromScales(node, std::vector<double>(scales.begin(), scales.end()), r);
  EmitResize(node, r);
}

}  // namespace

MXLITE_REGISTER_ONNX_CONVERTER(Upsample, 7, 8, ConvertUpsampleAttribute);
MXLITE_REGISTER_ONNX_CONVERTER(Upsample, 9, 9, ConvertScalesInput);
MXLITE_REGISTER_ONNX_CONVERTER(Resize, 10, 10, ConvertScalesInput);
MXLITE_REGISTER_ONNX_CONVERTER(Resize, 11, kMaxOnnxOpset, ConvertResize);

}  // namespace mxlite
