// LayerNorm (ops/layer_norm.h): forward against a float64 reference along the last, a middle and
// the first axis (groups across inner axes), with the mean and std outputs; gradients of data,
// gamma and beta by finite differences; errors naming the node; GPU cases.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

using Attrs = std::map<std::string, std::string>;

OpCase LayerNormCase(Attrs attrs, const Shape& data) {
  return OpCase{"LayerNorm", std::move(attrs), {data}};
}

// y, mean and std of every group along `axis`, in float64.
ReferenceFn LayerNormReference(int axis, double eps, bool with_stats) {
  return [=](const std::vector<std::vector<double>>& inputs, const std::vector<Shape>& shapes) {
    const Shape& data = shapes[0];
    const int a = axis < 0 ? axis + data.ndim() : axis;
    const int64_t outer = data.size(0, a), channels = data[a];
    const int64_t inner = data.size(a + 1, data.ndim());
    const std::vector<double>& x = inputs[0];
    std::vector<double> y(x.size()), mean(outer * inner), stdev(outer * inner);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const auto at = [&](int64_t c) { return (o * channels + c) * inner + i; };
        double m = 0, var = 0;
        for (int64_t c = 0; c < channels; ++c) m += x[at(c)] / channels;
        for (int64_t c = 0; c < channels; ++c) var += (x[at(c)] - m) * (x[at(c)] - m) / channels;
        const double s = std::sqrt(var + eps);
        for (int64_t c = 0; c < channels; ++c) {
          y[at(c)] = (x[at(c)] - m) / s * inputs[1][c] + inputs[2][c];
        }
        mean[o * inner + i] = m;
        stdev[o * inner + i] = s;
      }
    }
    if (with_stats) return std::vector<std::vector<double>>{y, mean, stdev};
    return std::vector<std::vector<double>>{y};
  };
}

TEST(LayerNormTest, LastAxisMatchesTheReference) {
  // 40 x 768 rows: several blocks of groups over the intra-op threads.
  CheckForwardAgainstReference(LayerNormCase({}, {40, 768}), LayerNormReference(-1, 1e-5, false));
  CheckForwardAgainstReference(LayerNormCase({{"eps", "1e-6"}}, {2, 7, 7, 96}),
                               LayerNormReference(-1, 1e-6, false));
}

TEST(LayerNormTest, InnerAxesAndStatisticsMatchTheReference) {
  CheckForwardAgainstReference(LayerNormCase({{"axis", "1"}, {"output_mean_var", "true"}}, {3, 5, 4, 6}),
                               LayerNormReference(1, 1e-5, true));
  CheckForwardAgainstReference(LayerNormCase({{"axis", "0"}}, {6, 2, 3}),
                               LayerNormReference(0, 1e-5, false));
  EXPECT_EQ(InferOutputShapes(LayerNormCase({{"axis", "-3"}}, {3, 5, 4, 6}))[0], (Shape{3, 5, 4, 6}));
}

TEST(LayerNormTest, GradientsOfDataGammaAndBeta) {
  CheckGradients(LayerNormCase({}, {4, 9}));
  CheckGradients(LayerNormCase({{"axis", "1"}}, {2, 5, 3}));
  CheckGradients(LayerNormCase({{"axis", "1"}, {"output_mean_var", "true"}}, {3, 4}));
}

TEST(LayerNormTest, ErrorsNameTheNode) {
  ExpectShapeError(LayerNormCase({{"axis", "3"}}, {2, 3, 4}), {"axis 3 is out of range", "(2,3,4)"});
}

MXLITE_GPU_CASES(LayerNorm) {
  return {LayerNormCase({}, {6, 96}), LayerNormCase({{"axis", "1"}}, {2, 5, 7}),
          LayerNormCase({}, {3, 1000})};  // a group larger than a block
}

}  // namespace
}  // namespace mxlite::testing
