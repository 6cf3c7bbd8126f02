#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include "core/error.h"
#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

using Attrs = std::map<std::string, std::string>;

void PositiveVariance(HostTensor& tensor, std::mt19937_64& random) {
  std::uniform_real_distribution<double> uniform(0.5, 1.5);
  for (int64_t i = 0; i < tensor.size(); ++i) tensor.Set(i, uniform(random));
}

OpCase BatchNormCase(Attrs attrs, const Shape& data, bool is_train) {
  OpCase test_case{"BatchNorm", std::move(attrs), {data}};
  test_case.init["moving_var"] = PositiveVariance;
  test_case.is_train = is_train;
  return test_case;
}

double AttrOr(const Attrs& attrs, const std::string& name, double fallback) {
  auto it = attrs.find(name);
  return it == attrs.end() ? fallback : std::stod(it->second);
}

bool FlagOr(const Attrs& attrs, const std::string& name, bool fallback) {
  auto it = attrs.find(name);
  return it == attrs.end() ? fallback : it->second == "true";
}

// The data as (outer, channels, inner) around the channel axis.
struct Split {
  int64_t outer, channels, inner;
  Split(const Shape& data, int axis) {
    if (axis < 0) axis += data.ndim();
    outer = data.size(0, axis);
    channels = data[axis];
    inner = data.size(axis + 1, data.ndim());
  }
  int64_t Channel(int64_t flat) const { return (flat / inner) % channels; }
};

// Per-channel mean and biased variance.
void BatchMoments(const std::vector<double>& x, const Split& split, std::vector<double>& mean,
                  std::vector<double>& var) {
  mean.assign(split.channels, 0);
  var.assign(split.channels, 0);
  const double m = static_cast<double>(split.outer * split.inner);
  for (size_t i = 0; i < x.size(); ++i) mean[split.Channel(i)] += x[i] / m;
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = x[i] - mean[split.Channel(i)];
    var[split.Channel(i)] += d * d / m;
  }
}

// Plain BatchNorm forward: output (and mean, var when output_mean_var).
ReferenceFn BatchNormReference(const Attrs& attrs, bool is_train) {
  return [attrs, is_train](const auto& inputs, const auto& shapes) {
    const Split split(shapes[0], static_cast<int>(AttrOr(attrs, "axis", 1)));
    const double eps = AttrOr(attrs, "eps", 1e-3);
    const bool fix_gamma = FlagOr(attrs, "fix_gamma", true);
    std::vector<double> mean = inputs[3], var = inputs[4];
    if (is_train && !FlagOr(attrs, "use_global_stats", false)) {
      BatchMoments(inputs[0], split, mean, var);
    }
    std::vector<double> y(inputs[0].size());
    for (size_t i = 0; i < y.size(); ++i) {
      const int64_t c = split.Channel(i);
      const double gamma = fix_gamma ? 1.0 : inputs[1][c];
      y[i] = gamma * (inputs[0][i] - mean[c]) / std::sqrt(var[c] + eps) + inputs[2][c];
    }
    if (FlagOr(attrs, "output_mean_var", false))
      return std::vector<std::vector<double>>{y, mean, var};
    return std::vector<std::vector<double>>{y};
  };
}

void CheckCase(const Attrs& attrs, const Shape& data, bool is_train) {
  OpCase test_case = BatchNormCase(attrs, data, is_train);
  CheckGradients(test_case);
  CheckForwardAgainstReference(test_case, BatchNormReference(attrs, is_train));
}

TEST(BatchNormTest, TrainingWithLearnedGamma) {
  CheckCase({{"fix_gamma", "false"}}, {4, 3, 5, 2}, true);
  CheckCase({{"fix_gamma", "false"}, {"eps", "1e-5"}}, {3, 4}, true);
}

