// Initialisers, optimisers, schedules and metrics.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "core/error.h"
#include "scheduler/train/initializer.h"
#include "scheduler/train/metric.h"
#include "scheduler/train/optimizer.h"

namespace mxlite {
namespace {

NDArray Array(const std::vector<float>& values) {
  return NDArray::FromVector(values, Shape{static_cast<int64_t>(values.size())}, Context::CPU());
}

TEST(InitializerTest, NameRulesAndXavierScale) {
  std::mt19937_64 random(1);
  NDArray weight(Shape{64, 32, 3, 3}, Context::CPU());
  InitializeNamed("conv0_weight", weight, Xavier{}, random);
  const std::vector<float> values = weight.ToVector<float>();
  const double limit = std::sqrt(3.0 / ((32 * 9 + 64 * 9) / 2.0));
  double max_abs = 0, mean = 0;
  for (float v : values) max_abs = std::max(max_abs, static_cast<double>(std::abs(v))), mean += v;
  mean /= static_cast<double>(values.size());
  EXPECT_LE(max_abs, limit);
  EXPECT_GT(max_abs, 0.9 * limit);  // uses the range
  EXPECT_LT(std::abs(mean), 0.01);
  NDArray bias(Shape{64}, Context::CPU()), gamma(Shape{64}, Context::CPU());
  InitializeNamed("conv0_bias", bias, Xavier{}, random);
  InitializeNamed("bn0_gamma", gamma, Xavier{}, random);
  for (float v : bias.ToVector<float>()) EXPECT_EQ(v, 0.0f);
  for (float v : gamma.ToVector<float>()) EXPECT_EQ(v, 1.0f);
  NDArray vector_weight(Shape{10}, Context::CPU());
  EXPECT_THROW(InitializeNamed("odd_weight", vector_weight, Xavier{}, random), Error);
  InitializeNamed("odd_weight", vector_weight, Normal{0.5}, random);
}

TEST(OptimizerTest, SgdWithMomentumAndWeightDecayFollowsMXNet) {
  auto sgd = Optimizer::Sgd({.learning_rate = 0.1, .momentum = 0.9, .wd = 0.01});
  NDArray w = Array({1.0f, -2.0f});
  NDArray g = Array({0.5f, 0.25f});
  double w0 = 1.0, m0 = 0.0;
  for (int step = 0; step < 3; ++step) {
    sgd->Update("w", w, g);
    m0 = 0.9 * m0 - 0.1 * (0.5 + 0.01 * w0);
    w0 += m0;
  }
  EXPECT_NEAR(w.ToVector<float>()[0], w0, 1e-6);
  EXPECT_EQ(sgd->States().count("w:momentum"), 1u);
  auto plain = Optimizer::Sgd({.learning_rate = 0.5, .clip_gradient = 0.1});
  NDArray v = Array({1.0f});
  plain->Update("v", v, Array({3.0f}));  // clipped to 0.1
  EXPECT_NEAR(v.ToVector<float>()[0], 1.0 - 0.5 * 0.1, 1e-7);
  EXPECT_TRUE(plain->States().empty());
  EXPECT_THROW(plain->Update("v", v, Array({1.0f, 2.0f})), Error);
}

TEST(OptimizerTest, AdamFollowsMXNet) {
  auto adam = Optimizer::Adam({.learning_rate = 0.01});
  NDArray w = Array({0.5f});
  double weight = 0.5, m = 0, v = 0;
  for (int t = 1; t <= 4; ++t) {
    const double g = 0.2 * t;
    adam->Update("w", w, Array({static_cast<float>(g)}));
    m = 0.9 * m + 0.1 * g;
    v = 0.999 * v + 0.001 * g * g;
    weight -= 0.01 * std::sqrt(1 - std::pow(0.999, t)) / (1 - std::pow(0.9, t)) * m /
              (std::sqrt(v) + 1e-8);
    // The step counter advances once per UpdateAll; emulate that for the single parameter.
    adam->LoadStates(adam->States(), t);
  }
  EXPECT_NEAR(w.ToVector<float>()[0], weight, 1e-6);
}

TEST(LearningRateScheduleTest, FactorAndMultiFactor) {
  LearningRateSchedule factor = LearningRateSchedule::Factor(100, 0.5);
  EXPECT_DOUBLE_EQ(factor.Rate(0.1, 0), 0.1);
  EXPECT_DOUBLE_EQ(factor.Rate(0.1, 99), 0.1);
  EXPECT_DOUBLE_EQ(factor.Rate(0.1, 100), 0.05);
  EXPECT_DOUBLE_EQ(factor.Rate(0.1, 250), 0.025);
  LearningRateSchedule multi = LearningRateSchedule::MultiFactor({10, 30}, 0.1);
  EXPECT_DOUBLE_EQ(multi.Rate(1.0, 9), 1.0);
  EXPECT_NEAR(multi.Rate(1.0, 10), 0.1, 1e-12);
  EXPECT_NEAR(multi.Rate(1.0, 31), 0.01, 1e-12);
  EXPECT_THROW(LearningRateSchedule::Factor(0, 0.5), Error);
}

TEST(MetricTest, AccuracyAndCrossEntropy) {
  NDArray predictions = NDArray::FromVector<float>({0.7f, 0.2f, 0.1f, 0.1f, 0.3f, 0.6f},
                                                   Shape{2, 3}, Context::CPU());
  NDArray labels = Array({0.0f, 1.0f});
  AccuracyMetric accuracy;
  accuracy.Update(labels, predictions);
  EXPECT_DOUBLE_EQ(accuracy.Get(), 0.5);
  CrossEntropyMetric cross_entropy;
  cross_entropy.Update(labels, predictions);
  EXPECT_NEAR(cross_entropy.Get(), (-std::log(0.7) - std::log(0.3)) / 2, 1e-6);
  EXPECT_THROW(accuracy.Update(Array({5.0f, 0.0f}), predictions), Error);
  accuracy.Reset();
  EXPECT_EQ(accuracy.count(), 0);
}

}  // namespace
}  // namespace mxlite
