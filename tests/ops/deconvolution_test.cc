#include <gtest/gtest.h>

#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

struct DeconvSpec {
  Shape data;
  std::vector<int64_t> kernel, stride, pad, dilate, adj, target;  // empty: defaults
  int64_t num_filter = 4, groups = 1;
  bool bias = false;   // MXNet's default is no_bias=true
  std::string layout;  // empty: NCW / NCHW

  int rank() const { return static_cast<int>(kernel.size()); }
  bool channels_last() const { return layout == "NHWC"; }
  int64_t Axis(const std::vector<int64_t>& values, int axis, int64_t fallback) const {
    return values.empty() ? fallback : values[axis];
  }

  OpCase Case() const {
    OpCase test_case{"Deconvolution",
                     {{"kernel", FormatIntTuple(kernel)},
                      {"num_filter", std::to_string(num_filter)},
                      {"num_group", std::to_string(groups)}},
                     {data}};
    if (bias) test_case.attrs["no_bias"] = "false";
    const std::pair<const char*, const std::vector<int64_t>*> tuples[] = {
        {"stride", &stride},
        {"pad", &pad},
        {"dilate", &dilate},
        {"adj", &adj},
        {"target_shape", &target}};
    for (const auto& [name, values] : tuples) {
      if (!values->empty()) test_case.attrs[name] = FormatIntTuple(*values);
    }
    if (!layout.empty()) test_case.attrs["layout"] = layout;
    return test_case;
  }
};

std::vector<double> SwapInnerAxes(const std::vector<double>& values, int64_t outer, int64_t middle,
                                  int64_t inner) {
  std::vector<double> swapped(values.size());
  for (int64_t a = 0; a < outer; ++a) {
    for (int64_t b = 0; b < middle; ++b) {
      for (int64_t c = 0; c < inner; ++c) {
        swapped[(a * inner + c) * middle + b] = values[(a * middle + b) * inner + c];
      }
    }
  }
  return swapped;
}

// Output size and padding of one axis, from the definition (MXNet's for target_shape).
std::pair<int64_t, int64_t> OutputAxis(const DeconvSpec& spec, int axis, int64_t in) {
  const int64_t stride = spec.Axis(spec.stride, axis, 1), dilate = spec.Axis(spec.dilate, axis, 1);
  const int64_t full = stride * (in - 1) + dilate * (spec.kernel[axis] - 1) + 1;
  if (!spec.target.empty()) {
    const int64_t trim = full - spec.target[axis];
    return {spec.target[axis], (trim + 1) / 2};
  }
  const int64_t pad = spec.Axis(spec.pad, axis, 0);
  return {full - 2 * pad + spec.Axis(spec.adj, axis, 0), pad};
}

// Scatters every input element through the kernel: y[ih, iw] += x[oh, ow] * w[i, j] for
// ih = oh * stride - pad + i * dilate (the transpose of convolution), on NCHW / (C, F/G, KH, KW).
ReferenceFn DeconvolutionReference(const DeconvSpec& spec) {
  return [spec](const std::vector<std::vector<double>>& inputs, const std::vector<Shape>& shapes) {
    const bool last = spec.channels_last(), two_d = spec.rank() == 2;
    const Shape& data = shapes[0];
    const int64_t n = data[0], c = last ? data.dim(-1) : data[1];
    const int64_t h = two_d ? data[last ? 1 : 2] : 1, w = last ? data.dim(-2) : data.dim(-1);
    const int64_t kh = two_d ? spec.kernel[0] : 1, kw = spec.kernel.back();
    const int64_t f = spec.num_filter, cg = c / spec.groups, fg = f / spec.groups;
    const auto [out_w, pad_w] = OutputAxis(spec, spec.rank() - 1, w);
    const auto [out_h, pad_h] = two_d ? OutputAxis(spec, 0, h) : std::pair<int64_t, int64_t>{1, 0};
    const int64_t sh = two_d ? spec.Axis(spec.stride, 0, 1) : 1;
    const int64_t sw = spec.Axis(spec.stride, spec.rank() - 1, 1);
    const int64_t dh = two_d ? spec.Axis(spec.dilate, 0, 1) : 1;
    const int64_t dw = spec.Axis(spec.dilate, spec.rank() - 1, 1);
    std::vector<double> x = inputs[0], weight = inputs[1];
    if (last) {
      x = SwapInnerAxes(x, n, h * w, c);
      weight = SwapInnerAxes(weight, c, kh * kw, fg);
    }
    std::vector<double> y(static_cast<size_t>(n * f * out_h * out_w), 0.0);
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t ci = 0; ci < c; ++ci) {
        const int64_t group = ci / cg;
        for (int64_t oy = 0; oy < h; ++oy) {
          for (int64_t ox = 0; ox < w; ++ox) {
            const double value = x[((b * c + ci) * h + oy) * w + ox];
            for (int64_t fo = 0; fo < fg; ++fo) {
              for (int64_t i = 0; i < kh; ++i) {
                for (int64_t j = 0; j < kw; ++j) {
                  const int64_t iy = oy * sh - pad_h + i * dh, ix = ox * sw - pad_w + j * dw;
                  if (iy < 0 || iy >= out_h || ix < 0 || ix >= out_w) continue;
                  const int64_t channel = group * fg + fo;
                  y[((b * f + channel) * out_h + iy) * out_w + ix] +=
                      value * weight[((ci * fg + fo) * kh + i) * kw + j];
                }
              }
            }
          }
        }
      }
    }
    if (spec.bias) {
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t o = 0; o < f; ++o) {
          for (int64_t p = 0; p < out_h * out_w; ++p) {
            y[(b * f + o) * out_h * out_w + p] += inputs[2][o];
          }
        }
      }
    }
    if (last) y = SwapInnerAxes(y, n, f, out_h * out_w);
    return std::vector<std::vector<double>>{y};
  };
}

