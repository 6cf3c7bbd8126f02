// Resize (ops/resize.h): nearest, linear and cubic against a direct float64 reference on every
// coordinate mode (one and two resized axes, up and down; cubic with exclude_outside and other
// values of a; antialiased filters against their definition; tf_crop_and_resize's window),
// gradients by finite differences, PyTorch's bilinear (align_corners False and True, antialiased)
// and ONNX's cubic on known cases, errors naming the node, and GPU cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

using Attrs = std::map<std::string, std::string>;

OpCase ResizeCase(Attrs attrs, const Shape& data) { return OpCase{"Resize", std::move(attrs), {data}}; }

std::string AttrOr(const Attrs& attrs, const std::string& name, const std::string& fallback) {
  auto it = attrs.find(name);
  return it == attrs.end() ? fallback : it->second;
}

// The input coordinate of output index x on an axis from `in` to `out` elements (ONNX's rules;
// the scale is out / in, so half_pixel_symmetric is half_pixel here).
double Coordinate(const std::string& transform, int64_t x, int64_t in, int64_t out) {
  const double scale = static_cast<double>(out) / in;
  if (transform == "align_corners") return out == 1 ? 0.0 : x * double(in - 1) / double(out - 1);
  if (transform == "asymmetric") return x / scale;
  if (transform == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (transform == "pytorch_half_pixel" && out == 1) return 0.0;
  return (x + 0.5) / scale - 0.5;
}

// Keys' cubic kernel with parameter a.
double Keys(double d, double a) {
  d = std::abs(d);
  if (d <= 1) return (a + 2) * d * d * d - (a + 3) * d * d + 1;
  if (d < 2) return a * d * d * d - 5 * a * d * d + 8 * a * d - 4 * a;
  return 0.0;
}

// An antialiased filter straight from its definition: every input index j near c weighs
// filter((j - c) * scale), indices past the ends read the edge (or weigh 0: exclude_outside), and
// the weights are normalised to sum 1.
std::vector<std::pair<int64_t, double>> AntialiasedWeights(const Attrs& attrs, double c,
                                                           double scale, int64_t in) {
  const bool cubic = AttrOr(attrs, "mode", "nearest") == "cubic";
  const double a = std::stod(AttrOr(attrs, "cubic_coeff_a", "-0.75"));
  const bool exclude = AttrOr(attrs, "exclude_outside", "false") == "true";
  const double reach = (cubic ? 2.0 : 1.0) / scale;
  std::vector<std::pair<int64_t, double>> taps;
  double sum = 0;
  for (int64_t j = static_cast<int64_t>(std::floor(c - reach)) - 1; j <= c + reach + 1; ++j) {
    const double d = (static_cast<double>(j) - c) * scale;
    double w = cubic ? Keys(d, a) : std::max(0.0, 1 - std::abs(d));
    if (exclude && (j < 0 || j >= in)) w = 0;
    taps.push_back({std::clamp<int64_t>(j, 0, in - 1), w});
    sum += w;
  }
  for (auto& tap : taps) tap.second /= sum;
  return taps;
}

// Per output index of one axis: (input index, weight) pairs.
std::vector<std::vector<std::pair<int64_t, double>>> AxisWeights(const Attrs& attrs, int64_t in,
                                                                 int64_t out) {
  const std::string mode = AttrOr(attrs, "mode", "nearest");
  const std::string transform = AttrOr(attrs, "coordinate_transformation_mode", "half_pixel");
  const std::string rounding = AttrOr(attrs, "nearest_mode", "round_prefer_floor");
  std::vector<std::vector<std::pair<int64_t, double>>> weights(out);
  const bool antialias = AttrOr(attrs, "antialias", "false") == "true" && out < in;
  for (int64_t x = 0; x < out; ++x) {
    const double c = Coordinate(transform, x, in, out);
    if (antialias && mode != "nearest") {
      weights[x] = AntialiasedWeights(attrs, c, static_cast<double>(out) / in, in);
    } else if (mode == "nearest") {
      double r = rounding == "floor" ? std::floor(c)
                 : rounding == "ceil" ? std::ceil(c)
                 : (c - std::floor(c) == 0.5) ? (rounding == "round_prefer_ceil" ? std::ceil(c) : std::floor(c))
                                              : std::round(c);
      weights[x] = {{std::clamp<int64_t>(static_cast<int64_t>(r), 0, in - 1), 1.0}};
    } else if (mode == "cubic") {
      // Keys' kernel W(d) on the four inputs around c, indices clamped to the axis, or dropped
      // and the rest renormalised (exclude_outside).
      const double a = std::stod(AttrOr(attrs, "cubic_coeff_a", "-0.75"));
      const bool exclude = AttrOr(attrs, "exclude_outside", "false") == "true";
      const auto kernel = [a](double d) {
        d = std::abs(d);
        if (d <= 1) return (a + 2) * d * d * d - (a + 3) * d * d + 1;
        if (d < 2) return a * d * d * d - 5 * a * d * d + 8 * a * d - 4 * a;
        return 0.0;
      };
      const int64_t below = static_cast<int64_t>(std::floor(c));
      double sum = 0;
      for (int64_t j = below - 1; j <= below + 2; ++j) {
        const bool outside = j < 0 || j >= in;
        const double w = exclude && outside ? 0.0 : kernel(c - static_cast<double>(j));
        weights[x].push_back({std::clamp<int64_t>(j, 0, in - 1), w});
        sum += w;
      }
      if (exclude) {
        for (auto& tap : weights[x]) tap.second /= sum;
      }
    } else {
      const double inside = std::clamp(c, 0.0, double(in - 1));
      const int64_t below = static_cast<int64_t>(std::floor(inside));
      const double t = inside - below;
      weights[x] = {{below, 1 - t}, {std::min(below + 1, in - 1), t}};
    }
  }
  return weights;
}

// The resize of (n, c, h, w) data to (n, c, size...) by the weights of each axis, in float64.
ReferenceFn ResizeReference(const Attrs& attrs, const std::vector<int64_t>& size) {
  return [=](const std::vector<std::vector<double>>& inputs, const std::vector<Shape>& shapes) {
    const Shape& data = shapes[0];
    std::vector<double> current = inputs[0];
    Shape shape = data;
    const int first = data.ndim() - static_cast<int>(size.size());
    for (size_t k = 0; k < size.size(); ++k) {
      const int axis = first + static_cast<int>(k);
      const int64_t outer = shape.size(0, axis), in = shape[axis], inner = shape.size(axis + 1, shape.ndim());
      const auto weights = AxisWeights(attrs, in, size[k]);
      std::vector<double> next(outer * size[k] * inner, 0.0);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t x = 0; x < size[k]; ++x)
          for (const auto& [i, w] : weights[x])
            for (int64_t j = 0; j < inner; ++j)
              next[(o * size[k] + x) * inner + j] += w * current[(o * in + i) * inner + j];
      current = next;
      shape[axis] = size[k];
    }
    return std::vector<std::vector<double>>{current};
  };
}

