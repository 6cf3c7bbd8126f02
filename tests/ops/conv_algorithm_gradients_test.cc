// Finite-difference gradient checks of every CPU convolution algorithm on its own (float64): for
// L = <forward(data, weight), head>, each algorithm's backward_data and backward_filter must equal
// dL/d data and dL/d weight. The forward differentiated is the algorithm's own when it has one for
// the shape (so forward and backward are checked as adjoints), else the lowering GEMM of the same
// layout. Agreement with im2col is tested separately (conv_algorithms_test.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ops/cpu/conv_algorithms.h"

namespace mxlite::cpu {
namespace {

struct GradientCase {
  const char* name;
  int64_t batch, in_channels, out_channels, groups, size_h, size_w, kernel, stride, pad, dilate;

  ConvGeometry Geometry(ConvLayout layout) const {
    ConvGeometry g;
    g.batch = batch;
    g.in_channels = in_channels;
    g.out_channels = out_channels;
    g.groups = groups;
    g.in_h = size_h;
    g.in_w = size_w;
    g.kernel_h = g.kernel_w = kernel;
    g.stride_h = g.stride_w = stride;
    g.pad_h = g.pad_w = pad;
    g.dilate_h = g.dilate_w = dilate;
    g.out_h = (size_h + 2 * pad - dilate * (kernel - 1) - 1) / stride + 1;
    g.out_w = (size_w + 2 * pad - dilate * (kernel - 1) - 1) / stride + 1;
    g.layout = layout;
    return g;
  }
};

// Odd sizes (partial Winograd tiles), padding up to 2, groups, 1x1, depthwise with stride and
// dilation.
const GradientCase kCases[] = {
    {"3x3_p1_groups2_batch2", 2, 4, 6, 2, 5, 7, 3, 1, 1, 1},
    {"3x3_p2", 1, 3, 2, 1, 6, 5, 3, 1, 2, 1},
    {"3x3_p0", 1, 2, 3, 1, 7, 6, 3, 1, 0, 1},
    {"1x1_batch2", 2, 5, 3, 1, 4, 3, 1, 1, 0, 1},
    {"depthwise_3x3_s2_d2", 1, 3, 6, 3, 9, 8, 3, 2, 1, 2},
    {"depthwise_3x3_p1", 2, 4, 4, 4, 5, 6, 3, 1, 1, 1},
};

std::vector<double> Random(int64_t count, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> values(static_cast<size_t>(count));
  for (double& value : values) value = uniform(random);
  return values;
}

// The forward to differentiate: the algorithm's own, else the lowering of its layout.
const ConvAlgorithm& ForwardFor(const ConvAlgorithm& algorithm, const ConvGeometry& g) {
  if (algorithm.Supports(g, ConvDirection::kForward)) return algorithm;
  const char* lowering = g.channels_last() ? "im2row_gemm" : "im2col_gemm";
  return *FindCpuConvAlgorithm(lowering, algorithm.layout());
}

double Loss(const ConvAlgorithm& forward, const ConvGeometry& g, const std::vector<double>& data,
            const std::vector<double>& weight, const std::vector<double>& head) {
  std::vector<double> output(head.size());
  ConvTensors<double> tensors;
  tensors.data = data.data();
  tensors.weight = weight.data();
  tensors.output = output.data();
  ScratchSpace scratch(Context::CPU());
  forward.Run(ConvDirection::kForward, g, tensors, scratch);
  double loss = 0;
  for (size_t i = 0; i < head.size(); ++i) loss += output[i] * head[i];
  return loss;
}

// Central differences of Loss in `values` (data or weight) at up to 24 spread-out positions,
// compared with `analytic`.
void CheckAgainstFiniteDifferences(const ConvAlgorithm& forward, const ConvGeometry& g,
                                   std::vector<double>& data, std::vector<double>& weight,
                                   const std::vector<double>& head, std::vector<double>& values,
                                   const std::vector<double>& analytic, const char* what) {
  const double step = 1e-5;
  const size_t stride = std::max<size_t>(1, values.size() / 24);
  for (size_t i = 0; i < values.size(); i += stride) {
    const double saved = values[i];
    values[i] = saved + step;
    const double up = Loss(forward, g, data, weight, head);
    values[i] = saved - step;
    const double down = Loss(forward, g, data, weight, head);
    values[i] = saved;
    const double numeric = (up - down) / (2 * step);
    EXPECT_NEAR(analytic[i], numeric, 1e-6 * (1 + std::fabs(numeric))) << what << " index " << i;
  }
}

TEST(ConvAlgorithmGradients, EveryBackwardMatchesFiniteDifferences) {
  int checked = 0;
  for (const ConvAlgorithm* algorithm : CpuConvAlgorithms()) {
    if (!algorithm->HasDirection(ConvDirection::kBackwardData) &&
        !algorithm->HasDirection(ConvDirection::kBackwardFilter)) {
      continue;  // forward only (direct_nchw, direct_nhwc, NCHW16c's)
    }
    for (const GradientCase& c : kCases) {
      const ConvGeometry g = c.Geometry(algorithm->layout());
      std::vector<double> data = Random(g.batch * g.in_channels * g.in_spatial(), 1);
      std::vector<double> weight = Random(g.out_channels * g.patch_size(), 2);
      const std::vector<double> head = Random(g.batch * g.out_channels * g.out_spatial(), 3);
      const ConvAlgorithm& forward = ForwardFor(*algorithm, g);
      SCOPED_TRACE(std::string(algorithm->name()) + " " +
                   ActivationLayoutName(algorithm->layout()) + " " + c.name +
                   " (forward: " + std::string(forward.name()) + ")");
      ScratchSpace scratch(Context::CPU());
      if (algorithm->Supports(g, ConvDirection::kBackwardData)) {
        std::vector<double> data_grad(data.size(), 1e6);
        ConvTensors<double> tensors;
        tensors.output_grad = head.data();
        tensors.weight = weight.data();
        tensors.data_grad = data_grad.data();
        algorithm->Run(ConvDirection::kBackwardData, g, tensors, scratch);
        CheckAgainstFiniteDifferences(forward, g, data, weight, head, data, data_grad, "data");
        ++checked;
      }
      if (algorithm->Supports(g, ConvDirection::kBackwardFilter)) {
        std::vector<double> weight_grad(weight.size(), 1e6);
        ConvTensors<double> tensors;
        tensors.data = data.data();
        tensors.output_grad = head.data();
        tensors.weight_grad = weight_grad.data();
        algorithm->Run(ConvDirection::kBackwardFilter, g, tensors, scratch);
        CheckAgainstFiniteDifferences(forward, g, data, weight, head, weight, weight_grad,
                                      "weight");
        ++checked;
      }
    }
  }
  // Every algorithm has at least one backward direction on some case.
  EXPECT_GE(checked, static_cast<int>(CpuConvAlgorithms().size()));
}

}  // namespace
}  // namespace mxlite::cpu