void PrintTo(const DeconvSpec& spec, std::ostream* out) { *out << spec.Case().Describe(); }

class DeconvolutionTest : public ::testing::TestWithParam<DeconvSpec> {};

TEST_P(DeconvolutionTest, GradientsAndReference) {
  const DeconvSpec& spec = GetParam();
  CheckForwardAgainstReference(spec.Case(), DeconvolutionReference(spec));
  CheckGradients(spec.Case());
}

std::vector<DeconvSpec> Specs() {
  std::vector<DeconvSpec> specs;
  DeconvSpec spec;
  spec.data = {2, 3, 4, 5};  // stride 2, pad 1, adj, bias
  spec.kernel = {3, 3};
  spec.stride = {2, 2};
  spec.pad = {1, 1};
  spec.adj = {1, 0};
  spec.bias = true;
  specs.push_back(spec);
  spec = DeconvSpec{};
  spec.data = {3, 4, 3, 3};  // groups 2, dilation, uneven kernel, default no_bias
  spec.kernel = {2, 3};
  spec.stride = {1, 2};
  spec.dilate = {2, 1};
  spec.groups = 2;
  spec.num_filter = 6;
  specs.push_back(spec);
  spec = DeconvSpec{};
  spec.data = {1, 2, 4, 3};  // target_shape (pad and adj derived), batch 1
  spec.kernel = {3, 3};
  spec.stride = {2, 2};
  spec.target = {8, 6};
  spec.num_filter = 3;
  spec.bias = true;
  specs.push_back(spec);
  spec = DeconvSpec{};
  spec.data = {2, 3, 5};  // 1-D
  spec.kernel = {4};
  spec.stride = {3};
  spec.pad = {1};
  spec.bias = true;
  specs.push_back(spec);
  spec = DeconvSpec{};
  spec.data = {2, 4, 4, 4};  // depthwise
  spec.kernel = {3, 3};
  spec.stride = {2, 2};
  spec.pad = {2, 1};
  spec.groups = 4;
  spec.num_filter = 4;
  specs.push_back(spec);
  spec = DeconvSpec{};
  spec.data = {2, 3, 4, 3};  // adj allowed by the dilation (stride 1)
  spec.kernel = {3, 2};
  spec.dilate = {2, 2};
  spec.adj = {1, 1};
  spec.pad = {1, 0};
  spec.num_filter = 2;
  specs.push_back(spec);
  spec = DeconvSpec{};
  spec.data = {3, 4, 5, 4};  // NHWC with groups
  spec.layout = "NHWC";
  spec.kernel = {3, 3};
  spec.stride = {2, 1};
  spec.pad = {1, 1};
  spec.groups = 2;
  spec.num_filter = 6;
  spec.bias = true;
  specs.push_back(spec);
  return specs;
}

INSTANTIATE_TEST_SUITE_P(Shapes, DeconvolutionTest, ::testing::ValuesIn(Specs()),
                         [](const auto& info) { return "case" + std::to_string(info.index); });

OpCase Deconv(Shape data, std::map<std::string, std::string> attrs) {
  return OpCase{"Deconvolution", std::move(attrs), {data}};
}