TEST(BatchNormTest, FixGammaReadsGammaAsOneAndGivesItNoGradient) {
  OpCase test_case = BatchNormCase({}, {3, 2, 4}, true);  // fix_gamma defaults to true
  CheckGradients(test_case);
  CheckForwardAgainstReference(test_case, BatchNormReference({}, true));
  OpRun run = RunForward(test_case, MakeInputs(test_case, DType::kFloat64));
  HostTensor grad(Shape{3, 2, 4}, DType::kFloat64);
  for (int64_t i = 0; i < grad.size(); ++i) grad.Set(i, 0.1 * static_cast<double>(i % 7) - 0.3);
  std::vector<HostTensor> grads = RunBackward(
      test_case, run, {grad, HostTensor({2}, DType::kFloat64), HostTensor({2}, DType::kFloat64)});
  EXPECT_EQ(grads[1].Values(), (std::vector<double>{0.0, 0.0}));
}

TEST(BatchNormTest, InferenceUsesTheMovingStatistics) {
  CheckCase({{"fix_gamma", "false"}}, {4, 3, 5}, false);
  CheckCase({}, {2, 3, 2, 2}, false);
}

TEST(BatchNormTest, UseGlobalStatsInTraining) {
  const Attrs attrs{{"fix_gamma", "false"}, {"use_global_stats", "true"}};
  CheckCase(attrs, {4, 3, 5}, true);
  OpCase test_case = BatchNormCase(attrs, {4, 3, 5}, true);
  std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat64);
  OpRun run = RunForward(test_case, inputs);
  EXPECT_EQ(run.inputs[3].Values(), inputs[3].Values()) << "moving_mean must not change";
  EXPECT_EQ(run.inputs[4].Values(), inputs[4].Values()) << "moving_var must not change";
}

TEST(BatchNormTest, TrainingUpdatesMovingStatisticsWithTheBiasedVariance) {
  // Channel 0 holds 1 and 3 (mean 2, biased variance 1), channel 1 holds 2 and 6 (mean 4,
  // variance 4). moving = moving * 0.9 + batch * 0.1.
  OpCase test_case = BatchNormCase({}, {2, 2}, true);
  std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat64);
  const double data[] = {1, 2, 3, 6};
  for (int i = 0; i < 4; ++i) inputs[0].Set(i, data[i]);
  for (int c = 0; c < 2; ++c) {
    inputs[2].Set(c, 0.0);  // beta
    inputs[3].Set(c, 0.0);
    inputs[4].Set(c, 1.0);
  }
  for (DType dtype : {DType::kFloat64, DType::kFloat32}) {
    std::vector<HostTensor> typed;
    for (const HostTensor& input : inputs) typed.push_back(input.As(dtype));
    OpRun run = RunForward(test_case, typed);
    EXPECT_NEAR(run.inputs[3].Get(0), 0.2, 1e-6);
    EXPECT_NEAR(run.inputs[3].Get(1), 0.4, 1e-6);
    EXPECT_NEAR(run.inputs[4].Get(0), 1.0, 1e-6);  // 0.9 * 1 + 0.1 * 1
    EXPECT_NEAR(run.inputs[4].Get(1), 1.3, 1e-6);  // 0.9 * 1 + 0.1 * 4
    // And the output is normalised with the batch statistics: (1 - 2) / sqrt(1 + 1e-3).
    EXPECT_NEAR(run.outputs[0].Get(0), -1 / std::sqrt(1.001), 1e-6);
  }
  test_case.attrs["momentum"] = "0.5";
  OpRun run = RunForward(test_case, inputs);
  EXPECT_NEAR(run.inputs[3].Get(1), 2.0, 1e-12);
  EXPECT_NEAR(run.inputs[4].Get(1), 2.5, 1e-12);
}

TEST(BatchNormTest, InferenceLeavesMovingStatisticsAlone) {
  OpCase test_case = BatchNormCase({}, {3, 2}, false);
  std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat64);
  OpRun run = RunForward(test_case, inputs);
  EXPECT_EQ(run.inputs[3].Values(), inputs[3].Values());
  EXPECT_EQ(run.inputs[4].Values(), inputs[4].Values());
}

