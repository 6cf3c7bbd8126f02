// sum, mean, max, min, prod (ops/reduce.h): every axis pattern the CPU kernels split into passes
// (one contiguous run, a strided run, two runs, all axes, exclude, keepdims), against a plain
// reference and finite differences; prod's gradient with zeros; long rows split among threads;
// shape errors. The GPU cases run on a GPU machine (tests/ops/gpu_vs_cpu_test.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ops/cpu/parallel.h"
#include "ops/operator.h"
#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

using Attrs = std::map<std::string, std::string>;

const char* const kReductions[] = {"sum", "mean", "max", "min", "prod"};

// Which axes of `shape` the attributes reduce (empty axis list: all; exclude flips the list).
std::vector<bool> ReducedAxes(const Shape& shape, const std::vector<int>& axes, bool exclude) {
  std::vector<bool> reduced(static_cast<size_t>(shape.ndim()), axes.empty());
  for (int axis : axes) reduced[static_cast<size_t>(axis < 0 ? axis + shape.ndim() : axis)] = true;
  if (exclude && !axes.empty()) reduced.flip();
  return reduced;
}

// Every output element from a plain walk over the input, the output index computed per element.
ReferenceFn Reference(const std::string& op, const std::vector<int>& axes, bool exclude) {
  return [=](const auto& inputs, const auto& shapes) {
    const Shape& shape = shapes[0];
    const std::vector<bool> reduced = ReducedAxes(shape, axes, exclude);
    int64_t outputs = 1, group = 1;
    for (int d = 0; d < shape.ndim(); ++d) (reduced[d] ? group : outputs) *= shape[d];
    const bool is_max = op == "max", is_min = op == "min", is_prod = op == "prod";
    std::vector<double> y(static_cast<size_t>(outputs), is_max    ? -INFINITY
                                                        : is_min  ? INFINITY
                                                        : is_prod ? 1.0
                                                                  : 0.0);
    for (int64_t e = 0; e < shape.size(); ++e) {
      int64_t rest = e, o = 0, stride = 1;
      for (int d = shape.ndim() - 1; d >= 0; --d) {
        const int64_t index = rest % shape[d];
        rest /= shape[d];
        if (!reduced[d]) {
          o += index * stride;
          stride *= shape[d];
        }
      }
      const double x = inputs[0][static_cast<size_t>(e)];
      double& out = y[static_cast<size_t>(o)];
      out = is_max ? std::max(out, x) : is_min ? std::min(out, x) : is_prod ? out * x : out + x;
    }
    if (op == "mean") {
      for (double& value : y) value /= static_cast<double>(group);
    }
    return std::vector<std::vector<double>>{y};
  };
}

std::string Tuple(const std::vector<int>& axes) {
  std::string text = "(";
  for (size_t i = 0; i < axes.size(); ++i) {
    if (i) text += ',';  // appended: GCC 12 warns falsely on "," + std::string
    text += std::to_string(axes[i]);
  }
  return text + ")";
}

// Values away from zero and, for max / min, without ties.
void FillDistinct(HostTensor& tensor, std::mt19937_64& random) {
  std::uniform_real_distribution<double> uniform(0.5, 1.5);
  std::bernoulli_distribution sign(0.5);
  for (int64_t i = 0; i < tensor.size(); ++i) {
    tensor.Set(i, (sign(random) ? 1 : -1) * (uniform(random) + 1e-3 * static_cast<double>(i)));
  }
}

// prod's values: magnitudes near 1 (random signs), so that a product of a thousand stays well
// inside float16's range, as FillDistinct's growing magnitudes would not.
void FillNearOne(HostTensor& tensor, std::mt19937_64& random) {
  std::uniform_real_distribution<double> uniform(0.95, 1.05);
  std::bernoulli_distribution sign(0.5);
  for (int64_t i = 0; i < tensor.size(); ++i) {
    tensor.Set(i, (sign(random) ? 1 : -1) * uniform(random));
  }
}

OpCase Case(const std::string& op, const Shape& shape, const std::vector<int>& axes,
            bool keepdims = false, bool exclude = false) {
  OpCase test_case{op,
                   {{"axis", Tuple(axes)},
                    {"keepdims", keepdims ? "true" : "false"},
                    {"exclude", exclude ? "true" : "false"}},
                   {shape}};
  test_case.init["data"] = op == "prod" ? FillNearOne : FillDistinct;
  return test_case;
}

