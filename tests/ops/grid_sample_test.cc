// grid_sample (ops/grid_sample.h): every mode, padding and align_corners on 1, 2 and 3 spatial
// axes against a direct float64 reference (points inside and outside the borders), PyTorch's
// grid_sample on known values, gradients to the data and the grid by finite differences, errors
// naming the node, and GPU cases.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/ops/op_harness.h"
#include "tests/ops/reference.h"

namespace mxlite::testing {
namespace {

using Attrs = std::map<std::string, std::string>;

std::string AttrOr(const Attrs& attrs, const std::string& name, const std::string& fallback) {
  auto it = attrs.find(name);
  return it == attrs.end() ? fallback : it->second;
}

// Grid coordinates in [-reach, reach]: past the borders where reach > 1.
Initializer GridWithin(double reach) {
  return [reach](HostTensor& tensor, std::mt19937_64& random) {
    std::uniform_real_distribution<double> uniform(-reach, reach);
    for (int64_t i = 0; i < tensor.size(); ++i) tensor.Set(i, uniform(random));
  };
}

OpCase SampleCase(Attrs attrs, const Shape& data, const Shape& grid, double reach = 1.25) {
  OpCase c{"grid_sample", std::move(attrs), {data, grid}};
  c.init["grid"] = GridWithin(reach);
  return c;
}

// Mirrors x into [low, high] one bounce at a time.
double Mirror(double x, double low, double high) {
  if (high <= low) return low;
  while (x < low || x > high) x = x < low ? 2 * low - x : 2 * high - x;
  return x;
}

double KeysCubic(double d) {
  const double a = -0.75;
  d = std::abs(d);
  if (d <= 1) return (a + 2) * d * d * d - (a + 3) * d * d + 1;
  if (d < 2) return a * d * d * d - 5 * a * d * d + 8 * a * d - 4 * a;
  return 0.0;
}

// Per spatial axis, the (index or -1, weight) taps of normalised coordinate g on an axis of n.
std::vector<std::pair<int64_t, double>> AxisTaps(const Attrs& attrs, double g, int64_t n) {
  const std::string mode = AttrOr(attrs, "mode", "linear");
  const std::string padding = AttrOr(attrs, "padding_mode", "zeros");
  const bool aligned = AttrOr(attrs, "align_corners", "false") == "true";
  double c = aligned ? (g + 1) / 2 * (n - 1) : ((g + 1) * n - 1) / 2;
  if (mode == "nearest") c = std::nearbyint(c);
  const double low = aligned ? 0 : -0.5, high = aligned ? n - 1 : n - 0.5;
  if (c < low || c > high) {
    if (padding == "border") c = std::clamp(c, 0.0, double(n - 1));
    if (padding == "reflection") c = Mirror(c, low, high);
  }
  const auto padded = [&](int64_t i) -> int64_t {
    if (i >= 0 && i < n) return i;
    if (padding == "zeros") return -1;
    if (padding == "border") return std::clamp<int64_t>(i, 0, n - 1);
    return std::clamp<int64_t>(static_cast<int64_t>(Mirror(double(i), low, high)), 0, n - 1);
  };
  if (mode == "nearest") return {{padded(static_cast<int64_t>(c)), 1.0}};
  const int64_t below = static_cast<int64_t>(std::floor(c));
  std::vector<std::pair<int64_t, double>> taps;
  if (mode == "linear") {
    for (int64_t i = below; i <= below + 1; ++i) taps.push_back({padded(i), 1 - std::abs(c - i)});
  } else {
    for (int64_t i = below - 1; i <= below + 2; ++i) taps.push_back({padded(i), KeysCubic(c - i)});
  }
  return taps;
}

ReferenceFn SampleReference(const Attrs& attrs) {
  return [attrs](const std::vector<std::vector<double>>& inputs, const std::vector<Shape>& shapes) {
    const Shape& data = shapes[0];
    const Shape& grid = shapes[1];
    const int axes = data.ndim() - 2;
    const int64_t points = grid.size(1, grid.ndim() - 1), plane = data.size(2, data.ndim());
    std::vector<double> out(data[0] * data[1] * points, 0.0);
    for (int64_t n = 0; n < data[0]; ++n) {
      for (int64_t p = 0; p < points; ++p) {
        // The taps of each axis; the grid lists the last axis first.
        std::vector<std::vector<std::pair<int64_t, double>>> taps(axes);
        for (int a = 0; a < axes; ++a) {
          taps[a] =
              AxisTaps(attrs, inputs[1][(n * points + p) * axes + (axes - 1 - a)], data[2 + a]);
        }
        // Every combination of one tap per axis.
        std::vector<size_t> pick(axes, 0);
        while (true) {
          double weight = 1;
          int64_t offset = 0;
          bool zero = false;
          for (int a = 0; a < axes; ++a) {
            const auto& [index, w] = taps[a][pick[a]];
            weight *= w;
            zero = zero || index < 0;
            offset = offset * data[2 + a] + index;
          }
          for (int64_t c = 0; c < data[1] && !zero; ++c) {
            out[(n * data[1] + c) * points + p] +=
                weight * inputs[0][(n * data[1] + c) * plane + offset];
          }
          int a = axes - 1;
          while (a >= 0 && ++pick[a] == taps[a].size()) pick[a--] = 0;
          if (a < 0) break;
        }
      }
    }
    return std::vector<std::vector<double>>{out};
  };
}

TEST(GridSampleTest, EveryModePaddingAndAlignmentMatchesTheReference) {
  for (const char* mode : {"linear", "nearest", "cubic"}) {
    for (const char* padding : {"zeros", "border", "reflection"}) {
      for (const char* aligned : {"false", "true"}) {
        SCOPED_TRACE(std::string(mode) + " " + padding + " align_corners " + aligned);
        const Attrs attrs = {{"mode", mode}, {"padding_mode", padding}, {"align_corners", aligned}};
        const auto check = [&](const Shape& data, const Shape& grid, double reach) {
          CheckForwardAgainstReference(SampleCase(attrs, data, grid, reach),
                                       SampleReference(attrs));
        };
        check({2, 3, 5, 7}, {2, 4, 6, 2}, 1.25);        // 2-D, points inside and outside
        check({2, 3, 5, 7}, {2, 4, 6, 2}, 3.5);         // far outside: several reflections
        check({1, 2, 3, 4, 5}, {1, 2, 3, 4, 3}, 1.25);  // 3-D
        check({2, 3, 6}, {2, 5, 1}, 1.25);              // 1-D
        check({1, 2, 1, 4}, {1, 3, 3, 2}, 1.25);        // an axis of one element
      }
    }
  }
}

// torch.nn.functional.grid_sample of x = arange(1, 13).reshape(1, 1, 3, 4) ** 1.5 at six points
// (PyTorch 1.13, float64; rounded to 12 decimals), two of them outside the borders.
TEST(GridSampleTest, MatchesPyTorch) {
  const std::vector<double> grid = {-0.9, -0.8, 0.3, 0.1, 1.1, -1.2, 0.55, 0.95, -0.2, 0.4, 0, 0};
  const auto run = [&](const Attrs& attrs) {
    OpCase c{"grid_sample", attrs, {{1, 1, 3, 4}, {1, 2, 3, 2}}};
    std::vector<HostTensor> inputs = MakeInputs(c, DType::kFloat64);
    for (int i = 0; i < 12; ++i) inputs[0].Set(i, std::pow(i + 1.0, 1.5));
    for (int i = 0; i < 12; ++i) inputs[1].Set(i, grid[i]);
    return RunForward(c, inputs).outputs[0].Values();
  };
  const struct {
    Attrs attrs;
    std::vector<double> torch;
  } cases[] = {
      {{{"mode", "linear"}},
       {0.56, 21.640054819981, 0.48, 22.732441406269, 25.296979938054, 16.608598817076}},
      {{{"mode", "linear"}, {"padding_mode", "border"}, {"align_corners", "true"}},
       {3.360977189545, 20.120170616203, 8.0, 37.221892872511, 22.314879888561, 16.608598817076}},
      {{{"mode", "linear"}, {"padding_mode", "reflection"}},
       {1.0, 21.640054819981, 8.0, 39.534680706556, 25.296979938054, 16.608598817076}},
      {{{"mode", "nearest"}},
       {1.0, 18.520259177452, 0.0, 41.569219381653, 31.622776601684, 18.520259177452}},
      {{{"mode", "cubic"}, {"align_corners", "true"}},
       {2.961815262072, 20.751583065226, 4.702974910303, 41.445580665183, 25.964156248775,
        16.553233887265}},
      {{{"mode", "nearest"}, {"padding_mode", "reflection"}, {"align_corners", "true"}},
       {1.0, 18.520259177452, 8.0, 36.482872693909, 14.696938456699, 18.520259177452}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(AttrOr(c.attrs, "mode", "linear") + " " +
                 AttrOr(c.attrs, "padding_mode", "zeros"));
    const std::vector<double> got = run(c.attrs);
    for (int i = 0; i < 6; ++i)
      EXPECT_NEAR(got[i], c.torch[i], 1e-10 * std::max(1.0, c.torch[i])) << i;
  }
}

TEST(GridSampleTest, GradientsToDataAndGrid) {
  for (const char* mode : {"linear", "cubic", "nearest"}) {
    for (const char* padding : {"zeros", "border", "reflection"}) {
      for (const char* aligned : {"false", "true"}) {
        SCOPED_TRACE(std::string(mode) + " " + padding + " align_corners " + aligned);
        const Attrs attrs = {{"mode", mode}, {"padding_mode", padding}, {"align_corners", aligned}};
        CheckGradients(SampleCase(attrs, {2, 2, 4, 5}, {2, 3, 2, 2}, 1.3));
        CheckGradients(SampleCase(attrs, {1, 2, 3, 3, 4}, {1, 2, 2, 2, 3}, 1.3));
      }
    }
  }
}

TEST(GridSampleTest, ErrorsNameTheNode) {
  ExpectShapeError(SampleCase({}, {2, 3, 4, 5}, {2, 6, 7, 3}), {"grid has shape (2,6,7,3)"});
  ExpectShapeError(SampleCase({}, {2, 3, 4, 5}, {2, 6, 2}), {"grid has shape (2,6,2)"});
  ExpectShapeError(SampleCase({}, {2, 3, 4, 5}, {3, 6, 7, 2}), {"grid's batch 3 differs"});
  ExpectShapeError(SampleCase({}, {2, 3}, {2, 3}), {"data has shape (2,3)"});
}

MXLITE_GPU_CASES(GridSample) {
  std::vector<OpCase> cases;
  for (const char* mode : {"linear", "nearest", "cubic"}) {
    for (const char* padding : {"zeros", "border", "reflection"}) {
      cases.push_back(
          SampleCase({{"mode", mode}, {"padding_mode", padding}}, {2, 3, 5, 6}, {2, 4, 3, 2}));
    }
  }
  cases.push_back(SampleCase({{"align_corners", "true"}}, {1, 2, 3, 4, 5}, {1, 2, 3, 2, 3}));
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
