// Convolution over 3-D windows (NCDHW, ops/conv_volume.h): gradients and forward against the plain
// definition, slabs split in chunks inside an image, the fused residual and clamp, and the errors.
#include <gtest/gtest.h>

#include <random>

#include "core/error.h"
#include "core/settings.h"
#include "ops/conv_volume.h"
#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

struct Conv3dSpec {
  std::vector<int64_t> kernel, stride, pad, dilate;  // three values each; empty: the defaults
  int64_t num_filter = 3, groups = 1;
  bool no_bias = false;
  Shape data;

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
    return test_case;
  }
  Shape OutputShape() const {
    std::vector<int64_t> dims = {data[0], num_filter};
    for (int axis = 0; axis < 3; ++axis) {
      const int64_t span = Axis(dilate, axis, 1) * (kernel[axis] - 1) + 1;
      dims.push_back((data[axis + 2] + 2 * Axis(pad, axis, 0) - span) / Axis(stride, axis, 1) + 1);
    }
    return Shape(dims);
  }
};

// The definition: out[n, f, o] = bias[f] + sum over the group's channels and the taps of
// weight[f, c, k] * data[n, c, o * stride - pad + k * dilate], zero outside the data.
std::vector<double> Convolution3d(const Conv3dSpec& spec, const std::vector<double>& data,
                                  const std::vector<double>& weight,
                                  const std::vector<double>* bias) {
  const Shape out = spec.OutputShape();
  const int64_t n = spec.data[0], c = spec.data[1], f = spec.num_filter;
  const int64_t cg = c / spec.groups, fg = f / spec.groups;
  const int64_t in[3] = {spec.data[2], spec.data[3], spec.data[4]};
  const int64_t o[3] = {out[2], out[3], out[4]};
  const int64_t* k = spec.kernel.data();
  std::vector<double> result(static_cast<size_t>(out.size()));
  size_t at = 0;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t filter = 0; filter < f; ++filter) {
      const int64_t group = filter / fg;
      for (int64_t z = 0; z < o[0]; ++z) {
        for (int64_t y = 0; y < o[1]; ++y) {
          for (int64_t x = 0; x < o[2]; ++x) {
            double sum = bias != nullptr ? (*bias)[filter] : 0.0;
            const int64_t at_out[3] = {z, y, x};
            for (int64_t ci = 0; ci < cg; ++ci) {
              for (int64_t kz = 0; kz < k[0]; ++kz) {
                for (int64_t ky = 0; ky < k[1]; ++ky) {
                  for (int64_t kx = 0; kx < k[2]; ++kx) {
                    const int64_t tap[3] = {kz, ky, kx};
                    int64_t pos[3];
                    bool inside = true;
                    for (int axis = 0; axis < 3; ++axis) {
                      pos[axis] = at_out[axis] * spec.Axis(spec.stride, axis, 1) -
                                  spec.Axis(spec.pad, axis, 0) +
                                  tap[axis] * spec.Axis(spec.dilate, axis, 1);
                      inside = inside && pos[axis] >= 0 && pos[axis] < in[axis];
                    }
                    if (!inside) continue;
                    const int64_t channel = group * cg + ci;
                    const double value =
                        data[(((b * c + channel) * in[0] + pos[0]) * in[1] + pos[1]) * in[2] +
                             pos[2]];
                    sum +=
                        value * weight[(((filter * cg + ci) * k[0] + kz) * k[1] + ky) * k[2] + kx];
                  }
                }
              }
            }
            result[at++] = sum;
          }
        }
      }
    }
  }
  return result;
}

ReferenceFn Reference(const Conv3dSpec& spec) {
  return [spec](const std::vector<std::vector<double>>& inputs, const std::vector<Shape>&) {
    return std::vector<std::vector<double>>{
        Convolution3d(spec, inputs[0], inputs[1], spec.no_bias ? nullptr : &inputs[2])};
  };
}

Conv3dSpec Spec(Shape data, std::vector<int64_t> kernel, int64_t num_filter) {
  Conv3dSpec spec;
  spec.data = data;
  spec.kernel = std::move(kernel);
  spec.num_filter = num_filter;
  return spec;
}

class Convolution3dTest : public ::testing::TestWithParam<Conv3dSpec> {};

TEST_P(Convolution3dTest, GradientsAndReference) {
  const Conv3dSpec& spec = GetParam();
  EXPECT_EQ(InferOutputShapes(spec.Case()).at(0), spec.OutputShape());
  CheckForwardAgainstReference(spec.Case(), Reference(spec));
  CheckGradients(spec.Case());
}

