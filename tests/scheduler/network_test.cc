// Whole networks through the executor with the real operators: finite-difference gradients of
// every parameter, the same results on every engine with and without bulking, mirroring, and the
// memory plan checked by poisoning every planned buffer.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "core/settings.h"
#include "scheduler/graph/executor.h"
#include "scheduler/graph/graph_builder.h"
#include "scheduler/train/initializer.h"

namespace mxlite {
namespace {

// conv -> batchnorm -> relu -> maxpool, a residual-style branch joined by add, then fc.
Graph SmallConvNet(DType dtype, int batch = 2) {
  GraphBuilder g;
  Symbol x = g.Input("data", {batch, 2, 6, 6}, dtype);
  Symbol y = g.Conv(x, {.num_filter = 3, .kernel = {3, 3}, .pad = {1, 1}});
  y = g.Relu(g.BatchNorm(y));
  Symbol branch = g.Tanh(g.Conv(y, {.num_filter = 3, .kernel = {1, 1}}));
  y = g.Add(y, branch);
  y = g.MaxPool(y, {.kernel = {2, 2}, .stride = {2, 2}});
  y = g.FullyConnected(g.Flatten(y), {.num_hidden = 4});
  return g.Build({y});
}

template <typename T>
void Fill(NDArray& array, std::mt19937_64& random) {
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<T> values(static_cast<size_t>(array.size()));
  for (T& value : values) value = static_cast<T>(uniform(random));
  array.SyncCopyFromCPU(values.data(), values.size() * sizeof(T));
}

// Sets inputs and parameters to reproducible random values (auxiliary states by the name rules).
template <typename T>
void Randomize(Executor& exec, uint64_t seed) {
  std::mt19937_64 random(seed);
  Fill<T>(exec.Arg("data"), random);
  for (const std::string& name : exec.ParameterNames()) Fill<T>(exec.Arg(name), random);
  for (const std::string& name : exec.AuxiliaryNames()) {
    InitializeNamed(name, exec.Arg(name), Zeros{}, random);
  }
}

double Projection(Executor& exec, const std::vector<double>& head) {
  exec.Forward(true);
  const std::vector<double> out = exec.outputs()[0].ToVector<double>();
  double total = 0;
  for (size_t i = 0; i < out.size(); ++i) total += out[i] * head[i];
  return total;
}

TEST(NetworkTest, ParameterGradientsMatchFiniteDifferences) {
  auto exec = Executor::Bind(SmallConvNet(DType::kFloat64), {.training = true});
  Randomize<double>(*exec, 3);
  std::mt19937_64 random(5);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<double> head(static_cast<size_t>(exec->outputs()[0].size()));
  for (double& value : head) value = uniform(random);
  const NDArray head_array = NDArray::FromVector(head, exec->outputs()[0].shape(), Context::CPU());

  exec->Forward(true);
  exec->Backward({head_array});
  for (const std::string& name : exec->ParameterNames()) {
    SCOPED_TRACE(name);
    const std::vector<double> analytic = exec->Gradient(name).ToVector<double>();
    NDArray& param = exec->Arg(name);
    std::vector<double> values = param.ToVector<double>();
    for (size_t i = 0; i < values.size(); i += std::max<size_t>(1, values.size() / 12)) {
      const double original = values[i];
      const double step = 1e-6;
      values[i] = original + step;
      param.SyncCopyFromCPU(values.data(), values.size() * 8);
      const double plus = Projection(*exec, head);
      values[i] = original - step;
      param.SyncCopyFromCPU(values.data(), values.size() * 8);
      const double minus = Projection(*exec, head);
      values[i] = original;
      param.SyncCopyFromCPU(values.data(), values.size() * 8);
      const double numeric = (plus - minus) / (2 * step);
      EXPECT_NEAR(analytic[i], numeric, 1e-5 * std::max(1.0, std::abs(numeric))) << "element " << i;
    }
  }
}

// The builder's shorthands for the layers modern convnets use, on data 0, 1, 2, ...: the shapes
// and values the ops they name give.
TEST(NetworkTest, ShorthandsOfModernLayers) {
  GraphBuilder g;
  Symbol x = g.Input("data", {1, 2, 2, 2});
  Symbol gate = g.HardSigmoid(g.Mean(x, {2, 3}, true));
  Symbol gated = g.Multiply(x, gate);
  Symbol up = g.Resize(x, {4, 4});
  Symbol crop = g.Slice(x, {0, 1}, {1, 2});
  Symbol high = g.Reshape(g.Maximum(x, g.Sum(x, {1}, true)), {1, -1});
  Symbol low = g.Minimum(x, g.Mean(x, {1}, true));
  auto exec = Executor::Bind(g.Build({gated, up, crop, high, low}), {});
  std::vector<float> data(8);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  exec->Arg("data").SyncCopyFromCPU(data.data(), data.size() * sizeof(float));
  exec->Forward(false);
  const auto& outs = exec->outputs();
  EXPECT_EQ(outs[0].shape(), Shape({1, 2, 2, 2}));
  EXPECT_EQ(outs[1].shape(), Shape({1, 2, 4, 4}));
  EXPECT_EQ(outs[2].shape(), Shape({1, 1, 2, 2}));
  EXPECT_EQ(outs[3].shape(), Shape({1, 8}));
  // Channel 0 (0..3, mean 1.5): gate 1.5 / 6 + 0.5 = 0.75; channel 1 (mean 5.5): gate 1.
  EXPECT_FLOAT_EQ(outs[0].ToVector<float>()[1], 0.75f);
  EXPECT_FLOAT_EQ(outs[0].ToVector<float>()[5], 5.0f);
  EXPECT_FLOAT_EQ(outs[1].ToVector<float>()[3], 1.0f);  // row 0, column 3 <- pixel (0, 1)
  EXPECT_EQ(outs[2].ToVector<float>(), std::vector<float>({4, 5, 6, 7}));
  // The channel sum is (4, 6, 8, 10) and the channel mean (2, 3, 4, 5) per pixel.
  EXPECT_EQ(outs[3].ToVector<float>(), std::vector<float>({4, 6, 8, 10, 4, 6, 8, 10}));
  EXPECT_EQ(outs[4].ToVector<float>(), std::vector<float>({0, 1, 2, 3, 2, 3, 4, 5}));
}

struct RunResult {
  std::vector<float> output;
  std::vector<std::vector<float>> gradients;
  MemoryReport memory;
};

// One training step of a float32 network, seeded identically every time.
RunResult TrainStep(const Graph& graph, bool poison_buffers = false) {
  auto exec = Executor::Bind(graph, {.training = true});
  Randomize<float>(*exec, 11);
  if (poison_buffers) exec->FillPlannedBuffers(std::numeric_limits<double>::quiet_NaN());
  exec->Forward(true);
  exec->Backward({NDArray::FromVector(std::vector<float>(16, 0.5f), exec->outputs()[0].shape(),
                                      Context::CPU())});
  RunResult result{exec->outputs()[0].ToVector<float>(), {}, exec->memory_report()};
  for (const std::string& name : exec->ParameterNames()) {
    result.gradients.push_back(exec->Gradient(name).ToVector<float>());
  }
  return result;
}

class NetworkSettingsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* name : {"MXNET_ENGINE_TYPE", "MXNET_EXEC_BULK_EXEC_TRAIN",
                             "MXNET_BACKWARD_DO_MIRROR", "NNVM_EXEC_MATCH_RANGE",
                             "MXNET_EXEC_ENABLE_INPLACE"}) {
      settings().Reset(name);
    }
  }
};

