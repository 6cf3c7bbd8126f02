// The executor end to end on small graphs: forward and backward through the engine against values
// computed by hand, on every engine type, with and without bulking and the memory plan.
#include "scheduler/graph/executor.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/settings.h"
#include "ops/cpu/gemm.h"
#include "scheduler/graph/graph_builder.h"

namespace mxlite {
namespace {

// y = x * w (element-wise, w learned); a real kernel pair so gradients can be checked.
MXLITE_REGISTER_OP(TestScaleElementwise) {
  OpDef op;
  op.name = "TestScaleElementwise";
  op.doc = "Test op: y = x * w element-wise.";
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data", "weight"}; };
  op.input_roles = [](const Attributes&) {
    return std::vector<InputRole>{InputRole::kData, InputRole::kParameter};
  };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = [](const Attributes&, ShapeInference& shapes) {
    shapes.AssignInput(1, shapes.Input(0));
    shapes.AssignOutput(0, shapes.Input(0));
  };
  op.backward_dependencies = [](const Attributes&) {
    return BackwardDependencies{{true, true}, {false}};
  };
  op.forward[DeviceType::kCPU] = [](const OpContext&, const Attributes&,
                                    const std::vector<TensorView>& in,
                                    const std::vector<TensorView>& out,
                                    const std::vector<WriteMode>&) {
    const float* x = in[0].data_as<float>();
    const float* w = in[1].data_as<float>();
    float* y = out[0].data_as<float>();
    for (int64_t i = 0; i < out[0].size(); ++i) y[i] = x[i] * w[i];
  };
  op.backward[DeviceType::kCPU] = [](const OpContext&, const Attributes&,
                                     const std::vector<TensorView>& out_grad,
                                     const std::vector<TensorView>& in,
                                     const std::vector<TensorView>&,
                                     const std::vector<TensorView>& in_grad,
                                     const std::vector<WriteMode>& req) {
    const float* dy = out_grad[0].data_as<float>();
    const float* x = in[0].data_as<float>();
    const float* w = in[1].data_as<float>();
    for (int64_t i = 0; i < out_grad[0].size(); ++i) {
      if (req[0] == WriteMode::kWrite) in_grad[0].data_as<float>()[i] = dy[i] * w[i];
      if (req[1] == WriteMode::kWrite) in_grad[1].data_as<float>()[i] = dy[i] * x[i];
    }
  };
  return op;
}

class ExecutorEngineTest : public ::testing::TestWithParam<std::string> {};

// y = sigmoid(relu(x) * w): check forward and dL/dw, dL/dx for L = sum(y * head).
TEST_P(ExecutorEngineTest, ForwardAndBackwardMatchHandComputation) {
  settings().Set("MXNET_ENGINE_TYPE", GetParam());
  GraphBuilder g;
  Symbol y = g.Sigmoid(g.Op("TestScaleElementwise", {g.Relu(g.Input("data", {2, 3}))}));
  auto exec = Executor::Bind(g.Build({y}), {.training = true, .input_gradients = {"data"}});
  const std::vector<float> x = {0.5f, -1.0f, 2.0f, 1.5f, -0.25f, 0.75f};
  const std::vector<float> w = {1.0f, 2.0f, -0.5f, 0.25f, 3.0f, -1.0f};
  const std::vector<float> head = {1.0f, 0.5f, -1.0f, 2.0f, 1.0f, 0.25f};
  exec->Arg("data").SyncCopyFromCPU(x.data(), x.size() * 4);
  exec->Arg("testscaleelementwise0_weight").SyncCopyFromCPU(w.data(), w.size() * 4);
  exec->Forward(true);
  exec->Backward({NDArray::FromVector(head, Shape{2, 3}, Context::CPU())});
  const std::vector<float> out = exec->outputs()[0].ToVector<float>();
  const std::vector<float> dw = exec->Gradient("testscaleelementwise0_weight").ToVector<float>();
  const std::vector<float> dx = exec->Gradient("data").ToVector<float>();
  for (size_t i = 0; i < x.size(); ++i) {
    const float r = std::max(x[i], 0.0f);
    const float s = 1.0f / (1.0f + std::exp(-r * w[i]));
    EXPECT_NEAR(out[i], s, 1e-6);
    const float ds = head[i] * s * (1 - s);
    EXPECT_NEAR(dw[i], ds * r, 1e-6) << i;
    EXPECT_NEAR(dx[i], x[i] > 0 ? ds * w[i] : 0.0f, 1e-6) << i;
  }
  settings().Reset("MXNET_ENGINE_TYPE");
}

// Passes push steps prepared once; an array put in a variable's place afterwards (Arg returns a
// reference) is what the next pass reads and writes, forward and backward.
TEST_P(ExecutorEngineTest, PassesFollowAnArrayPutInAVariablesPlace) {
  settings().Set("MXNET_ENGINE_TYPE", GetParam());
  GraphBuilder g;
  Symbol y = g.Op("TestScaleElementwise", {g.Input("data", {2, 2})});
  auto exec = Executor::Bind(g.Build({y}), {.training = true, .input_gradients = {"data"}});
  const std::string weight = "testscaleelementwise0_weight";
  exec->Arg(weight).SyncCopyFromCPU(std::vector<float>{1, 2, 3, 4}.data(), 16);
  exec->Arg("data").SyncCopyFromCPU(std::vector<float>{1, 1, 1, 1}.data(), 16);
  exec->Forward(true);
  exec->Backward();
  EXPECT_EQ(exec->outputs()[0].ToVector<float>(), (std::vector<float>{1, 2, 3, 4}));
  exec->Arg("data") = NDArray::FromVector(std::vector<float>{2, -1, 0.5f, 3}, {2, 2},
                                          Context::CPU());
  const NDArray new_weight_gradient = NDArray::Zeros({2, 2}, Context::CPU());
  exec->Gradient(weight) = new_weight_gradient;
  exec->Forward(true);
  exec->Backward();
  EXPECT_EQ(exec->outputs()[0].ToVector<float>(), (std::vector<float>{2, -2, 1.5f, 12}));
  EXPECT_EQ(new_weight_gradient.ToVector<float>(), (std::vector<float>{2, -1, 0.5f, 3}));
  settings().Reset("MXNET_ENGINE_TYPE");
}

// y = x * transpose(w) in an inference executor: the transpose reads a parameter only, so it runs
// again only when w was written since its last inference pass.
TEST_P(ExecutorEngineTest, ParameterTransposeRunsOnlyWhenTheParameterChanged) {
  settings().Set("MXNET_ENGINE_TYPE", GetParam());
  GraphBuilder g;
  Symbol w = g.Op("transpose", {g.Parameter("w", Shape{3, 2}, DType::kFloat32)});
  Symbol y = g.Op("TestScaleElementwise", {g.Input("data", {2, 3}), w});
  auto exec = Executor::Bind(g.Build({y}), {});
  EXPECT_EQ(exec->memory_report().constant_bytes, 6u * 4u);
  const std::vector<float> x = {0.5f, -1.0f, 2.0f, 1.5f, -0.25f, 0.75f};
  exec->Arg("data").SyncCopyFromCPU(x.data(), x.size() * 4);
  auto expect_output = [&](const std::vector<float>& weight, const std::string& when) {
    const std::vector<float> out = exec->outputs()[0].ToVector<float>();
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 3; ++j) {
        EXPECT_FLOAT_EQ(out[i * 3 + j], x[i * 3 + j] * weight[j * 2 + i]) << when << " " << i << j;
      }
    }
  };
  const std::vector<float> w1 = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
  exec->Arg("w").SyncCopyFromCPU(w1.data(), w1.size() * 4);
  exec->Forward(false);
  expect_output(w1, "first pass");
  EXPECT_EQ(exec->constant_step_runs(), 1);
  // Planned buffers hold nothing a later pass relies on; the kept transpose is not among them.
  exec->FillPlannedBuffers(std::nan(""));
  exec->Forward(false);
  exec->Forward(false);
  expect_output(w1, "unchanged weight");
  EXPECT_EQ(exec->constant_step_runs(), 1);

