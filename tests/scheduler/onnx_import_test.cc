// The ONNX importer on small models written with the protobuf API: what it builds, and the clear
// errors for untrusted files (malformed protobuf, bad tensors, absurd shapes, cycles, undefined
// values, unsupported ops, external data outside the model's folder).
#include "scheduler/onnx/onnx_import.h"
#include "scheduler/graph/infer_shapes.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

#include "core/error.h"
#include "onnx/onnx_pb.h"  // defines ONNX_API, then includes onnx/onnx-ml.pb.h
#include "scheduler/graph/executor.h"
#include "scheduler/onnx/onnx_converter.h"

namespace mxlite {
namespace {

void AddTensorInput(onnx::GraphProto* graph, const std::string& name,
                    const std::vector<int64_t>& dims, const std::string& dim_param = "") {
  onnx::ValueInfoProto* input = graph->add_input();
  input->set_name(name);
  auto* type = input->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : dims) type->mutable_shape()->add_dim()->set_dim_value(dim);
  if (!dim_param.empty()) type->mutable_shape()->mutable_dim(0)->set_dim_param(dim_param);
  if (!dim_param.empty()) type->mutable_shape()->mutable_dim(0)->clear_dim_value();
}

onnx::NodeProto* AddNode(onnx::GraphProto* graph, const std::string& op, const std::string& name,
                         const std::vector<std::string>& inputs,
                         const std::vector<std::string>& outputs) {
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type(op);
  node->set_name(name);
  for (const std::string& input : inputs) node->add_input(input);
  for (const std::string& output : outputs) node->add_output(output);
  return node;
}

onnx::TensorProto* AddInitializer(onnx::GraphProto* graph, const std::string& name,
                                  const std::vector<int64_t>& dims,
                                  const std::vector<float>& values) {
  onnx::TensorProto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : dims) tensor->add_dims(dim);
  for (float value : values) tensor->add_float_data(value);
  return tensor;
}

// x (1, 2) -> Relu -> Add(w) -> y: the base most tests break in one way.
onnx::ModelProto ValidModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInput(graph, "x", {1, 2});
  AddInitializer(graph, "w", {1, 2}, {0.5f, -1.5f});
  AddNode(graph, "Relu", "relu0", {"x"}, {"r"});
  AddNode(graph, "Add", "add0", {"r", "w"}, {"y"});
  graph->add_output()->set_name("y");
  return model;
}

ImportedModel Import(const onnx::ModelProto& model, const ImportOptions& options = {}) {
  return ImportOnnxBytes(model.SerializeAsString(), "test.onnx", "", options);
}

