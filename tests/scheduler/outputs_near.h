// Comparing what two executors computed: every element within `relative` times the largest
// magnitude of the expected values (at least 1e-6), as float results of different algorithms,
// layouts or fusions agree. Fails the calling test at the first element out of bounds, naming it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace mxlite::testing_support {

inline void ExpectValuesNear(const std::vector<float>& expected, const std::vector<float>& actual,
                             double relative, const std::string& what) {
  ASSERT_EQ(expected.size(), actual.size()) << what;
  double scale = 1e-6;
  for (float value : expected) scale = std::max(scale, std::fabs(double{value}));
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], relative * scale) << what << " element " << i;
  }
}

// Per output of a graph.
inline void ExpectOutputsNear(const std::vector<std::vector<float>>& expected,
                              const std::vector<std::vector<float>>& actual, double relative) {
  ASSERT_EQ(expected.size(), actual.size());
  for (size_t o = 0; o < expected.size(); ++o) {
    ExpectValuesNear(expected[o], actual[o], relative, "output " + std::to_string(o));
  }
}

}  // namespace mxlite::testing_support
