// Every op's GPU kernels against its CPU kernels (docs/design.md, Operators), in float32 to 1e-4
// relative to max(1, |cpu|): forward (every output, hidden ones included, and the auxiliary states
// the op updates) and backward (every input gradient), each on the same inputs, on a stream of its
// own.
//
// float16 (GPU only): the same cases with the GPU in float16 (BatchNorm's parameters and states
// in float32, MXNet's rule) against the CPU in float32 on the same values (inputs and output
// gradients rounded to float16 first), to 1e-2 relative to max(1, |cpu|): about 20 float16
// rounding steps, room for the rounding of each stored intermediate but not for a wrong formula,
// a misread element type or a lost term.
//
// Skipped without a visible GPU; the registry check (every op has GPU kernels) runs everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/build_info.h"
#include "ops/operator.h"
#include "tests/ops/op_harness.h"

#if MXLITE_USE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace mxlite::testing {
namespace {

TEST(GpuKernels, EveryOpHasGpuForwardAndBackward) {
#if MXLITE_USE_CUDA
  for (const std::string& name : OpRegistry::Global().Names()) {
    if (OpRegistry::Global().Get(name).cpu_only)
      continue;  // fusion products (scheduler/graph/fusion.h)
    EXPECT_NE(OpRegistry::Global().FindForward(name, DeviceType::kGPU), nullptr)
        << name << " has no GPU forward kernel";
    EXPECT_NE(OpRegistry::Global().FindBackward(name, DeviceType::kGPU), nullptr)
        << name << " has no GPU backward kernel";
  }
#else
  GTEST_SKIP() << "built without CUDA: no GPU kernels";
#endif
}

#if MXLITE_USE_CUDA

constexpr double kTolerance = 1e-4;
constexpr double kHalfTolerance = 1e-2;

// Device memory holding one host tensor (copied in, and back out on request).
class DeviceTensor {
 public:
  explicit DeviceTensor(const HostTensor& host) : host_(host) {
    const size_t bytes = std::max<size_t>(View().bytes(), 1);
    EXPECT_EQ(cudaMalloc(&data_, bytes), cudaSuccess);
    if (host_.size() > 0) {
      EXPECT_EQ(cudaMemcpy(data_, host_.View().data, View().bytes(), cudaMemcpyHostToDevice),
                cudaSuccess);
    }
  }
  ~DeviceTensor() { cudaFree(data_); }
  DeviceTensor(const DeviceTensor&) = delete;
  DeviceTensor& operator=(const DeviceTensor&) = delete;

  TensorView View() const { return {data_, host_.shape(), host_.dtype(), Context::GPU(0)}; }
  HostTensor ToHost() {
    if (host_.size() > 0) {
      EXPECT_EQ(cudaMemcpy(host_.View().data, data_, View().bytes(), cudaMemcpyDeviceToHost),
                cudaSuccess);
    }
    return host_;
  }

 private:
  HostTensor host_;
  void* data_ = nullptr;
};

std::vector<std::unique_ptr<DeviceTensor>> ToDevice(const std::vector<HostTensor>& tensors) {
  std::vector<std::unique_ptr<DeviceTensor>> result;
  for (const HostTensor& tensor : tensors) result.push_back(std::make_unique<DeviceTensor>(tensor));
  return result;
}

std::vector<TensorView> Views(const std::vector<std::unique_ptr<DeviceTensor>>& tensors) {
  std::vector<TensorView> views;
  for (const auto& tensor : tensors) views.push_back(tensor->View());
  return views;
}

void ExpectClose(const HostTensor& cpu, const HostTensor& gpu, const std::string& what,
                 double tolerance = kTolerance) {
  ASSERT_EQ(cpu.shape(), gpu.shape()) << what;
  int reported = 0;
  for (int64_t i = 0; i < cpu.size() && reported < 5; ++i) {
    const double expected = cpu.Get(i), actual = gpu.Get(i);
    const double bound = tolerance * std::max(1.0, std::fabs(expected));
    if (expected != actual && !(std::fabs(expected - actual) <= bound)) {  // equal infinities pass
      ADD_FAILURE() << what << " element " << i << ": cpu " << expected << " gpu " << actual;
      ++reported;
    }
  }
}

// The GPU side of one case: forward on the case's inputs, backward on the CPU forward's tensors.
class GpuRunner {
 public:
  explicit GpuRunner(const OpCase& test_case)
      : test_case_(test_case),
        op_(OpRegistry::Global().Get(test_case.op)),
        attrs_(ParseOpAttributes(op_, test_case.attrs, "node0")) {
    EXPECT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
  }
  ~GpuRunner() { cudaStreamDestroy(stream_); }