// The error message of importing `model`, or "" when it imports.
std::string ImportError(const onnx::ModelProto& model, const ImportOptions& options = {},
                        const std::string& dir = "") {
  try {
    ImportOnnxBytes(model.SerializeAsString(), "test.onnx", dir, options);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(OnnxImport, BuildsTheGraphWithParametersAndInputs) {
  const ImportedModel model = Import(ValidModel());
  EXPECT_EQ(model.opset, 13);
  ASSERT_EQ(model.inputs.count("x"), 1u);
  const Node& x = model.graph.node(model.graph.Find(model.inputs.at("x")));
  EXPECT_EQ(x.role, VariableRole::kInput);
  EXPECT_EQ(*x.shape, Shape({1, 2}));
  ASSERT_EQ(model.parameters.count("w"), 1u);
  EXPECT_EQ(model.parameters.at("w").AsDoubles("w"), (std::vector<double>{0.5, -1.5}));
  EXPECT_EQ(model.graph.node(model.graph.Find("w")).role, VariableRole::kParameter);
  EXPECT_EQ(model.graph.node(model.graph.Find("add0")).op->name, "broadcast_add");
  EXPECT_EQ(model.output_names, std::vector<std::string>{"y"});
}

TEST(OnnxImport, GarbageAndEmptyFilesAreErrors) {
  EXPECT_THROW(ImportOnnxBytes("", "empty.onnx", "", {}), Error);
  EXPECT_THROW(ImportOnnx("/nonexistent/model.onnx"), Error);
}

TEST(OnnxImport, MalformedProtobufIsAnError) {
  try {
    ImportOnnxBytes(std::string("\xff\xff\xff\xff\x0f garbage", 14), "bad.onnx", "", {});
    FAIL() << "garbage imported";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("bad.onnx: not a valid ONNX model"), std::string::npos)
        << error.what();
  }
}

TEST(OnnxImport, EveryTruncationIsAnErrorOrAValidModelNeverACrash) {
  const std::string bytes = ValidModel().SerializeAsString();
  int errors = 0;
  for (size_t length = 0; length < bytes.size(); ++length) {
    try {
      ImportOnnxBytes(bytes.substr(0, length), "cut.onnx", "", {});
    } catch (const Error& error) {
      ++errors;
      EXPECT_NE(std::string(error.what()).find("cut.onnx"), std::string::npos) << error.what();
    }
  }
  EXPECT_GT(errors, static_cast<int>(bytes.size()) / 2);
}

TEST(OnnxImport, EmptyModelHasNoGraph) {
  EXPECT_NE(ImportError(onnx::ModelProto()).find("no graph"), std::string::npos);
}

TEST(OnnxImport, TensorDataMustMatchItsDims) {
  onnx::ModelProto typed = ValidModel();
  typed.mutable_graph()->mutable_initializer(0)->add_dims(3);  // (1, 2, 3) with 2 values
  const std::string typed_error = ImportError(typed);
  EXPECT_NE(typed_error.find("initializer 'w'"), std::string::npos) << typed_error;
  EXPECT_NE(typed_error.find("holds 2 values"), std::string::npos) << typed_error;

  onnx::ModelProto raw = ValidModel();
  onnx::TensorProto* w = raw.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_raw_data(std::string(5, '\0'));
  const std::string raw_error = ImportError(raw);
  EXPECT_NE(raw_error.find("raw_data has 5 bytes"), std::string::npos) << raw_error;
}

TEST(OnnxImport, AbsurdShapesAreRefusedBeforeAllocating) {
  onnx::ModelProto huge = ValidModel();
  onnx::TensorProto* w = huge.mutable_graph()->mutable_initializer(0);
  w->clear_dims();
  w->add_dims(int64_t{1} << 40);
  w->add_dims(int64_t{1} << 40);
  const std::string error = ImportError(huge);
  EXPECT_NE(error.find("more than"), std::string::npos) << error;

  onnx::ModelProto negative = ValidModel();
  negative.mutable_graph()->mutable_initializer(0)->set_dims(0, -1);
  EXPECT_NE(ImportError(negative).find("negative dimension"), std::string::npos);

  onnx::ModelProto input = ValidModel();
  input.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_value(int64_t{1} << 62);
  EXPECT_NE(ImportError(input).find("graph input 'x'"), std::string::npos);
}

TEST(OnnxImport, CyclesAreErrors) {
  onnx::ModelProto model = ValidModel();
  onnx::GraphProto* graph = model.mutable_graph();
  AddNode(graph, "Relu", "loop_a", {"b"}, {"a"});
  AddNode(graph, "Relu", "loop_b", {"a"}, {"b"});
  const std::string error = ImportError(model);
  EXPECT_NE(error.find("cycle"), std::string::npos) << error;
  EXPECT_NE(error.find("'loop_a'"), std::string::npos) << error;
  EXPECT_NE(error.find("'loop_b'"), std::string::npos) << error;
}

TEST(OnnxImport, UndefinedValuesAndMissingInputsAreErrors) {
  onnx::ModelProto undefined = ValidModel();
  undefined.mutable_graph()->mutable_node(1)->set_input(1, "nowhere");
  const std::string error = ImportError(undefined);
  EXPECT_NE(error.find("'add0'"), std::string::npos) << error;
  EXPECT_NE(error.find("'nowhere'"), std::string::npos) << error;

  onnx::ModelProto missing = ValidModel();
  missing.mutable_graph()->mutable_node(1)->set_input(1, "");
  EXPECT_NE(ImportError(missing).find("missing"), std::string::npos);

  onnx::ModelProto output = ValidModel();
  output.mutable_graph()->add_output()->set_name("ghost");
  EXPECT_NE(ImportError(output).find("'ghost'"), std::string::npos);

  onnx::ModelProto twice = ValidModel();
  AddNode(twice.mutable_graph(), "Relu", "again", {"x"}, {"r"});
  EXPECT_NE(ImportError(twice).find("defined more than once"), std::string::npos);
}

TEST(OnnxImport, UnsupportedOpsAreListedTogether) {
  onnx::ModelProto model = ValidModel();
  AddNode(model.mutable_graph(), "Det", "e1", {"x"}, {"e"});
  AddNode(model.mutable_graph(), "Unique", "t1", {"x"}, {"t"});
  const std::string error = ImportError(model);
  EXPECT_NE(error.find("2 node(s) use 2 op type(s)"), std::string::npos) << error;
  EXPECT_NE(error.find("Det (not imported): 'e1'"), std::string::npos) << error;
  EXPECT_NE(error.find("Unique (not imported): 't1'"), std::string::npos) << error;
}

TEST(OnnxImport, UnsupportedNodesAreGroupedByOpType) {
  onnx::ModelProto model = ValidModel();
  for (int i = 0; i < 5; ++i) {
    // Appended, not "e" + std::to_string(i): GCC 12 warns falsely (-Wrestrict) on that.
    std::string name = "e", output = "e_out";
    name += std::to_string(i);
    output += std::to_string(i);
    AddNode(model.mutable_graph(), "Det", name, {"x"}, {output});
  }
  const std::string error = ImportError(model);
  EXPECT_NE(error.find("5 node(s) use 1 op type(s)"), std::string::npos) << error;
  EXPECT_NE(error.find("Det (not imported): 'e0', 'e1', 'e2' and 2 more"), std::string::npos)
      << error;
}

// A converter registered here for opsets 13-17 only: a model of opset 11 is told which opsets its
// op type is imported for, and one of opset 13 converts through it.
void ConvertTestOnlyDouble(OnnxNode& node) {
  const NodeEntry x = node.Input(0);
  node.SetOutput(0, node.Emit("broadcast_add", {}, {x, x}));
}
MXLITE_REGISTER_ONNX_CONVERTER(MxliteTestOnlyDouble, 13, 17, ConvertTestOnlyDouble);

TEST(OnnxImport, ConvertersAreChosenByOpTypeAndOpset) {
  onnx::ModelProto model = ValidModel();
  AddNode(model.mutable_graph(), "MxliteTestOnlyDouble", "d1", {"y"}, {"z"});
  model.mutable_graph()->mutable_output(0)->set_name("z");
  const ImportedModel imported = Import(model);
  const Graph& graph = imported.graph;
  ASSERT_GE(graph.Find("d1"), 0);
  EXPECT_EQ(graph.node(graph.Find("d1")).op->name, "broadcast_add");

  model.mutable_opset_import(0)->set_version(11);
  const std::string error = ImportError(model);
  EXPECT_NE(error.find("MxliteTestOnlyDouble (imported for opsets 13-17, not 11): 'd1'"),
            std::string::npos)
      << error;
  EXPECT_EQ(WhyNotImported("Det", 13), "not imported");
  const std::vector<OnnxConverterEntry> squeeze =
      OnnxConverterRegistry::Global().ConvertersOf("Squeeze");
  ASSERT_EQ(squeeze.size(), 2u);  // axes an attribute before opset 13, an input from 13
  EXPECT_EQ(squeeze[0].ToString(), "Squeeze (opsets 1-12)");
  EXPECT_EQ(squeeze[1].ToString(), "Squeeze (opsets 13-21)");
}

// Every op type's converters cover disjoint opset ranges in order, and each one's range reaches
// into the opsets mxlite imports.
TEST(OnnxImport, TheConverterTableIsConsistent) {
  const OnnxConverterRegistry& registry = OnnxConverterRegistry::Global();
  EXPECT_GE(registry.OpTypes().size(), 30u);
  for (const std::string& op_type : registry.OpTypes()) {
    const std::vector<OnnxConverterEntry> entries = registry.ConvertersOf(op_type);
    for (size_t i = 0; i < entries.size(); ++i) {
      SCOPED_TRACE(entries[i].ToString());
      EXPECT_NE(entries[i].convert, nullptr);
      EXPECT_LE(entries[i].first_opset, entries[i].last_opset);
      EXPECT_GE(entries[i].last_opset, kMinOnnxOpset);
      EXPECT_LE(entries[i].last_opset, kMaxOnnxOpset);
      if (i > 0) {
        EXPECT_GT(entries[i].first_opset, entries[i - 1].last_opset);
      }
      EXPECT_EQ(registry.Find(op_type, entries[i].last_opset)->convert, entries[i].convert);
    }
  }
}

TEST(OnnxImport, DynamicDimsNeedAnOverride) {
  onnx::ModelProto model = ValidModel();
  model.mutable_graph()->clear_input();
  AddTensorInput(model.mutable_graph(), "x", {0, 2}, "batch");
  const std::string error = ImportError(model);
  EXPECT_NE(error.find("dynamic dim 'batch'"), std::string::npos) << error;
  const ImportedModel imported = Import(model, {.input_shapes = {{"x", Shape{1, 2}}}});
  EXPECT_EQ(*imported.graph.node(imported.graph.Find("x")).shape, Shape({1, 2}));
}

TEST(OnnxImport, ExternalDataMustStayInTheModelsFolder) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("mxlite_onnx_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  { std::ofstream(dir / "weights.bin", std::ios::binary).write("\0\0\0\0\0\0\0\0", 8); }
  auto with_location = [](const std::string& location) {
    onnx::ModelProto model = ValidModel();
    onnx::TensorProto* w = model.mutable_graph()->mutable_initializer(0);
    w->clear_float_data();
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* entry = w->add_external_data();
    entry->set_key("location");
    entry->set_value(location);
    return model;
  };
  EXPECT_EQ(ImportError(with_location("weights.bin"), {}, dir.string()), "");
  EXPECT_NE(ImportError(with_location("../weights.bin"), {}, dir.string()).find("leaves"),
            std::string::npos);
  EXPECT_NE(ImportError(with_location("/etc/passwd"), {}, dir.string()).find("relative path"),
            std::string::npos);
  EXPECT_NE(ImportError(with_location("missing.bin"), {}, dir.string()).find("missing.bin"),
            std::string::npos);
  EXPECT_NE(ImportError(with_location("weights.bin"), {}, "").find("not supported"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(OnnxImport, ReshapeShapesFoldFromShapeGatherUnsqueezeConcat) {
  onnx::ModelProto model;
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInput(graph, "x", {2, 3, 4});
  AddNode(graph, "Shape", "shape", {"x"}, {"s"});
  onnx::NodeProto* zero = AddNode(graph, "Constant", "zero", {}, {"i0"});
  auto* value = zero->add_attribute();
  value->set_name("value_int");
  value->set_type(onnx::AttributeProto::INT);
  value->set_i(0);
  AddNode(graph, "Gather", "batch", {"s", "i0"}, {"n"});
  onnx::NodeProto* axes = AddNode(graph, "Constant", "axes", {}, {"a"});
  auto* ints = axes->add_attribute();
  ints->set_name("value_ints");
  ints->set_type(onnx::AttributeProto::INTS);
  ints->add_ints(0);
  AddNode(graph, "Unsqueeze", "unsq", {"n", "a"}, {"n1"});
  onnx::NodeProto* minus = AddNode(graph, "Constant", "minus", {}, {"m"});
  auto* m = minus->add_attribute();
  m->set_name("value_ints");
  m->set_type(onnx::AttributeProto::INTS);
  m->add_ints(-1);
  AddNode(graph, "Concat", "cat", {"n1", "m"}, {"shape2"})->add_attribute()->set_name("axis");
  graph->mutable_node(graph->node_size() - 1)
      ->mutable_attribute(0)
      ->set_type(onnx::AttributeProto::INT);
  AddNode(graph, "Reshape", "flat", {"x", "shape2"}, {"y"});
  graph->add_output()->set_name("y");
  const ImportedModel imported = Import(model);
  const Node& reshape = imported.graph.node(imported.graph.Find("flat"));
  EXPECT_EQ(reshape.op->name, "Reshape");
  EXPECT_EQ(reshape.attr_text.at("shape"), "(2,12)");
}

// A Constant node holding int64 values (shape [n]).
void AddIntsConstant(onnx::GraphProto* graph, const std::string& output,
                     const std::vector<int64_t>& values) {
  auto* attr = AddNode(graph, "Constant", output + "_node", {}, {output})->add_attribute();
  attr->set_name("value_ints");
  attr->set_type(onnx::AttributeProto::INTS);
  for (int64_t value : values) attr->add_ints(value);
}

onnx::AttributeProto* AddIntAttribute(onnx::NodeProto* node, const std::string& name,
                                      int64_t value) {
  auto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(value);
  return attr;
}

// channels / 2 as PyTorch writes it for a channel shuffle: Shape -> Gather -> Div -> Cast ->
// Unsqueeze -> Concat, all integers known at load, computed then.
TEST(OnnxImport, IntegerShapeArithmeticIsComputedAtLoad) {
  onnx::ModelProto model;
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInput(graph, "x", {2, 6, 4});
  AddNode(graph, "Shape", "shape", {"x"}, {"s"});
  AddIntsConstant(graph, "one", {1});
  AddNode(graph, "Gather", "channels", {"s", "one"}, {"c"});
  AddIntsConstant(graph, "two", {2});
  AddNode(graph, "Div", "half", {"c", "two"}, {"h"});
  AddIntAttribute(AddNode(graph, "Cast", "to_int", {"h"}, {"hc"}), "to",
                  onnx::TensorProto::INT64);
  AddIntsConstant(graph, "lead", {2});
  AddIntsConstant(graph, "rest", {-1});
  AddIntAttribute(AddNode(graph, "Concat", "cat", {"lead", "hc", "rest"}, {"target"}), "axis", 0);
  AddNode(graph, "Reshape", "grouped", {"x", "target"}, {"y"});
  graph->add_output()->set_name("y");
  const ImportedModel imported = Import(model);
  const Graph& g = imported.graph;
  EXPECT_EQ(g.node(g.Find("grouped")).attr_text.at("shape"), "(2,3,8)");
  EXPECT_LT(g.Find("half"), 0) << "the division is a graph node";
  EXPECT_LT(g.Find("to_int"), 0) << "the cast is a graph node";
}

// Nodes whose inputs are all known at load are computed then by mxlite's kernels, whatever the
// op (onnx_fold.h): a Sqrt of an initialiser becomes a parameter holding the square roots, and a
// Split of constant integers feeds a Reshape's shape.
TEST(OnnxImport, NodesOfConstantsAreFoldedByTheKernels) {
  onnx::ModelProto model;
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInput(graph, "x", {2, 6});
  AddInitializer(graph, "w", {2, 6}, {1, 4, 9, 16, 25, 36, 49, 64, 81, 100, 121, 144});
  AddNode(graph, "Sqrt", "root", {"w"}, {"rw"});
  AddNode(graph, "Add", "sum", {"x", "rw"}, {"s"});
  AddIntsConstant(graph, "dims", {3, 4, 6, 2});
  AddIntAttribute(AddNode(graph, "Split", "halves", {"dims"}, {"first", "second"}), "axis", 0);
  AddNode(graph, "Reshape", "shaped", {"s", "second"}, {"y"});
  graph->add_output()->set_name("y");
  const ImportedModel imported = Import(model);
  const Graph& g = imported.graph;
  EXPECT_LT(g.Find("root"), 0) << "the square root is computed at load";
  EXPECT_LT(g.Find("halves"), 0) << "the split is computed at load";
  EXPECT_EQ(g.node(g.Find("shaped")).attr_text.at("shape"), "(6,2)");
  const Node& add = g.node(g.Find("sum"));
  const std::string& folded = g.node(add.inputs[1].node).name;
  ASSERT_EQ(imported.parameters.count(folded), 1u) << folded;
  const std::vector<double> roots = imported.parameters.at(folded).AsDoubles(folded);
  for (size_t i = 0; i < roots.size(); ++i) EXPECT_DOUBLE_EQ(roots[i], static_cast<double>(i + 1));
  EXPECT_EQ(imported.parameters.count("w"), 0u) << "nothing reads the initialiser any more";
}

// Where, Not and And of run-time booleans (a BOOL graph input held as uint8) import as mxlite's
// where and float32 arithmetic on 0 / 1.
TEST(OnnxImport, WhereAndLogicalOpsOfRunTimeBooleans) {
  onnx::ModelProto model;
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInput(graph, "x", {2, 3});
  AddTensorInput(graph, "mask", {2, 1});
  graph->mutable_input(1)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::BOOL);
  AddNode(graph, "Not", "flip", {"mask"}, {"flipped"});
  AddNode(graph, "And", "both", {"mask", "flipped"}, {"never"});
  AddInitializer(graph, "zero", {}, {0.0f});
  AddNode(graph, "Where", "pick", {"never", "x", "zero"}, {"y"});
  graph->add_output()->set_name("y");
  const ImportedModel imported = Import(model);
  const Graph& g = imported.graph;
  EXPECT_EQ(g.node(g.Find("pick")).op->name, "where");
  EXPECT_EQ(*g.node(g.Find(imported.inputs.at("mask"))).dtype, DType::kUInt8);
}

onnx::NodeProto* AddEinsum(onnx::GraphProto* graph, const std::string& equation,
                           const std::vector<std::string>& inputs) {
  onnx::NodeProto* node = AddNode(graph, "Einsum", "e", inputs, {"y"});
  auto* attr = node->add_attribute();
  attr->set_name("equation");
  attr->set_type(onnx::AttributeProto::STRING);
  attr->set_s(equation);
  return node;
}

// Einsum as attention writes it (MaxViT: "bghid,bghjd->bghij") becomes one MatMul after a
// transpose of the second operand; unsupported forms are errors naming the node and the reason.
TEST(OnnxImport, EinsumBecomesAMatMul) {
  onnx::ModelProto model;
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInput(graph, "q", {1, 2, 3, 4, 5});
  AddTensorInput(graph, "k", {1, 2, 3, 6, 5});
  AddEinsum(graph, "b g h i d, b g h j d -> b g h i j", {"q", "k"});
  graph->add_output()->set_name("y");
  const ImportedModel imported = Import(model);
  int matmuls = 0;
  for (const Node& node : imported.graph.nodes())
    matmuls += !node.is_variable() && node.op->name == "MatMul";
  EXPECT_EQ(matmuls, 1);
  EXPECT_EQ(InferGraphShapes(imported.graph).of(imported.graph.outputs()[0]),
            Shape({1, 2, 3, 4, 6}));

  // An ellipsis stands for the same (broadcast) leading axes in every term.
  onnx::ModelProto batched;
  batched.add_opset_import()->set_version(13);
  AddTensorInput(batched.mutable_graph(), "a", {2, 3, 4, 5});
  AddTensorInput(batched.mutable_graph(), "b", {3, 5, 6});
  AddEinsum(batched.mutable_graph(), "...ij,...jk->...ik", {"a", "b"});
  batched.mutable_graph()->add_output()->set_name("y");
  const ImportedModel batched_import = Import(batched);
  EXPECT_EQ(InferGraphShapes(batched_import.graph).of(batched_import.graph.outputs()[0]),
            Shape({2, 3, 4, 6}));

  onnx::ModelProto three = model;
  three.mutable_graph()->mutable_node(0)->add_input("k");
  three.mutable_graph()->mutable_node(0)->mutable_attribute(0)->set_s("ij,jk,kl->il");
  EXPECT_NE(ImportError(three).find("Einsum of 3 operands is not supported"), std::string::npos)
      << ImportError(three);
}

// The output of Einsum `equation` over inputs of the given shapes holding 0, 1, 2, ...
std::vector<float> RunEinsum(const std::string& equation,
                             const std::vector<std::vector<int64_t>>& shapes) {
  onnx::ModelProto model;
  model.add_opset_import()->set_version(13);
  std::vector<std::string> names;
  for (size_t i = 0; i < shapes.size(); ++i) {
    names.push_back(std::string(1, static_cast<char>('a' + i)));
    AddTensorInput(model.mutable_graph(), names.back(), shapes[i]);
  }
  AddEinsum(model.mutable_graph(), equation, names);
  model.mutable_graph()->add_output()->set_name("y");
  const ImportedModel imported = Import(model);
  BindOptions bind{.ctx = Context::CPU(), .arrays = ParameterArrays(imported, Context::CPU())};
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Shape shape(shapes[i]);
    std::vector<float> values(static_cast<size_t>(shape.size()));
    std::iota(values.begin(), values.end(), 0.0f);
    bind.arrays[imported.inputs.at(names[i])] =
        ToNDArray(HostTensor::From(values, shape), Context::CPU());
  }
  auto executor = Executor::Bind(imported.graph, bind);
  executor->Forward(/*is_train=*/false);
  const NDArray& out = executor->outputs()[0];
  std::vector<float> result(static_cast<size_t>(out.shape().size()));
  out.SyncCopyToCPU(result.data(), result.size() * sizeof(float));
  return result;
}

// A label repeated within a term is its diagonal (numpy's einsum): alone, summed out (a trace),
// transposed, and inside a product.
TEST(OnnxImport, EinsumTakesDiagonals) {
  // a = [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
  EXPECT_EQ(RunEinsum("ii->i", {{3, 3}}), (std::vector<float>{0, 4, 8}));
  EXPECT_EQ(RunEinsum("ii", {{3, 3}}), (std::vector<float>{12}));
  // a (2, 2, 3): a[i, i, j] for i < 2, j < 3, output (j, i).
  EXPECT_EQ(RunEinsum("iij->ji", {{2, 2, 3}}), (std::vector<float>{0, 9, 1, 10, 2, 11}));
  // sum_j a[i, j] * b[j, j], b = [[0, 1], [2, 3]]: diag(b) = (0, 3); a = [[0, 1], [2, 3]].
  EXPECT_EQ(RunEinsum("ij,jj->i", {{2, 2}, {2, 2}}), (std::vector<float>{3, 9}));
}

// x (1, 2) -> Op -> y, for the converters of one-input ops.
onnx::ModelProto OneNodeModel(const std::string& op, int64_t opset,
                              const std::vector<std::string>& extra_inputs = {}) {
  onnx::ModelProto model;
  model.add_opset_import()->set_version(opset);
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInput(graph, "x", {1, 2});
  std::vector<std::string> inputs = {"x"};
  inputs.insert(inputs.end(), extra_inputs.begin(), extra_inputs.end());
  AddNode(graph, op, "n", inputs, {"y"});
  graph->add_output()->set_name("y");
  return model;
}

// One exponent known at load is the scalar power; any other exponent broadcast_power.
TEST(OnnxImport, PowIsTheScalarPowerOrBroadcastPower) {
  onnx::ModelProto square = OneNodeModel("Pow", 13, {"p"});
  AddInitializer(square.mutable_graph(), "p", {}, {2.0f});
  const ImportedModel imported = Import(square);
  const Node& pow = imported.graph.node(imported.graph.Find("n"));
  EXPECT_EQ(pow.op->name, "_power_scalar");
  EXPECT_EQ(pow.attr_text.at("scalar"), "2");

  const auto op_of = [](const onnx::ModelProto& model) {
    const ImportedModel m = Import(model);
    return m.graph.node(m.graph.Find("n")).op->name;
  };
  onnx::ModelProto mixed = OneNodeModel("Pow", 13, {"p"});
  AddInitializer(mixed.mutable_graph(), "p", {2}, {2.0f, 3.0f});
  EXPECT_EQ(op_of(mixed), "broadcast_power");

  onnx::ModelProto computed = OneNodeModel("Pow", 13, {"p"});
  AddTensorInput(computed.mutable_graph(), "p", {1});
  EXPECT_EQ(op_of(computed), "broadcast_power");

  onnx::ModelProto widening = OneNodeModel("Pow", 13, {"p"});
  AddInitializer(widening.mutable_graph(), "p", {3, 1, 1}, {2.0f, 2.0f, 2.0f});
  EXPECT_EQ(op_of(widening), "broadcast_power");  // the data grows to (3, 1, 2)
}

TEST(OnnxImport, HardSwishIsOneHardSwishOp) {
  const ImportedModel imported = Import(OneNodeModel("HardSwish", 14));
  const Graph& g = imported.graph;
  const Node& swish = g.node(g.Find("n"));
  EXPECT_EQ(swish.op->name, "hard_swish");
  EXPECT_EQ(std::stod(swish.attr_text.at("alpha")), 1.0 / 6);
  EXPECT_EQ(swish.attr_text.at("beta"), "0.5");
  EXPECT_NE(ImportError(OneNodeModel("HardSwish", 13)).find("HardSwish (imported for opsets 14-"),
            std::string::npos)
      << ImportError(OneNodeModel("HardSwish", 13));
}

TEST(OnnxImport, CastOfRunTimeDataIsTheCastOp) {
  onnx::ModelProto model = OneNodeModel("Cast", 13);
  AddIntAttribute(model.mutable_graph()->mutable_node(0), "to", onnx::TensorProto::DOUBLE);
  const ImportedModel imported = Import(model);
  const Node& cast = imported.graph.node(imported.graph.Find("n"));
  EXPECT_EQ(cast.op->name, "Cast");
  EXPECT_EQ(cast.attr_text.at("dtype"), "float64");
}


// A scalar float initializer.
void AddScalar(onnx::GraphProto* graph, const std::string& name, float value) {
  AddInitializer(graph, name, {}, {value});
}

onnx::AttributeProto* AddIntsAttribute(onnx::NodeProto* node, const std::string& name,
                                       const std::vector<int64_t>& values) {
  auto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INTS);
  for (int64_t value : values) attr->add_ints(value);
  return attr;
}

// x (2, 3, 8) -> layer norm over the last axis written out as PyTorch exports it (opset 13) ->
// the exact GELU written out -> y; `reuse` also makes `centred` a graph output, which must keep
// the formula as separate nodes.
onnx::ModelProto LayerNormThenGeluFormulas(bool reuse = false) {
  onnx::ModelProto model;
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInput(graph, "x", {2, 3, 8});
  std::vector<float> gamma, beta;
  for (int c = 0; c < 8; ++c) {
    gamma.push_back(0.5f + 0.125f * static_cast<float>(c));
    beta.push_back(0.25f * static_cast<float>(c) - 1.0f);
  }
  AddInitializer(graph, "gamma", {8}, gamma);
  AddInitializer(graph, "beta", {8}, beta);
  AddScalar(graph, "two", 2.0f);
  AddScalar(graph, "eps", 1e-6f);
  AddScalar(graph, "sqrt2", 1.4142135381698608f);
  AddScalar(graph, "one", 1.0f);
  AddScalar(graph, "half", 0.5f);
  AddIntsAttribute(AddNode(graph, "ReduceMean", "mean", {"x"}, {"m"}), "axes", {-1});
  AddNode(graph, "Sub", "sub", {"x", "m"}, {"centred"});
  AddNode(graph, "Pow", "pow", {"centred", "two"}, {"squares"});
  AddIntsAttribute(AddNode(graph, "ReduceMean", "var", {"squares"}, {"v"}), "axes", {-1});
  AddNode(graph, "Add", "add_eps", {"v", "eps"}, {"ve"});
  AddNode(graph, "Sqrt", "sqrt", {"ve"}, {"sd"});
  AddNode(graph, "Div", "div", {"centred", "sd"}, {"normed"});
  AddNode(graph, "Mul", "scale", {"normed", "gamma"}, {"scaled"});
  AddNode(graph, "Add", "shift", {"scaled", "beta"}, {"ln"});
  AddNode(graph, "Div", "gelu_div", {"ln", "sqrt2"}, {"a"});
  AddNode(graph, "Erf", "gelu_erf", {"a"}, {"e"});
  AddNode(graph, "Add", "gelu_add", {"e", "one"}, {"b"});
  AddNode(graph, "Mul", "gelu_mul", {"ln", "b"}, {"c"});
  AddNode(graph, "Mul", "gelu_half", {"c", "half"}, {"y"});
  graph->add_output()->set_name("y");
  if (reuse) graph->add_output()->set_name("centred");
  return model;
}

std::vector<std::string> OpNames(const Graph& graph) {
  std::vector<std::string> ops;
  for (int id = 0; id < graph.num_nodes(); ++id) {
    if (graph.node(id).op != nullptr) ops.push_back(graph.node(id).op->name);
  }
  return ops;
}

std::vector<double> RunOnce(const ImportedModel& model, const HostTensor& x) {
  BindOptions bind{.ctx = Context::CPU(), .arrays = ParameterArrays(model, Context::CPU())};
  bind.arrays[model.inputs.at("x")] = ToNDArray(x, Context::CPU());
  auto executor = Executor::Bind(model.graph, bind);
  executor->Forward(/*is_train=*/false);
  const NDArray& y = executor->outputs()[0];
  std::vector<float> values(static_cast<size_t>(y.shape().size()));
  y.SyncCopyToCPU(values.data(), values.size() * sizeof(float));
  return std::vector<double>(values.begin(), values.end());
}

TEST(OnnxImport, LayerNormAndGeluFormulasImportAsOneOpEach) {
  const ImportedModel fused = Import(LayerNormThenGeluFormulas());
  EXPECT_EQ(OpNames(fused.graph), (std::vector<std::string>{"LayerNorm", "gelu"}));
  const Node& norm = fused.graph.node(fused.graph.Find("shift"));
  EXPECT_EQ(norm.op->name, "LayerNorm");
  EXPECT_EQ(norm.attr_text.at("axis"), "-1");
  EXPECT_NEAR(std::stod(norm.attr_text.at("eps")), 1e-6, 1e-12);
  EXPECT_EQ(fused.graph.node(fused.graph.Find("gelu_half")).op->name, "gelu");

  ImportOptions written_out;
  written_out.fuse_formulas = false;
  const ImportedModel apart = Import(LayerNormThenGeluFormulas(), written_out);
  EXPECT_EQ(OpNames(apart.graph).size(), 14u);

  std::mt19937 random(3);
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  std::vector<double> values(48);
  for (double& value : values) value = uniform(random);
  const HostTensor x = HostTensorOf(DType::kFloat32, Shape{2, 3, 8}, values, "x");
  const std::vector<double> one_op = RunOnce(fused, x), node_by_node = RunOnce(apart, x);
  ASSERT_EQ(one_op.size(), node_by_node.size());
  for (size_t i = 0; i < one_op.size(); ++i) {
    EXPECT_NEAR(one_op[i], node_by_node[i], 2e-6 * (1 + std::abs(node_by_node[i]))) << i;
  }
}

// x (1, 2, 5, 6) -> Pad(pads) -> AveragePool 3x3 -> y, as PyTorch exports avg_pool2d(padding=1).
onnx::ModelProto PaddedAveragePool(const std::vector<int64_t>& pads) {
  onnx::ModelProto model;
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInput(graph, "x", {1, 2, 5, 6});
  onnx::TensorProto* given = graph->add_initializer();
  given->set_name("pads");
  given->set_data_type(onnx::TensorProto::INT64);
  given->add_dims(static_cast<int64_t>(pads.size()));
  for (int64_t pad : pads) given->add_int64_data(pad);
  AddNode(graph, "Pad", "pad", {"x", "pads"}, {"padded"});
  onnx::NodeProto* pool = AddNode(graph, "AveragePool", "pool", {"padded"}, {"y"});
  onnx::AttributeProto* kernel = pool->add_attribute();
  kernel->set_name("kernel_shape");
  kernel->set_type(onnx::AttributeProto::INTS);
  kernel->add_ints(3);
  kernel->add_ints(3);
  graph->add_output()->set_name("y");
  return model;
}

TEST(OnnxImport, ZeroPadThenAveragePoolImportsAsOnePoolingCountingThePad) {
  const std::vector<int64_t> symmetric = {0, 0, 1, 1, 0, 0, 1, 1};
  const ImportedModel fused = Import(PaddedAveragePool(symmetric));
  EXPECT_EQ(OpNames(fused.graph), (std::vector<std::string>{"Pooling"}));
  const Node& pool = fused.graph.node(fused.graph.Find("pool"));
  EXPECT_EQ(pool.attr_text.at("pad"), "(1,1)");
  EXPECT_EQ(pool.attr_text.at("count_include_pad"), "true");

  ImportOptions written_out;
  written_out.fuse_formulas = false;
  const ImportedModel apart = Import(PaddedAveragePool(symmetric), written_out);
  EXPECT_EQ(OpNames(apart.graph), (std::vector<std::string>{"Pad", "Pooling"}));
  std::vector<double> values(60);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(static_cast<double>(i)) * 3.0;
  const HostTensor x = HostTensorOf(DType::kFloat32, Shape{1, 2, 5, 6}, values, "x");
  EXPECT_EQ(RunOnce(fused, x), RunOnce(apart, x));

  // Uneven pads, or pads on the channels, stay a Pad in front.
  for (const std::vector<int64_t>& other :
       {std::vector<int64_t>{0, 0, 1, 1, 0, 0, 1, 2}, std::vector<int64_t>{0, 1, 1, 1, 0, 1, 1, 1}}) {
    EXPECT_EQ(OpNames(Import(PaddedAveragePool(other)).graph),
              (std::vector<std::string>{"Pad", "Pooling"}))
        << Tuple(other);
  }
}

TEST(OnnxImport, AFormulaWhoseInsideIsReadElsewhereStaysNodes) {
  const ImportedModel imported = Import(LayerNormThenGeluFormulas(/*reuse=*/true));
  const std::vector<std::string> ops = OpNames(imported.graph);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "LayerNorm"), 0);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "gelu"), 1) << "the GELU is still whole";
  EXPECT_EQ(imported.output_names, (std::vector<std::string>{"y", "centred"}));
}