void CheckResize(const Attrs& base, const Shape& data, const std::vector<int64_t>& size) {
  Attrs attrs = base;
  std::string text = "(";
  for (size_t i = 0; i < size.size(); ++i) {
    if (i > 0) text += ',';
    text += std::to_string(size[i]);
  }
  attrs["size"] = text + ")";
  SCOPED_TRACE(attrs.count("mode") ? attrs.at("mode") : "nearest");
  CheckForwardAgainstReference(ResizeCase(attrs, data), ResizeReference(base, size));
}

TEST(ResizeTest, EveryModeAndCoordinateTransformMatchesTheReference) {
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    for (const char* transform : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}) {
      SCOPED_TRACE(transform);
      const Attrs attrs = {{"mode", mode}, {"coordinate_transformation_mode", transform}};
      CheckResize(attrs, {2, 3, 4, 5}, {7, 9});   // up on both axes
      CheckResize(attrs, {1, 2, 9, 8}, {4, 3});   // down
      CheckResize(attrs, {2, 6, 5}, {1});         // to one element
      CheckResize(attrs, {1, 2, 40, 40}, {80, 80});  // several row blocks
    }
  }
  for (const char* rounding : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
    SCOPED_TRACE(rounding);
    CheckResize({{"nearest_mode", rounding}, {"coordinate_transformation_mode", "asymmetric"}},
                {1, 1, 4, 6}, {10, 9});
    CheckResize(
        {{"nearest_mode", rounding}, {"coordinate_transformation_mode", "tf_half_pixel_for_nn"}},
        {1, 1, 9, 6}, {4, 10});
  }
  // half_pixel_symmetric is half_pixel when the scale is out / in.
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    CheckResize({{"mode", mode}, {"coordinate_transformation_mode", "half_pixel_symmetric"}},
                {1, 2, 5, 9}, {8, 4});
  }
}