std::vector<Conv3dSpec> Specs() {
  std::vector<Conv3dSpec> specs;
  Conv3dSpec spec = Spec({2, 3, 4, 5, 5}, {3, 3, 3}, 4);  // 3x3x3, pad 1 (R3D's blocks)
  spec.pad = {1, 1, 1};
  specs.push_back(spec);
  spec = Spec({1, 2, 5, 9, 8}, {3, 5, 5}, 3);  // a stem: stride (1,2,2), uneven sizes
  spec.stride = {1, 2, 2};
  spec.pad = {1, 2, 2};
  specs.push_back(spec);
  spec = Spec({2, 4, 6, 3, 3}, {3, 1, 1}, 3);  // temporal only (R(2+1)D), stride 2 in depth
  spec.stride = {2, 1, 1};
  spec.pad = {1, 0, 0};
  specs.push_back(spec);
  spec = Spec({2, 3, 3, 6, 5}, {1, 3, 3}, 2);  // spatial only, no bias
  spec.pad = {0, 1, 1};
  spec.no_bias = true;
  specs.push_back(spec);
  spec = Spec({1, 4, 7, 4, 4}, {2, 2, 2}, 6);  // dilation in depth, groups 2
  spec.dilate = {3, 1, 2};
  spec.pad = {2, 1, 1};
  spec.groups = 2;
  specs.push_back(spec);
  spec = Spec({2, 3, 4, 4, 5}, {3, 3, 3}, 3);  // depthwise (MViT's pooling convolutions)
  spec.groups = 3;
  spec.stride = {2, 2, 1};
  spec.pad = {1, 1, 1};
  specs.push_back(spec);
  spec = Spec({2, 2, 2, 3, 3}, {2, 2, 2}, 2);  // pad larger than the kernel: all-zero slabs
  spec.pad = {3, 1, 2};
  specs.push_back(spec);
  spec = Spec({3, 2, 3, 2, 2}, {1, 1, 1}, 3);  // 1x1x1 with stride (R3D's shortcut)
  spec.stride = {2, 2, 2};
  specs.push_back(spec);
  return specs;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Convolution3dTest, ::testing::ValuesIn(Specs()),
                         [](const auto& info) { return "case" + std::to_string(info.index); });

double Dot(const HostTensor& a, const HostTensor& b) {
  double sum = 0;
  for (int64_t i = 0; i < a.size(); ++i) sum += a.Get(i) * b.Get(i);
  return sum;
}

// Data large enough that the slabs run in chunks (3 images of 6 output planes: 18 slabs in two
// chunks of 9, the second starting inside the second image). Forward against the definition;
// backward through the adjoint identities, which hold for any linear map and need no finite
// differences: <dy, conv(x', w)> = <x', dx> and <dy, conv(x, w')> = <w', dw> (no bias). The
// heuristic's algorithms (tuning off: timing problems this large only lengthens the test).
class Convolution3dChunksTest : public ::testing::Test {
 protected:
  void SetUp() override { settings().Set("MXNET_CUDNN_AUTOTUNE_DEFAULT", "0"); }
  void TearDown() override { settings().Reset("MXNET_CUDNN_AUTOTUNE_DEFAULT"); }
};

TEST_F(Convolution3dChunksTest, ChunksInsideAnImageAgreeWithTheDefinition) {
  Conv3dSpec spec = Spec({3, 16, 6, 104, 104}, {3, 3, 3}, 2);
  spec.pad = {1, 1, 1};
  spec.no_bias = true;
  ConvWindow window;
  window.rank = 3;
  window.kernel = {3, 3, 3};
  window.stride = {1, 1, 1};
  window.dilate = {1, 1, 1};
  window.pad = {1, 1, 1};
  window.layout = "NCDHW";
  window.num_filter = 2;
  const VolumeConvGeometry g = VolumeConvolutionGeometry(window, spec.data, "test");
  ASSERT_GT(g.chunks(), 1);
  ASSERT_NE(g.plane.batch % g.out_d, 0) << "a chunk should end inside an image";

  const OpCase test_case = spec.Case();
  std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat64, 7);
  const OpRun run = RunForward(test_case, inputs);
  const std::vector<double> expected =
      Convolution3d(spec, inputs[0].Values(), inputs[1].Values(), nullptr);
  const std::vector<double> actual = run.outputs[0].Values();
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); i += 97) ASSERT_NEAR(actual[i], expected[i], 1e-9) << i;

  std::mt19937_64 random(11);
  const std::vector<HostTensor> dy = RandomOutputGradients(run.outputs, 1, DType::kFloat64, random);
  const std::vector<HostTensor> grads = RunBackward(test_case, run, dy);
  const std::vector<HostTensor> other = MakeInputs(test_case, DType::kFloat64, 13);
  const OpRun moved_data = RunForward(test_case, {other[0], inputs[1]});
  const OpRun moved_weight = RunForward(test_case, {inputs[0], other[1]});
  const double data_side = Dot(dy[0], moved_data.outputs[0]);
  const double weight_side = Dot(dy[0], moved_weight.outputs[0]);
  EXPECT_NEAR(Dot(other[0], grads[0]), data_side, 1e-8 * std::abs(data_side) + 1e-6);
  EXPECT_NEAR(Dot(other[1], grads[1]), weight_side, 1e-8 * std::abs(weight_side) + 1e-6);
}

