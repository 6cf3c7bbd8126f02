// SoftmaxOutput's backward is the gradient of softmax cross-entropy with respect to the data, and
// it ignores the gradient arriving at its output (its output is the softmax, not the loss). The
// harness's finite-difference check differentiates the output itself, so it does not apply: these
// tests check backward against the closed form (softmax - one_hot(label)) * scale instead.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

using Attrs = std::map<std::string, std::string>;

// Row-wise softmax of (outer, length, inner) data along `length`.
std::vector<double> Softmax(const std::vector<double>& x, int64_t outer, int64_t length,
                            int64_t inner) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double max = -INFINITY, sum = 0;
      for (int64_t k = 0; k < length; ++k) max = std::max(max, x[(o * length + k) * inner + i]);
      for (int64_t k = 0; k < length; ++k) sum += std::exp(x[(o * length + k) * inner + i] - max);
      for (int64_t k = 0; k < length; ++k) {
        y[(o * length + k) * inner + i] = std::exp(x[(o * length + k) * inner + i] - max) / sum;
      }
    }
  }
  return y;
}

struct Layout {
  int64_t outer, length, inner;
};

// (softmax - target) * scale, with target = one hot (smoothed by alpha), zero where ignored.
std::vector<double> ClosedFormGradient(const std::vector<double>& y,
                                       const std::vector<double>& label, const Layout& l,
                                       double scale, double alpha = 0, bool use_ignore = false,
                                       double ignore = -1) {
  std::vector<double> grad(y.size());
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t i = 0; i < l.inner; ++i) {
      const double target = label[o * l.inner + i];
      for (int64_t k = 0; k < l.length; ++k) {
        const int64_t at = (o * l.length + k) * l.inner + i;
        const double hot = k == target ? 1 - alpha : alpha / static_cast<double>(l.length - 1);
        grad[at] = use_ignore && target == ignore ? 0 : (y[at] - hot) * scale;
      }
    }
  }
  return grad;
}

// Runs forward and backward (with a random head gradient, which must not matter) in float64 and
// float32 and compares the data gradient with `expected`.
void ExpectGradient(const OpCase& test_case, const std::vector<double>& expected,
                    double float32_tolerance = 1e-6) {
  SCOPED_TRACE(test_case.Describe());
  for (DType dtype : {DType::kFloat64, DType::kFloat32}) {
    OpRun run = RunForward(test_case, MakeInputs(test_case, dtype));
    HostTensor head(run.outputs[0].shape(), dtype);
    for (int64_t i = 0; i < head.size(); ++i) head.Set(i, 0.25 * static_cast<double>(i % 5) - 3);
    std::vector<double> got = RunBackward(test_case, run, {head})[0].Values();
    ASSERT_EQ(got.size(), expected.size());
    const double tolerance = dtype == DType::kFloat64 ? 1e-12 : float32_tolerance;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], expected[i], tolerance) << DTypeName(dtype) << " element " << i;
    }
  }
}

std::vector<double> Inputs(const OpCase& test_case, int index) {
  return MakeInputs(test_case, DType::kFloat64)[index].Values();
}

TEST(SoftmaxOutputTest, ForwardIsSoftmaxOverTheFlattenedClasses) {
  OpCase flat{"SoftmaxOutput", {}, {{3, 5}}};
  flat.init["label"] = Cycled({0, 4, 2});
  CheckForwardAgainstReference(flat, [](const auto& inputs, const auto&) {
    return std::vector<std::vector<double>>{Softmax(inputs[0], 3, 5, 1)};
  });
  OpCase image{"SoftmaxOutput", {}, {{2, 3, 2, 2}}};
  image.init["label"] = Cycled({1, 11});
  EXPECT_EQ(MakeInputs(image, DType::kFloat32)[1].shape(), (Shape{2}));
  CheckForwardAgainstReference(image, [](const auto& inputs, const auto&) {
    return std::vector<std::vector<double>>{Softmax(inputs[0], 2, 12, 1)};
  });
}