TEST(DeconvolutionShapeTest, OutputAndParameterShapes) {
  OpCase upsample = Deconv({2, 8, 7, 7}, {{"kernel", "(4,4)"},
                                          {"num_filter", "3"},
                                          {"stride", "(2,2)"},
                                          {"pad", "(1,1)"},
                                          {"no_bias", "false"}});
  EXPECT_EQ(InferOutputShapes(upsample)[0], (Shape{2, 3, 14, 14}));
  std::vector<HostTensor> inputs = MakeInputs(upsample, DType::kFloat32);
  ASSERT_EQ(inputs.size(), 3u);
  EXPECT_EQ(inputs[1].shape(), (Shape{8, 3, 4, 4}));
  EXPECT_EQ(inputs[2].shape(), (Shape{3}));
  OpCase grouped =
      Deconv({1, 6, 3, 3}, {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"num_group", "2"}});
  EXPECT_EQ(MakeInputs(grouped, DType::kFloat32).size(), 2u);  // no_bias defaults to true
  EXPECT_EQ(MakeInputs(grouped, DType::kFloat32)[1].shape(), (Shape{6, 2, 3, 3}));
  EXPECT_EQ(InferOutputShapes(Deconv({1, 2, 5}, {{"kernel", "(3,)"},
                                                 {"num_filter", "2"},
                                                 {"stride", "(2,)"},
                                                 {"target_shape", "(10,)"}}))[0],
            (Shape{1, 2, 10}));
  // target_shape of zeros is MXNet's "not set".
  EXPECT_EQ(
      InferOutputShapes(Deconv(
          {1, 2, 5, 5}, {{"kernel", "(3,3)"}, {"num_filter", "2"}, {"target_shape", "(0,0)"}}))[0],
      (Shape{1, 2, 7, 7}));
  const OpDef& op = OpRegistry::Global().Get("Deconvolution");
  const Attributes defaults =
      ParseOpAttributes(op, {{"kernel", "(3,3)"}, {"num_filter", "2"}}, "d");
  EXPECT_EQ(defaults.GetInt("workspace"), 512);
  EXPECT_TRUE(defaults.GetBool("no_bias"));
  EXPECT_FALSE(defaults.Has("cudnn_tune"));
}

TEST(DeconvolutionShapeTest, InvalidCombinationsAreClearErrors) {
  OpCase wrong_weight{
      "Deconvolution", {{"kernel", "(3,3)"}, {"num_filter", "4"}}, {{2, 3, 5, 5}, {4, 3, 3, 3}}};
  ExpectShapeError(wrong_weight, {"weight", "(4,3,3,3)", "(3,4,3,3)"});
  ExpectShapeError(
      Deconv({2, 3, 5, 5}, {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"num_group", "2"}}),
      {"(2,3,5,5)", "num_group=2"});
  ExpectShapeError(
      Deconv({2, 4, 5, 5}, {{"kernel", "(3,3)"}, {"num_filter", "3"}, {"num_group", "2"}}),
      {"num_filter=3", "num_group=2"});
  ExpectShapeError(
      Deconv({1, 2, 5, 5}, {{"kernel", "(3,3)"}, {"num_filter", "2"}, {"target_shape", "(20,20)"}}),
      {"target_shape=(20,20)", "at most 7"});
  ExpectShapeError(
      Deconv({1, 2, 5, 5},
             {{"kernel", "(3,3)"}, {"num_filter", "2"}, {"stride", "(2,2)"}, {"adj", "(2,0)"}}),
      {"adj=(2,0)", "smaller than the stride"});
  ExpectShapeError(
      Deconv({1, 2, 2, 2}, {{"kernel", "(1,1)"}, {"num_filter", "2"}, {"pad", "(1,1)"}}),
      {"pad=(1,1)", "no output"});
  ExpectShapeError(Deconv({1, 2, 5}, {{"kernel", "(3,)"}, {"num_filter", "2"}, {"layout", "NCHW"}}),
                   {"layout=NCHW"});
}

MXLITE_GPU_CASES(Deconvolution) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  // Deconvolution: stride, pad, adj, target_shape, groups, bias.
  add({"Deconvolution", {{"kernel", "(3,3)"}, {"num_filter", "4"}}, {{2, 3, 5, 4}}});
  add({"Deconvolution",
       {{"kernel", "(4,4)"},
        {"num_filter", "4"},
        {"stride", "(2,2)"},
        {"pad", "(1,1)"},
        {"no_bias", "false"}},
       {{2, 3, 4, 5}}});
  add({"Deconvolution",
       {{"kernel", "(3,3)"},
        {"num_filter", "6"},
        {"stride", "(2,2)"},
        {"adj", "(1,1)"},
        {"num_group", "2"}},
       {{1, 4, 4, 4}}});
  add({"Deconvolution",
       {{"kernel", "(3,3)"}, {"num_filter", "2"}, {"stride", "(2,2)"}, {"target_shape", "(8,8)"}},
       {{1, 3, 4, 4}}});
  add({"Deconvolution",
       {{"kernel", "(3,)"}, {"num_filter", "3"}, {"stride", "(2,)"}},
       {{2, 2, 6}}});
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
