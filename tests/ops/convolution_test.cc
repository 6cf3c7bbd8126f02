#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "core/error.h"
#include "ops/cpu/parallel.h"
#include "tests/ops/op_harness.h"
#include "tests/ops/reference.h"

namespace mxlite::testing {
namespace {

// One Convolution case: attributes per axis, and the data shape in the case's layout.
struct ConvSpec {
  std::vector<int64_t> kernel, stride, pad, dilate;  // empty stride/pad/dilate: the defaults
  int64_t num_filter = 4, groups = 1;
  bool no_bias = false;
  std::string layout;  // empty: the default (NCW / NCHW)
  Shape data;

  int rank() const { return static_cast<int>(kernel.size()); }
  bool channels_last() const { return !layout.empty() && layout.back() == 'C'; }
  int64_t Axis(const std::vector<int64_t>& values, int axis, int64_t fallback) const {
    return values.empty() ? fallback : values[axis];
  }

  OpCase Case() const {
    OpCase test_case{"Convolution",
                     {{"kernel", FormatIntTuple(kernel)},
                      {"num_filter", std::to_string(num_filter)},
                      {"num_group", std::to_string(groups)},
                      {"no_bias", no_bias ? "true" : "false"}},
                     {data}};
    if (!stride.empty()) test_case.attrs["stride"] = FormatIntTuple(stride);
    if (!pad.empty()) test_case.attrs["pad"] = FormatIntTuple(pad);
    if (!dilate.empty()) test_case.attrs["dilate"] = FormatIntTuple(dilate);
    if (!layout.empty()) test_case.attrs["layout"] = layout;
    return test_case;
  }
};

// (outer, middle, inner) -> (outer, inner, middle): channels-last to channels-first when middle is
// the spatial size and inner the channels (and back with the roles swapped).
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

// The plain definition, on NCHW data and OIHW weights; 1-D cases have height 1.
std::vector<double> ConvolutionNchw(const ConvSpec& spec, const std::vector<double>& data,
                                    const std::vector<double>& weight,
                                    const std::vector<double>* bias, int64_t n, int64_t c,
                                    int64_t h, int64_t w, int64_t* out_h, int64_t* out_w) {
  const bool two_d = spec.rank() == 2;
  const int64_t kh = two_d ? spec.kernel[0] : 1, kw = spec.kernel.back();
  const int64_t sh = two_d ? spec.Axis(spec.stride, 0, 1) : 1;
  const int64_t sw = spec.Axis(spec.stride, spec.rank() - 1, 1);
  const int64_t ph = two_d ? spec.Axis(spec.pad, 0, 0) : 0;
  const int64_t pw = spec.Axis(spec.pad, spec.rank() - 1, 0);
  const int64_t dh = two_d ? spec.Axis(spec.dilate, 0, 1) : 1;
  const int64_t dw = spec.Axis(spec.dilate, spec.rank() - 1, 1);
  const int64_t oh = (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1;
  const int64_t ow = (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1;
  const int64_t f = spec.num_filter, cg = c / spec.groups, fg = f / spec.groups;
  std::vector<double> out(static_cast<size_t>(n * f * oh * ow));
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t o = 0; o < f; ++o) {
      const int64_t group = o / fg;
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t x = 0; x < ow; ++x) {
          double sum = bias != nullptr ? (*bias)[o] : 0.0;
          for (int64_t ci = 0; ci < cg; ++ci) {
            for (int64_t i = 0; i < kh; ++i) {
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t iy = y * sh - ph + i * dh, ix = x * sw - pw + j * dw;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                const int64_t channel = group * cg + ci;
                sum += data[((b * c + channel) * h + iy) * w + ix] *
                       weight[((o * cg + ci) * kh + i) * kw + j];
              }
            }
          }
          out[((b * f + o) * oh + y) * ow + x] = sum;
        }
      }
    }
  }
  *out_h = oh;
  *out_w = ow;
  return out;
}