TEST(OnnxImport, LayerNormalizationFlattensTrailingAxesAndGivesItsStatistics) {
  onnx::ModelProto model;
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInput(graph, "x", {2, 3, 4});
  AddInitializer(graph, "scale", {3, 4}, std::vector<float>(12, 2.0f));
  onnx::NodeProto* node = AddNode(graph, "LayerNormalization", "ln", {"x", "scale"},
                                  {"y", "mean", "inv_std"});
  AddIntAttribute(node, "axis", 1);
  graph->add_output()->set_name("y");
  graph->add_output()->set_name("mean");
  graph->add_output()->set_name("inv_std");
  const ImportedModel imported = Import(model);
  const Graph& g = imported.graph;
  EXPECT_EQ(g.node(g.Find("ln")).op->name, "LayerNorm");
  EXPECT_EQ(g.node(g.Find("ln_groups")).attr_text.at("shape"), "(2,12)");
  EXPECT_EQ(g.node(g.Find("ln_inv_std")).op->name, "reciprocal");
  EXPECT_EQ(imported.parameters.at("ln_scale").shape, Shape({12}));
  EXPECT_EQ(imported.parameters.at("ln_bias").AsDoubles("bias"), std::vector<double>(12, 0.0));

  onnx::ModelProto wrong = model;
  onnx::TensorProto* scale = wrong.mutable_graph()->mutable_initializer(0);
  scale->clear_dims();
  scale->add_dims(4);
  scale->clear_float_data();
  for (int i = 0; i < 4; ++i) scale->add_float_data(1.0f);
  EXPECT_NE(ImportError(wrong).find("node 'ln' (LayerNormalization): scale has shape (4) but the "
                                    "normalised axes hold 12 elements per group"),
            std::string::npos)
      << ImportError(wrong);
}

