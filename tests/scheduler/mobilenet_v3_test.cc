// MobileNet-V3-Small built in code (scheduler/train/model_zoo.h) trains: torchvision's parameter
// count, every parameter's gradient against central differences through the whole network (hard
// swish, squeeze-excitation gates, depthwise layers, BatchNorm on batch statistics) in float64,
// and a few SGD steps of fine-tuning in float32 that lower the loss.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "scheduler/graph/executor.h"
#include "scheduler/train/model_zoo.h"
#include "scheduler/train/optimizer.h"

namespace mxlite {
namespace {

template <typename T>
void FillUniform(NDArray& array, std::mt19937_64& random, double scale) {
  std::uniform_real_distribution<double> uniform(-scale, scale);
  std::vector<T> values(static_cast<size_t>(array.size()));
  for (T& value : values) value = static_cast<T>(uniform(random));
  array.SyncCopyFromCPU(values.data(), values.size() * sizeof(T));
}

// Data in [-1, 1]; weights scaled by fan-in as an initialiser would (so activations neither
// vanish nor blow up through 15 layers); BatchNorm's gamma near 1.
template <typename T>
void Randomize(Executor& exec, uint64_t seed) {
  std::mt19937_64 random(seed);
  FillUniform<T>(exec.Arg("data"), random, 1.0);
  for (const std::string& name : exec.ParameterNames()) {
    if (name == "softmax_label") continue;
    NDArray& param = exec.Arg(name);
    const Shape& shape = param.shape();
    if (name.ends_with("_gamma")) {
      std::vector<T> ones(static_cast<size_t>(param.size()), T(1));
      param.SyncCopyFromCPU(ones.data(), ones.size() * sizeof(T));
      continue;
    }
    const int64_t fan_in = shape.ndim() >= 2 ? shape.size() / shape[0] : 1;
    FillUniform<T>(param, random, std::sqrt(3.0 / static_cast<double>(fan_in)));
  }
}

TEST(MobileNetV3SmallTest, HasTorchvisionsParameters) {
  auto exec = Executor::Bind(MobileNetV3Small({.batch = 1}), {});
  int64_t parameters = 0;
  for (const std::string& name : exec->ParameterNames()) parameters += exec->Arg(name).size();
  EXPECT_EQ(parameters, 2542856);  // torchvision.models.mobilenet_v3_small()
  EXPECT_EQ(exec->outputs()[0].shape(), Shape({1, 1000}));
}

double Projection(Executor& exec, const std::vector<double>& head) {
  exec.Forward(true);
  const std::vector<double> out = exec.outputs()[0].ToVector<double>();
  double total = 0;
  for (size_t i = 0; i < out.size(); ++i) total += out[i] * head[i];
  return total;
}

// The gradient of a random projection of the logits with respect to every parameter, against
// central differences, on two 48x48 images (the last blocks see 2x2 and 1x1 maps).
TEST(MobileNetV3SmallTest, EveryParameterGradientMatchesFiniteDifferences) {
  auto exec = Executor::Bind(
      MobileNetV3Small(
          {.batch = 2, .image_size = 48, .classes = 5, .dtype = DType::kFloat64, .dropout = 0}),
      {.training = true});
  Randomize<double>(*exec, 3);
  std::mt19937_64 random(5);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<double> head(static_cast<size_t>(exec->outputs()[0].size()));
  for (double& value : head) value = uniform(random);
  exec->Forward(true);
  exec->Backward({NDArray::FromVector(head, exec->outputs()[0].shape(), Context::CPU())});

  int checked = 0;
  for (const std::string& name : exec->ParameterNames()) {
    SCOPED_TRACE(name);
    const std::vector<double> analytic = exec->Gradient(name).ToVector<double>();
    NDArray& param = exec->Arg(name);
    std::vector<double> values = param.ToVector<double>();
    std::uniform_int_distribution<size_t> pick(0, values.size() - 1);
    for (int sample = 0; sample < 2; ++sample) {
      const size_t i = pick(random);
      const double original = values[i], step = 1e-5;
      values[i] = original + step;
      param.SyncCopyFromCPU(values.data(), values.size() * 8);
      const double plus = Projection(*exec, head);
      values[i] = original - step;
      param.SyncCopyFromCPU(values.data(), values.size() * 8);
      const double minus = Projection(*exec, head);
      values[i] = original;
      param.SyncCopyFromCPU(values.data(), values.size() * 8);
      const double numeric = (plus - minus) / (2 * step);
      EXPECT_NEAR(analytic[i], numeric, 1e-4 * std::max(1.0, std::abs(numeric))) << "element " << i;
      ++checked;
    }
  }
  EXPECT_GT(checked, 200);  // every convolution, BatchNorm and classifier parameter
}

// Fine-tuning as a user would: the network under SoftmaxOutput, SGD with momentum, one fixed
// batch; a few steps lower the loss on it.
TEST(MobileNetV3SmallTest, FineTuningStepsLowerTheLoss) {
  const int64_t batch = 8, classes = 4;
  auto exec = Executor::Bind(MobileNetV3Small({.batch = batch,
                                               .image_size = 32,
                                               .classes = classes,
                                               .dropout = 0,
                                               .softmax_output = true}),
                             {.training = true});
  Randomize<float>(*exec, 7);
  std::vector<float> labels(batch);
  for (int64_t i = 0; i < batch; ++i)
    labels[static_cast<size_t>(i)] = static_cast<float>(i % classes);
  exec->Arg("softmax_label").SyncCopyFromCPU(labels.data(), labels.size() * sizeof(float));

  auto loss = [&] {  // on the batch's statistics, as the steps see it
    exec->Forward(true);
    const std::vector<float> p = exec->outputs()[0].ToVector<float>();
    double total = 0;
    for (int64_t i = 0; i < batch; ++i) {
      total -= std::log(
          std::max(1e-12, static_cast<double>(p[static_cast<size_t>(i * classes + i % classes)])));
    }
    return total / batch;
  };
  const double before = loss();
  auto sgd = Optimizer::Sgd({.learning_rate = 0.02, .momentum = 0.9});
  for (int step = 0; step < 6; ++step) {
    exec->Forward(true);
    exec->Backward();
    sgd->UpdateAll(*exec);
  }
  const double after = loss();
  EXPECT_TRUE(std::isfinite(after));
  EXPECT_LT(after, before);
}

}  // namespace
}  // namespace mxlite