// The reference for any layout: channels-last cases are transposed to NCHW, computed, and the
// output transposed back.
ReferenceFn ConvolutionReference(const ConvSpec& spec) {
  return [spec](const std::vector<std::vector<double>>& inputs, const std::vector<Shape>& shapes) {
    const Shape& data = shapes[0];
    const bool last = spec.channels_last();
    const int64_t n = data[0], c = last ? data.dim(-1) : data[1];
    const int64_t h = spec.rank() == 2 ? data[last ? 1 : 2] : 1;
    const int64_t w = last ? data.dim(-2) : data.dim(-1);
    const int64_t kernel_spatial = shapes[1].size() / (shapes[1][0] * (c / spec.groups));
    std::vector<double> x = inputs[0], weight = inputs[1];
    if (last) {
      x = SwapInnerAxes(x, n, h * w, c);
      weight = SwapInnerAxes(weight, spec.num_filter, kernel_spatial, c / spec.groups);
    }
    int64_t oh = 0, ow = 0;
    std::vector<double> out =
        ConvolutionNchw(spec, x, weight, spec.no_bias ? nullptr : &inputs[2], n, c, h, w, &oh, &ow);
    if (last) out = SwapInnerAxes(out, n, spec.num_filter, oh * ow);
    return std::vector<std::vector<double>>{out};
  };
}

void PrintTo(const ConvSpec& spec, std::ostream* out) { *out << spec.Case().Describe(); }

class ConvolutionTest : public ::testing::TestWithParam<ConvSpec> {};

TEST_P(ConvolutionTest, GradientsAndReference) {
  const ConvSpec& spec = GetParam();
  OpCase test_case = spec.Case();
  CheckForwardAgainstReference(test_case, ConvolutionReference(spec));
  CheckGradients(test_case);
}

ConvSpec Spec2d(Shape data, std::vector<int64_t> kernel, int64_t num_filter) {
  ConvSpec spec;
  spec.data = data;
  spec.kernel = std::move(kernel);
  spec.num_filter = num_filter;
  return spec;
}

std::vector<ConvSpec> GradientSpecs() {
  std::vector<ConvSpec> specs;
  ConvSpec spec = Spec2d({2, 3, 5, 5}, {3, 3}, 4);  // plain 3x3, pad 1
  spec.pad = {1, 1};
  specs.push_back(spec);
  spec = Spec2d({3, 2, 7, 6}, {3, 2}, 3);  // odd sizes, uneven kernel and stride, batch 3
  spec.stride = {2, 1};
  spec.pad = {1, 0};
  specs.push_back(spec);
  specs.push_back(Spec2d({1, 6, 5, 7}, {1, 1}, 5));  // 1x1, batch 1
  spec = Spec2d({2, 2, 8, 7}, {3, 3}, 3);            // stride 3, pad 2
  spec.stride = {3, 3};
  spec.pad = {2, 2};
  specs.push_back(spec);
  spec = Spec2d({2, 2, 7, 7}, {3, 3}, 3);  // dilation 2
  spec.dilate = {2, 2};
  spec.pad = {2, 1};
  specs.push_back(spec);
  spec = Spec2d({2, 4, 5, 6}, {3, 3}, 6);  // groups 2, no bias
  spec.groups = 2;
  spec.pad = {1, 1};
  spec.no_bias = true;
  specs.push_back(spec);
  spec = Spec2d({2, 5, 6, 5}, {3, 3}, 5);  // depthwise
  spec.groups = 5;
  spec.stride = {2, 2};
  spec.pad = {1, 1};
  specs.push_back(spec);
  spec = Spec2d({1, 3, 5, 4}, {3, 3}, 6);  // depthwise with channel multiplier 2
  spec.groups = 3;
  spec.pad = {1, 1};
  specs.push_back(spec);
  spec = Spec2d({2, 2, 3, 4}, {2, 2}, 2);  // pad larger than the kernel
  spec.pad = {3, 2};
  specs.push_back(spec);
  spec = Spec2d({2, 3, 4, 5}, {4, 5}, 2);  // kernel covers the whole input: 1x1 output
  specs.push_back(spec);
  spec = Spec2d({3, 1, 1, 1}, {1, 1}, 2);  // 1-element spatial dims
  specs.push_back(spec);
  // 1-D, NCW and NWC.
  ConvSpec one_d;
  one_d.data = {2, 3, 9};
  one_d.kernel = {3};
  one_d.stride = {2};
  one_d.pad = {2};
  one_d.dilate = {2};
  one_d.num_filter = 4;
  specs.push_back(one_d);
  one_d.layout = "NCW";
  one_d.groups = 3;
  one_d.num_filter = 6;
  specs.push_back(one_d);
  one_d.layout = "NWC";
  one_d.data = {3, 9, 3};
  specs.push_back(one_d);
  // NHWC: plain, groups with stride and pad, depthwise, dilation.
  spec = Spec2d({2, 5, 4, 3}, {3, 3}, 4);
  spec.layout = "NHWC";
  spec.pad = {1, 1};
  specs.push_back(spec);
  spec = Spec2d({3, 7, 6, 4}, {3, 2}, 6);
  spec.layout = "NHWC";
  spec.groups = 2;
  spec.stride = {2, 3};
  spec.pad = {2, 1};
  specs.push_back(spec);
  spec = Spec2d({1, 5, 5, 4}, {3, 3}, 4);
  spec.layout = "NHWC";
  spec.groups = 4;
  spec.dilate = {2, 1};
  spec.pad = {1, 1};
  spec.no_bias = true;
  specs.push_back(spec);
  return specs;
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvolutionTest, ::testing::ValuesIn(GradientSpecs()),
                         [](const auto& info) { return "case" + std::to_string(info.index); });