// Antialiased linear and cubic (downsampling by 0.2 to 0.9, one axis shrinking and one growing)
// against the filter's definition, with and without exclude_outside, on every transform.
TEST(ResizeTest, AntialiasedFiltersMatchTheirDefinition) {
  for (const char* mode : {"linear", "cubic"}) {
    for (const char* transform :
         {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}) {
      for (const char* exclude : {"false", "true"}) {
        SCOPED_TRACE(std::string(mode) + " " + transform + " exclude_outside " + exclude);
        const Attrs attrs = {{"mode", mode},
                             {"antialias", "true"},
                             {"coordinate_transformation_mode", transform},
                             {"exclude_outside", exclude}};
        CheckResize(attrs, {1, 2, 10, 15}, {5, 3});  // by 1/2 and 1/5
        CheckResize(attrs, {2, 3, 9, 7}, {8, 4});    // by 0.89 and 0.57
        CheckResize(attrs, {1, 2, 11, 4}, {3, 9});   // down one axis, up the other
        CheckResize(attrs, {2, 40}, {7});            // the last axis alone
        CheckResize(attrs, {1, 1, 6, 6}, {1, 1});    // to one element
      }
    }
  }
}

// torch.nn.functional.interpolate(x, size=(3, 4), antialias=True, align_corners=False) of
// x = arange(1, 25).reshape(1, 1, 4, 6) ** 1.5 (PyTorch 1.13): bilinear is ONNX's antialiased
// linear on half_pixel with exclude_outside; PyTorch's antialiased bicubic takes a = -0.5.
TEST(ResizeTest, AntialiasedMatchesPyTorch) {
  auto run = [&](const std::string& mode, const std::string& a) {
    OpCase c = ResizeCase({{"size", "(3,4)"},
                           {"mode", mode},
                           {"antialias", "true"},
                           {"exclude_outside", "true"},
                           {"cubic_coeff_a", a}},
                          {1, 1, 4, 6});
    std::vector<HostTensor> inputs = MakeInputs(c, DType::kFloat64);
    for (int i = 0; i < 24; ++i) inputs[0].Set(i, std::pow(i + 1.0, 1.5));
    return RunForward(c, inputs).outputs[0].Values();
  };
  const std::vector<double> bilinear = {
      7.1980957985,  11.1197490692, 15.9427518845, 21.2633018494, 34.4996261597, 41.4515800476,
      49.0519790649, 56.8381729126, 74.3937072754, 83.3742828369, 92.964050293,  102.5984725952};
  const std::vector<double> bicubic = {4.3435897827,  7.964413166,   12.9849033356, 18.2219276428,
                                       33.4300689697, 40.4795837402, 48.8479270935, 56.8087158203,
                                       77.3977355957, 86.6539382935, 97.3610992432, 107.3287658691};
  const std::vector<double> linear = run("linear", "-0.75"), cubic = run("cubic", "-0.5");
  for (int i = 0; i < 12; ++i) {
    EXPECT_NEAR(linear[i], bilinear[i], 1e-5 * bilinear[i]) << i;
    EXPECT_NEAR(cubic[i], bicubic[i], 1e-5 * bicubic[i]) << i;
  }
}

TEST(ResizeTest, CubicWithExcludeOutsideAndOtherCoefficientsMatchesTheReference) {
  for (const char* transform :
       {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}) {
    for (const char* exclude : {"false", "true"}) {
      for (const char* a : {"-0.75", "-0.5", "-1.25"}) {
        SCOPED_TRACE(std::string(transform) + " exclude_outside " + exclude + " a " + a);
        const Attrs attrs = {{"mode", "cubic"},
                             {"coordinate_transformation_mode", transform},
                             {"exclude_outside", exclude},
                             {"cubic_coeff_a", a}};
        CheckResize(attrs, {2, 3, 4, 5}, {9, 11});   // up
        CheckResize(attrs, {1, 2, 9, 13}, {4, 5});   // down
        CheckResize(attrs, {2, 3, 6}, {13});         // the last axis alone
        CheckResize(attrs, {1, 3, 1, 2}, {3, 1});    // from and to one element
        CheckResize(attrs, {1, 2, 3, 24}, {7, 10});  // up one axis, down the other
      }
    }
  }
}

