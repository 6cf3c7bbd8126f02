#include <gtest/gtest.h>

#include <cmath>

#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

using Attrs = std::map<std::string, std::string>;

void Ones(HostTensor& tensor, std::mt19937_64&) {
  for (int64_t i = 0; i < tensor.size(); ++i) tensor.Set(i, 1.0);
}

HostTensor RandomLike(const Shape& shape, uint64_t seed) {
  HostTensor tensor(shape, DType::kFloat64);
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (int64_t i = 0; i < tensor.size(); ++i) tensor.Set(i, uniform(random));
  return tensor;
}

double KeptFraction(const HostTensor& output) {
  int64_t kept = 0;
  for (int64_t i = 0; i < output.size(); ++i) kept += output.Get(i) != 0;
  return static_cast<double>(kept) / static_cast<double>(output.size());
}

TEST(DropoutTest, KeptFractionAndScaleOnALargeTensor) {
  // 4e5 draws: the kept fraction's standard deviation is below 8e-4, so 0.005 is > 6 sigma.
  for (double p : {0.3, 0.9}) {
    OpCase test_case{"Dropout", {{"p", std::to_string(p)}}, {{400, 1000}}};
    test_case.init["data"] = Ones;
    OpRun run = RunForward(test_case, MakeInputs(test_case, DType::kFloat32));
    EXPECT_NEAR(KeptFraction(run.outputs[0]), 1 - p, 0.005) << "p=" << p;
    for (int64_t i = 0; i < run.outputs[0].size(); i += 997) {
      const double value = run.outputs[0].Get(i);
      EXPECT_TRUE(value == 0 || std::abs(value - 1 / (1 - p)) < 1e-5) << value;
      EXPECT_EQ(run.outputs[1].Get(i), value) << "the mask holds the applied factor";
    }
  }
}

TEST(DropoutTest, PCloseToOne) {
  OpCase test_case{"Dropout", {{"p", "0.99"}}, {{200000}}};
  test_case.init["data"] = Ones;
  OpRun run = RunForward(test_case, MakeInputs(test_case, DType::kFloat64));
  EXPECT_NEAR(KeptFraction(run.outputs[0]), 0.01, 0.002);
  for (double value : run.outputs[0].Values()) {
    EXPECT_TRUE(value == 0 || std::abs(value - 100) < 1e-9) << value;
  }
}

TEST(DropoutTest, BackwardMultipliesByTheForwardMask) {
  OpCase test_case{"Dropout", {{"p", "0.4"}}, {{7, 9, 5}}};
  OpRun run = RunForward(test_case, MakeInputs(test_case, DType::kFloat64));
  HostTensor grad = RandomLike({7, 9, 5}, 3);
  HostTensor dx = RunBackward(test_case, run, {grad, HostTensor({7, 9, 5}, DType::kFloat64)})[0];
  int dropped = 0;
  for (int64_t i = 0; i < dx.size(); ++i) {
    EXPECT_EQ(dx.Get(i), grad.Get(i) * run.outputs[1].Get(i));
    dropped += run.outputs[0].Get(i) == 0;
    if (run.outputs[0].Get(i) == 0) {
      EXPECT_EQ(dx.Get(i), 0.0);
    }
  }
  EXPECT_GT(dropped, 0);
  CheckGradients(test_case);
}

TEST(DropoutTest, InferenceIsTheIdentity) {
  OpCase test_case{"Dropout", {{"p", "0.5"}}, {{4, 6}}};
  test_case.is_train = false;
  std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat32);
  OpRun run = RunForward(test_case, inputs);
  EXPECT_EQ(run.outputs[0].Values(), inputs[0].Values());
  HostTensor grad = RandomLike({4, 6}, 5).As(DType::kFloat32);
  EXPECT_EQ(RunBackward(test_case, run, {grad, HostTensor({4, 6}, DType::kFloat32)})[0].Values(),
            grad.Values());
  CheckGradients(test_case);
}

TEST(DropoutTest, ModeAlwaysDropsAtInferenceToo) {
  OpCase test_case{"Dropout", {{"p", "0.5"}, {"mode", "always"}}, {{10000}}};
  test_case.is_train = false;
  test_case.init["data"] = Ones;
  OpRun run = RunForward(test_case, MakeInputs(test_case, DType::kFloat64));
  EXPECT_NEAR(KeptFraction(run.outputs[0]), 0.5, 0.05);
  CheckGradients({"Dropout", {{"p", "0.5"}, {"mode", "always"}}, {{4, 5}}, {}, false});
}