// Shapes too large for finite differences: forward against the reference, with lowerings large
// enough to be split over the intra-op pool.
TEST(ConvolutionLargeTest, ForwardAgainstReference) {
  ConvSpec nchw = Spec2d({3, 16, 20, 18}, {3, 3}, 24);
  nchw.pad = {1, 1};
  nchw.groups = 2;
  CheckForwardAgainstReference(nchw.Case(), ConvolutionReference(nchw));
  ConvSpec nhwc = Spec2d({3, 19, 21, 16}, {3, 3}, 24);
  nhwc.layout = "NHWC";
  nhwc.stride = {2, 2};
  nhwc.pad = {2, 2};
  CheckForwardAgainstReference(nhwc.Case(), ConvolutionReference(nhwc));
  ConvSpec stem = Spec2d({1, 3, 40, 40}, {7, 7}, 8);
  stem.stride = {2, 2};
  stem.pad = {3, 3};
  CheckForwardAgainstReference(stem.Case(), ConvolutionReference(stem));
}

// NHWC on transposed data gives the NCHW results, transposed: forward and every gradient, on a
// batch of 3 (two images in parallel lanes, one with the pool inside) large enough that col2im and
// row2im split their work.
TEST(ConvolutionLayoutTest, NhwcMatchesNchwOnTransposedData) {
  ConvSpec nchw = Spec2d({3, 32, 11, 13}, {3, 3}, 16);
  nchw.groups = 2;
  nchw.stride = {2, 1};
  nchw.pad = {1, 2};
  nchw.dilate = {1, 2};
  ConvSpec nhwc = nchw;
  nhwc.layout = "NHWC";
  nhwc.data = {3, 11, 13, 32};
  const int64_t kernel_spatial = 9, in_per_group = 16;

  std::vector<HostTensor> inputs = MakeInputs(nchw.Case(), DType::kFloat64);
  OpRun first = RunForward(nchw.Case(), inputs);
  std::vector<HostTensor> transposed = MakeInputs(nhwc.Case(), DType::kFloat64);
  auto fill = [](HostTensor& tensor, const std::vector<double>& values) {
    for (int64_t i = 0; i < tensor.size(); ++i) tensor.Set(i, values[i]);
  };
  fill(transposed[0], SwapInnerAxes(inputs[0].Values(), 3, 32, 11 * 13));
  fill(transposed[1], SwapInnerAxes(inputs[1].Values(), 16, in_per_group, kernel_spatial));
  fill(transposed[2], inputs[2].Values());
  OpRun second = RunForward(nhwc.Case(), transposed);

  const Shape out = first.outputs[0].shape();  // (3, 16, OH, OW)
  const int64_t out_spatial = out[2] * out[3];
  const std::vector<double> expected_out =
      SwapInnerAxes(first.outputs[0].Values(), 3, 16, out_spatial);
  const std::vector<double> got_out = second.outputs[0].Values();
  ASSERT_EQ(got_out.size(), expected_out.size());
  for (size_t i = 0; i < got_out.size(); ++i) ASSERT_NEAR(got_out[i], expected_out[i], 1e-10) << i;

  HostTensor grad(out, DType::kFloat64);
  std::mt19937_64 random(3);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (int64_t i = 0; i < grad.size(); ++i) grad.Set(i, uniform(random));
  HostTensor grad_last(second.outputs[0].shape(), DType::kFloat64);
  fill(grad_last, SwapInnerAxes(grad.Values(), 3, 16, out_spatial));
  std::vector<HostTensor> grads_first = RunBackward(nchw.Case(), first, {grad});
  std::vector<HostTensor> grads_second = RunBackward(nhwc.Case(), second, {grad_last});

  const std::vector<std::vector<double>> expected = {
      SwapInnerAxes(grads_first[0].Values(), 3, 32, 11 * 13),
      SwapInnerAxes(grads_first[1].Values(), 16, in_per_group, kernel_spatial),
      grads_first[2].Values()};
  for (int input = 0; input < 3; ++input) {
    const std::vector<double> got = grads_second[input].Values();
    ASSERT_EQ(got.size(), expected[input].size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], expected[input][i], 1e-9) << "gradient of input " << input << " at " << i;
    }
  }
}