  // Outputs, then the inputs after the op ran (auxiliary states it updated).
  std::pair<std::vector<HostTensor>, std::vector<HostTensor>> Forward(
      const std::vector<HostTensor>& inputs, const std::vector<HostTensor>& output_like) {
    auto device_inputs = ToDevice(inputs);
    auto device_outputs = ToDevice(output_like);
    ScratchSpace scratch(Context::GPU(0), stream_);
    std::mt19937_64 random(42);  // the CPU harness's seed: Dropout draws the same mask
    OpContext ctx{Context::GPU(0), test_case_.is_train, stream_, &scratch, &random, nullptr,
                  "node0"};
    std::vector<WriteMode> req(output_like.size(), WriteMode::kWrite);
    ForwardKernelFor(op_, DeviceType::kGPU)(ctx, attrs_, Views(device_inputs),
                                            Views(device_outputs), req);
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    std::vector<HostTensor> outputs, updated;
    for (auto& tensor : device_outputs) outputs.push_back(tensor->ToHost());
    for (auto& tensor : device_inputs) updated.push_back(tensor->ToHost());
    return {outputs, updated};
  }

  std::vector<HostTensor> Backward(const OpRun& forward,
                                   const std::vector<HostTensor>& output_grads) {
    const std::vector<bool> has_gradient = InputHasGradient(op_, attrs_);
    const BackwardDependencies deps = BackwardDependenciesOf(op_, attrs_);
    auto inputs = ToDevice(forward.inputs);
    auto outputs = ToDevice(forward.outputs);
    auto grads_out = ToDevice(output_grads);
    std::vector<HostTensor> grad_like;
    std::vector<WriteMode> req;
    for (size_t i = 0; i < forward.inputs.size(); ++i) {
      grad_like.emplace_back(has_gradient[i] ? forward.inputs[i].shape() : Shape{0},
                             forward.inputs[i].dtype());
      req.push_back(has_gradient[i] ? WriteMode::kWrite : WriteMode::kNull);
    }
    auto input_grads = ToDevice(grad_like);
    std::vector<TensorView> input_views = Views(inputs), output_views = Views(outputs),
                            grad_views = Views(grads_out);
    for (size_t i = 0; i < input_views.size(); ++i) {
      if (!deps.inputs[i]) input_views[i] = TensorView{};
    }
    for (size_t i = 0; i < output_views.size(); ++i) {
      if (!deps.outputs[i]) output_views[i] = TensorView{};
    }
    for (size_t o = static_cast<size_t>(NumVisibleOutputs(op_, attrs_)); o < grad_views.size();
         ++o) {
      grad_views[o] = TensorView{};
    }
    ScratchSpace scratch(Context::GPU(0), stream_);
    std::mt19937_64 random(42);
    OpContext ctx{Context::GPU(0), test_case_.is_train, stream_, &scratch, &random, nullptr,
                  "node0"};
    BackwardKernelFor(op_, DeviceType::kGPU)(ctx, attrs_, grad_views, input_views, output_views,
                                             Views(input_grads), req);
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    std::vector<HostTensor> result;
    for (size_t i = 0; i < input_grads.size(); ++i) result.push_back(input_grads[i]->ToHost());
    return result;
  }