  const std::vector<float> w2 = {-1.0f, 0.5f, 0.25f, -2.0f, 8.0f, 1.0f};
  exec->Arg("w").SyncCopyFromCPU(w2.data(), w2.size() * 4);
  exec->Forward(false);
  expect_output(w2, "new weight");
  EXPECT_EQ(exec->constant_step_runs(), 2);
  // A training-mode pass runs it and is not remembered: the next inference pass runs it again.
  exec->Forward(true);
  exec->Forward(false);
  expect_output(w2, "after a training-mode pass");
  EXPECT_EQ(exec->constant_step_runs(), 4);
  settings().Reset("MXNET_ENGINE_TYPE");
}

// A constant step reading another constant (a transpose of a transpose of a parameter) runs only
// when the first one recomputed: the engine counts every pass's skipped first step as a write of
// its output, but its value did not change.
TEST_P(ExecutorEngineTest, ChainedConstantStepsRunOnlyWhenTheParameterChanged) {
  settings().Set("MXNET_ENGINE_TYPE", GetParam());
  GraphBuilder g;
  Symbol wt = g.Op("transpose", {g.Parameter("w", Shape{3, 2}, DType::kFloat32)});
  Symbol w = g.Op("transpose", {wt});
  Symbol y = g.Op("TestScaleElementwise", {g.Input("data", {3, 2}), w});
  auto exec = Executor::Bind(g.Build({y}), {});
  const std::vector<float> x = {0.5f, -1.0f, 2.0f, 1.5f, -0.25f, 0.75f};
  const std::vector<float> w1 = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
  exec->Arg("data").SyncCopyFromCPU(x.data(), x.size() * 4);
  exec->Arg("w").SyncCopyFromCPU(w1.data(), w1.size() * 4);
  for (int pass = 0; pass < 3; ++pass) exec->Forward(false);
  const std::vector<float> out = exec->outputs()[0].ToVector<float>();
  for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ(out[i], x[i] * w1[i]);
  EXPECT_EQ(exec->constant_step_runs(), 2);  // each of the two steps once
  exec->Arg("w").SyncCopyFromCPU(x.data(), x.size() * 4);
  exec->Forward(false);
  const std::vector<float> squared = exec->outputs()[0].ToVector<float>();
  for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ(squared[i], x[i] * x[i]);
  EXPECT_EQ(exec->constant_step_runs(), 4);
  settings().Reset("MXNET_ENGINE_TYPE");
}