// NCHW16c (inference) on reordered data gives the NCHW results reordered: a strided, padded,
// dilated layer of one group and a depthwise one, with bias; the weight stays OIHW. Backward
// refuses the layout by name.
TEST(ConvolutionLayoutTest, BlockedMatchesNchwOnReorderedData) {
  ConvSpec dense = Spec2d({2, 32, 9, 11}, {3, 3}, 48);
  dense.stride = {2, 1};
  dense.pad = {1, 2};
  dense.dilate = {1, 2};
  ConvSpec depthwise = Spec2d({1, 32, 7, 8}, {3, 3}, 32);
  depthwise.groups = 32;
  depthwise.pad = {1, 1};
  for (const ConvSpec& nchw : {dense, depthwise}) {
    ConvSpec blocked = nchw;
    blocked.layout = "NCHW16c";
    const int64_t n = nchw.data[0], c = nchw.data[1], spatial = nchw.data[2] * nchw.data[3];
    blocked.data = {n, c / 16, nchw.data[2], nchw.data[3], 16};
    OpCase first_case = nchw.Case(), second_case = blocked.Case();
    first_case.is_train = second_case.is_train = false;
    std::vector<HostTensor> inputs = MakeInputs(first_case, DType::kFloat64);
    std::vector<HostTensor> reordered = MakeInputs(second_case, DType::kFloat64);
    const std::vector<double> data = MoveToBlocks(inputs[0].Values(), n, c, spatial, true);
    for (int64_t i = 0; i < reordered[0].size(); ++i) reordered[0].Set(i, data[i]);
    ASSERT_EQ(reordered[1].shape(), inputs[1].shape()) << "the weight is OIHW";
    reordered[1] = inputs[1];
    reordered[2] = inputs[2];
    const OpRun first = RunForward(first_case, inputs);
    const OpRun second = RunForward(second_case, reordered);
    const Shape out = first.outputs[0].shape();
    EXPECT_EQ(second.outputs[0].shape(), (Shape{n, out[1] / 16, out[2], out[3], 16}));
    const std::vector<double> expected =
        MoveToBlocks(first.outputs[0].Values(), n, out[1], out[2] * out[3], true);
    const std::vector<double> got = second.outputs[0].Values();
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], expected[i], 1e-10) << i;
    try {
      RunBackward(second_case, second, {second.outputs[0]});
      FAIL() << "an NCHW16c convolution ran backward";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("layout NCHW16c runs forward only"), std::string::npos)
          << e.what();
    }
  }
}