TEST_F(NetworkSettingsTest, SameResultsOnEveryEngineWithAndWithoutBulking) {
  settings().Set("MXNET_ENGINE_TYPE", "NaiveEngine");
  settings().Set("MXNET_EXEC_BULK_EXEC_TRAIN", "0");
  const RunResult reference = TrainStep(SmallConvNet(DType::kFloat32, 4));
  for (const char* engine : {"NaiveEngine", "ThreadedEngine", "ThreadedEnginePerDevice"}) {
    for (const char* bulk : {"0", "1"}) {
      SCOPED_TRACE(std::string(engine) + " bulk " + bulk);
      settings().Set("MXNET_ENGINE_TYPE", engine);
      settings().Set("MXNET_EXEC_BULK_EXEC_TRAIN", bulk);
      const RunResult result = TrainStep(SmallConvNet(DType::kFloat32, 4));
      EXPECT_EQ(result.output, reference.output);
      EXPECT_EQ(result.gradients, reference.gradients);
    }
  }
}

// Four blocks of conv -> relu -> sigmoid: without mirroring both activations of every block are
// kept for backward; mirrored, only each convolution's output is, and a block's activations are
// recomputed when backward reaches it (MXNet's trade of compute for memory).
Graph ActivationChain() {
  GraphBuilder g;
  Symbol y = g.Input("data", {4, 3, 6, 6});
  for (int block = 0; block < 4; ++block) {
    y = g.Conv(y, {.num_filter = 3, .kernel = {3, 3}, .pad = {1, 1}});
    y = g.Sigmoid(g.Relu(y));
  }
  return g.Build({g.FullyConnected(y, {.num_hidden = 4})});
}