// Each (image, channel) normalised over its spatial extent, then the channel's scale and bias;
// against the formula in double precision. A scale of the wrong length names the node.
TEST(OnnxImport, InstanceNormalizationNormalisesEachChannelOfEachImage) {
  onnx::ModelProto model;
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInput(graph, "x", {2, 3, 2, 3});
  const std::vector<float> scale = {1.0f, 2.0f, -0.5f}, bias = {0.0f, 1.0f, 0.25f};
  AddInitializer(graph, "scale", {3}, scale);
  AddInitializer(graph, "bias", {3}, bias);
  AddNode(graph, "InstanceNormalization", "in", {"x", "scale", "bias"}, {"y"});
  graph->add_output()->set_name("y");
  std::mt19937 random(5);
  std::uniform_real_distribution<double> uniform(-3.0, 3.0);
  std::vector<double> values(36);
  for (double& value : values) value = uniform(random);
  const std::vector<double> y =
      RunOnce(Import(model), HostTensorOf(DType::kFloat32, Shape{2, 3, 2, 3}, values, "x"));
  ASSERT_EQ(y.size(), values.size());
  for (int plane = 0; plane < 6; ++plane) {
    const int channel = plane % 3;
    double mean = 0, variance = 0;
    for (int i = 0; i < 6; ++i) mean += static_cast<float>(values[plane * 6 + i]) / 6.0;
    for (int i = 0; i < 6; ++i) {
      variance += std::pow(static_cast<float>(values[plane * 6 + i]) - mean, 2) / 6.0;
    }
    for (int i = 0; i < 6; ++i) {
      const double want = scale[channel] * (static_cast<float>(values[plane * 6 + i]) - mean) /
                              std::sqrt(variance + 1e-5) + bias[channel];
      EXPECT_NEAR(y[plane * 6 + i], want, 1e-5) << "plane " << plane << " element " << i;
    }
  }
  onnx::ModelProto wrong = model;
  wrong.mutable_graph()->mutable_initializer(0)->set_dims(0, 2);
  wrong.mutable_graph()->mutable_initializer(0)->mutable_float_data()->RemoveLast();
  EXPECT_NE(ImportError(wrong).find("node 'in' (InstanceNormalization): scale has shape (2); "
                                    "expected (3), one value per channel"),
            std::string::npos)
      << ImportError(wrong);
}