 private:
  const OpCase& test_case_;
  const OpDef& op_;
  Attributes attrs_;
  cudaStream_t stream_ = nullptr;
};

void CompareGpuWithCpu(const OpCase& test_case) {
  SCOPED_TRACE(test_case.Describe());
  const OpDef& op = OpRegistry::Global().Get(test_case.op);
  const Attributes attrs = ParseOpAttributes(op, test_case.attrs, "node0");
  const std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat32, 3);
  const OpRun cpu = RunForward(test_case, inputs);
  GpuRunner gpu(test_case);
  const auto [outputs, updated] = gpu.Forward(inputs, cpu.outputs);
  const std::vector<std::string> input_names = InputNames(op, attrs);
  const std::vector<std::string> output_names = OutputNames(op, attrs);
  for (size_t o = 0; o < outputs.size(); ++o) {
    ExpectClose(cpu.outputs[o], outputs[o], "forward output '" + output_names[o] + "'");
  }
  for (size_t i = 0; i < updated.size(); ++i) {
    ExpectClose(cpu.inputs[i], updated[i], "input '" + input_names[i] + "' after forward");
  }
  // Random output gradients (zero for hidden outputs), the same on both devices.
  std::mt19937_64 random(11);
  std::vector<HostTensor> output_grads =
      RandomOutputGradients(cpu.outputs, NumVisibleOutputs(op, attrs), DType::kFloat32, random);
  const std::vector<HostTensor> cpu_grads = RunBackward(test_case, cpu, output_grads);
  const std::vector<HostTensor> gpu_grads = gpu.Backward(cpu, output_grads);
  const std::vector<bool> has_gradient = InputHasGradient(op, attrs);
  for (size_t i = 0; i < cpu_grads.size(); ++i) {
    if (has_gradient[i]) {
      ExpectClose(cpu_grads[i], gpu_grads[i], "gradient of input '" + input_names[i] + "'");
    }
  }
}

// The dtype of each input and output when the data is `data_dtype` (the op's dtype inference).
std::pair<std::vector<DType>, std::vector<DType>> DTypesFor(const OpDef& op,
                                                            const Attributes& attrs,
                                                            DType data_dtype) {
  DTypeInference inference;
  inference.node = "node0";
  inference.inputs.resize(InputNames(op, attrs).size());
  inference.inputs[0] = data_dtype;
  InferDTypes(op, attrs, inference);
  std::vector<DType> inputs, outputs;
  for (const auto& dtype : inference.inputs) inputs.push_back(dtype.value());
  for (const auto& dtype : inference.outputs) outputs.push_back(dtype.value());
  return {inputs, outputs};
}

std::vector<HostTensor> Converted(const std::vector<HostTensor>& tensors,
                                  const std::vector<DType>& dtypes) {
  std::vector<HostTensor> result;
  for (size_t i = 0; i < tensors.size(); ++i) result.push_back(tensors[i].As(dtypes[i]));
  return result;
}

// Rounds each tensor to its float16-run dtype and back: the values both devices then see.
std::vector<HostTensor> RoundedThrough(const std::vector<HostTensor>& tensors,
                                       const std::vector<DType>& dtypes) {
  std::vector<HostTensor> result;
  for (size_t i = 0; i < tensors.size(); ++i) {
    result.push_back(tensors[i].As(dtypes[i]).As(DType::kFloat32));
  }
  return result;
}

void CompareHalfGpuWithCpu(const OpCase& test_case) {
  SCOPED_TRACE("float16: " + test_case.Describe());
  const OpDef& op = OpRegistry::Global().Get(test_case.op);
  const Attributes attrs = ParseOpAttributes(op, test_case.attrs, "node0");
  const auto [input_dtypes, output_dtypes] = DTypesFor(op, attrs, DType::kFloat16);
  const std::vector<HostTensor> inputs =
      RoundedThrough(MakeInputs(test_case, DType::kFloat32, 3), input_dtypes);
  const OpRun cpu = RunForward(test_case, inputs);
  GpuRunner gpu(test_case);
  const auto [outputs, updated] =
      gpu.Forward(Converted(inputs, input_dtypes), Converted(cpu.outputs, output_dtypes));
  const std::vector<std::string> input_names = InputNames(op, attrs);
  const std::vector<std::string> output_names = OutputNames(op, attrs);
  for (size_t o = 0; o < outputs.size(); ++o) {
    EXPECT_EQ(outputs[o].dtype(), output_dtypes[o]);
    ExpectClose(cpu.outputs[o], outputs[o], "forward output '" + output_names[o] + "'",
                kHalfTolerance);
  }
  for (size_t i = 0; i < updated.size(); ++i) {
    ExpectClose(cpu.inputs[i], updated[i], "input '" + input_names[i] + "' after forward",
                kHalfTolerance);
  }
  // Backward on the CPU forward's tensors, rounded to the float16 run's dtypes on both devices.
  std::mt19937_64 random(11);
  std::vector<HostTensor> output_grads =
      RandomOutputGradients(cpu.outputs, NumVisibleOutputs(op, attrs), DType::kFloat32, random);
  output_grads = RoundedThrough(output_grads, output_dtypes);
  const OpRun rounded{RoundedThrough(cpu.inputs, input_dtypes),
                      RoundedThrough(cpu.outputs, output_dtypes)};
  const std::vector<HostTensor> cpu_grads = RunBackward(test_case, rounded, output_grads);
  const OpRun half_run{Converted(rounded.inputs, input_dtypes),
                       Converted(rounded.outputs, output_dtypes)};
  const std::vector<HostTensor> gpu_grads =
      gpu.Backward(half_run, Converted(output_grads, output_dtypes));
  const std::vector<bool> has_gradient = InputHasGradient(op, attrs);
  for (size_t i = 0; i < cpu_grads.size(); ++i) {
    if (!has_gradient[i]) continue;
    EXPECT_EQ(gpu_grads[i].dtype(), input_dtypes[i]);
    ExpectClose(cpu_grads[i], gpu_grads[i], "gradient of input '" + input_names[i] + "'",
                kHalfTolerance);
  }
}