// One thread and two threads (image lanes plus a leftover image) agree, forward and backward.
TEST(ConvolutionThreadsTest, OneAndTwoThreadsAgree) {
  for (const std::string layout : {"NCHW", "NHWC"}) {
    ConvSpec spec = Spec2d(layout == "NCHW" ? Shape{3, 6, 9, 8} : Shape{3, 9, 8, 6}, {3, 3}, 8);
    spec.layout = layout;
    spec.groups = 2;
    spec.pad = {1, 1};
    OpCase test_case = spec.Case();
    std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat64);
    auto run = [&](int threads) {
      cpu::ScopedIntraOpThreads scoped(threads);
      OpRun forward = RunForward(test_case, inputs);
      std::vector<HostTensor> grads = RunBackward(test_case, forward, forward.outputs);
      grads.insert(grads.begin(), forward.outputs[0]);
      return grads;
    };
    const std::vector<HostTensor> one = run(1), two = run(2);
    for (size_t t = 0; t < one.size(); ++t) {
      for (int64_t i = 0; i < one[t].size(); ++i) {
        ASSERT_NEAR(one[t].Get(i), two[t].Get(i), 1e-10) << layout << " tensor " << t << " @" << i;
      }
    }
  }
}

// Gradients nobody wants are not written; the others still are.
TEST(ConvolutionBackwardTest, NullGradientsAreLeftAlone) {
  ConvSpec spec = Spec2d({2, 3, 5, 5}, {3, 3}, 4);
  spec.pad = {1, 1};
  OpCase test_case = spec.Case();
  std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat64);
  OpRun forward = RunForward(test_case, inputs);
  const std::vector<HostTensor> full = RunBackward(test_case, forward, forward.outputs);

  const OpDef& op = OpRegistry::Global().Get("Convolution");
  const Attributes attrs = ParseOpAttributes(op, test_case.attrs, "node0");
  for (int wanted = 0; wanted < 3; ++wanted) {
    std::vector<HostTensor> grads;
    std::vector<TensorView> grad_views, input_views;
    std::vector<WriteMode> req;
    for (int i = 0; i < 3; ++i) {
      grads.emplace_back(inputs[i].shape(), DType::kFloat64);
      for (int64_t k = 0; k < grads[i].size(); ++k) grads[i].Set(k, 12345.0);
      req.push_back(i == wanted ? WriteMode::kWrite : WriteMode::kNull);
    }
    for (int i = 0; i < 3; ++i) {
      grad_views.push_back(grads[i].View());
      input_views.push_back(i < 2 ? forward.inputs[i].View() : TensorView{});
    }
    HostTensor output_grad = forward.outputs[0];
    ScratchSpace scratch(Context::CPU());
    OpContext ctx{Context::CPU(), true, nullptr, &scratch, nullptr, nullptr, "node0"};
    BackwardKernelFor(op, DeviceType::kCPU)(ctx, attrs, {output_grad.View()}, input_views, {},
                                            grad_views, req);
    for (int i = 0; i < 3; ++i) {
      for (int64_t k = 0; k < grads[i].size(); ++k) {
        const double expected = i == wanted ? full[i].Get(k) : 12345.0;
        ASSERT_NEAR(grads[i].Get(k), expected, 1e-10) << "wanted " << wanted << " input " << i;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Shape inference

OpCase Conv(Shape data, std::map<std::string, std::string> attrs) {
  return OpCase{"Convolution", std::move(attrs), {data}};
}

std::vector<Shape> InferredInputs(const OpCase& test_case) {
  std::vector<Shape> shapes;
  for (const HostTensor& input : MakeInputs(test_case, DType::kFloat32)) {
    shapes.push_back(input.shape());
  }
  return shapes;
}

TEST(ConvolutionShapeTest, OutputSizes) {
  EXPECT_EQ(
      InferOutputShapes(Conv(
          {2, 3, 224, 224},
          {{"kernel", "(7,7)"}, {"num_filter", "64"}, {"stride", "(2,2)"}, {"pad", "(3,3)"}}))[0],
      (Shape{2, 64, 112, 112}));
  EXPECT_EQ(
      InferOutputShapes(Conv(
          {1, 8, 7, 9},
          {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"stride", "(3,2)"}, {"dilate", "(2,2)"}}))[0],
      (Shape{1, 4, 1, 3}));
  EXPECT_EQ(InferOutputShapes(
                Conv({5, 10, 4}, {{"kernel", "(3,)"}, {"num_filter", "6"}, {"layout", "NWC"}}))[0],
            (Shape{5, 8, 6}));
  EXPECT_EQ(InferOutputShapes(
                Conv({1, 3, 10}, {{"kernel", "3"}, {"num_filter", "2"}, {"stride", "4"}}))[0],
            (Shape{1, 2, 2}));
  EXPECT_EQ(
      InferOutputShapes(Conv(
          {2, 9, 8, 6},
          {{"kernel", "(3,3)"}, {"num_filter", "12"}, {"layout", "NHWC"}, {"pad", "(1,1)"}}))[0],
      (Shape{2, 9, 8, 12}));
}

TEST(ConvolutionShapeTest, ParametersAreInferred) {
  EXPECT_EQ(InferredInputs(
                Conv({2, 6, 5, 5}, {{"kernel", "(3,1)"}, {"num_filter", "4"}, {"num_group", "2"}})),
            (std::vector<Shape>{{2, 6, 5, 5}, {4, 3, 3, 1}, {4}}));
  EXPECT_EQ(InferredInputs(Conv({2, 5, 5, 6}, {{"kernel", "(3,1)"},
                                               {"num_filter", "4"},
                                               {"num_group", "2"},
                                               {"layout", "NHWC"},
                                               {"no_bias", "true"}})),
            (std::vector<Shape>{{2, 5, 5, 6}, {4, 3, 1, 3}}));
  EXPECT_EQ(InferredInputs(
                Conv({2, 7, 6}, {{"kernel", "(5,)"}, {"num_filter", "7"}, {"num_group", "7"}})),
            (std::vector<Shape>{{2, 7, 6}, {7, 1, 5}, {7}}));
  EXPECT_EQ(
      InferredInputs(Conv({2, 6, 7}, {{"kernel", "(5,)"}, {"num_filter", "3"}, {"layout", "NWC"}})),
      (std::vector<Shape>{{2, 6, 7}, {3, 5, 7}, {3}}));

  const OpDef& op = OpRegistry::Global().Get("Convolution");
  const Attributes attrs = ParseOpAttributes(op, {{"kernel", "(3,3)"}, {"num_filter", "4"}}, "c");
  EXPECT_EQ(InputNames(op, attrs), (std::vector<std::string>{"data", "weight", "bias"}));
  EXPECT_EQ(InputRoles(op, attrs), (std::vector<InputRole>{InputRole::kData, InputRole::kParameter,
                                                           InputRole::kParameter}));
  const BackwardDependencies deps = BackwardDependenciesOf(op, attrs);
  EXPECT_EQ(deps.inputs, (std::vector<bool>{true, true, false}));
  EXPECT_EQ(deps.outputs, (std::vector<bool>{false}));
}

TEST(ConvolutionShapeTest, MismatchedParameterNamesBothShapes) {
  OpCase wrong_weight{
      "Convolution", {{"kernel", "(3,3)"}, {"num_filter", "4"}}, {{2, 3, 5, 5}, {4, 2, 3, 3}}};
  ExpectShapeError(wrong_weight, {"weight", "(4,2,3,3)", "(4,3,3,3)"});
  OpCase wrong_bias{
      "Convolution", {{"kernel", "(3,3)"}, {"num_filter", "4"}}, {{2, 3, 5, 5}, {4, 3, 3, 3}, {5}}};
  ExpectShapeError(wrong_bias, {"bias", "(5)", "(4)"});
}

TEST(ConvolutionShapeTest, InvalidCombinationsAreClearErrors) {
  ExpectShapeError(
      Conv({2, 3, 5, 5}, {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"num_group", "2"}}),
      {"(2,3,5,5)", "3 channels", "num_group=2"});
  ExpectShapeError(
      Conv({2, 4, 5, 5}, {{"kernel", "(3,3)"}, {"num_filter", "3"}, {"num_group", "2"}}),
      {"num_filter=3", "num_group=2"});
  ExpectShapeError(
      Conv({2, 3, 5, 5}, {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"dilate", "(3,1)"}}),
      {"(2,3,5,5)", "kernel (3,3)", "dilated by (3,1)"});
  ExpectShapeError(Conv({2, 3, 5}, {{"kernel", "(3,3)"}, {"num_filter", "4"}}), {"(2,3,5)", "4-D"});
  ExpectShapeError(
      Conv({2, 3, 5, 5}, {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"stride", "(2,2,2)"}}),
      {"stride=(2,2,2)", "3 values"});
  ExpectShapeError(
      Conv({2, 3, 5, 5}, {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"stride", "(0,1)"}}),
      {"stride=(0,1)", ">= 1"});
  ExpectShapeError(
      Conv({2, 3, 5, 5}, {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"pad", "(-1,1)"}}),
      {"pad=(-1,1)", ">= 0"});
  ExpectShapeError(Conv({2, 3, 5}, {{"kernel", "(3,)"}, {"num_filter", "4"}, {"layout", "NHWC"}}),
                   {"layout=NHWC", "NCW or NWC"});
  ExpectShapeError(Conv({2, 3, 5, 5, 5, 5}, {{"kernel", "(3,3,3,3)"}, {"num_filter", "4"}}),
                   {"kernel=(3,3,3,3)", "1-D", "3-D"});
}