// x[:, 0] on run-time data: a slice along the axis, the axis dropped; a list of indices slices
// each and joins them.
TEST(OnnxImport, GatherOfRunTimeDataAtKnownIndicesSlices) {
  onnx::ModelProto model;
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInput(graph, "x", {2, 5, 3});
  AddIntsConstant(graph, "pair", {4, -5});
  onnx::TensorProto* zero = graph->add_initializer();
  zero->set_name("zero");
  zero->set_data_type(onnx::TensorProto::INT64);
  zero->add_int64_data(0);
  AddIntAttribute(AddNode(graph, "Gather", "first", {"x", "zero"}, {"y"}), "axis", 1);
  AddIntAttribute(AddNode(graph, "Gather", "ends", {"x", "pair"}, {"z"}), "axis", 1);
  graph->add_output()->set_name("y");
  graph->add_output()->set_name("z");
  const ImportedModel imported = Import(model);
  const Graph& g = imported.graph;
  const Node& first = g.node(g.Find("first"));
  EXPECT_EQ(first.op->name, "Reshape");
  EXPECT_EQ(first.attr_text.at("shape"), "(2,3)");
  EXPECT_EQ(g.node(g.Find("first_0")).attr_text.at("begin"), "(0,0)");
  const Node& ends = g.node(g.Find("ends"));
  EXPECT_EQ(ends.op->name, "Concat");
  EXPECT_EQ(g.node(g.Find("ends_1")).attr_text.at("begin"), "(0,0)");  // -5 is index 0
  EXPECT_EQ(g.node(g.Find("ends_0")).attr_text.at("end"), "(2,5)");

  onnx::ModelProto wide = model;
  AddIntsConstant(wide.mutable_graph(), "unused", {1});
  wide.mutable_graph()->mutable_initializer(0)->add_dims(1);
  wide.mutable_graph()->mutable_initializer(0)->add_dims(1);
  EXPECT_NE(ImportError(wide).find("node 'first' (Gather): indices of shape (1,1) on data computed "
                                   "while the model runs"),
            std::string::npos)
      << ImportError(wide);
}