// A 1x1 NHWC convolution whose OHWI weight is a transpose of an OIHW parameter (a constant step):
// the inference executor keeps the weight packed for the GEMM (MXNET_CONV_PREPACK_WEIGHTS) and
// packs it again when, and only when, the parameter is written; results always follow the weight.
TEST_P(ExecutorEngineTest, ConvolutionKeepsItsPackedWeightWhileTheWeightStands) {
  settings().Set("MXNET_ENGINE_TYPE", GetParam());
  constexpr int64_t kPixels = 2 * 3 * 5, kIn = 7, kOut = 19;
  GraphBuilder g;
  Symbol w = g.Op("transpose", {g.Parameter("w", Shape{kOut, kIn, 1, 1}, DType::kFloat32)},
                  {{"axes", "(0,2,3,1)"}});
  Symbol y = g.Op("Convolution", {g.Input("data", {2, 3, 5, kIn}), w},
                  {{"kernel", "(1,1)"}, {"num_filter", std::to_string(kOut)}, {"no_bias", "true"},
                   {"layout", "NHWC"}, {"cudnn_tune", "off"}});
  auto exec = Executor::Bind(g.Build({y}), {});
  std::vector<float> x(kPixels * kIn);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i));
  exec->Arg("data").SyncCopyFromCPU(x.data(), x.size() * 4);
  auto weights = [](float scale) {
    std::vector<float> values(kOut * kIn);
    for (size_t i = 0; i < values.size(); ++i) values[i] = scale * std::cos(0.11f * i);
    return values;
  };
  auto expect_output = [&](const std::vector<float>& weight, const std::string& when) {
    const std::vector<float> out = exec->outputs()[0].ToVector<float>();
    for (int64_t p = 0; p < kPixels; ++p) {
      for (int64_t o = 0; o < kOut; ++o) {
        double sum = 0.0;
        for (int64_t c = 0; c < kIn; ++c) sum += double{x[p * kIn + c]} * weight[o * kIn + c];
        ASSERT_NEAR(out[p * kOut + o], sum, 1e-5) << when << " pixel " << p << " channel " << o;
      }
    }
  };
  const std::vector<float> w1 = weights(1.0f), w2 = weights(-0.5f);
  exec->Arg("w").SyncCopyFromCPU(w1.data(), w1.size() * 4);
  exec->Forward(false);
  expect_output(w1, "first pass");
  if (cpu::CpuSupportsAvx2Fma()) {  // weights are prepared for the AVX2 GEMM only
    EXPECT_GE(exec->memory_report().op_state_bytes, size_t{kOut * kIn * 4});
  }
  exec->FillPlannedBuffers(std::nan(""));
  exec->Forward(false);
  expect_output(w1, "unchanged weight");
  EXPECT_EQ(exec->constant_step_runs(), 1);

  exec->Arg("w").SyncCopyFromCPU(w2.data(), w2.size() * 4);
  exec->Forward(false);
  expect_output(w2, "new weight");
  // A training-mode pass packs per call; the inference pass after it sees the same weight.
  exec->Forward(true);
  expect_output(w2, "training-mode pass");
  exec->Forward(false);
  expect_output(w2, "after a training-mode pass");
  exec->Arg("w").SyncCopyFromCPU(w1.data(), w1.size() * 4);
  exec->Forward(false);
  expect_output(w1, "the first weight again");

  settings().Set("MXNET_CONV_PREPACK_WEIGHTS", "0");
  auto unpacked = Executor::Bind(g.Build({y}), {});
  unpacked->Arg("data").SyncCopyFromCPU(x.data(), x.size() * 4);
  unpacked->Arg("w").SyncCopyFromCPU(w2.data(), w2.size() * 4);
  unpacked->Forward(false);
  unpacked->outputs()[0].WaitToRead();
  EXPECT_EQ(unpacked->memory_report().op_state_bytes, 0u);
  settings().Reset("MXNET_CONV_PREPACK_WEIGHTS");
  settings().Reset("MXNET_ENGINE_TYPE");
}

