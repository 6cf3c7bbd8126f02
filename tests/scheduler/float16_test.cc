// A network in float16 on the GPU (MXNet's recipe: Cast the float32 data in, Cast the result
// out; BatchNorm keeps float32 statistics): dtype inference gives the parameters their dtypes,
// the executor runs forward and backward, and the results follow the same network in float32 on
// the same (float16-rounded) values to float16 accuracy. Without a GPU: the CPU refuses float16
// convolutions with a clear error.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/build_info.h"
#include "core/error.h"
#include "core/half.h"
#include "scheduler/graph/executor.h"
#include "scheduler/graph/graph_builder.h"
#include "scheduler/graph/infer_shapes.h"
#include "scheduler/planning/conv_planning.h"

namespace mxlite {
namespace {

// conv -> BatchNorm -> relu -> max pool -> (conv + 1x1 conv) -> relu -> global pool -> FC, with
// the body in `body_dtype` between two Casts, then SoftmaxOutput in float32 (MXNet's recipe).
Graph SmallNet(DType body_dtype) {
  GraphBuilder g;
  const std::string body = DTypeName(body_dtype);
  Symbol x = g.Op("Cast", {g.Input("data", {4, 3, 12, 12})}, {{"dtype", body}}, "to_body");
  Symbol y = g.Relu(g.BatchNorm(g.Conv(x, {.num_filter = 8, .kernel = {3, 3}, .pad = {1, 1},
                                           .no_bias = true},
                                       "conv1"),
                                {.fix_gamma = false}, "bn1"),
                    "relu1");
  y = g.MaxPool(y, {.kernel = {2, 2}, .stride = {2, 2}}, "pool");
  Symbol main = g.Conv(y, {.num_filter = 8, .kernel = {3, 3}, .pad = {1, 1}}, "conv2");
  Symbol skip = g.Conv(y, {.num_filter = 8, .kernel = {1, 1}}, "skip");
  y = g.Relu(g.Add(main, skip, "sum"), "relu2");
  Symbol logits = g.FullyConnected(g.Flatten(g.GlobalAvgPool(y, "gap"), "flat"),
                                   {.num_hidden = 5}, "fc");
  Symbol scores = g.Op("Cast", {logits}, {{"dtype", "float32"}}, "to_float32");
  return g.Build({g.SoftmaxOutput(scores, g.Input("label", {4}), "softmax")});
}

std::vector<float> ValuesOf(const NDArray& array) {
  if (array.dtype() == DType::kFloat32) return array.ToVector<float>();
  EXPECT_EQ(array.dtype(), DType::kFloat16);
  std::vector<uint16_t> bits(static_cast<size_t>(array.size()));
  array.SyncCopyToCPU(bits.data(), array.bytes());
  std::vector<float> values;
  for (uint16_t b : bits) values.push_back(HalfToFloat(b));
  return values;
}

void SetValues(NDArray& array, const std::vector<float>& values) {
  if (array.dtype() == DType::kFloat32) {
    array.SyncCopyFromCPU(values.data(), values.size() * sizeof(float));
    return;
  }
  ASSERT_EQ(array.dtype(), DType::kFloat16);
  std::vector<uint16_t> bits;
  for (float v : values) bits.push_back(FloatToHalf(v));
  array.SyncCopyFromCPU(bits.data(), bits.size() * sizeof(uint16_t));
}

struct StepResult {
  std::vector<float> output;
  std::map<std::string, std::vector<float>> gradients;
  std::map<std::string, DType> dtypes;
};

// Forward and backward (the cross-entropy gradient of fixed labels), under convolution plan
// `plan`, with every argument drawn from one seed and
// rounded to float16, so both dtypes start from the same values.
StepResult TrainStep(const Graph& graph, const Context& ctx, ConvPlanKind plan) {
  BindOptions options;
  options.ctx = ctx;
  options.training = true;
  options.conv_plan = plan;
  auto exec = Executor::Bind(graph, options);
  std::mt19937_64 random(5);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<std::string> names = exec->ParameterNames();
  names.insert(names.begin(), "data");
  StepResult run;
  for (const std::string& name : names) {
    NDArray& arg = exec->Arg(name);
    run.dtypes[name] = arg.dtype();
    std::vector<float> values(static_cast<size_t>(arg.size()));
    const bool positive = name.find("gamma") != std::string::npos;
    for (float& v : values) v = HalfToFloat(FloatToHalf(positive ? 1 + 0.5f * uniform(random)
                                                                 : uniform(random)));
    SetValues(arg, values);
  }
  const std::vector<float> labels = {0, 3, 1, 4};
  exec->Arg("label").SyncCopyFromCPU(labels.data(), labels.size() * sizeof(float));
  exec->Forward(true);
  EXPECT_EQ(exec->outputs()[0].dtype(), DType::kFloat32);
  exec->Backward();  // SoftmaxOutput's cross-entropy gradient
  run.output = ValuesOf(exec->outputs()[0]);
  for (const std::string& name : exec->ParameterNames()) {
    run.gradients[name] = ValuesOf(exec->Gradient(name));
  }
  return run;
}

// float16 keeps ~3 significant digits and every stored activation and gradient rounds, so the
// comparison is by tensor: the relative L2 error within 2e-2 (a wrong formula, element type or
// lost term is O(1)), and each element within 6e-2 of the tensor's largest magnitude (max pooling
// and ReLU decide by comparisons, and rounding flips close ones: a few elements then follow
// another path and differ by more than rounding).
void ExpectCloseToFloat32(const std::vector<float>& expected, const std::vector<float>& actual,
                          const std::string& what) {
  ASSERT_EQ(expected.size(), actual.size()) << what;
  double scale = 1e-3, error_sq = 0, norm_sq = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    scale = std::max(scale, static_cast<double>(std::fabs(expected[i])));
    error_sq += std::pow(static_cast<double>(expected[i]) - actual[i], 2);
    norm_sq += std::pow(static_cast<double>(expected[i]), 2);
  }
  EXPECT_LE(std::sqrt(error_sq), 2e-2 * std::max(std::sqrt(norm_sq), 1e-3))
      << what << ": relative L2 error " << std::sqrt(error_sq / std::max(norm_sq, 1e-12));
  int reported = 0;
  for (size_t i = 0; i < expected.size() && reported < 5; ++i) {
    if (!(std::fabs(expected[i] - actual[i]) <= 6e-2 * scale)) {
      ADD_FAILURE() << what << " element " << i << ": float32 " << expected[i] << " float16 "
                    << actual[i] << " (scale " << scale << ")";
      ++reported;
    }
  }
}

TEST(Float16Network, ParametersTakeTheirDtypesFromInference) {
  const Graph graph = SmallNet(DType::kFloat16);
  const GraphShapes shapes = InferGraphShapes(graph);
  auto dtype_of = [&](const std::string& name) {
    const int id = graph.Find(name);
    EXPECT_GE(id, 0) << name;
    return shapes.dtypes.at(static_cast<size_t>(id)).at(0);
  };
  EXPECT_EQ(dtype_of("data"), DType::kFloat32);
  EXPECT_EQ(dtype_of("to_body"), DType::kFloat16);
  EXPECT_EQ(dtype_of("conv1_weight"), DType::kFloat16);
  EXPECT_EQ(dtype_of("fc_weight"), DType::kFloat16);
  EXPECT_EQ(dtype_of("bn1_gamma"), DType::kFloat32);  // MXNet: float32 statistics
  EXPECT_EQ(dtype_of("bn1_moving_var"), DType::kFloat32);
  EXPECT_EQ(dtype_of("to_float32"), DType::kFloat32);
  EXPECT_EQ(dtype_of("label"), DType::kFloat32);
}

// The CPU convolutions compute in float32 / float64: binding says so, naming the layer, before
// anything runs (and the process stays usable: the float32 network binds after it).
TEST(Float16Network, CpuRefusesFloat16ConvolutionClearly) {
  try {
    auto exec = Executor::Bind(SmallNet(DType::kFloat16), {.ctx = Context::CPU()});
    FAIL() << "a float16 convolution was bound on the CPU";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("float16"), std::string::npos) << message;
    EXPECT_NE(message.find("conv1"), std::string::npos) << message;
  }
  auto exec = Executor::Bind(SmallNet(DType::kFloat32), {.ctx = Context::CPU()});
  exec->Forward(false);
  EXPECT_EQ(exec->outputs()[0].ToVector<float>().size(), 20u);
}

TEST(Float16Network, GpuTrainingStepFollowsFloat32) {
  if (VisibleGpuCount() == 0) GTEST_SKIP() << "no GPU visible: float16 network not run";
  // As written (NCHW) and under the global plan (cuDNN's NHWC float16 kernels and transposes).
  for (ConvPlanKind plan : {ConvPlanKind::kNone, ConvPlanKind::kGlobal}) {
    SCOPED_TRACE(std::string("plan ") + ConvPlanKindName(plan));
    const StepResult half = TrainStep(SmallNet(DType::kFloat16), Context::GPU(0), plan);
    const StepResult single = TrainStep(SmallNet(DType::kFloat32), Context::GPU(0), plan);
    EXPECT_EQ(half.dtypes.at("conv2_weight"), DType::kFloat16);
    EXPECT_EQ(half.dtypes.at("bn1_beta"), DType::kFloat32);
    ExpectCloseToFloat32(single.output, half.output, "output");
    ASSERT_EQ(half.gradients.size(), single.gradients.size());
    for (const auto& [name, gradient] : single.gradients) {
      ExpectCloseToFloat32(gradient, half.gradients.at(name), "gradient of " + name);
    }
  }
}

}  // namespace
}  // namespace mxlite