class GpuVsCpu : public ::testing::TestWithParam<OpCase> {
 protected:
  void SetUp() override {
    if (VisibleGpuCount() == 0) GTEST_SKIP() << "no GPU visible: GPU kernels not run";
  }
};

TEST_P(GpuVsCpu, MatchesCpu) { CompareGpuWithCpu(GetParam()); }
TEST_P(GpuVsCpu, Float16MatchesCpu) { CompareHalfGpuWithCpu(GetParam()); }

// Every op declares its cases in its own test file (MXLITE_GPU_CASES in tests/ops/<op>_test.cc).
std::vector<OpCase> Cases() { return RegisteredGpuCases(); }

std::string CaseName(const ::testing::TestParamInfo<OpCase>& info) {
  std::string name = info.param.op + "_" + std::to_string(info.index);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(GpuOps, GpuVsCpu, ::testing::ValuesIn(Cases()), CaseName);

// The table itself is checked without a GPU: every case parses, infers and runs on the CPU.
TEST(GpuCaseTable, EveryCaseRunsOnTheCpu) {
  for (const OpCase& test_case : Cases()) {
    SCOPED_TRACE(test_case.Describe());
    EXPECT_NO_THROW(RunForward(test_case, MakeInputs(test_case, DType::kFloat32, 3)));
  }
}

// A fused activation (act_min / act_max: relu, ReLU6, an upper bound only) clamps the GPU
// output as the CPU's does; forward only (the fused op has no backward on either device).
TEST(GpuConvolution, FusedActivationMatchesCpu) {
  if (VisibleGpuCount() == 0) GTEST_SKIP() << "no GPU visible: GPU kernels not run";
  const std::map<std::string, std::string> clamps[] = {
      {{"act_min", "0"}}, {{"act_min", "0"}, {"act_max", "0.5"}}, {{"act_max", "-0.25"}}};
  for (const std::string layout : {"NCHW", "NHWC"}) {
    for (const auto& clamp : clamps) {
      OpCase test_case{
          "Convolution",
          {{"kernel", "(3,3)"}, {"num_filter", "6"}, {"pad", "(1,1)"}, {"layout", layout}},
          {layout == "NCHW" ? Shape{2, 5, 7, 6} : Shape{2, 7, 6, 5}}};
      test_case.attrs.insert(clamp.begin(), clamp.end());
      test_case.is_train = false;
      SCOPED_TRACE(test_case.Describe());
      const std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat32, 3);
      const OpRun cpu = RunForward(test_case, inputs);
      GpuRunner gpu(test_case);
      ExpectClose(cpu.outputs[0], gpu.Forward(inputs, cpu.outputs).first[0], "fused forward");
    }
  }
}