// Constants the importer generates itself (EyeLike, ConstantOfShape, Range) of a malformed file's
// huge shapes are refused by name before anything is allocated (the loader fuzzer found an EyeLike
// of a (36, 18874367) input running the process out of memory).
TEST(OnnxImport, GeneratedConstantsOfHugeShapesAreClearErrors) {
  onnx::ModelProto eye;
  eye.add_opset_import()->set_version(13);
  AddTensorInput(eye.mutable_graph(), "a", {36, 18874367});
  AddNode(eye.mutable_graph(), "EyeLike", "eye", {"a"}, {"b"});
  eye.mutable_graph()->add_output()->set_name("b");
  std::string error = ImportError(eye);
  EXPECT_NE(error.find("'eye'"), std::string::npos) << error;
  EXPECT_NE(error.find("more than mxlite computes at load"), std::string::npos) << error;

  onnx::ModelProto filled;
  filled.add_opset_import()->set_version(13);
  AddIntsConstant(filled.mutable_graph(), "shape", {1 << 20, 1 << 10});
  AddNode(filled.mutable_graph(), "ConstantOfShape", "filler", {"shape"}, {"f"});
  filled.mutable_graph()->add_output()->set_name("f");
  error = ImportError(filled);
  EXPECT_NE(error.find("'filler'"), std::string::npos) << error;

  onnx::ModelProto range;
  range.add_opset_import()->set_version(13);
  AddIntsConstant(range.mutable_graph(), "start", {0});
  AddIntsConstant(range.mutable_graph(), "limit", {int64_t{1} << 40});
  AddIntsConstant(range.mutable_graph(), "delta", {1});
  AddNode(range.mutable_graph(), "Range", "counter", {"start", "limit", "delta"}, {"r"});
  range.mutable_graph()->add_output()->set_name("r");
  error = ImportError(range);
  EXPECT_NE(error.find("'counter'"), std::string::npos) << error;
  EXPECT_NE(error.find("more than mxlite computes at load"), std::string::npos) << error;
}

// A transformer's class token as PyTorch exports token.expand(n, -1, -1): the target shape is
// Where(Equal(shape, -1), ones, shape) of a ConstantOfShape, all known at load, so the expanded
// token is a constant.
TEST(OnnxImport, ClassTokenExpandIsComputedAtLoad) {
  onnx::ModelProto model;
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInput(graph, "x", {2, 4, 3});
  AddInitializer(graph, "token", {1, 1, 3}, {0.5f, -1.0f, 2.0f});
  AddIntsConstant(graph, "spec", {2, -1, -1});
  AddIntsConstant(graph, "three", {3});
  onnx::NodeProto* ones = AddNode(graph, "ConstantOfShape", "ones", {"three"}, {"o"});
  auto* value = ones->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_int64_data(1);
  AddIntsConstant(graph, "minus_one", {-1});
  AddNode(graph, "Equal", "is_free", {"spec", "minus_one"}, {"free"});
  AddNode(graph, "Where", "target", {"free", "o", "spec"}, {"shape"});
  AddNode(graph, "Expand", "tokens", {"token", "shape"}, {"t"});
  AddIntAttribute(AddNode(graph, "Concat", "with_token", {"t", "x"}, {"y"}), "axis", 1);
  graph->add_output()->set_name("y");
  const ImportedModel imported = Import(model);
  const Graph& g = imported.graph;
  EXPECT_LT(g.Find("tokens"), 0) << "the expand is computed at load";
  const Node& cat = g.node(g.Find("with_token"));
  const Node& token = g.node(cat.inputs[0].node);
  EXPECT_EQ(token.role, VariableRole::kParameter);
  EXPECT_EQ(*token.shape, Shape({2, 1, 3}));
  EXPECT_EQ(imported.parameters.at(token.name).AsDoubles("t"),
            (std::vector<double>{0.5, -1.0, 2.0, 0.5, -1.0, 2.0}));

  // Of run-time data the Expand is a graph computation (none here: (2, 1, 1) grows no axis of x).
  onnx::ModelProto computed = model;
  computed.mutable_graph()->mutable_node(computed.graph().node_size() - 2)->set_input(0, "x");
  EXPECT_EQ(ImportError(computed), "");
}

// A mask built from values known at load, in float as Swin's attention mask: Transpose, Sub and
// Cast to BOOL of constants are computed at load, exactly as the float kernels would round them.
TEST(OnnxImport, FloatArithmeticOfValuesKnownAtLoadIsFolded) {
  onnx::ModelProto model;
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInput(graph, "x", {3, 2});
  AddInitializer(graph, "m", {2, 3}, {0.1f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f});
  AddInitializer(graph, "shift", {}, {0.2f});
  AddIntsAttribute(AddNode(graph, "Transpose", "t", {"m"}, {"mt"}), "perm", {1, 0});
  AddNode(graph, "Sub", "centre", {"mt", "shift"}, {"c"});
  AddIntAttribute(AddNode(graph, "Cast", "nonzero", {"c"}, {"flags"}), "to",
                  onnx::TensorProto::BOOL);
  AddIntAttribute(AddNode(graph, "Cast", "as_float", {"flags"}, {"f"}), "to",
                  onnx::TensorProto::FLOAT);
  AddNode(graph, "Add", "use", {"x", "c"}, {"y"});
  AddNode(graph, "Mul", "use_flags", {"y", "f"}, {"z"});
  graph->add_output()->set_name("z");
  const ImportedModel imported = Import(model);
  const Graph& g = imported.graph;
  for (const char* folded : {"t", "centre", "nonzero", "as_float"}) {
    EXPECT_LT(g.Find(folded), 0) << folded << " is computed at load";
  }
  const Node& use = g.node(g.Find("use"));
  const std::vector<double> c =
      imported.parameters.at(g.node(use.inputs[1].node).name).AsDoubles("c");
  const std::vector<double> want = {0.1f - 0.2f, 3.0f - 0.2f, 1.0f - 0.2f,
                                    4.0f - 0.2f, 2.0f - 0.2f, 5.0f - 0.2f};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(static_cast<float>(c[i]), static_cast<float>(want[i])) << i;
  }
}

// Max, Min, Sum, Mean and the comparisons of run-time data run as mxlite's broadcast ops (the node
// tests feed their inputs as constants, which fold at load); a comparison's bool is a uint8 Cast.
TEST(OnnxImport, VariadicExtremaAndComparisonsOfRunTimeDataAreOps) {
  const std::vector<float> row = {0.5f, -1.0f, 2.0f}, column = {1.0f, -2.0f};
  const auto model_of = [&](const std::string& op, bool compare) {
    onnx::ModelProto model;
    model.add_opset_import()->set_version(13);
    onnx::GraphProto* graph = model.mutable_graph();
    AddTensorInput(graph, "x", {2, 3});
    AddInitializer(graph, "row", {3}, row);
    AddInitializer(graph, "column", {2, 1}, column);
    if (compare) {
      AddNode(graph, op, "c", {"x", "row"}, {"truth"});
      AddIntAttribute(AddNode(graph, "Cast", "f", {"truth"}, {"y"}), "to",
                      onnx::TensorProto::FLOAT);
    } else {
      AddNode(graph, op, "v", {"x", "row", "column"}, {"y"});
    }
    graph->add_output()->set_name("y");
    return model;
  };
  const std::vector<double> x = {1.0, -1.0, 3.0, 0.0, -5.0, 2.0};
  const HostTensor input = HostTensorOf(DType::kFloat32, Shape{2, 3}, x, "x");
  for (const std::string op : {"Max", "Min", "Sum", "Mean"}) {
    const ImportedModel imported = Import(model_of(op, false));
    const std::vector<std::string> ops = OpNames(imported.graph);
    const std::string chained = op == "Max" ? "broadcast_maximum"
                                : op == "Min" ? "broadcast_minimum"
                                              : "broadcast_add";
    EXPECT_EQ(std::count(ops.begin(), ops.end(), chained), 2) << op;
    const std::vector<double> y = RunOnce(imported, input);
    for (int i = 0; i < 6; ++i) {
      const double a = x[i], b = row[i % 3], c = column[i / 3];
      const double want = op == "Max"   ? std::max({a, b, c})
                          : op == "Min" ? std::min({a, b, c})
                          : op == "Sum" ? a + b + c
                                        : (a + b + c) / 3;
      EXPECT_NEAR(y[i], want, 1e-6) << op << " element " << i;
    }
  }
  for (const std::string op : {"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual"}) {
    const ImportedModel imported = Import(model_of(op, true));
    const std::vector<double> y = RunOnce(imported, input);
    for (int i = 0; i < 6; ++i) {
      const double a = x[i], b = row[i % 3];
      const bool want = op == "Equal"            ? a == b
                        : op == "Greater"        ? a > b
                        : op == "GreaterOrEqual" ? a >= b
                        : op == "Less"           ? a < b
                                                 : a <= b;
      EXPECT_EQ(y[i], want ? 1.0 : 0.0) << op << " element " << i;
    }
  }
}