// FullyConnected's weight and MatMul's B at inference: kept packed for the GEMM from the second
// pass that finds them unchanged (MXNET_CONV_PREPACK_WEIGHTS), packed again when written; the
// outputs always follow the values.
TEST_P(ExecutorEngineTest, FullyConnectedAndMatMulKeepAStandingOperandPacked) {
  settings().Set("MXNET_ENGINE_TYPE", GetParam());
  constexpr int64_t kRows = 4, kIn = 9, kOut = 13;
  GraphBuilder g;
  Symbol fc = g.Op("FullyConnected", {g.Input("x", {kRows, kIn})},
                   {{"num_hidden", std::to_string(kOut)}, {"no_bias", "true"}}, "fc");
  Symbol mm = g.Op("MatMul", {g.Input("a", {2, kRows / 2, kIn}),
                              g.Parameter("b", Shape{kIn, kOut}, DType::kFloat32)},
                   {}, "mm");
  auto exec = Executor::Bind(g.Build({fc, mm}), {});
  std::vector<float> x(kRows * kIn);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.29f * static_cast<float>(i));
  exec->Arg("x").SyncCopyFromCPU(x.data(), x.size() * 4);
  exec->Arg("a").SyncCopyFromCPU(x.data(), x.size() * 4);
  auto weights = [](float scale) {  // fc's (kOut, kIn); b's (kIn, kOut) read as its transpose
    std::vector<float> values(kOut * kIn);
    for (size_t i = 0; i < values.size(); ++i) values[i] = scale * std::cos(0.13f * i);
    return values;
  };
  auto transposed = [](const std::vector<float>& w) {
    std::vector<float> t(w.size());
    for (int64_t o = 0; o < kOut; ++o) {
      for (int64_t c = 0; c < kIn; ++c) t[c * kOut + o] = w[o * kIn + c];
    }
    return t;
  };
  auto set_weights = [&](const std::vector<float>& w) {
    exec->Arg("fc_weight").SyncCopyFromCPU(w.data(), w.size() * 4);
    const std::vector<float> b = transposed(w);
    exec->Arg("b").SyncCopyFromCPU(b.data(), b.size() * 4);
  };
  auto expect_outputs = [&](const std::vector<float>& w, const std::string& when) {
    for (int output : {0, 1}) {
      const std::vector<float> out = exec->outputs()[output].ToVector<float>();
      for (int64_t r = 0; r < kRows; ++r) {
        for (int64_t o = 0; o < kOut; ++o) {
          double sum = 0.0;
          for (int64_t c = 0; c < kIn; ++c) sum += double{x[r * kIn + c]} * w[o * kIn + c];
          ASSERT_NEAR(out[r * kOut + o], sum, 1e-5) << when << " output " << output;
        }
      }
    }
  };
  const std::vector<float> w1 = weights(1.0f), w2 = weights(-0.5f);
  set_weights(w1);
  exec->Forward(false);
  expect_outputs(w1, "first pass");
  EXPECT_EQ(exec->memory_report().op_state_bytes, 0u) << "packed before it stood a second pass";
  exec->Forward(false);
  expect_outputs(w1, "second pass");
  if (cpu::PackedOperandsReadInPlace()) {
    EXPECT_GE(exec->memory_report().op_state_bytes, size_t{2 * kOut * kIn * 4});
  }
  set_weights(w2);
  exec->Forward(false);
  expect_outputs(w2, "new weights");
  exec->Forward(false);
  expect_outputs(w2, "new weights, packed");
  exec->Forward(true);
  expect_outputs(w2, "training-mode pass");
  settings().Reset("MXNET_ENGINE_TYPE");
}