TEST(BatchNormTest, ChannelsLastAxis) {
  for (const char* axis : {"-1", "3"}) {
    const Attrs attrs{{"axis", axis}, {"fix_gamma", "false"}};
    EXPECT_EQ(InferOutputShapes(BatchNormCase(attrs, {2, 3, 2, 5}, true))[1], (Shape{5}));
    CheckCase(attrs, {2, 3, 2, 5}, true);
    CheckCase(attrs, {2, 3, 2, 5}, false);
  }
  CheckCase({{"axis", "0"}, {"fix_gamma", "false"}}, {3, 4, 2}, true);
}

TEST(BatchNormTest, OutputMeanVarMakesTheStatisticsVisible) {
  const Attrs attrs{{"output_mean_var", "true"}, {"fix_gamma", "false"}};
  OpCase test_case = BatchNormCase(attrs, {4, 3, 2}, true);
  EXPECT_EQ(InferOutputShapes(test_case).size(), 3u);
  CheckForwardAgainstReference(test_case, BatchNormReference(attrs, true));
  CheckForwardAgainstReference(BatchNormCase(attrs, {4, 3, 2}, false),
                               BatchNormReference(attrs, false));
}

TEST(BatchNormTest, BatchOfOne) { CheckCase({{"fix_gamma", "false"}}, {1, 3, 3, 2}, true); }

TEST(BatchNormTest, LargeInputsBothLayouts) {
  const Attrs first{{"fix_gamma", "false"}};
  CheckForwardAgainstReference(BatchNormCase(first, {8, 16, 24, 24}, true),
                               BatchNormReference(first, true));
  const Attrs last{{"fix_gamma", "false"}, {"axis", "-1"}};
  CheckForwardAgainstReference(BatchNormCase(last, {8, 24, 24, 16}, true),
                               BatchNormReference(last, true));
  // Gradients on a shape large enough to be split into several tiles, a few elements checked.
  OpCase big = BatchNormCase(last, {4, 40, 40, 3}, true);
  big.max_checked_elements = 20;
  CheckGradients(big);
}