// ArgMax / ArgMin of run-time data: argmax / argmin and a Cast to int64; select_last_index finds
// the last of tied extremes (the first along the axis reversed).
TEST(OnnxImport, ArgMaxAndArgMinOfRunTimeDataFindTheFirstOrLastExtreme) {
  const std::vector<double> x = {1, 3, 3, 0, -2, 5, -2, 4, 5, -2};  // (2, 5), ties in each row
  const HostTensor input = HostTensorOf(DType::kFloat32, Shape{2, 5}, x, "x");
  for (const std::string op : {"ArgMax", "ArgMin"}) {
    for (int last = 0; last <= 1; ++last) {
      onnx::ModelProto model;
      model.add_opset_import()->set_version(13);
      onnx::GraphProto* graph = model.mutable_graph();
      AddTensorInput(graph, "x", {2, 5});
      onnx::NodeProto* node = AddNode(graph, op, "a", {"x"}, {"index"});
      AddIntAttribute(node, "axis", 1);
      AddIntAttribute(node, "keepdims", 0);
      AddIntAttribute(node, "select_last_index", last);
      AddIntAttribute(AddNode(graph, "Cast", "f", {"index"}, {"y"}), "to",
                      onnx::TensorProto::FLOAT);
      graph->add_output()->set_name("y");
      const std::vector<double> y = RunOnce(Import(model), input);
      const std::vector<double> want = op == "ArgMax" ? std::vector<double>{last ? 2.0 : 1.0,
                                                                            last ? 3.0 : 0.0}
                                                      : std::vector<double>{4.0, last ? 4.0 : 1.0};
      ASSERT_EQ(y.size(), 2u) << op;
      EXPECT_EQ(y[0], want[0]) << op << " select_last_index " << last;
      EXPECT_EQ(y[1], want[1]) << op << " select_last_index " << last;
    }
  }
}

// OneHot of run-time float indices: truncated to integers; a negative index counts from the end
// from opset 11, and before matches no position (all off), like an index past the depth.
TEST(OnnxImport, OneHotTruncatesIndicesAndWrapsNegativeOnesFromOpset11) {
  const HostTensor input =
      HostTensorOf(DType::kFloat32, Shape{4}, std::vector<double>{1.7, -1, 5, 0}, "x");
  for (const int opset : {10, 11}) {
    onnx::ModelProto model;
    model.add_opset_import()->set_version(opset);
    onnx::GraphProto* graph = model.mutable_graph();
    AddTensorInput(graph, "x", {4});
    AddInitializer(graph, "depth", {}, {3.0f});
    AddInitializer(graph, "values", {2}, {-1.0f, 2.0f});
    AddNode(graph, "OneHot", "hot", {"x", "depth", "values"}, {"y"});
    graph->add_output()->set_name("y");
    const std::vector<double> y = RunOnce(Import(model), input);
    const double last = opset >= 11 ? 2.0 : -1.0;  // -1: position 2 from opset 11, else none
    EXPECT_EQ(y, (std::vector<double>{-1, 2, -1, -1, -1, last, -1, -1, -1, 2, -1, -1}))
        << "opset " << opset;
  }
}

// Every output of `model` run once on input "x".
std::vector<std::vector<double>> RunAll(const ImportedModel& model, const HostTensor& x) {
  BindOptions bind{.ctx = Context::CPU(), .arrays = ParameterArrays(model, Context::CPU())};
  bind.arrays[model.inputs.at("x")] = ToNDArray(x, Context::CPU());
  auto executor = Executor::Bind(model.graph, bind);
  executor->Forward(/*is_train=*/false);
  std::vector<std::vector<double>> outputs;
  for (const NDArray& y : executor->outputs()) {
    std::vector<float> values(static_cast<size_t>(y.shape().size()));
    y.SyncCopyToCPU(values.data(), values.size() * sizeof(float));
    outputs.emplace_back(values.begin(), values.end());
  }
  return outputs;
}

onnx::TensorProto* AddBoolInitializer(onnx::GraphProto* graph, const std::string& name,
                                      bool value) {
  onnx::TensorProto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::BOOL);
  tensor->add_int32_data(value ? 1 : 0);
  return tensor;
}

onnx::TensorProto* AddInt64Initializer(onnx::GraphProto* graph, const std::string& name,
                                       const std::vector<int64_t>& dims,
                                       const std::vector<int64_t>& values) {
  onnx::TensorProto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::INT64);
  for (int64_t dim : dims) tensor->add_dims(dim);
  for (int64_t value : values) tensor->add_int64_data(value);
  return tensor;
}

// As PyTorch exports a Python loop over a list (torchvision's MViT): a Loop whose trip count and
// condition are known at load, its body slicing rows 2i..2i+2 of x (read from the enclosing
// graph) into a loop-carried sequence and a scan output; then SequenceAt, ConcatFromSequence,
// SequenceLength, and an If on a condition computed at load from the sequence's length.
onnx::ModelProto LoopOverRowsModel(int64_t trips) {
  onnx::ModelProto model;
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInput(graph, "x", {6, 4});
  AddInt64Initializer(graph, "trips", {}, {trips});
  AddBoolInitializer(graph, "go", true);
  AddInt64Initializer(graph, "one", {}, {1});
  AddInt64Initializer(graph, "three", {}, {3});
  AddNode(graph, "SequenceEmpty", "empty", {}, {"rows0"});
  onnx::NodeProto* loop =
      AddNode(graph, "Loop", "loop", {"trips", "go", "rows0"}, {"rows", "scanned"});
  onnx::AttributeProto* body_attribute = loop->add_attribute();
  body_attribute->set_name("body");
  body_attribute->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = body_attribute->mutable_g();
  body->add_input()->set_name("i");
  body->add_input()->set_name("cond_in");
  body->add_input()->set_name("rows_in");
  AddInt64Initializer(body, "two", {1}, {2});
  AddInt64Initializer(body, "axis0", {1}, {0});
  AddNode(body, "Mul", "start", {"i", "two"}, {"begin"});
  AddNode(body, "Add", "stop", {"begin", "two"}, {"end"});
  AddNode(body, "Slice", "rows_of_i", {"x", "begin", "end", "axis0"}, {"slice"});
  AddNode(body, "Relu", "relu", {"slice"}, {"positive"});
  AddNode(body, "SequenceInsert", "insert", {"rows_in", "positive"}, {"rows_out"});
  AddNode(body, "Identity", "keep_going", {"cond_in"}, {"cond_out"});
  AddNode(body, "Neg", "negate", {"slice"}, {"negated"});
  body->add_output()->set_name("cond_out");
  body->add_output()->set_name("rows_out");
  body->add_output()->set_name("negated");
  onnx::NodeProto* concat = AddNode(graph, "ConcatFromSequence", "join", {"rows"}, {"all"});
  AddIntAttribute(concat, "axis", 0);
  AddNode(graph, "SequenceLength", "count", {"rows"}, {"length"});
  AddNode(graph, "Equal", "three_rows", {"length", "three"}, {"is_three"});
  onnx::NodeProto* branch = AddNode(graph, "If", "choose", {"is_three"}, {"chosen"});
  for (const char* name : {"then_branch", "else_branch"}) {
    onnx::AttributeProto* attribute = branch->add_attribute();
    attribute->set_name(name);
    attribute->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* taken = attribute->mutable_g();
    const std::string out = std::string(name) + "_out";
    AddNode(taken, std::string(name) == "then_branch" ? "Neg" : "Identity",
            std::string(name) + "_node", {"rows_1"}, {out});
    taken->add_output()->set_name(out);
  }
  // After the If in the file: the If's branches read rows_1, so it must be imported first.
  AddNode(graph, "SequenceAt", "second", {"rows", "one"}, {"rows_1"});
  graph->add_output()->set_name("all");
  graph->add_output()->set_name("chosen");
  graph->add_output()->set_name("scanned");
  return model;
}