// The fused residual and clamp (set by the inference fusion passes) give clamp(conv + bias +
// residual), as the separate ops do.
TEST(Convolution3dFusedTest, ResidualAndClampMatchSeparateOps) {
  Conv3dSpec spec = Spec({2, 3, 4, 5, 5}, {3, 3, 3}, 3);
  spec.pad = {1, 1, 1};
  OpCase fused = spec.Case();
  fused.attrs["residual"] = "true";
  fused.attrs["act_min"] = "0";
  fused.attrs["act_max"] = "0.5";
  fused.is_train = false;
  const std::vector<HostTensor> inputs = MakeInputs(fused, DType::kFloat64, 3);
  const OpRun run = RunForward(fused, inputs);
  const std::vector<double> conv =
      Convolution3d(spec, inputs[0].Values(), inputs[1].Values(),
                    &*std::make_unique<std::vector<double>>(inputs[2].Values()));
  const std::vector<double> residual = inputs[3].Values();
  for (size_t i = 0; i < conv.size(); ++i) {
    EXPECT_NEAR(run.outputs[0].Get(static_cast<int64_t>(i)),
                std::clamp(conv[i] + residual[i], 0.0, 0.5), 1e-12);
  }
}

TEST(Convolution3dShapeTest, ErrorsNameTheLayerAndWhatWasExpected) {
  OpCase ndhwc = Spec({1, 4, 4, 4, 2}, {3, 3, 3}, 2).Case();
  ndhwc.attrs["layout"] = "NDHWC";
  ExpectShapeError(ndhwc, {"layout=NDHWC", "NCDHW"});
  ExpectShapeError(Spec({1, 2, 4, 4}, {3, 3, 3}, 2).Case(), {"(1,2,4,4)", "5-D NCDHW"});
  Conv3dSpec groups = Spec({1, 3, 4, 4, 4}, {1, 1, 1}, 2);
  groups.groups = 2;
  ExpectShapeError(groups.Case(), {"num_group=2"});
  Conv3dSpec too_deep = Spec({1, 2, 2, 4, 4}, {3, 3, 3}, 2);
  ExpectShapeError(too_deep.Case(), {"spans more than data"});
  OpCase deconvolution{
      "Deconvolution", {{"kernel", "(2,2,2)"}, {"num_filter", "2"}}, {{1, 2, 3, 3}}};
  ExpectShapeError(deconvolution, {"(1,2,3,3)", "5-D NCDHW"});
}

// Deconvolution over 3-D windows: the adjoint of the 3-D convolution, plus a bias.
struct Deconv3dSpec {
  std::vector<int64_t> kernel, stride, pad, adj;  // three values each (stride, pad, adj optional)
  int64_t num_filter = 3, groups = 1;
  bool no_bias = true;
  Shape data;

  int64_t Axis(const std::vector<int64_t>& values, int axis, int64_t fallback) const {
    return values.empty() ? fallback : values[axis];
  }
  OpCase Case() const {
    OpCase test_case{"Deconvolution",
                     {{"kernel", FormatIntTuple(kernel)},
                      {"num_filter", std::to_string(num_filter)},
                      {"num_group", std::to_string(groups)},
                      {"no_bias", no_bias ? "true" : "false"}},
                     {data}};
    if (!stride.empty()) test_case.attrs["stride"] = FormatIntTuple(stride);
    if (!pad.empty()) test_case.attrs["pad"] = FormatIntTuple(pad);
    if (!adj.empty()) test_case.attrs["adj"] = FormatIntTuple(adj);
    return test_case;
  }
  int64_t OutputExtent(int axis) const {
    return Axis(stride, axis, 1) * (data[axis + 2] - 1) + kernel[axis] - 2 * Axis(pad, axis, 0) +
           Axis(adj, axis, 0);
  }
};