// channel_block=16 (NCHW16c data, as the convolution planner sets it): inference against the
// reference on the channel each element belongs to; batch statistics and backward refuse it by
// name, and data without the block's last axis is a shape error.
TEST(BatchNormTest, BlockedChannelsAtInference) {
  const Attrs attrs{{"fix_gamma", "false"}, {"channel_block", "16"}};
  const Shape data{2, 3, 4, 5, 16};  // 48 channels
  OpCase test_case = BatchNormCase(attrs, data, false);
  EXPECT_EQ(InferOutputShapes(test_case)[1], (Shape{48}));
  CheckForwardAgainstReference(test_case, [](const auto& inputs, const auto&) {
    const double eps = 1e-3;
    std::vector<double> y(inputs[0].size());
    for (size_t i = 0; i < y.size(); ++i) {
      const size_t c = (i / (4 * 5 * 16)) % 3 * 16 + i % 16;
      y[i] = inputs[1][c] * (inputs[0][i] - inputs[3][c]) / std::sqrt(inputs[4][c] + eps) +
             inputs[2][c];
    }
    return std::vector<std::vector<double>>{y};
  });
  auto expect_refused = [](const std::function<void()>& run, const std::string& fragment) {
    try {
      run();
      ADD_FAILURE() << "ran: expected an error with '" << fragment << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  OpCase training = BatchNormCase(attrs, data, true);
  expect_refused([&] { RunForward(training, MakeInputs(training, DType::kFloat64)); },
                 "batch statistics need unblocked data");
  Attrs global = attrs;
  global["use_global_stats"] = "true";
  OpCase global_case = BatchNormCase(global, data, true);
  const OpRun run = RunForward(global_case, MakeInputs(global_case, DType::kFloat64));
  std::mt19937_64 random(3);
  expect_refused(
      [&] {
        RunBackward(global_case, run,
                    RandomOutputGradients(run.outputs, 1, DType::kFloat64, random));
      },
      "runs forward only");
  ExpectShapeError(BatchNormCase(attrs, {2, 3, 4, 5, 8}, false),
                   {"channel_block=16", "(2,3,4,5,8)"});
}

// Blocked data larger than one work chunk, with 16 lanes (the vectorised path) and 3 lanes (the
// general path, whose chunks start mid-pixel): every element still gets its own channel's scale.
TEST(BatchNormTest, BlockedChannelsOverManyChunks) {
  for (const int64_t lanes : {16, 3}) {
    const Attrs attrs{{"fix_gamma", "false"}, {"channel_block", std::to_string(lanes)}};
    const int64_t blocks = 2, pixels = 41 * 53;
    const Shape data{2, blocks, 41, 53, lanes};
    OpCase test_case = BatchNormCase(attrs, data, false);
    CheckForwardAgainstReference(test_case, [&](const auto& inputs, const auto&) {
      const double eps = 1e-3;
      std::vector<double> y(inputs[0].size());
      for (size_t i = 0; i < y.size(); ++i) {
        const size_t c = (i / (pixels * lanes)) % blocks * lanes + i % lanes;
        y[i] = inputs[1][c] * (inputs[0][i] - inputs[3][c]) / std::sqrt(inputs[4][c] + eps) +
               inputs[2][c];
      }
      return std::vector<std::vector<double>>{y};
    });
  }
}

// A fused activation (act_min / act_max, set by the inference fusion pass) clamps each output after
// the affine map, plain and blocked, as a relu or clip after it would; backward refuses it by name.
TEST(BatchNormTest, FusedActivationClampsTheOutput) {
  struct Layout {
    Shape data;
    std::function<size_t(size_t)> channel;  // of flat element i
  };
  const Layout layouts[] = {{{2, 3, 4, 5}, [](size_t i) { return i / 20 % 3; }},
                            {{2, 2, 3, 5, 16}, [](size_t i) { return i / 240 % 2 * 16 + i % 16; }}};
  const std::pair<std::string, std::string> clamps[] = {{"0", ""}, {"-0.25", "0.5"}};
  for (const Layout& layout : layouts) {
    for (const auto& [low, high] : clamps) {
      Attrs attrs{{"fix_gamma", "false"}, {"act_min", low}};
      if (!high.empty()) attrs["act_max"] = high;
      if (layout.data.ndim() == 5) attrs["channel_block"] = "16";
      OpCase test_case = BatchNormCase(attrs, layout.data, false);
      const double lo = std::stod(low), hi = high.empty() ? INFINITY : std::stod(high);
      CheckForwardAgainstReference(test_case, [&](const auto& inputs, const auto&) {
        std::vector<double> y(inputs[0].size());
        for (size_t i = 0; i < y.size(); ++i) {
          const size_t c = layout.channel(i);
          const double v =
              inputs[1][c] * (inputs[0][i] - inputs[3][c]) / std::sqrt(inputs[4][c] + 1e-3) +
              inputs[2][c];
          y[i] = std::min(std::max(v, lo), hi);
        }
        return std::vector<std::vector<double>>{y};
      });
    }
  }
  OpCase training = BatchNormCase({{"act_min", "0"}}, {2, 3, 4}, true);
  const OpRun run = RunForward(training, MakeInputs(training, DType::kFloat64));
  std::mt19937_64 random(5);
  try {
    RunBackward(training, run, RandomOutputGradients(run.outputs, 1, DType::kFloat64, random));
    ADD_FAILURE() << "backward ran with a fused activation";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has a fused activation"), std::string::npos) << e.what();
  }
}

TEST(BatchNormTest, ParameterShapesAreInferredAndChecked) {
  std::vector<Shape> outputs = InferOutputShapes(BatchNormCase({}, {2, 7, 3}, true));
  EXPECT_EQ(outputs[0], (Shape{2, 7, 3}));
  EXPECT_EQ(outputs[1], (Shape{7}));
  EXPECT_EQ(MakeInputs(BatchNormCase({}, {2, 7, 3}, true), DType::kFloat32)[1].shape(), (Shape{7}));
  OpCase mismatched{"BatchNorm", {}, {{2, 7, 3}, {6}}};
  ExpectShapeError(mismatched, {"gamma", "(6)", "(7)"});
  ExpectShapeError({"BatchNorm", {{"axis", "3"}}, {{2, 7, 3}}}, {"axis", "(2,7,3)"});
  ExpectShapeError({"BatchNorm", {{"momentum", "1.5"}}, {{2, 7, 3}}}, {"momentum"});
}

TEST(BatchNormTest, InputRoles) {
  const OpDef& op = OpRegistry::Global().Get("BatchNorm");
  Attributes attrs = ParseOpAttributes(op, {}, "bn0");
  EXPECT_EQ(InputRoles(op, attrs),
            (std::vector<InputRole>{InputRole::kData, InputRole::kParameter, InputRole::kParameter,
                                    InputRole::kAuxiliary, InputRole::kAuxiliary}));
  EXPECT_EQ(NumVisibleOutputs(op, attrs), 1);
  EXPECT_EQ(InputHasGradient(op, attrs), (std::vector<bool>{true, true, true, false, false}));
}

// MXNet's dtype rule: float16 data keeps its statistics and parameters in float32; other dtypes
// use the data's. A parameter declared with another dtype is an error naming it.
TEST(BatchNormTest, ParametersOfFloat16DataAreFloat32) {
  const OpDef& op = OpRegistry::Global().Get("BatchNorm");
  const Attributes attrs = ParseOpAttributes(op, {}, "bn0");
  auto infer = [&](std::vector<std::optional<DType>> inputs) {
    DTypeInference dtypes;
    dtypes.node = "bn0";
    dtypes.inputs = std::move(inputs);
    dtypes.inputs.resize(5);
    InferDTypes(op, attrs, dtypes);
    return dtypes;
  };
  const DTypeInference half = infer({DType::kFloat16});
  EXPECT_EQ(half.inputs[0], DType::kFloat16);
  for (int i = 1; i < 5; ++i) EXPECT_EQ(half.inputs[i], DType::kFloat32) << i;
  EXPECT_EQ(half.outputs[0], DType::kFloat16);
  EXPECT_EQ(half.outputs[1], DType::kFloat32);
  EXPECT_EQ(half.outputs[2], DType::kFloat32);
  const DTypeInference wide = infer({DType::kFloat64});
  for (int i = 0; i < 5; ++i) EXPECT_EQ(wide.inputs[i], DType::kFloat64) << i;
  EXPECT_EQ(wide.outputs[1], DType::kFloat64);
  EXPECT_EQ(infer({std::nullopt, DType::kFloat32}).inputs[0], DType::kFloat32);
  try {
    infer({DType::kFloat16, DType::kFloat16});
    FAIL() << "float16 gamma accepted";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("bn0"), std::string::npos) << message;
    EXPECT_NE(message.find("gamma"), std::string::npos) << message;
    EXPECT_NE(message.find("float32"), std::string::npos) << message;
  }
}

Initializer Positive() {
  return [](HostTensor& tensor, std::mt19937_64& random) {
    std::uniform_real_distribution<double> uniform(0.5, 1.5);
    for (int64_t k = 0; k < tensor.size(); ++k) tensor.Set(k, uniform(random));
  };
}

MXLITE_GPU_CASES(BatchNorm) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  // BatchNorm: training, inference, fix_gamma, global stats, axis.
  const std::map<std::string, Initializer> bn_init = {{"moving_var", Positive()}};
  add({"BatchNorm", {{"fix_gamma", "false"}}, {{4, 3, 5, 5}}, bn_init});
  add({"BatchNorm", {}, {{4, 3, 5, 5}}, bn_init});
  add({"BatchNorm",
       {{"fix_gamma", "false"}, {"use_global_stats", "true"}},
       {{2, 3, 4, 4}},
       bn_init});
  add({"BatchNorm",
       {{"fix_gamma", "false"}, {"axis", "-1"}, {"eps", "1e-5"}},
       {{4, 5, 6}},
       bn_init});
  {
    OpCase inference{"BatchNorm", {{"fix_gamma", "false"}}, {{2, 3, 4, 4}}, bn_init};
    inference.is_train = false;
    add(inference);
    OpCase clamped{"BatchNorm",
                   {{"fix_gamma", "false"}, {"act_min", "0"}, {"act_max", "0.5"}},
                   {{2, 3, 4, 4}},
                   bn_init};
    clamped.is_train = false;  // a fused activation: forward only
    add(clamped);
  }
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