TEST(ConvolutionShapeTest, BlockedLayoutShapesAndErrors) {
  const std::map<std::string, std::string> attrs = {
      {"kernel", "(3,3)"}, {"num_filter", "32"}, {"pad", "(1,1)"}, {"layout", "NCHW16c"}};
  EXPECT_EQ(InferOutputShapes(Conv({2, 3, 5, 6, 16}, attrs))[0], (Shape{2, 2, 5, 6, 16}));
  EXPECT_EQ(InferredInputs(Conv({2, 3, 5, 6, 16}, attrs))[1], (Shape{32, 48, 3, 3}));  // OIHW
  ExpectShapeError(Conv({2, 3, 5, 6}, attrs), {"(2,3,5,6)", "NCHW16c", "(N, C/16, H, W, 16)"});
  auto with = [&](const std::string& name, const std::string& value) {
    std::map<std::string, std::string> changed = attrs;
    changed[name] = value;
    return changed;
  };
  ExpectShapeError(Conv({2, 3, 5, 6, 16}, with("num_filter", "24")),
                   {"num_filter=24", "multiple of 16"});
  // Groups of whole blocks (64 channels and 32 filters in 2 groups); 4 groups would leave 8
  // filters per group.
  EXPECT_EQ(InferOutputShapes(Conv({2, 4, 5, 6, 16}, with("num_group", "2")))[0],
            (Shape{2, 2, 5, 6, 16}));
  EXPECT_EQ(InferredInputs(Conv({2, 4, 5, 6, 16}, with("num_group", "2")))[1],
            (Shape{32, 32, 3, 3}));
  ExpectShapeError(Conv({2, 4, 5, 6, 16}, with("num_group", "4")),
                   {"whole blocks of 16", "num_group=4"});
}