TEST(SoftmaxOutputTest, GradientIgnoresTheHeadGradientAndMatchesTheClosedForm) {
  OpCase test_case{"SoftmaxOutput", {}, {{4, 3}}};
  test_case.init["label"] = Cycled({2, 0, 1, 2});
  const std::vector<double> y = Softmax(Inputs(test_case, 0), 4, 3, 1);
  ExpectGradient(test_case, ClosedFormGradient(y, Inputs(test_case, 1), {4, 3, 1}, 1.0));
  test_case.attrs["grad_scale"] = "2.5";
  ExpectGradient(test_case, ClosedFormGradient(y, Inputs(test_case, 1), {4, 3, 1}, 2.5));
}

TEST(SoftmaxOutputTest, NormalizationModes) {
  // Labels 3 and 0 are ignored (ignore_label 3 with use_ignore); "valid" counts the other 4.
  const std::vector<double> labels{1, 3, 0, 2, 3, 1};
  for (const char* normalization : {"null", "batch", "valid"}) {
    for (const char* use_ignore : {"false", "true"}) {
      OpCase test_case{"SoftmaxOutput",
                       {{"normalization", normalization},
                        {"use_ignore", use_ignore},
                        {"ignore_label", "3"},
                        {"grad_scale", "3"}},
                       {{6, 4}}};
      test_case.init["label"] = Cycled(labels);
      const std::string mode = normalization;
      // MXNet: batch divides by N; valid by the labels other than ignore_label, whether or not
      // use_ignore is set.
      const double scale = mode == "null" ? 3.0 : mode == "batch" ? 3.0 / 6 : 3.0 / 4;
      const std::vector<double> y = Softmax(Inputs(test_case, 0), 6, 4, 1);
      ExpectGradient(test_case, ClosedFormGradient(y, labels, {6, 4, 1}, scale, 0,
                                                   std::string(use_ignore) == "true", 3));
    }
  }
}

TEST(SoftmaxOutputTest, ValidNormalizationWithEveryLabelIgnoredDividesByOne) {
  OpCase test_case{"SoftmaxOutput",
                   {{"normalization", "valid"}, {"use_ignore", "true"}, {"ignore_label", "0"}},
                   {{2, 3}}};
  test_case.init["label"] = Cycled({0});
  ExpectGradient(test_case, std::vector<double>(6, 0.0));
}

TEST(SoftmaxOutputTest, MultiOutputIsPerPosition) {
  // data (2, 4, 3): 4 classes at 3 positions; label (2, 3).
  const std::vector<double> labels{0, 3, 1, 2, 2, 0};
  for (const char* normalization : {"null", "batch", "valid"}) {
    OpCase test_case{
        "SoftmaxOutput", {{"multi_output", "true"}, {"normalization", normalization}}, {{2, 4, 3}}};
    test_case.init["label"] = Cycled(labels);
    EXPECT_EQ(MakeInputs(test_case, DType::kFloat32)[1].shape(), (Shape{2, 3}));
    CheckForwardAgainstReference(test_case, [](const auto& inputs, const auto&) {
      return std::vector<std::vector<double>>{Softmax(inputs[0], 2, 4, 3)};
    });
    // MXNet divides null and batch by the positions per sample (3) too.
    const std::string mode = normalization;
    const double scale = mode == "null" ? 1.0 / 3 : mode == "batch" ? 1.0 / 3 / 2 : 1.0 / 6;
    const std::vector<double> y = Softmax(Inputs(test_case, 0), 2, 4, 3);
    ExpectGradient(test_case, ClosedFormGradient(y, labels, {2, 4, 3}, scale));
  }
  // The label may also be given unflattened, or with a class dim of 1.
  for (Shape label : {Shape{2, 2, 3}, Shape{2, 1, 2, 3}, Shape{2, 6}}) {
    EXPECT_EQ(
        InferOutputShapes({"SoftmaxOutput", {{"multi_output", "true"}}, {{2, 4, 2, 3}, label}})[0],
        (Shape{2, 4, 2, 3}));
  }
}

