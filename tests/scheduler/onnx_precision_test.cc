// CastModelTo (scheduler/onnx/onnx_precision.h) on a small imported network: the graph it builds
// (Casts in and out, parameters typed by inference, values converted), float64 on the CPU
// computing what float32 computes, and float16 on a GPU to float16 accuracy.
#include "scheduler/onnx/onnx_precision.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/build_info.h"
#include "core/error.h"
#include "core/half.h"
#include "onnx/onnx_pb.h"
#include "scheduler/graph/executor.h"
#include "scheduler/graph/infer_shapes.h"

namespace mxlite {
namespace {

onnx::TensorProto* AddInitializer(onnx::GraphProto* graph, const std::string& name,
                                  const std::vector<int64_t>& dims, std::mt19937_64& random,
                                  double low, double high) {
  std::uniform_real_distribution<float> uniform(static_cast<float>(low), static_cast<float>(high));
  onnx::TensorProto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  int64_t count = 1;
  for (int64_t dim : dims) {
    tensor->add_dims(dim);
    count *= dim;
  }
  for (int64_t i = 0; i < count; ++i) tensor->add_float_data(uniform(random));
  return tensor;
}

onnx::NodeProto* AddNode(onnx::GraphProto* graph, const std::string& op, const std::string& name,
                         const std::vector<std::string>& inputs, const std::string& output) {
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type(op);
  node->set_name(name);
  for (const std::string& input : inputs) node->add_input(input);
  node->add_output(output);
  return node;
}

// x (2, 3, 8, 8) -> Conv 3x3 -> Relu -> MaxPool 2x2 -> GlobalAveragePool -> Flatten -> Gemm -> y
ImportedModel SmallModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* graph = model.mutable_graph();
  onnx::ValueInfoProto* input = graph->add_input();
  input->set_name("x");
  auto* type = input->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : {2, 3, 8, 8}) type->mutable_shape()->add_dim()->set_dim_value(dim);
  std::mt19937_64 random(3);
  AddInitializer(graph, "conv_w", {6, 3, 3, 3}, random, -0.5, 0.5);
  AddInitializer(graph, "conv_b", {6}, random, -0.1, 0.1);
  AddInitializer(graph, "fc_w", {4, 6}, random, -1, 1);
  AddInitializer(graph, "fc_b", {4}, random, -0.1, 0.1);
  onnx::NodeProto* conv = AddNode(graph, "Conv", "conv", {"x", "conv_w", "conv_b"}, "c");
  auto* pads = conv->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  AddNode(graph, "Relu", "relu", {"c"}, "r");
  onnx::NodeProto* pool = AddNode(graph, "MaxPool", "pool", {"r"}, "p");
  for (const char* name : {"kernel_shape", "strides"}) {
    auto* attr = pool->add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::INTS);
    attr->add_ints(2);
    attr->add_ints(2);
  }
  AddNode(graph, "GlobalAveragePool", "gap", {"p"}, "g");
  AddNode(graph, "Flatten", "flat", {"g"}, "f");
  onnx::NodeProto* gemm = AddNode(graph, "Gemm", "fc", {"f", "fc_w", "fc_b"}, "y");
  auto* trans_b = gemm->add_attribute();
  trans_b->set_name("transB");
  trans_b->set_type(onnx::AttributeProto::INT);
  trans_b->set_i(1);
  graph->add_output()->set_name("y");
  return ImportOnnxBytes(model.SerializeAsString(), "small.onnx", "", {});
}

DType DTypeOfVariable(const ImportedModel& model, const std::string& name) {
  const int id = model.graph.Find(name);
  EXPECT_GE(id, 0) << name;
  return InferGraphShapes(model.graph).dtypes.at(static_cast<size_t>(id)).at(0);
}

// One forward pass on fixed input values; the output as float32 values.
std::vector<float> Forward(const ImportedModel& model, const Context& ctx) {
  BindOptions options;
  options.ctx = ctx;
  options.arrays = ParameterArrays(model, ctx);
  std::vector<float> x(2 * 3 * 8 * 8);
  std::mt19937_64 random(9);
  std::uniform_real_distribution<float> uniform(-1, 1);
  for (float& v : x) v = uniform(random);
  options.arrays[model.inputs.at("x")] = ToNDArray(HostTensor::From(x, Shape{2, 3, 8, 8}), ctx);
  auto exec = Executor::Bind(model.graph, options);
  exec->Forward(false);
  EXPECT_EQ(exec->outputs()[0].dtype(), DType::kFloat32);
  return exec->outputs()[0].ToVector<float>();
}

TEST(CastModelTo, CastsInAndOutAndTypesParametersByInference) {
  const ImportedModel model = SmallModel();
  const ImportedModel half = CastModelTo(model, DType::kFloat16);
  EXPECT_EQ(DTypeOfVariable(half, "x"), DType::kFloat32);  // fed as the file declares
  EXPECT_EQ(DTypeOfVariable(half, "conv_w"), DType::kFloat16);
  EXPECT_EQ(half.parameters.at("conv_w").dtype, DType::kFloat16);
  EXPECT_EQ(half.parameters.at("fc_b").dtype, DType::kFloat16);
  const GraphShapes shapes = InferGraphShapes(half.graph);
  ASSERT_EQ(half.graph.outputs().size(), 1u);
  EXPECT_EQ(shapes.dtype_of(half.graph.outputs()[0]), DType::kFloat32);
  EXPECT_EQ(half.output_names, model.output_names);
  // Values rounded to nearest even.
  const HostTensor& original = model.parameters.at("fc_w");
  const HostTensor& rounded = half.parameters.at("fc_w");
  for (int64_t i = 0; i < original.num_elements(); ++i) {
    float value;
    uint16_t bits;
    std::memcpy(&value, original.bytes.data() + i * 4, 4);
    std::memcpy(&bits, rounded.bytes.data() + i * 2, 2);
    EXPECT_EQ(bits, FloatToHalf(value)) << i;
  }
  try {
    CastModelTo(model, DType::kInt32);
    FAIL() << "int32 body accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("int32"), std::string::npos) << error.what();
  }
}

TEST(CastModelTo, Float64ComputesWhatFloat32Computes) {
  const ImportedModel model = SmallModel();
  const std::vector<float> single = Forward(model, Context::CPU());
  const std::vector<float> wide = Forward(CastModelTo(model, DType::kFloat64), Context::CPU());
  ASSERT_EQ(single.size(), wide.size());
  for (size_t i = 0; i < single.size(); ++i) {
    EXPECT_NEAR(single[i], wide[i], 1e-5 * std::max(1.0f, std::fabs(single[i]))) << i;
  }
}

TEST(CastModelTo, Float16OnTheGpuFollowsFloat32) {
  if (VisibleGpuCount() == 0) GTEST_SKIP() << "no GPU visible: float16 model not run";
  const ImportedModel model = SmallModel();
  const std::vector<float> single = Forward(model, Context::GPU(0));
  const std::vector<float> half = Forward(CastModelTo(model, DType::kFloat16), Context::GPU(0));
  ASSERT_EQ(single.size(), half.size());
  for (size_t i = 0; i < single.size(); ++i) {
    EXPECT_NEAR(single[i], half[i], 1e-2 * std::max(1.0f, std::fabs(single[i]))) << i;
  }
}

}  // namespace
}  // namespace mxlite