TEST(ConvolutionShapeTest, TuningAttributesAreValidated) {
  for (const std::string mode : {"off", "limited_workspace", "fastest"}) {
    EXPECT_EQ(InferOutputShapes(Conv({1, 2, 4, 4}, {{"kernel", "(3,3)"},
                                                    {"num_filter", "2"},
                                                    {"cudnn_tune", mode},
                                                    {"cudnn_off", "1"},
                                                    {"workspace", "256"}}))[0],
              (Shape{1, 2, 2, 2}));
  }
  const OpDef& op = OpRegistry::Global().Get("Convolution");
  const Attributes defaults =
      ParseOpAttributes(op, {{"kernel", "(3,3)"}, {"num_filter", "2"}}, "c");
  EXPECT_EQ(defaults.GetInt("workspace"), 1024);
  EXPECT_FALSE(defaults.Has("cudnn_tune"));  // absent: the setting decides
  EXPECT_FALSE(defaults.GetBool("cudnn_off"));
  EXPECT_FALSE(defaults.Has("layout"));
  auto parse_error = [&](std::map<std::string, std::string> raw) {
    raw["kernel"] = "(3,3)";
    raw["num_filter"] = "2";
    try {
      ParseOpAttributes(op, raw, "conv0");
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(parse_error({{"cudnn_tune", "always"}}).find("off, limited_workspace, fastest"),
            std::string::npos);
  EXPECT_NE(parse_error({{"workspace", "-1"}}).find("workspace"), std::string::npos);
  EXPECT_NE(parse_error({{"layout", "HWCN"}}).find("layout"), std::string::npos);
  EXPECT_NE(parse_error({{"num_group", "0"}}).find("num_group"), std::string::npos);
}

// act_min / act_max (a fused relu / clip): the forward equals the plain convolution clamped, in
// both layouts and element types; an absent bound clamps nothing on its side.
TEST(ConvolutionFusedActivationTest, ForwardIsTheClampedConvolution) {
  for (const std::string layout : {"NCHW", "NHWC"}) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
      ConvSpec spec = Spec2d(layout == "NCHW" ? Shape{2, 5, 7, 6} : Shape{2, 7, 6, 5}, {3, 3}, 6);
      spec.layout = layout;
      spec.pad = {1, 1};
      const OpCase plain = spec.Case();
      const std::vector<HostTensor> inputs = MakeInputs(plain, dtype);
      const std::vector<double> unclamped = RunForward(plain, inputs).outputs[0].Values();
      const std::pair<std::map<std::string, std::string>, std::pair<double, double>> flavours[] = {
          {{{"act_min", "0"}}, {0.0, HUGE_VAL}},
          {{{"act_min", "0"}, {"act_max", "0.5"}}, {0.0, 0.5}},
          {{{"act_max", "-0.25"}}, {-HUGE_VAL, -0.25}}};
      for (const auto& [attrs, bounds] : flavours) {
        OpCase fused = plain;
        fused.attrs.insert(attrs.begin(), attrs.end());
        SCOPED_TRACE(fused.Describe() + " " + DTypeName(dtype));
        const std::vector<double> got = RunForward(fused, inputs).outputs[0].Values();
        ASSERT_EQ(got.size(), unclamped.size());
        int clamped = 0;
        for (size_t i = 0; i < got.size(); ++i) {
          const double expected = std::min(std::max(unclamped[i], bounds.first), bounds.second);
          clamped += expected != unclamped[i];
          ASSERT_NEAR(got[i], expected, dtype == DType::kFloat32 ? 1e-5 : 1e-12) << i;
        }
        EXPECT_GT(clamped, 0);
      }
    }
  }
}