TEST(DropoutTest, PZeroKeepsEverythingAndPOneDropsEverything) {
  OpCase keep{"Dropout", {{"p", "0"}}, {{3, 5}}};
  std::vector<HostTensor> inputs = MakeInputs(keep, DType::kFloat64);
  EXPECT_EQ(RunForward(keep, inputs).outputs[0].Values(), inputs[0].Values());
  CheckGradients(keep);

  OpCase drop{"Dropout", {{"p", "1"}}, {{3, 5}}};
  OpRun run = RunForward(drop, inputs);
  for (double value : run.outputs[0].Values()) EXPECT_EQ(value, 0.0);
  HostTensor grad = RandomLike({3, 5}, 9);
  for (double value :
       RunBackward(drop, run, {grad, HostTensor({3, 5}, DType::kFloat64)})[0].Values()) {
    EXPECT_EQ(value, 0.0);
  }
}

TEST(DropoutTest, AxesShareOneDrawAlongThoseDims) {
  // axes=(2,3) on NCHW: each (n, c) feature map is kept or dropped whole.
  OpCase test_case{"Dropout", {{"p", "0.5"}, {"axes", "(2,3)"}}, {{8, 16, 3, 5}}};
  test_case.init["data"] = Ones;
  OpRun run = RunForward(test_case, MakeInputs(test_case, DType::kFloat64));
  int kept_maps = 0;
  for (int64_t map = 0; map < 8 * 16; ++map) {
    const double first = run.outputs[0].Get(map * 15);
    EXPECT_TRUE(first == 0 || first == 2) << first;
    kept_maps += first != 0;
    for (int64_t k = 0; k < 15; ++k) EXPECT_EQ(run.outputs[0].Get(map * 15 + k), first);
  }
  EXPECT_GT(kept_maps, 32);  // 128 fair draws: far from all or nothing
  EXPECT_LT(kept_maps, 96);
  CheckGradients({"Dropout", {{"p", "0.5"}, {"axes", "(2,3)"}}, {{2, 3, 3, 2}}});

  // axes=(0,-1): shared along the batch and the last dim.
  OpCase shared{"Dropout", {{"p", "0.5"}, {"axes", "(0,-1)"}}, {{4, 30, 6}}};
  shared.init["data"] = Ones;
  OpRun shared_run = RunForward(shared, MakeInputs(shared, DType::kFloat32));
  for (int64_t n = 1; n < 4; ++n) {
    for (int64_t i = 0; i < 30 * 6; ++i) {
      EXPECT_EQ(shared_run.outputs[0].Get(n * 180 + i), shared_run.outputs[0].Get(i));
    }
  }
  for (int64_t row = 0; row < 30; ++row) {
    for (int64_t k = 1; k < 6; ++k) {
      EXPECT_EQ(shared_run.outputs[0].Get(row * 6 + k), shared_run.outputs[0].Get(row * 6));
    }
  }
  CheckGradients({"Dropout", {{"p", "0.3"}, {"axes", "(0,-1)"}}, {{3, 4, 2}}});
}

// Calls the forward kernel directly with a generator of our own.
HostTensor ForwardWithGenerator(std::mt19937_64& random, const HostTensor& input) {
  const OpDef& op = OpRegistry::Global().Get("Dropout");
  Attributes attrs = ParseOpAttributes(op, {{"p", "0.5"}}, "drop0");
  HostTensor x = input, y(input.shape(), input.dtype()), mask(input.shape(), input.dtype());
  ScratchSpace scratch(Context::CPU());
  OpContext ctx{Context::CPU(), true, nullptr, &scratch, &random, nullptr, "drop0"};
  ForwardKernelFor(op, DeviceType::kCPU)(ctx, attrs, {x.View()}, {y.View(), mask.View()},
                                         {WriteMode::kWrite, WriteMode::kWrite});
  return y;
}

TEST(DropoutTest, EachCallDrawsAFreshMaskFromTheContextGenerator) {
  EXPECT_TRUE(OpRegistry::Global().Get("Dropout").needs_random);
  HostTensor input(Shape{1000}, DType::kFloat32);
  for (int64_t i = 0; i < input.size(); ++i) input.Set(i, 1.0);
  std::mt19937_64 random(1);
  HostTensor first = ForwardWithGenerator(random, input);
  HostTensor second = ForwardWithGenerator(random, input);
  EXPECT_NE(first.Values(), second.Values());
  std::mt19937_64 replay(1);
  EXPECT_EQ(ForwardWithGenerator(replay, input).Values(), first.Values());
}

TEST(DropoutTest, InvalidAttributesAreClearErrors) {
  ExpectShapeError({"Dropout", {{"p", "1.5"}}, {{2, 2}}}, {"p=1.5"});
  ExpectShapeError({"Dropout", {{"axes", "(2)"}}, {{2, 2}}}, {"axis 2", "(2,2)"});
}

MXLITE_GPU_CASES(Dropout) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  // Dropout: the same mask as the CPU (same seed), shared axes, inference.
  add({"Dropout", {{"p", "0.3"}}, {{4, 5, 6}}});
  add({"Dropout", {{"p", "0.5"}, {"axes", "(2,3)"}}, {{2, 3, 4, 5}}});
  {
    OpCase inference{"Dropout", {{"p", "0.5"}}, {{3, 4}}};
    inference.is_train = false;
    add(inference);
  }
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