// Passes push their steps as segments recorded on the first bulked pass; a bulk size changed
// between passes re-records them, and every segmentation (and none) gives the same values.
TEST_P(ExecutorEngineTest, PassesGiveTheSameValuesWhateverTheSegmentSize) {
  settings().Set("MXNET_ENGINE_TYPE", GetParam());
  GraphBuilder g;
  Symbol y = g.Input("data", {2, 2});
  for (int i = 0; i < 5; ++i) y = g.Op("TestScaleElementwise", {y});
  auto exec = Executor::Bind(g.Build({y}), {.training = true, .input_gradients = {"data"}});
  for (const std::string& name : exec->ParameterNames()) {
    exec->Arg(name).SyncCopyFromCPU(std::vector<float>{1, 2, -1, 0.5f}.data(), 16);
  }
  std::vector<std::vector<float>> results;
  for (const char* segment_size : {"2", "1", "0", "15"}) {
    SCOPED_TRACE(std::string("segment size ") + segment_size);
    settings().Set("MXNET_EXEC_BULK_EXEC_TRAIN", segment_size[0] == '0' ? "0" : "1");
    settings().Set("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN", segment_size);
    exec->Arg("data").SyncCopyFromCPU(std::vector<float>{1, 1, 2, 3}.data(), 16);
    exec->Forward(true);
    exec->Backward();
    results.push_back(exec->outputs()[0].ToVector<float>());
    results.push_back(exec->Gradient("data").ToVector<float>());
  }
  for (size_t i = 2; i < results.size(); ++i) EXPECT_EQ(results[i], results[i % 2]) << i;
  EXPECT_EQ(results[0], (std::vector<float>{1, 32, -2, 3 * 0.5f * 0.5f * 0.5f * 0.5f * 0.5f}));
  settings().Reset("MXNET_EXEC_BULK_EXEC_TRAIN");
  settings().Reset("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN");
  settings().Reset("MXNET_ENGINE_TYPE");
}

INSTANTIATE_TEST_SUITE_P(AllEngines, ExecutorEngineTest,
                         ::testing::Values("NaiveEngine", "ThreadedEngine",
                                           "ThreadedEnginePerDevice"));

TEST(ExecutorTest, ReshapeSharesParametersAndReportsMemory) {
  GraphBuilder g;
  Symbol y = g.Tanh(g.Op("TestScaleElementwise", {g.Relu(g.Input("data", {4, 8}))}));
  auto exec = Executor::Bind(g.Build({y}), {.training = true});
  EXPECT_EQ(exec->ParameterNames(), std::vector<std::string>{"testscaleelementwise0_weight"});
  MemoryReport report = exec->memory_report();
  EXPECT_LE(report.planned_bytes, report.unplanned_bytes);
  EXPECT_GT(report.external_bytes, 0u);
  EXPECT_NE(exec->Summary().find("Memory:"), std::string::npos);
  EXPECT_THROW(exec->Arg("nothing"), Error);
  EXPECT_THROW(exec->Gradient("data"), Error);
  auto bigger = exec->Reshape({{"data", Shape{4, 8}}});
  EXPECT_EQ(bigger->Arg("testscaleelementwise0_weight").data(),
            exec->Arg("testscaleelementwise0_weight").data());
  // The weight's shape follows the data here, so it cannot be shared: a new one is made.
  auto other = exec->Reshape({{"data", Shape{5, 8}}});
  EXPECT_EQ(other->Arg("testscaleelementwise0_weight").shape(), (Shape{5, 8}));
  EXPECT_NE(other->Arg("testscaleelementwise0_weight").data(),
            exec->Arg("testscaleelementwise0_weight").data());
}

TEST(ExecutorTest, InferenceExecutorRefusesBackward) {
  GraphBuilder g;
  auto exec = Executor::Bind(g.Build({g.Relu(g.Input("data", {2, 2}))}), {});
  exec->Forward(false);
  EXPECT_THROW(exec->Backward(), Error);
}

}  // namespace
}  // namespace mxlite
