// topk (ops/topk.h): every return type along each axis against a sort of each line (largest and
// smallest, k of 1, some and all, ties ranked by position, NaN first), gradients by finite
// differences, the positions' dtypes, errors naming the node, and GPU cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

using Attrs = std::map<std::string, std::string>;

OpCase TopkCase(Attrs attrs, const Shape& data) { return OpCase{"topk", std::move(attrs), {data}}; }

// Each line's positions in rank order: a stable sort (ties keep their order) with NaN first.
std::vector<int64_t> Ranked(const std::vector<double>& line, bool ascending) {
  std::vector<int64_t> order(line.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const double x = line[a], y = line[b];
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && !std::isnan(y);
    return ascending ? x < y : x > y;
  });
  return order;
}

// The outputs topk should give for `data` of `shape`.
std::vector<std::vector<double>> Expected(const Shape& shape, const std::vector<double>& data,
                                          int axis, int64_t k, bool ascending,
                                          const std::string& ret) {
  const int64_t outer = shape.size(0, axis), extent = shape[axis];
  const int64_t inner = shape.size(axis + 1, shape.ndim());
  std::vector<double> values(outer * k * inner), positions(values.size()), mask(data.size(), 0.0);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<double> line(extent);
      for (int64_t e = 0; e < extent; ++e) line[e] = data[(o * extent + e) * inner + i];
      const std::vector<int64_t> order = Ranked(line, ascending);
      for (int64_t r = 0; r < k; ++r) {
        values[(o * k + r) * inner + i] = line[order[r]];
        positions[(o * k + r) * inner + i] = static_cast<double>(order[r]);
        mask[(o * extent + order[r]) * inner + i] = 1.0;
      }
    }
  }
  if (ret == "value") return {values};
  if (ret == "both") return {values, positions};
  if (ret == "mask") return {mask};
  return {positions};
}

// Outputs equal, NaN matching NaN.
void ExpectSame(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t e = 0; e < want.size(); ++e) {
    if (std::isnan(want[e])) {
      EXPECT_TRUE(std::isnan(got[e])) << e;
    } else {
      EXPECT_EQ(got[e], want[e]) << e;
    }
  }
}

void CheckTopk(const Shape& shape, int axis, int64_t k, bool ascending, const std::string& ret,
               const std::vector<double>& values) {
  const int64_t extent = shape[axis];
  Attrs attrs = {{"axis", std::to_string(axis - shape.ndim())},  // negative: from the end
                 {"k", std::to_string(k)},
                 {"ret_typ", ret},
                 {"is_ascend", ascending ? "true" : "false"},
                 {"dtype", "int64"}};
  SCOPED_TRACE(ret + " axis " + std::to_string(axis) + " k " + std::to_string(k) +
               (ascending ? " ascending" : ""));
  const OpCase c = TopkCase(attrs, shape);
  std::vector<HostTensor> inputs = MakeInputs(c, DType::kFloat64);
  for (int64_t e = 0; e < inputs[0].size(); ++e) inputs[0].Set(e, values[e % values.size()]);
  const OpRun run = RunForward(c, inputs);
  const auto want = Expected(shape, inputs[0].Values(), axis, k < 1 ? extent : k, ascending, ret);
  ASSERT_EQ(run.outputs.size(), want.size());
  for (size_t o = 0; o < want.size(); ++o) ExpectSame(run.outputs[o].Values(), want[o]);
}

TEST(TopkTest, EveryReturnTypeAlongEachAxisMatchesASort) {
  // Distinct values, then ties (small integers), then NaN among them.
  const std::vector<double> distinct = {0.3, -1.2, 2.5, 0.7, -0.1, 1.9, -2.2, 0.05, 1.1, -0.6, 3.3};
  const std::vector<double> ties = {1, 0, 2, 1, 1, 0, 2, 2, 0};
  const std::vector<double> with_nan = {1, NAN, -3, 2, NAN, 0.5, 4, -1};
  for (const std::string ret : {"value", "indices", "both", "mask"}) {
    for (bool ascending : {false, true}) {
      for (const auto* values : {&distinct, &ties, &with_nan}) {
        CheckTopk({7}, 0, 3, ascending, ret, *values);
        CheckTopk({3, 8}, 1, 1, ascending, ret, *values);
        CheckTopk({3, 8}, 0, 2, ascending, ret, *values);
        CheckTopk({2, 5, 3}, 1, 0, ascending, ret, *values);  // k < 1: the whole axis
        CheckTopk({2, 3, 4, 5}, 2, 4, ascending, ret, *values);
        CheckTopk({1, 300}, 1, 37, ascending, ret, *values);  // a long line
      }
    }
  }
}

TEST(TopkTest, Gradients) {
  for (const char* ret : {"value", "both"}) {
    for (const char* ascending : {"false", "true"}) {
      CheckGradients(TopkCase({{"k", "2"}, {"ret_typ", ret}, {"is_ascend", ascending}}, {3, 5}));
      CheckGradients(TopkCase({{"axis", "1"}, {"k", "3"}, {"ret_typ", ret}}, {2, 4, 3}));
    }
  }
  // Positions and masks pass no gradient.
  for (const char* ret : {"indices", "mask"}) {
    const OpCase c = TopkCase({{"k", "2"}, {"ret_typ", ret}}, {3, 4});
    const OpRun run = RunForward(c, MakeInputs(c, DType::kFloat64));
    HostTensor dy(run.outputs[0].shape(), DType::kFloat64);
    for (int64_t e = 0; e < dy.size(); ++e) dy.Set(e, 1.0 + e);
    const std::vector<HostTensor> grads = RunBackward(c, run, {dy});
    for (double g : grads[0].Values()) EXPECT_EQ(g, 0.0) << ret;
  }
}

TEST(TopkTest, PositionsTakeTheRequestedDType) {
  for (const char* dtype : {"float32", "float64", "int32", "int64"}) {
    const OpCase c = TopkCase({{"k", "2"}, {"dtype", dtype}}, {2, 6});
    EXPECT_EQ(RunForward(c, MakeInputs(c, DType::kFloat32)).outputs[0].dtype(), ParseDType(dtype));
  }
}

TEST(TopkTest, ErrorsNameTheNode) {
  ExpectShapeError(TopkCase({{"k", "6"}}, {3, 5}), {"k 6 is more than the 5 elements"});
  ExpectShapeError(TopkCase({{"axis", "2"}}, {3, 5}), {"axis 2 is outside [-2, 2)"});
}

MXLITE_GPU_CASES(Topk) {
  std::vector<OpCase> cases;
  for (const char* ret : {"value", "indices", "both", "mask"}) {
    cases.push_back(TopkCase({{"k", "3"}, {"ret_typ", ret}}, {4, 9}));
    cases.push_back(
        TopkCase({{"axis", "1"}, {"k", "2"}, {"ret_typ", ret}, {"is_ascend", "true"}}, {2, 7, 3}));
  }
  cases.push_back(TopkCase({{"k", "0"}, {"ret_typ", "both"}}, {3, 50}));  // a sort
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