TEST_F(NetworkSettingsTest, MirroringGivesTheSameGradientsWithLessMemory) {
  const RunResult plain = TrainStep(ActivationChain());
  settings().Set("MXNET_BACKWARD_DO_MIRROR", "1");
  const RunResult mirrored = TrainStep(ActivationChain());
  EXPECT_GT(mirrored.memory.mirrored_count, 0);
  EXPECT_LT(mirrored.memory.planned_bytes, plain.memory.planned_bytes);
  EXPECT_EQ(mirrored.output, plain.output);
  EXPECT_EQ(mirrored.gradients, plain.gradients);
}

TEST_F(NetworkSettingsTest, MemoryPlanNeverSharesLiveBytes) {
  // Without sharing nothing can collide: the reference.
  settings().Set("NNVM_EXEC_MATCH_RANGE", "0");
  settings().Set("MXNET_EXEC_ENABLE_INPLACE", "false");
  const RunResult unshared = TrainStep(SmallConvNet(DType::kFloat32, 4), /*poison_buffers=*/true);
  EXPECT_EQ(unshared.memory.planned_bytes, unshared.memory.unplanned_bytes);
  settings().Reset("NNVM_EXEC_MATCH_RANGE");
  settings().Reset("MXNET_EXEC_ENABLE_INPLACE");
  // With the plan, buffers poisoned with NaN beforehand: a value read after another tensor
  // overwrote it would change (or NaN) the results.
  const RunResult planned = TrainStep(SmallConvNet(DType::kFloat32, 4), /*poison_buffers=*/true);
  EXPECT_LT(planned.memory.planned_bytes, planned.memory.unplanned_bytes);
  EXPECT_GT(planned.memory.inplace_count, 0);
  EXPECT_EQ(planned.output, unshared.output);
  EXPECT_EQ(planned.gradients, unshared.gradients);
  for (float value : planned.output) EXPECT_FALSE(std::isnan(value));
}

}  // namespace
}  // namespace mxlite

namespace mxlite {
namespace {

TEST_F(NetworkSettingsTest, TemporaryWorkspacesDoNotChangeResults) {
  const RunResult one = TrainStep(SmallConvNet(DType::kFloat32, 4));
  settings().Set("MXNET_EXEC_NUM_TEMP", "3");
  const RunResult three = TrainStep(SmallConvNet(DType::kFloat32, 4));
  settings().Reset("MXNET_EXEC_NUM_TEMP");
  EXPECT_EQ(one.output, three.output);
  EXPECT_EQ(one.gradients, three.gradients);
}

}  // namespace
}  // namespace mxlite