// The fused forward has no gradient (it would need the unclamped output); backward says so, and
// inverted bounds are an error at shape inference, naming the node.
TEST(ConvolutionFusedActivationTest, BackwardAndBadBoundsAreClearErrors) {
  ConvSpec spec = Spec2d({1, 3, 5, 5}, {3, 3}, 4);
  OpCase fused = spec.Case();
  fused.attrs["act_min"] = "0";
  const std::vector<HostTensor> inputs = MakeInputs(fused, DType::kFloat64);
  const OpRun forward = RunForward(fused, inputs);
  try {
    RunBackward(fused, forward, forward.outputs);
    FAIL() << "a fused convolution ran backward";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("inference-only"), std::string::npos) << message;
    EXPECT_NE(message.find("act_min"), std::string::npos) << message;
  }
  OpCase inverted = spec.Case();
  inverted.attrs["act_min"] = "1";
  inverted.attrs["act_max"] = "0.5";
  ExpectShapeError(inverted, {"act_min=1", "act_max=0.5"});
}

MXLITE_GPU_CASES(Convolution) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  // Convolution: groups, stride, pad, dilation, 1-D, NHWC, no bias.
  add({"Convolution", {{"kernel", "(3,3)"}, {"num_filter", "4"}}, {{2, 3, 7, 6}}});
  add({"Convolution",
       {{"kernel", "(3,3)"},
        {"num_filter", "6"},
        {"stride", "(2,2)"},
        {"pad", "(1,1)"},
        {"num_group", "3"}},
       {{2, 3, 9, 8}}});
  add({"Convolution",
       {{"kernel", "(3,2)"},
        {"num_filter", "4"},
        {"dilate", "(2,1)"},
        {"pad", "(2,0)"},
        {"no_bias", "true"}},
       {{1, 2, 8, 7}}});
  add({"Convolution",
       {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"num_group", "4"}},
       {{2, 4, 6, 6}}});
  add({"Convolution", {{"kernel", "(3,)"}, {"num_filter", "5"}, {"stride", "(2,)"}}, {{2, 3, 11}}});
  add({"Convolution",
       {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"layout", "NHWC"}, {"pad", "(1,1)"}},
       {{2, 6, 5, 3}}});
  add({"Convolution",
       {{"kernel", "(1,1)"}, {"num_filter", "8"}, {"layout", "NHWC"}, {"num_group", "2"}},
       {{2, 4, 4, 4}}});
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