// ONNX's reference (onnx.reference.ops.op_resize) on [1, 2, 4, 8] resized to 8 elements; the
// first two half_pixel values by hand: coordinates -0.25 and 0.25 read inputs (0, 0, 0, 1) and
// (0, 0, 1, 2) with weights W(1.75), W(0.75), W(0.25), W(1.25) = -0.03515625, 0.26171875,
// 0.87890625, -0.10546875 (and reversed). half_pixel with a = -0.75 is PyTorch's bicubic with
// align_corners=False.
TEST(ResizeTest, CubicMatchesKnownValues) {
  const std::vector<double> x = {1, 2, 4, 8};
  auto run = [&](Attrs attrs) {
    attrs["size"] = "(8)";
    attrs["mode"] = "cubic";
    OpCase c = ResizeCase(attrs, {1, 4});
    std::vector<HostTensor> inputs = MakeInputs(c, DType::kFloat64);
    for (int i = 0; i < 4; ++i) inputs[0].Set(i, x[i]);
    return RunForward(c, inputs).outputs[0].Values();
  };
  const auto expect = [](const std::vector<double>& actual, const std::vector<double>& expected) {
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-12) << i;
  };
  SCOPED_TRACE("half_pixel");
  expect(run({}),
         {0.89453125, 1.15625, 1.5625, 2.41796875, 3.16015625, 5.1171875, 7.1640625, 8.421875});
  SCOPED_TRACE("half_pixel, exclude_outside");
  expect(run({{"exclude_outside", "true"}}),
         {0.8636363636363638, 1.1413427561837455, 1.5433962264150942, 2.41796875, 3.16015625,
          5.215094339622642, 7.243816254416961, 8.545454545454547});
  SCOPED_TRACE("align_corners, a = -0.5");
  expect(run({{"coordinate_transformation_mode", "align_corners"}, {"cubic_coeff_a", "-0.5"}}),
         {1.0, 1.3061224489795937, 1.7959183673469385, 2.4402332361515997, 3.2536443148688057,
          4.501457725947519, 6.4606413994169145, 8.0});
  SCOPED_TRACE("asymmetric");
  expect(run({{"coordinate_transformation_mode", "asymmetric"}}),
         {1.0, 1.3125, 2.0, 2.71875, 4.0, 6.1875, 8.0, 8.375});
}

// torch.nn.functional.interpolate of [[1, 2], [3, 4]] to 3x3, bilinear, align_corners=False
// (half_pixel) and True.
TEST(ResizeTest, BilinearMatchesPyTorch) {
  const std::vector<double> x = {1, 2, 3, 4};
  auto run = [&](const std::string& transform) {
    OpCase c = ResizeCase({{"size", "(3,3)"}, {"mode", "linear"},
                           {"coordinate_transformation_mode", transform}},
                          {1, 1, 2, 2});
    std::vector<HostTensor> inputs = MakeInputs(c, DType::kFloat64);
    for (int i = 0; i < 4; ++i) inputs[0].Set(i, x[i]);
    return RunForward(c, inputs).outputs[0].Values();
  };
  const std::vector<double> half = run("pytorch_half_pixel");
  const std::vector<double> torch_half = {1.0, 1.5, 2.0, 2.0, 2.5, 3.0, 3.0, 3.5, 4.0};
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(half[i], torch_half[i], 1e-12) << i;
  const std::vector<double> corners = run("align_corners");
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(corners[i], torch_half[i], 1e-12) << i;
}

TEST(ResizeTest, GradientsOfNearestAndLinear) {
  CheckGradients(ResizeCase({{"size", "(5,3)"}, {"mode", "linear"}}, {1, 2, 3, 4}));
  CheckGradients(ResizeCase({{"size", "(6,2)"}}, {2, 1, 3, 5}));
  CheckGradients(ResizeCase({{"size", "(7)"}, {"mode", "linear"},
                             {"coordinate_transformation_mode", "align_corners"},
                             {"scale", "(2.5)"}},
                            {3, 4}));
}

