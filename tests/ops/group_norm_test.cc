// GroupNorm (ops/group_norm.h): forward against a float64 reference (one group, several, one
// channel per group; 2-D to 5-D data; the mean and std outputs), data with a large mean, gradients
// of data, gamma and beta by finite differences, errors naming the node, and GPU cases.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

using Attrs = std::map<std::string, std::string>;

OpCase GroupNormCase(Attrs attrs, const Shape& data) {
  return OpCase{"GroupNorm", std::move(attrs), {data}};
}

// y, mean and std of every (image, group), in float64.
ReferenceFn GroupNormReference(int64_t groups, double eps, bool with_stats) {
  return [=](const std::vector<std::vector<double>>& inputs, const std::vector<Shape>& shapes) {
    const Shape& data = shapes[0];
    const int64_t n = data[0], c = data[1], spatial = data.size(2, data.ndim());
    const int64_t per = c / groups;
    const std::vector<double>& x = inputs[0];
    std::vector<double> y(x.size()), mean(n * groups), stdev(n * groups);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t g = 0; g < groups; ++g) {
        double m = 0, var = 0;
        const int64_t count = per * spatial;
        const auto at = [&](int64_t k, int64_t s) { return ((i * c) + g * per + k) * spatial + s; };
        for (int64_t k = 0; k < per; ++k)
          for (int64_t s = 0; s < spatial; ++s) m += x[at(k, s)] / count;
        for (int64_t k = 0; k < per; ++k)
          for (int64_t s = 0; s < spatial; ++s)
            var += (x[at(k, s)] - m) * (x[at(k, s)] - m) / count;
        const double sd = std::sqrt(var + eps);
        for (int64_t k = 0; k < per; ++k) {
          for (int64_t s = 0; s < spatial; ++s) {
            y[at(k, s)] = (x[at(k, s)] - m) / sd * inputs[1][g * per + k] + inputs[2][g * per + k];
          }
        }
        mean[i * groups + g] = m;
        stdev[i * groups + g] = sd;
      }
    }
    if (with_stats) return std::vector<std::vector<double>>{y, mean, stdev};
    return std::vector<std::vector<double>>{y};
  };
}

TEST(GroupNormTest, MatchesTheReference) {
  CheckForwardAgainstReference(GroupNormCase({{"num_groups", "4"}}, {2, 8, 5, 6}),
                               GroupNormReference(4, 1e-5, false));
  CheckForwardAgainstReference(GroupNormCase({}, {3, 6, 7}), GroupNormReference(1, 1e-5, false));
  CheckForwardAgainstReference(
      GroupNormCase({{"num_groups", "6"}, {"eps", "1e-3"}}, {2, 6, 2, 3, 4}),
      GroupNormReference(6, 1e-3, false));  // a channel per group
  CheckForwardAgainstReference(
      GroupNormCase({{"num_groups", "2"}, {"output_mean_var", "true"}}, {3, 4}),
      GroupNormReference(2, 1e-5, true));
  CheckForwardAgainstReference(GroupNormCase({{"num_groups", "32"}}, {1, 64, 28, 28}),
                               GroupNormReference(32, 1e-5, false));  // rows over the threads
  EXPECT_EQ(InferOutputShapes(
                GroupNormCase({{"num_groups", "2"}, {"output_mean_var", "true"}}, {3, 4, 5}))[1],
            (Shape{3, 2}));
}

// Data far from zero with a small spread (1000 + k / 64, exact in float32): normalised as
// (x - mean) / std in double, float32 keeps 1e-4 (x / std - mean / std would lose 4e-4).
TEST(GroupNormTest, DataWithALargeMean) {
  OpCase c = GroupNormCase({{"num_groups", "2"}}, {2, 4, 8});
  c.init["data"] = [](HostTensor& t, std::mt19937_64& random) {
    for (int64_t i = 0; i < t.size(); ++i) {
      t.Set(i, 1000.0 + static_cast<double>(static_cast<int64_t>(random() % 17) - 8) / 64);
    }
  };
  CheckForwardAgainstReference(c, GroupNormReference(2, 1e-5, false));
}

TEST(GroupNormTest, GradientsOfDataGammaAndBeta) {
  CheckGradients(GroupNormCase({{"num_groups", "2"}}, {2, 4, 3, 2}));
  CheckGradients(GroupNormCase({}, {3, 5}));
  CheckGradients(GroupNormCase({{"num_groups", "3"}, {"output_mean_var", "true"}}, {2, 6, 4}));
}

TEST(GroupNormTest, ErrorsNameTheNode) {
  ExpectShapeError(GroupNormCase({{"num_groups", "3"}}, {2, 8, 4}),
                   {"num_groups 3 does not divide the 8 channels"});
  ExpectShapeError(GroupNormCase({}, {5}), {"(N, C, ...)"});
}

MXLITE_GPU_CASES(GroupNorm) {
  return {GroupNormCase({{"num_groups", "4"}}, {2, 8, 5, 6}), GroupNormCase({}, {3, 6, 7}),
          GroupNormCase({{"num_groups", "2"}}, {2, 4, 30, 30})};  // a row larger than a block
}

}  // namespace
}  // namespace mxlite::testing