// The definition: every data element spreads weight[c, f, k] * x to output position
// in * stride - pad + k of the group's filters, where that lies inside the output.
std::vector<double> Deconvolution3d(const Deconv3dSpec& spec, const std::vector<double>& data,
                                    const std::vector<double>& weight,
                                    const std::vector<double>* bias) {
  const int64_t n = spec.data[0], c = spec.data[1], f = spec.num_filter;
  const int64_t cg = c / spec.groups, fg = f / spec.groups;
  const int64_t in[3] = {spec.data[2], spec.data[3], spec.data[4]};
  const int64_t out[3] = {spec.OutputExtent(0), spec.OutputExtent(1), spec.OutputExtent(2)};
  const int64_t* k = spec.kernel.data();
  const int64_t out_volume = out[0] * out[1] * out[2];
  std::vector<double> result(static_cast<size_t>(n * f * out_volume), 0.0);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t filter = 0; filter < f && bias != nullptr; ++filter) {
      for (int64_t i = 0; i < out_volume; ++i)
        result[(b * f + filter) * out_volume + i] = (*bias)[filter];
    }
    for (int64_t channel = 0; channel < c; ++channel) {
      const int64_t group = channel / cg;
      for (int64_t z = 0; z < in[0]; ++z) {
        for (int64_t y = 0; y < in[1]; ++y) {
          for (int64_t x = 0; x < in[2]; ++x) {
            const double value = data[(((b * c + channel) * in[0] + z) * in[1] + y) * in[2] + x];
            const int64_t at[3] = {z, y, x};
            for (int64_t fl = 0; fl < fg; ++fl) {
              for (int64_t kz = 0; kz < k[0]; ++kz) {
                for (int64_t ky = 0; ky < k[1]; ++ky) {
                  for (int64_t kx = 0; kx < k[2]; ++kx) {
                    const int64_t tap[3] = {kz, ky, kx};
                    int64_t pos[3];
                    bool inside = true;
                    for (int axis = 0; axis < 3; ++axis) {
                      pos[axis] = at[axis] * spec.Axis(spec.stride, axis, 1) -
                                  spec.Axis(spec.pad, axis, 0) + tap[axis];
                      inside = inside && pos[axis] >= 0 && pos[axis] < out[axis];
                    }
                    if (!inside) continue;
                    const int64_t filter = group * fg + fl;
                    result[(b * f + filter) * out_volume + (pos[0] * out[1] + pos[1]) * out[2] +
                           pos[2]] +=
                        value * weight[(((channel * fg + fl) * k[0] + kz) * k[1] + ky) * k[2] + kx];
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return result;
}

class Deconvolution3dTest : public ::testing::TestWithParam<Deconv3dSpec> {};

TEST_P(Deconvolution3dTest, GradientsAndReference) {
  const Deconv3dSpec& spec = GetParam();
  const Shape out = InferOutputShapes(spec.Case()).at(0);
  EXPECT_EQ(out, Shape({spec.data[0], spec.num_filter, spec.OutputExtent(0), spec.OutputExtent(1),
                        spec.OutputExtent(2)}));
  CheckForwardAgainstReference(spec.Case(), [spec](const std::vector<std::vector<double>>& inputs,
                                                   const std::vector<Shape>&) {
    return std::vector<std::vector<double>>{
        Deconvolution3d(spec, inputs[0], inputs[1], spec.no_bias ? nullptr : &inputs[2])};
  });
  CheckGradients(spec.Case());
}

std::vector<Deconv3dSpec> DeconvSpecs() {
  std::vector<Deconv3dSpec> specs;
  Deconv3dSpec spec;
  spec.data = {2, 3, 3, 4, 3};  // stride 2 everywhere, pad 1, adj 1 in depth, bias
  spec.kernel = {3, 3, 3};
  spec.stride = {2, 2, 2};
  spec.pad = {1, 1, 1};
  spec.adj = {1, 0, 1};
  spec.no_bias = false;
  specs.push_back(spec);
  spec = Deconv3dSpec();  // groups 2, uneven kernel, no padding
  spec.data = {1, 4, 2, 3, 3};
  spec.kernel = {2, 3, 1};
  spec.stride = {1, 2, 1};
  spec.num_filter = 6;
  spec.groups = 2;
  specs.push_back(spec);
  return specs;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Deconvolution3dTest, ::testing::ValuesIn(DeconvSpecs()),
                         [](const auto& info) { return "case" + std::to_string(info.index); });

// On a GPU machine (tests/ops/gpu_vs_cpu_test.cc): cuDNN's N-d convolutions against the slabs.
MXLITE_GPU_CASES(Convolution3d) {
  std::vector<OpCase> cases;
  for (const Conv3dSpec& spec : Specs()) cases.push_back(spec.Case());
  for (const Deconv3dSpec& spec : DeconvSpecs()) cases.push_back(spec.Case());
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