TEST(ResizeTest, GradientsOfCubic) {
  for (const char* transform :
       {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}) {
    for (const char* exclude : {"false", "true"}) {
      SCOPED_TRACE(std::string(transform) + " exclude_outside " + exclude);
      const Attrs attrs = {{"mode", "cubic"},
                           {"coordinate_transformation_mode", transform},
                           {"exclude_outside", exclude}};
      const auto with = [&](Attrs more) {
        more.insert(attrs.begin(), attrs.end());
        return more;
      };
      CheckGradients(ResizeCase(with({{"size", "(7,9)"}}), {1, 2, 3, 4}));  // up
      CheckGradients(
          ResizeCase(with({{"size", "(3,2)"}, {"cubic_coeff_a", "-0.5"}}), {2, 1, 7, 6}));  // down
      CheckGradients(ResizeCase(with({{"size", "(11)"}, {"cubic_coeff_a", "-1"}}), {3, 2}));
    }
  }
  CheckGradients(ResizeCase({{"size", "(7)"},
                             {"mode", "cubic"},
                             {"scale", "(2.5)"},
                             {"coordinate_transformation_mode", "align_corners"}},
                            {3, 4}));
}

// tf_crop_and_resize: the output spans the roi window of the input; outside it, 0. Against the
// AxisWeights of the asymmetric transform applied to the window's coordinates, by hand: an axis
// of `in` resized to `out` over [start, end] reads coordinate start (in - 1) + x (end - start)
// (in - 1) / (out - 1).
TEST(ResizeTest, CropAndResizeSamplesTheWindow) {
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    SCOPED_TRACE(mode);
    const Attrs attrs = {{"size", "(5,4)"},
                         {"mode", mode},
                         {"coordinate_transformation_mode", "tf_crop_and_resize"},
                         {"roi", "(0.2,-0.4,0.9,1.3)"}};  // starts (0.2, -0.4), ends (0.9, 1.3)
    const std::vector<double> starts = {0.2, -0.4}, ends = {0.9, 1.3};
    const int64_t in[] = {6, 7}, out[] = {5, 4};
    CheckForwardAgainstReference(
        ResizeCase(attrs, {2, 3, 6, 7}),
        [&](const std::vector<std::vector<double>>& inputs, const std::vector<Shape>&) {
          // Per axis, each output's (index, weight) taps, none outside the input.
          std::vector<std::vector<std::vector<std::pair<int64_t, double>>>> taps(2);
          for (int a = 0; a < 2; ++a) {
            for (int64_t x = 0; x < out[a]; ++x) {
              const double c =
                  starts[a] * (in[a] - 1) + x * (ends[a] - starts[a]) * (in[a] - 1) / (out[a] - 1);
              std::vector<std::pair<int64_t, double>> t;
              if (c >= 0 && c <= in[a] - 1) {
                // One output of the asymmetric transform at scale 1 reads coordinate c exactly.
                const int64_t at = static_cast<int64_t>(std::floor(c));
                const double frac = c - at;
                if (std::string(mode) == "nearest") {
                  t = {{static_cast<int64_t>(frac == 0.5 ? at : std::round(c)), 1.0}};
                } else if (std::string(mode) == "linear") {
                  t = {{at, 1 - frac}, {std::min(at + 1, in[a] - 1), frac}};
                } else {
                  const auto keys = [](double d) {
                    d = std::abs(d);
                    const double k = -0.75;
                    if (d <= 1) return (k + 2) * d * d * d - (k + 3) * d * d + 1;
                    if (d < 2) return k * d * d * d - 5 * k * d * d + 8 * k * d - 4 * k;
                    return 0.0;
                  };
                  for (int64_t j = at - 1; j <= at + 2; ++j) {
                    t.push_back({std::clamp<int64_t>(j, 0, in[a] - 1), keys(c - j)});
                  }
                }
              }
              taps[a].push_back(t);
            }
          }
          std::vector<double> y;
          for (int64_t plane = 0; plane < 6; ++plane) {
            for (int64_t i = 0; i < out[0]; ++i) {
              for (int64_t j = 0; j < out[1]; ++j) {
                double sum = 0;
                for (const auto& [r, wr] : taps[0][i]) {
                  for (const auto& [q, wq] : taps[1][j]) {
                    sum += wr * wq * inputs[0][(plane * in[0] + r) * in[1] + q];
                  }
                }
                y.push_back(sum);
              }
            }
          }
          return std::vector<std::vector<double>>{y};
        });
  }
  CheckGradients(ResizeCase({{"size", "(5,4)"},
                             {"mode", "linear"},
                             {"coordinate_transformation_mode", "tf_crop_and_resize"},
                             {"roi", "(0.2,-0.4,0.9,1.3)"}},
                            {1, 2, 6, 7}));
  ExpectShapeError(ResizeCase({{"size", "(5,4)"}, {"roi", "(0,1)"}}, {2, 6, 7}),
                   {"roi has 2 values; the 2 resized axes need 4"});
}

