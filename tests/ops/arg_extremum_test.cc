// argmax and argmin (ops/arg_extremum.h) against a plain search: every axis, keepdims, the
// flattened data, ties and NaN; shape errors; a zero gradient.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/ops/op_harness.h"
#include "tests/ops/reference.h"

namespace mxlite::testing {
namespace {

// Values that tie often: -1, 0, 1, 2 (NaN too when `with_nan`).
Initializer FewValues(bool with_nan) {
  return [with_nan](HostTensor& tensor, std::mt19937_64& random) {
    for (int64_t i = 0; i < tensor.size(); ++i) {
      const uint64_t pick = random() % (with_nan ? 9 : 4);
      tensor.Set(i, pick >= 4 && pick < 8 ? static_cast<double>(pick % 4) - 1
                    : pick == 8          ? std::nan("")
                                         : static_cast<double>(pick) - 1);
    }
  };
}

// The first index of the largest (smallest) value along `axis` (-1: flattened), NaN first.
std::vector<double> Expected(const HostTensor& x, int axis, bool largest) {
  const Shape& shape = x.shape();
  const int64_t outer = axis < 0 ? 1 : shape.size(0, axis);
  const int64_t extent = axis < 0 ? shape.size() : shape[axis];
  const int64_t inner = axis < 0 ? 1 : shape.size(axis + 1, shape.ndim());
  std::vector<double> result;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      for (int64_t k = 1; k < extent; ++k) {
        const double value = x.Get((o * extent + k) * inner + i);
        const double best_value = x.Get((o * extent + best) * inner + i);
        if (std::isnan(best_value)) break;
        if (std::isnan(value) || (largest ? value > best_value : value < best_value)) best = k;
      }
      result.push_back(static_cast<double>(best));
    }
  }
  return result;
}

TEST(ArgExtremumTest, FirstIndexOfTheExtremeAlongEachAxis) {
  const Shape shape{3, 4, 5};
  for (const std::string op : {"argmax", "argmin"}) {
    for (int axis = -1; axis < 3; ++axis) {
      for (bool keepdims : {false, true}) {
        for (bool with_nan : {false, true}) {
          OpCase test_case{op, {{"keepdims", keepdims ? "true" : "false"}}, {shape}};
          if (axis >= 0) test_case.attrs["axis"] = std::to_string(axis - 3);  // negative form
          test_case.init["data"] = FewValues(with_nan);
          for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
            const std::vector<HostTensor> inputs = MakeInputs(test_case, dtype, 7 + axis);
            const OpRun run = RunForward(test_case, inputs);
            std::vector<int64_t> dims;
            for (int d = 0; d < 3; ++d) {
              if (axis < 0 || d == axis) {
                if (keepdims) dims.push_back(1);
              } else {
                dims.push_back(shape[d]);
              }
            }
            ASSERT_EQ(run.outputs[0].shape(), Shape(dims)) << test_case.Describe();
            const std::vector<double> want = Expected(inputs[0], axis, op == "argmax");
            for (int64_t i = 0; i < run.outputs[0].size(); ++i) {
              EXPECT_EQ(run.outputs[0].Get(i), want[i]) << test_case.Describe() << " element " << i;
            }
            HostTensor out_grad(run.outputs[0].shape(), dtype);
            const std::vector<HostTensor> grads = RunBackward(test_case, run, {out_grad});
            for (int64_t i = 0; i < grads[0].size(); ++i) ASSERT_EQ(grads[0].Get(i), 0.0);
          }
        }
      }
    }
  }
}

TEST(ArgExtremumTest, ShapeErrorsNameTheNodeAndTheData) {
  ExpectShapeError(OpCase{"argmax", {{"axis", "3"}}, {{2, 3, 4}}}, {"axis 3", "(2,3,4)"});
  ExpectShapeError(OpCase{"argmin", {{"axis", "1"}}, {{2, 0, 4}}}, {"empty", "(2,0,4)"});
}

Initializer SmallIntegers() {  // -1, 0 or 1: operands that tie often
  return [](HostTensor& tensor, std::mt19937_64& random) {
    for (int64_t k = 0; k < tensor.size(); ++k)
      tensor.Set(k, static_cast<double>(random() % 3) - 1);
  };
}

MXLITE_GPU_CASES(ArgExtremum) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  for (const char* op : {"argmax", "argmin"}) {
    add({op, {{"axis", "1"}}, {{3, 5, 4}}, {{"data", SmallIntegers()}}});
    add({op, {{"keepdims", "true"}}, {{3, 7}}});
  }
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