// A fused residual addition (residual=true: one more input of the output's shape), with and
// without a bias and a clamp, in both layouts: the GPU's epilogue kernel matches the CPU's store;
// float16 too (its epilogue rounds after the bias and after the addition, as separate kernels do).
TEST(GpuConvolution, FusedResidualMatchesCpu) {
  if (VisibleGpuCount() == 0) GTEST_SKIP() << "no GPU visible: GPU kernels not run";
  for (const std::string layout : {"NCHW", "NHWC"}) {
    for (const char* no_bias : {"false", "true"}) {
      for (const char* act_min : {"", "0"}) {
        OpCase test_case{"Convolution",
                         {{"kernel", "(3,3)"},
                          {"num_filter", "6"},
                          {"pad", "(1,1)"},
                          {"layout", layout},
                          {"no_bias", no_bias},
                          {"residual", "true"}},
                         {layout == "NCHW" ? Shape{2, 5, 7, 6} : Shape{2, 7, 6, 5}}};
        if (*act_min != '\0') test_case.attrs["act_min"] = act_min;
        test_case.is_train = false;
        SCOPED_TRACE(test_case.Describe());
        const std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat32, 3);
        const OpRun cpu = RunForward(test_case, inputs);
        GpuRunner gpu(test_case);
        ExpectClose(cpu.outputs[0], gpu.Forward(inputs, cpu.outputs).first[0],
                    "fused residual forward");
        // float16: both devices see the inputs rounded to it.
        std::vector<HostTensor> half, rounded;
        for (const HostTensor& input : inputs) {
          half.push_back(input.As(DType::kFloat16));
          rounded.push_back(half.back().As(DType::kFloat32));
        }
        const OpRun cpu_rounded = RunForward(test_case, rounded);
        ExpectClose(cpu_rounded.outputs[0],
                    gpu.Forward(half, {cpu_rounded.outputs[0].As(DType::kFloat16)}).first[0],
                    "fused residual float16 forward", kHalfTolerance);
      }
    }
  }
}

// The blocked layout NCHW16c (convolution, pooling, BatchNorm's channel_block) is a CPU
// inference layout: its GPU kernels refuse it by the node's name instead of reading blocked data
// as NCHW, and ops that never see blocks (softmax over the channels) are not refused.
TEST(GpuBlockedLayouts, RefusedByNameOnTheGpu) {
  if (VisibleGpuCount() == 0) GTEST_SKIP() << "no GPU visible: GPU kernels not run";
  const OpCase blocked[] = {
      {"Convolution",
       {{"kernel", "(3,3)"}, {"num_filter", "16"}, {"pad", "(1,1)"}, {"layout", "NCHW16c"}},
       {{1, 1, 5, 5, 16}}},
      {"Pooling",
       {{"kernel", "(2,2)"}, {"stride", "(2,2)"}, {"pool_type", "max"}, {"layout", "NCHW16c"}},
       {{1, 1, 4, 4, 16}}},
      {"BatchNorm", {{"channel_block", "16"}}, {{1, 2, 3, 3, 16}}}};
  for (OpCase test_case : blocked) {
    test_case.is_train = false;
    SCOPED_TRACE(test_case.Describe());
    const std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat32, 3);
    std::vector<HostTensor> outputs;
    for (const Shape& shape : InferOutputShapes(test_case))
      outputs.emplace_back(shape, DType::kFloat32);
    GpuRunner gpu(test_case);
    try {
      gpu.Forward(inputs, outputs);
      ADD_FAILURE() << test_case.op << " ran blocked data on the GPU";
    } catch (const std::exception& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("node0"), std::string::npos) << message;
      EXPECT_NE(message.find("runs on the CPU only"), std::string::npos) << message;
    }
  }
  CompareGpuWithCpu({"softmax", {{"axis", "1"}}, {{2, 5, 3}}});
}

// The GPU kernels run on the op's stream and do not disturb other streams' work: two cases on
// two runners back to back give the same results as one after the other (a smoke test of stream
// binding of the per-thread cuDNN / cuBLAS handles).
TEST(GpuStreams, HandlesFollowTheOpsStream) {
  if (VisibleGpuCount() == 0) GTEST_SKIP() << "no GPU visible: GPU kernels not run";
  const OpCase conv{"Convolution", {{"kernel", "(3,3)"}, {"num_filter", "4"}}, {{2, 3, 7, 6}}};
  const OpCase fc{"FullyConnected", {{"num_hidden", "5"}}, {{4, 3, 2, 2}}};
  for (int round = 0; round < 2; ++round) {
    CompareGpuWithCpu(conv);
    CompareGpuWithCpu(fc);
  }
}

#else  // !MXLITE_USE_CUDA

TEST(GpuVsCpu, SkippedWithoutCuda) { GTEST_SKIP() << "built without CUDA: GPU kernels not run"; }

#endif

}  // namespace
}  // namespace mxlite::testing
