// The C API (python_stub/c_api/c_api.h): a network driven through it gives exactly what the C++
// API gives (so the Python package, which passes bytes through it, matches C++ too); training
// steps match; errors come back as -1 with the message, never as exceptions.
#include "python_stub/c_api/c_api.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "scheduler/graph/executor.h"
#include "scheduler/graph/graph_builder.h"
#include "scheduler/train/initializer.h"
#include "scheduler/train/optimizer.h"

namespace mxlite {
namespace {

constexpr int64_t kBatch = 4, kFeatures = 6, kHidden = 5, kClasses = 3;

std::vector<float> Ramp(int64_t count, float scale, float offset) {
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i) values[i] = scale * static_cast<float>((i * 7) % 11) + offset;
  return values;
}

// Every call below must succeed; on failure, the C side's message is the test's message.
void Ok(int status) { ASSERT_EQ(status, 0) << MXGetLastError(); }

std::vector<float> ReadArray(NDArrayHandle array) {
  int ndim = 0;
  int64_t dims[MX_MAX_DIMS];
  EXPECT_EQ(MXNDArrayGetShape(array, &ndim, dims), 0) << MXGetLastError();
  int64_t count = 1;
  for (int i = 0; i < ndim; ++i) count *= dims[i];
  std::vector<float> values(count);
  EXPECT_EQ(MXNDArraySyncCopyToCPU(array, values.data(), values.size() * sizeof(float)), 0)
      << MXGetLastError();
  return values;
}

// fc(5) -> relu -> fc(3) -> SoftmaxOutput, trained for a few SGD steps from Xavier(seed 1).
struct Results {
  std::vector<std::vector<float>> outputs;  // per step
  std::vector<float> weight_gradient;       // fc0_weight after the last backward
  std::vector<float> weight;                // fc1_weight after the last update
};

constexpr int kSteps = 3;
const std::vector<float> kData = Ramp(kBatch * kFeatures, 0.25f, -1.0f);
const std::vector<float> kLabels = {0, 2, 1, 2};

Results RunWithCpp() {
  GraphBuilder g;
  Symbol x = g.Input("data", {kBatch, kFeatures});
  x = g.Relu(g.FullyConnected(x, {.num_hidden = kHidden}));
  x = g.FullyConnected(x, {.num_hidden = kClasses});
  Graph net = g.Build({g.SoftmaxOutput(x, g.Input("softmax_label", {kBatch}))});
  auto exec = Executor::Bind(net, {.ctx = Context::CPU(), .training = true});
  InitializeParameters(*exec, Xavier{}, /*seed=*/1);
  auto sgd = Optimizer::Sgd({.learning_rate = 0.1, .momentum = 0.9, .rescale_grad = 0.25});
  exec->Arg("data").SyncCopyFromCPU(kData.data(), kData.size() * sizeof(float));
  exec->Arg("softmax_label").SyncCopyFromCPU(kLabels.data(), kLabels.size() * sizeof(float));
  Results results;
  for (int step = 0; step < kSteps; ++step) {
    exec->Forward(true);
    exec->Backward();
    sgd->UpdateAll(*exec);
    results.outputs.push_back(exec->outputs()[0].ToVector<float>());
  }
  results.weight_gradient = exec->Gradient("fc0_weight").ToVector<float>();
  results.weight = exec->Arg("fc1_weight").ToVector<float>();
  return results;
}

MXSymbol Op(GraphBuilderHandle g, const char* op, std::vector<MXSymbol> inputs,
            std::vector<const char*> keys, std::vector<const char*> values) {
  MXSymbol out = -1;
  EXPECT_EQ(MXGraphBuilderOp(g, op, inputs.size(), inputs.data(), keys.size(), keys.data(),
                             values.data(), nullptr, &out),
            0)
      << MXGetLastError();
  return out;
}

Results RunWithCApi() {
  GraphBuilderHandle g = nullptr;
  Ok(MXGraphBuilderCreate(&g));
  const int64_t data_dims[] = {kBatch, kFeatures}, label_dims[] = {kBatch};
  MXSymbol data = -1, label = -1;
  Ok(MXGraphBuilderInput(g, "data", data_dims, 2, "float32", &data));
  MXSymbol x = Op(g, "FullyConnected", {data}, {"num_hidden"}, {"5"});
  x = Op(g, "Activation", {x}, {"act_type"}, {"relu"});
  x = Op(g, "FullyConnected", {x}, {"num_hidden"}, {"3"});
  Ok(MXGraphBuilderInput(g, "softmax_label", label_dims, 1, "float32", &label));
  MXSymbol loss = Op(g, "SoftmaxOutput", {x, label}, {}, {});
  GraphHandle graph = nullptr;
  Ok(MXGraphBuilderBuild(g, 1, &loss, &graph));
  Ok(MXGraphBuilderFree(g));

  ExecutorHandle exec = nullptr;
  Ok(MXExecutorBind(graph, "cpu", 1, 0, nullptr, nullptr, 0, nullptr, 0, nullptr, nullptr, nullptr,
                    0, &exec));
  Ok(MXGraphFree(graph));  // the executor keeps its own copy
  Ok(MXExecutorInitParameters(exec, "xavier", -1, 1));
  const char* keys[] = {"learning_rate", "momentum", "rescale_grad"};
  const char* values[] = {"0.1", "0.9", "0.25"};
  OptimizerHandle sgd = nullptr;
  Ok(MXOptimizerCreate("sgd", 3, keys, values, &sgd));
  NDArrayHandle data_array = nullptr, label_array = nullptr, output = nullptr;
  Ok(MXExecutorGetArg(exec, "data", &data_array));
  Ok(MXExecutorGetArg(exec, "softmax_label", &label_array));
  Ok(MXNDArraySyncCopyFromCPU(data_array, kData.data(), kData.size() * sizeof(float)));
  Ok(MXNDArraySyncCopyFromCPU(label_array, kLabels.data(), kLabels.size() * sizeof(float)));
  Ok(MXExecutorGetOutput(exec, 0, &output));
  Results results;
  for (int step = 0; step < kSteps; ++step) {
    Ok(MXExecutorForward(exec, 1));
    Ok(MXExecutorBackward(exec, 0, nullptr));
    Ok(MXOptimizerUpdateAll(sgd, exec));
    results.outputs.push_back(ReadArray(output));
  }
  NDArrayHandle gradient = nullptr, weight = nullptr;
  Ok(MXExecutorGetGradient(exec, "fc0_weight", &gradient));
  Ok(MXExecutorGetArg(exec, "fc1_weight", &weight));
  results.weight_gradient = ReadArray(gradient);
  results.weight = ReadArray(weight);
  Ok(MXExecutorFree(exec));  // the handles taken from it stay valid
  EXPECT_EQ(ReadArray(weight), results.weight);
  for (NDArrayHandle array : {data_array, label_array, output, gradient, weight}) {
    Ok(MXNDArrayFree(array));
  }
  Ok(MXOptimizerFree(sgd));
  return results;
}

TEST(CApiTest, TrainingStepsGiveExactlyTheCppResults) {
  const Results cpp = RunWithCpp();
  const Results c = RunWithCApi();
  ASSERT_EQ(c.outputs.size(), cpp.outputs.size());
  for (size_t step = 0; step < cpp.outputs.size(); ++step) {
    EXPECT_EQ(c.outputs[step], cpp.outputs[step]) << "step " << step;
  }
  EXPECT_EQ(c.weight_gradient, cpp.weight_gradient);
  EXPECT_EQ(c.weight, cpp.weight);
  EXPECT_NE(cpp.outputs.front(), cpp.outputs.back());  // the steps did change something
}

TEST(CApiTest, ErrorsReturnMinusOneWithTheMessage) {
  GraphBuilderHandle g = nullptr;
  Ok(MXGraphBuilderCreate(&g));
  MXSymbol out = 123;
  EXPECT_EQ(MXGraphBuilderOp(g, "NoSuchOp", 0, nullptr, 0, nullptr, nullptr, nullptr, &out), -1);
  EXPECT_NE(std::string(MXGetLastError()).find("unknown op 'NoSuchOp'"), std::string::npos)
      << MXGetLastError();
  EXPECT_EQ(out, 123);  // outputs are written only on success
  EXPECT_EQ(MXGraphBuilderOp(g, "Activation", 1, &out, 0, nullptr, nullptr, nullptr, &out), -1);
  EXPECT_NE(std::string(MXGetLastError()).find("symbol 123 does not belong"), std::string::npos);
  Ok(MXGraphBuilderFree(g));

  EXPECT_EQ(MXSettingSet("MXNET_ENGINE_TYPE", "Foo"), -1);
  EXPECT_NE(std::string(MXGetLastError()).find("invalid value 'Foo' for MXNET_ENGINE_TYPE"),
            std::string::npos);
  EXPECT_EQ(MXExecutorForward(nullptr, 0), -1);
  EXPECT_STREQ(strstr(MXGetLastError(), "ExecutorHandle is NULL"), "ExecutorHandle is NULL");
  Ok(MXNDArrayFree(nullptr));  // freeing NULL is a no-op
}

TEST(CApiTest, ArraysFromHostBuffersRoundTrip) {
  const std::vector<double> values = {1.5, -2, 3.25, 0, 7, -8};
  const int64_t dims[] = {2, 3};
  NDArrayHandle array = nullptr;
  Ok(MXNDArrayCreateFromCPU(dims, 2, "float64", "cpu", values.data(), 48, &array));
  std::vector<double> back(6);
  Ok(MXNDArraySyncCopyToCPU(array, back.data(), 48));
  EXPECT_EQ(back, values);
  const char* dtype = nullptr;
  Ok(MXNDArrayGetDType(array, &dtype));
  EXPECT_STREQ(dtype, "float64");
  EXPECT_EQ(MXNDArraySyncCopyToCPU(array, back.data(), 40), -1);
  EXPECT_NE(std::string(MXGetLastError()).find("of 48 bytes into 40 bytes"), std::string::npos)
      << MXGetLastError();
  Ok(MXNDArrayFree(array));
  NDArrayHandle none = nullptr;
  EXPECT_EQ(MXNDArrayCreateFromCPU(dims, 2, "float65", "cpu", values.data(), 48, &none), -1);
  EXPECT_NE(std::string(MXGetLastError()).find("float65"), std::string::npos);
  EXPECT_EQ(none, nullptr);
}

TEST(CApiTest, ReturnedStringsLiveUntilTheNextCall) {
  const char* value = nullptr;
  const char* source = nullptr;
  Ok(MXSettingSet("MXNET_EXEC_NUM_TEMP", "2"));
  Ok(MXSettingGet("MXNET_EXEC_NUM_TEMP", &value, &source));
  EXPECT_STREQ(value, "2");
  EXPECT_STREQ(source, "program");
  Ok(MXSettingReset("MXNET_EXEC_NUM_TEMP"));
  uint32_t count = 0;
  const char** names = nullptr;
  Ok(MXSettingList(&count, &names));
  ASSERT_GT(count, 10u);
  EXPECT_STREQ(names[0], "MXNET_ENGINE_TYPE");
}

}  // namespace
}  // namespace mxlite