TEST(SoftmaxOutputTest, PreserveShapeUsesTheLastAxis) {
  const std::vector<double> labels{4, 0, 2, 1, 3, 3};
  OpCase test_case{
      "SoftmaxOutput", {{"preserve_shape", "true"}, {"normalization", "batch"}}, {{2, 3, 5}}};
  test_case.init["label"] = Cycled(labels);
  EXPECT_EQ(MakeInputs(test_case, DType::kFloat32)[1].shape(), (Shape{2, 3}));
  const std::vector<double> y = Softmax(Inputs(test_case, 0), 6, 5, 1);
  ExpectGradient(test_case, ClosedFormGradient(y, labels, {6, 5, 1}, 1.0 / 6));
}

TEST(SoftmaxOutputTest, LabelSmoothing) {
  const std::vector<double> labels{1, 0, 3};
  OpCase test_case{"SoftmaxOutput", {{"smooth_alpha", "0.3"}}, {{3, 4}}};
  test_case.init["label"] = Cycled(labels);
  const std::vector<double> y = Softmax(Inputs(test_case, 0), 3, 4, 1);
  ExpectGradient(test_case, ClosedFormGradient(y, labels, {3, 4, 1}, 1.0, 0.3));
}

TEST(SoftmaxOutputTest, OutGradMultipliesByTheHeadGradient) {
  OpCase test_case{"SoftmaxOutput", {{"out_grad", "true"}}, {{2, 3}}};
  test_case.init["label"] = Cycled({2, 1});
  OpRun run = RunForward(test_case, MakeInputs(test_case, DType::kFloat64));
  HostTensor head(Shape{2, 3}, DType::kFloat64);
  for (int64_t i = 0; i < 6; ++i) head.Set(i, static_cast<double>(i) - 2);
  std::vector<double> got = RunBackward(test_case, run, {head})[0].Values();
  std::vector<double> expected =
      ClosedFormGradient(run.outputs[0].Values(), {2, 1}, {2, 3, 1}, 1.0);
  for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(got[i], expected[i] * head.Get(i), 1e-12);
}

TEST(SoftmaxOutputTest, ProbabilityLabelsWithTheDataShape) {
  OpCase test_case{"SoftmaxOutput", {{"grad_scale", "2"}}, {{2, 3}, {2, 3}}};
  test_case.init["label"] = Cycled({0.2, 0.5, 0.3, 1.0, 0.0, 0.0});
  const std::vector<double> y = Softmax(Inputs(test_case, 0), 2, 3, 1);
  const std::vector<double> label = Inputs(test_case, 1);
  std::vector<double> expected(6);
  for (size_t i = 0; i < 6; ++i) expected[i] = 2 * (y[i] - label[i]);
  ExpectGradient(test_case, expected);
}