TEST(ResizeTest, GradientsOfAntialiasedFilters) {
  for (const char* mode : {"linear", "cubic"}) {
    for (const char* exclude : {"false", "true"}) {
      SCOPED_TRACE(std::string(mode) + " exclude_outside " + exclude);
      const Attrs attrs = {{"mode", mode}, {"antialias", "true"}, {"exclude_outside", exclude}};
      const auto with = [&](Attrs more) {
        more.insert(attrs.begin(), attrs.end());
        return more;
      };
      CheckGradients(ResizeCase(with({{"size", "(3,2)"}}), {1, 2, 7, 6}));
      CheckGradients(ResizeCase(with({{"size", "(2,7)"}}), {2, 1, 5, 3}));
    }
  }
}

TEST(ResizeTest, ErrorsNameTheNode) {
  ExpectShapeError(ResizeCase({{"size", "(2,3,4,5)"}}, {3, 4, 5}), {"size (2,3,4,5) names 4 axes"});
  ExpectShapeError(ResizeCase({{"size", "(2,-1)"}}, {3, 4, 5}), {"negative extent"});
  ExpectShapeError(ResizeCase({{"size", "(4)"}, {"scale", "(2,x)"}}, {3, 4}),
                   {"scale '(2,x)' is not a tuple of numbers"});
  ExpectShapeError(ResizeCase({{"size", "(4)"}, {"scale", "(0)"}}, {3, 4}), {"must be positive"});
}

MXLITE_GPU_CASES(Resize) {
  return {ResizeCase({{"size", "(7,9)"}, {"mode", "linear"}}, {2, 3, 4, 5}),
          ResizeCase({{"size", "(3,2)"}}, {1, 2, 6, 5}),
          ResizeCase({{"size", "(9)"},
                      {"mode", "linear"},
                      {"coordinate_transformation_mode", "align_corners"}},
                     {2, 3, 4}),
          ResizeCase({{"size", "(9,11)"}, {"mode", "cubic"}}, {2, 3, 4, 5}),
          ResizeCase({{"size", "(4,3)"},
                      {"mode", "cubic"},
                      {"exclude_outside", "true"},
                      {"cubic_coeff_a", "-0.5"}},
                     {1, 2, 9, 7}),
          ResizeCase({{"size", "(13)"},
                      {"mode", "cubic"},
                      {"coordinate_transformation_mode", "align_corners"}},
                     {2, 3, 6}),
          ResizeCase({{"size", "(10,5)"},
                      {"mode", "cubic"},
                      {"exclude_outside", "true"},
                      {"coordinate_transformation_mode", "asymmetric"}},
                     {1, 2, 4, 9}),
          ResizeCase({{"size", "(4,3)"}, {"mode", "linear"}, {"antialias", "true"}}, {2, 3, 9, 7}),
          ResizeCase({{"size", "(5,4)"},
                      {"mode", "nearest"},
                      {"coordinate_transformation_mode", "tf_crop_and_resize"},
                      {"roi", "(0.2,-0.4,0.9,1.3)"}},
                     {2, 3, 6, 7}),
          ResizeCase({{"size", "(3,5)"},
                      {"mode", "cubic"},
                      {"antialias", "true"},
                      {"exclude_outside", "true"}},
                     {1, 2, 10, 16})};
}

}  // namespace
}  // namespace mxlite::testing