TEST(OnnxImport, LoopsAndIfsKnownAtLoadAreUnrolled) {
  std::vector<double> x(24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 7) - 3.0;
  const ImportedModel imported = Import(LoopOverRowsModel(3));
  const std::vector<std::vector<double>> outputs =
      RunAll(imported, HostTensorOf(DType::kFloat32, Shape{6, 4}, x, "x"));
  ASSERT_EQ(outputs.size(), 3u);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(outputs[0][i], std::max(x[i], 0.0)) << "all, element " << i;  // every row, relu
    EXPECT_EQ(outputs[2][i], -x[i]) << "scanned, element " << i;            // (3, 2, 4) stacked
  }
  for (size_t i = 0; i < 8; ++i) {  // three rows: the then branch, -relu(x[2:4])
    EXPECT_EQ(outputs[1][i], -std::max(x[8 + i], 0.0)) << "chosen, element " << i;
  }
  const GraphShapes shapes = InferGraphShapes(imported.graph);
  EXPECT_EQ(shapes.of(imported.graph.outputs()[2]), Shape({3, 2, 4}));
  // Two iterations: two rows in the sequence, so the else branch, and a (4, 4) join.
  const ImportedModel two = Import(LoopOverRowsModel(2));
  const std::vector<std::vector<double>> short_outputs =
      RunAll(two, HostTensorOf(DType::kFloat32, Shape{6, 4}, x, "x"));
  ASSERT_EQ(short_outputs[0].size(), 16u);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(short_outputs[1][i], std::max(x[8 + i], 0.0));
}

// Only the branch an If takes is imported, so only its ops must be importable: an untaken branch
// may hold ops mxlite does not import (exporters write both branches of a shape check).
TEST(OnnxImport, AnUntakenBranchMayHoldOpsNotImported) {
  auto with_unique_in_else = [](int rows) {
    onnx::ModelProto model = LoopOverRowsModel(rows);
    for (onnx::NodeProto& node : *model.mutable_graph()->mutable_node()) {
      if (node.name() != "choose") continue;
      for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
        if (attribute.name() == "else_branch")
          attribute.mutable_g()->mutable_node(0)->set_op_type("Unique");
      }
    }
    return model;
  };
  EXPECT_NO_THROW(Import(with_unique_in_else(3)));  // three rows: the then branch
  const std::string error = ImportError(with_unique_in_else(2));
  EXPECT_NE(error.find("op type(s) mxlite does not import: Unique"), std::string::npos) << error;
  EXPECT_NE(error.find("node 'choose' (If): subgraph"), std::string::npos) << error;
  EXPECT_NE(error.find("'else_branch_node'"), std::string::npos) << error;
}

TEST(OnnxImport, ControlFlowDecidedAtRunTimeIsAnErrorNamingTheNode) {
  onnx::ModelProto model = LoopOverRowsModel(3);
  onnx::GraphProto* graph = model.mutable_graph();
  // The If's condition from the data: not known at load.
  AddNode(graph, "ReduceMax", "peak", {"x"}, {"x_max"});
  AddScalar(graph, "zero", 0.0f);
  AddNode(graph, "Greater", "positive_peak", {"x_max", "zero"}, {"data_says"});
  for (onnx::NodeProto& node : *graph->mutable_node()) {
    if (node.name() == "choose") node.set_input(0, "data_says");
  }
  const std::string error = ImportError(model);
  EXPECT_NE(error.find("node 'choose' (If): the condition ('data_says') is computed at run time"),
            std::string::npos)
      << error;
  // A position past the end of a sequence.
  onnx::ModelProto past = LoopOverRowsModel(1);
  const std::string past_error = ImportError(past);
  EXPECT_NE(past_error.find("node 'second' (SequenceAt): position 1 is outside the sequence of 1 "
                            "elements"),
            std::string::npos)
      << past_error;
}

// Expand of run-time data (Swin-V2's logit scale over the heads): the rank grown with leading 1s
// and each growing axis copied, every element as broadcasting places it.
TEST(OnnxImport, ExpandOfRunTimeDataCopiesAlongTheGrowingAxes) {
  onnx::ModelProto model;
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInput(graph, "x", {2, 1, 3});
  AddInt64Initializer(graph, "shape", {4}, {3, 2, 4, 3});
  AddNode(graph, "Relu", "r", {"x"}, {"rx"});
  AddNode(graph, "Expand", "grow", {"rx", "shape"}, {"y"});
  graph->add_output()->set_name("y");
  const std::vector<double> x = {1, -2, 3, 4, 5, -6};
  const ImportedModel imported = Import(model);
  EXPECT_EQ(InferGraphShapes(imported.graph).of(imported.graph.outputs()[0]), Shape({3, 2, 4, 3}));
  const std::vector<double> y =
      RunOnce(imported, HostTensorOf(DType::kFloat32, Shape{2, 1, 3}, x, "x"));
  ASSERT_EQ(y.size(), 72u);
  for (int i = 0; i < 72; ++i) {
    const int c = i % 3, b = (i / 12) % 2;  // (a, b, k, c): x[b, 0, c]
    EXPECT_EQ(y[static_cast<size_t>(i)], std::max(x[static_cast<size_t>(b * 3 + c)], 0.0))
        << "element " << i;
  }
}

// An If with a branch named like another If's (ONNX allows it between siblings): each imports its
// own; and a branch that only constants feed (a sequence of two constants joined) imports whole.
onnx::AttributeProto* AddBranch(onnx::NodeProto* node, const std::string& name) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::GRAPH);
  return attribute;
}

TEST(OnnxImport, SiblingIfsMayReuseNamesAndBranchesOfConstantsImport) {
  onnx::ModelProto model;
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* graph = model.mutable_graph();
  AddTensorInput(graph, "x", {2, 2});
  AddBoolInitializer(graph, "yes", true);
  AddBoolInitializer(graph, "no", false);
  AddInitializer(graph, "c1", {1, 2}, {1.0f, 2.0f});
  AddInitializer(graph, "c2", {1, 2}, {3.0f, 4.0f});
  const struct {
    const char* name;
    const char* condition;
    const char* then_op;
    const char* else_op;
  } ifs[] = {{"a", "yes", "Neg", "Relu"}, {"b", "no", "Neg", "Abs"}};
  for (const auto& spec : ifs) {
    onnx::NodeProto* node =
        AddNode(graph, "If", spec.name, {spec.condition}, {std::string("y_") + spec.name});
    for (const char* branch : {"then_branch", "else_branch"}) {
      onnx::GraphProto* g = AddBranch(node, branch)->mutable_g();
      const bool then = std::string(branch) == "then_branch";
      AddNode(g, then ? spec.then_op : spec.else_op, "same_name", {"x"}, {"inner"});
      g->add_output()->set_name("inner");
    }
  }
  onnx::NodeProto* constants = AddNode(graph, "If", "c", {"yes"}, {"y_c"});
  onnx::GraphProto* joined = AddBranch(constants, "then_branch")->mutable_g();
  AddNode(joined, "SequenceConstruct", "pair", {"c1", "c2"}, {"pair_seq"});
  AddIntAttribute(AddNode(joined, "ConcatFromSequence", "cat", {"pair_seq"}, {"cat_out"}), "axis",
                  0);
  joined->add_output()->set_name("cat_out");
  onnx::GraphProto* other = AddBranch(constants, "else_branch")->mutable_g();
  AddNode(other, "Identity", "c1_again", {"c1"}, {"other_out"});
  other->add_output()->set_name("other_out");
  for (const char* output : {"y_a", "y_b", "y_c"}) graph->add_output()->set_name(output);
  const std::vector<double> x = {-1.5, 2.0, 0.0, -3.0};
  const std::vector<std::vector<double>> y =
      RunAll(Import(model), HostTensorOf(DType::kFloat32, Shape{2, 2}, x, "x"));
  ASSERT_EQ(y.size(), 3u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(y[0][i], -x[i]) << i;            // a: then, Neg
    EXPECT_EQ(y[1][i], std::fabs(x[i])) << i;  // b: else, Abs
  }
  EXPECT_EQ(y[2], (std::vector<double>{1, 2, 3, 4}));
}

}  // namespace
}  // namespace mxlite