TEST(Reduce, EveryAxisPatternMatchesTheReferenceAndItsGradients) {
  struct Pattern {
    Shape shape;
    std::vector<int> axes;
    bool keepdims, exclude;
  };
  const Pattern patterns[] = {
      {{2, 3, 4, 5}, {2, 3}, false, false},  // the global pool: one contiguous run per output
      {{2, 3, 4, 5}, {1}, true, false},      // the channels: strided rows
      {{2, 3, 4, 5}, {0, 2}, false, false},  // two runs, two passes
      {{2, 3, 4, 5}, {-1}, true, false},     // the last axis (LayerNorm's statistics)
      {{3, 4, 5}, {}, false, false},         // every axis: a scalar
      {{2, 3, 4}, {1}, false, true},         // exclude: all but the channels
      {{2, 1, 4}, {1}, false, false},        // an extent-1 axis alone: a copy
  };
  for (const char* op : kReductions) {
    for (const Pattern& p : patterns) {
      const OpCase test_case = Case(op, p.shape, p.axes, p.keepdims, p.exclude);
      SCOPED_TRACE(test_case.Describe());
      CheckForwardAgainstReference(test_case, Reference(op, p.axes, p.exclude));
      CheckGradients(test_case);
    }
  }
}

TEST(Reduce, KeepdimsAndAllAxesShapes) {
  EXPECT_EQ(InferOutputShapes(Case("mean", {2, 3, 4, 5}, {2, 3}, true))[0], Shape({2, 3, 1, 1}));
  EXPECT_EQ(InferOutputShapes(Case("mean", {2, 3, 4, 5}, {2, 3}))[0], Shape({2, 3}));
  EXPECT_EQ(InferOutputShapes(Case("sum", {2, 3}, {}))[0], Shape());
  EXPECT_EQ(InferOutputShapes(Case("sum", {2, 3}, {}, true))[0], Shape({1, 1}));
  EXPECT_EQ(InferOutputShapes(Case("max", {2, 3, 4}, {0}, false, true))[0], Shape({2}));
}

// A product's gradient is the product of the others, also where the group holds zeros: a lone
// zero gets the product of the rest, two zeros leave every gradient 0.
TEST(Reduce, ProdGradientWithZeros) {
  for (int zeros : {1, 2}) {
    OpCase test_case = Case("prod", {2, 6}, {1});
    test_case.init["data"] = [zeros](HostTensor& tensor, std::mt19937_64& random) {
      FillDistinct(tensor, random);
      for (int z = 0; z < zeros; ++z) tensor.Set(2 * z + 1, 0.0);  // row 0
    };
    const std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat64);
    const OpRun run = RunForward(test_case, inputs);
    HostTensor dy(Shape{2}, DType::kFloat64);
    dy.Set(0, 1.0);
    dy.Set(1, 1.0);
    const HostTensor dx = RunBackward(test_case, run, {dy})[0];
    for (int64_t i = 0; i < 6; ++i) {
      double others = 1;
      for (int64_t k = 0; k < 6; ++k) {
        if (k != i) others *= inputs[0].Get(k);
      }
      EXPECT_NEAR(dx.Get(i), others, 1e-12) << zeros << " zeros, element " << i;
    }
  }
}

// Long rows with few outputs are split among the threads and their pieces combined.
TEST(Reduce, LongRowsSplitAmongThreadsAgree) {
  cpu::ScopedIntraOpThreads threads(2);
  for (const char* op : {"sum", "max", "mean"}) {
    const OpCase test_case = Case(op, {2, 300000}, {1});
    CheckForwardAgainstReference(test_case, Reference(op, {1}, false), 1e-3);
  }
}

TEST(Reduce, ShapeErrorsNameTheNode) {
  ExpectShapeError(Case("mean", {2, 3}, {2}), {"axis 2 is out of range", "(2,3)"});
  ExpectShapeError(Case("sum", {2, 3}, {1, -1}), {"axis -1 is named twice"});
  ExpectShapeError(Case("max", {2, 0, 3}, {1}), {"max of no element"});
  // sum and prod of nothing are their identities.
  EXPECT_EQ(InferOutputShapes(Case("sum", {2, 0}, {1}))[0], Shape({2}));
}

TEST(Reduce, ChannelPoolsFollowTheLayout) {
  const OpDef& mean = OpRegistry::Global().Get("mean");
  EXPECT_EQ(mean.layout.role, LayoutRole::kAgnostic);
  std::map<std::string, std::string> text;
  mean.layout.retarget(ParseOpAttributes(mean, {{"axis", "(2,3)"}, {"keepdims", "true"}}, "m"),
                       ActivationLayout::kNHWC, text);
  EXPECT_EQ(text["axis"], "(1,2)");
}

MXLITE_GPU_CASES(Reductions) {
  std::vector<OpCase> cases;
  for (const char* op : kReductions) {
    cases.push_back(Case(op, {2, 3, 4, 5}, {2, 3}, true));
    cases.push_back(Case(op, {2, 3, 4, 5}, {0, 2}));
    cases.push_back(Case(op, {3, 40, 7}, {1}));
    cases.push_back(Case(op, {2, 600}, {}));  // a group larger than a block: the tree
  }
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