std::string BackwardError(const OpCase& test_case) {
  try {
    OpRun run = RunForward(test_case, MakeInputs(test_case, DType::kFloat32));
    RunBackward(test_case, run, {HostTensor(run.outputs[0].shape(), DType::kFloat32)});
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(SoftmaxOutputTest, BadLabelsAreClearErrors) {
  OpCase out_of_range{"SoftmaxOutput", {}, {{3, 5}}};
  out_of_range.init["label"] = Cycled({1, 5, 0});
  std::string message = BackwardError(out_of_range);
  EXPECT_NE(message.find("SoftmaxOutput node0"), std::string::npos) << message;
  EXPECT_NE(message.find("label 5 "), std::string::npos) << message;
  EXPECT_NE(message.find("[0, 5)"), std::string::npos) << message;

  OpCase negative{"SoftmaxOutput", {}, {{3, 5}}};  // -1 without use_ignore is not a class
  negative.init["label"] = Cycled({-1});
  EXPECT_NE(BackwardError(negative).find("label -1 "), std::string::npos);

  OpCase fraction{"SoftmaxOutput", {}, {{3, 5}}};
  fraction.init["label"] = Cycled({1.5});
  EXPECT_NE(BackwardError(fraction).find("label 1.5 "), std::string::npos);

  OpCase ignored{"SoftmaxOutput", {{"use_ignore", "true"}, {"ignore_label", "-1"}}, {{3, 5}}};
  ignored.init["label"] = Cycled({-1, 2});
  EXPECT_EQ(BackwardError(ignored), "");
}

TEST(SoftmaxOutputTest, ShapeInferenceAndErrors) {
  EXPECT_EQ(InferOutputShapes({"SoftmaxOutput", {}, {{4, 10}}})[0], (Shape{4, 10}));
  ExpectShapeError({"SoftmaxOutput", {}, {{4, 10}, {5}}}, {"label", "(5)", "(4)", "(4,10)"});
  ExpectShapeError({"SoftmaxOutput", {{"multi_output", "true"}}, {{4, 10, 3}, {4, 10}}},
                   {"(4,10)", "(4,3)"});
  ExpectShapeError({"SoftmaxOutput", {}, {{4}}}, {"(4)"});
  const OpDef& op = OpRegistry::Global().Get("SoftmaxOutput");
  Attributes attrs = ParseOpAttributes(op, {}, "loss");
  EXPECT_EQ(InputHasGradient(op, attrs), (std::vector<bool>{true, false}));
  BackwardDependencies deps = BackwardDependenciesOf(op, attrs);
  EXPECT_EQ(deps.inputs, (std::vector<bool>{false, true}));
  EXPECT_EQ(deps.outputs, std::vector<bool>{true});
}

TEST(SoftmaxOutputTest, LargeBatchRunsInParallel) {
  OpCase test_case{"SoftmaxOutput", {{"normalization", "batch"}}, {{2000, 37}}};
  test_case.init["label"] = [](HostTensor& tensor, std::mt19937_64& random) {
    for (int64_t i = 0; i < tensor.size(); ++i) tensor.Set(i, static_cast<double>(random() % 37));
  };
  const std::vector<double> y = Softmax(Inputs(test_case, 0), 2000, 37, 1);
  ExpectGradient(test_case, ClosedFormGradient(y, Inputs(test_case, 1), {2000, 37, 1}, 1.0 / 2000));
}

Initializer ClassLabels(int64_t classes) {
  return [classes](HostTensor& tensor, std::mt19937_64& random) {
    std::uniform_int_distribution<int64_t> pick(0, classes - 1);
    for (int64_t k = 0; k < tensor.size(); ++k) tensor.Set(k, static_cast<double>(pick(random)));
  };
}

Initializer Positive() {
  return [](HostTensor& tensor, std::mt19937_64& random) {
    std::uniform_real_distribution<double> uniform(0.5, 1.5);
    for (int64_t k = 0; k < tensor.size(); ++k) tensor.Set(k, uniform(random));
  };
}

MXLITE_GPU_CASES(SoftmaxOutput) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  // SoftmaxOutput: normalisations, ignore, multi_output, preserve_shape, smoothing, soft labels.
  add({"SoftmaxOutput", {}, {{4, 5}}, {{"label", ClassLabels(5)}}});
  add({"SoftmaxOutput",
       {{"normalization", "batch"}, {"grad_scale", "2"}},
       {{4, 5}},
       {{"label", ClassLabels(5)}}});
  add({"SoftmaxOutput",
       {{"normalization", "valid"}, {"use_ignore", "true"}, {"ignore_label", "1"}},
       {{6, 3}},
       {{"label", ClassLabels(3)}}});
  add({"SoftmaxOutput",
       {{"multi_output", "true"}, {"normalization", "batch"}},
       {{2, 4, 3, 2}},
       {{"label", ClassLabels(4)}}});
  add({"SoftmaxOutput",
       {{"preserve_shape", "true"}, {"smooth_alpha", "0.1"}},
       {{2, 3, 4}},
       {{"label", ClassLabels(4)}}});
  add({"SoftmaxOutput", {{"out_grad", "true"}}, {{3, 4}}, {{"label", ClassLabels(4)}}});
  add({"SoftmaxOutput", {}, {{3, 4}, {3, 4}}, {{"label", Positive()}}});
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
