// slice (ops/slice.h): windows with positive and negative steps, negative and out-of-range bounds
// (clamped as Python does), empty results, untouched trailing axes, integer dtypes, the scattered
// gradient, and the errors for malformed tuples. The GPU cases run on a GPU machine
// (tests/ops/gpu_vs_cpu_test.cc).
#include <gtest/gtest.h>

#include <limits>

#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

using Attrs = std::map<std::string, std::string>;

constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();
constexpr int64_t kBeforeStart = std::numeric_limits<int64_t>::min();

std::string Tuple(const std::vector<int64_t>& values) {
  std::string text = "(";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) text += ',';  // appended: GCC 12 warns falsely on "," + std::string
    text += std::to_string(values[i]);
  }
  return text + ")";
}

// The indices Python's range(n)[b:e:s] selects (CPython's slice adjustment).
std::vector<int64_t> PythonIndices(int64_t n, int64_t b, int64_t e, int64_t s) {
  auto adjust = [&](int64_t index) {
    if (index < 0) {
      index = index < -n ? (s < 0 ? -1 : 0) : index + n;
    } else if (index >= n) {
      index = s < 0 ? n - 1 : n;
    }
    return index;
  };
  std::vector<int64_t> indices;
  for (int64_t i = adjust(b); s > 0 ? i < adjust(e) : i > adjust(e); i += s) indices.push_back(i);
  return indices;
}

struct Window {
  std::vector<int64_t> begin, end, step;
};

OpCase SliceCase(const Shape& data, const Window& w) {
  Attrs attrs{{"begin", Tuple(w.begin)}, {"end", Tuple(w.end)}};
  if (!w.step.empty()) attrs["step"] = Tuple(w.step);
  return OpCase{"slice", attrs, {data}};
}

ReferenceFn Reference(const Window& w) {
  return [w](const auto& inputs, const auto& shapes) {
    const Shape& data = shapes[0];
    std::vector<std::vector<int64_t>> picked(static_cast<size_t>(data.ndim()));
    for (int d = 0; d < data.ndim(); ++d) {
      const bool sliced = d < static_cast<int>(w.begin.size());
      picked[d] = PythonIndices(data[d], sliced ? w.begin[d] : 0, sliced ? w.end[d] : kEnd,
                                sliced && !w.step.empty() ? w.step[d] : 1);
    }
    std::vector<double> y;
    std::vector<size_t> at(picked.size(), 0);
    for (const auto& axis : picked) {
      if (axis.empty()) return std::vector<std::vector<double>>{y};
    }
    while (true) {
      int64_t offset = 0;
      for (int d = 0; d < data.ndim(); ++d) offset = offset * data[d] + picked[d][at[d]];
      y.push_back(inputs[0][static_cast<size_t>(offset)]);
      int d = data.ndim() - 1;
      while (d >= 0 && ++at[d] == picked[d].size()) at[d--] = 0;
      if (d < 0) break;
    }
    return std::vector<std::vector<double>>{y};
  };
}

const std::vector<Window>& Windows() {
  static const std::vector<Window> windows = {
      {{1, -4}, {3, 100}, {}},                     // negative begin, end past the axis
      {{0, 4, 1}, {4, -100, 6}, {2, -1, 3}},       // steps, a reversed axis read through 0
      {{-1}, {kBeforeStart}, {-1}},                // the first axis reversed, others whole
      {{-100, 2}, {kEnd, 3}, {1, 1}},              // begin before the axis clamps to 0
      {{5, 0, 0}, {-6, 5, 6}, {-2, 1, 4}},         // clamped reversed start
      {{}, {}, {}},                                // nothing sliced: a copy
  };
  return windows;
}

TEST(SliceTest, WindowsMatchPythonSlicing) {
  for (const Window& w : Windows()) {
    const OpCase test_case = SliceCase({4, 5, 6}, w);
    SCOPED_TRACE(test_case.Describe());
    CheckForwardAgainstReference(test_case, Reference(w), 1e-7);
    CheckGradients(test_case);
  }
}

TEST(SliceTest, LargeWindowsSplitOverThreads) {
  const Window rows{{0, 1}, {kEnd, -1}, {1, 1}};   // whole rows copied
  const Window strided{{3, 0}, {300, kEnd}, {2, 3}};  // element by element
  for (const Window& w : {rows, strided}) {
    CheckForwardAgainstReference(SliceCase({300, 400}, w), Reference(w), 1e-7);
  }
}

TEST(SliceTest, EmptyRangesGiveExtentZero) {
  EXPECT_EQ(InferOutputShapes(SliceCase({4, 5}, {{3}, {1}, {}}))[0], (Shape{0, 5}));
  EXPECT_EQ(InferOutputShapes(SliceCase({4, 5}, {{1}, {3}, {-1}}))[0], (Shape{0, 5}));
  EXPECT_EQ(InferOutputShapes(SliceCase({4, 5}, {{0, 7}, {4, 9}, {}}))[0], (Shape{4, 0}));
  const OpCase empty = SliceCase({4, 5}, {{3}, {1}, {}});
  EXPECT_EQ(RunForward(empty, MakeInputs(empty, DType::kFloat32)).outputs[0].size(), 0);
}

TEST(SliceTest, IntegerDataIsCopiedExactly) {
  const OpCase test_case = SliceCase({6}, {{5}, {kBeforeStart}, {-2}});
  std::vector<HostTensor> inputs = {HostTensor(Shape{6}, DType::kInt64)};
  for (int64_t i = 0; i < 6; ++i) inputs[0].Set(i, static_cast<double>(1000000 + i));
  const OpRun run = RunForward(test_case, inputs);
  ASSERT_EQ(run.outputs[0].shape(), (Shape{3}));
  EXPECT_EQ(run.outputs[0].Get(0), 1000005);
  EXPECT_EQ(run.outputs[0].Get(1), 1000003);
  EXPECT_EQ(run.outputs[0].Get(2), 1000001);
}

TEST(SliceTest, MalformedTuplesAreShapeErrors) {
  ExpectShapeError(SliceCase({4, 5}, {{0, 1}, {2}, {}}), {"must have the same length"});
  ExpectShapeError(SliceCase({4, 5}, {{0, 0, 0}, {1, 1, 1}, {}}), {"names 3 axes", "(4,5)"});
  ExpectShapeError(SliceCase({4, 5}, {{0}, {2}, {0}}), {"zero step at axis 0"});
}

MXLITE_GPU_CASES(Slice) {
  std::vector<OpCase> cases;
  for (const Window& w : Windows()) cases.push_back(SliceCase({4, 5, 6}, w));
  // Rows of 8 or 16 elements: the kernel moves them 16 bytes at a time (strided_copy.h), or as
  // one memcpy when the window is one run (q taken from attention's packed projection).
  cases.push_back(SliceCase({3, 5, 16}, {{1, 1}, {3, 4}, {}}));
  cases.push_back(SliceCase({3, 5, 16}, {{2, 4}, {0, 0}, {-1, -2}}));
  cases.push_back(SliceCase({3, 7, 2, 8}, {{1}, {2}, {}}));
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
