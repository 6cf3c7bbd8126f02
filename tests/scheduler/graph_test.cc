// Graph IR, the C++ builder, whole-graph shape inference and the summary, on a test-only op
// ("TestScale": y = x * w + b with a per-column weight) so these tests do not depend on the
// real operators' details.
#include <gtest/gtest.h>

#include "core/error.h"
#include "scheduler/graph/graph_builder.h"
#include "scheduler/graph/infer_shapes.h"
#include "scheduler/graph/summary.h"

namespace mxlite {
namespace {

MXLITE_REGISTER_OP(TestScale) {
  OpDef op;
  op.name = "TestScale";
  op.doc = "Test op: y = x * w + b, w and b of the last axis' size.";
  op.attributes.Bool("no_bias", "drop b", Default("false"));
  op.input_names = [](const Attributes& attrs) {
    return attrs.GetBool("no_bias") ? std::vector<std::string>{"data", "weight"}
                                    : std::vector<std::string>{"data", "weight", "bias"};
  };
  op.input_roles = [](const Attributes& attrs) {
    std::vector<InputRole> roles = {InputRole::kData, InputRole::kParameter};
    if (!attrs.GetBool("no_bias")) roles.push_back(InputRole::kParameter);
    return roles;
  };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = [](const Attributes&, ShapeInference& shapes) {
    const Shape& data = shapes.Input(0);
    for (size_t i = 1; i < shapes.inputs.size(); ++i) {
      shapes.AssignInput(static_cast<int>(i), Shape{data.dim(-1)});
    }
    shapes.AssignOutput(0, data);
  };
  op.forward[DeviceType::kCPU] = [](const OpContext&, const Attributes&,
                                    const std::vector<TensorView>&,
                                    const std::vector<TensorView>&,
                                    const std::vector<WriteMode>&) {};
  return op;
}

TEST(GraphBuilderTest, NamesNodesAndCreatesParameters) {
  GraphBuilder g;
  Symbol x = g.Input("data", {8, 16});
  Symbol y = g.Op("TestScale", {x});
  y = g.Relu(y);
  y = g.Op("TestScale", {y}, {{"no_bias", "true"}});
  Graph graph = g.Build({y});
  EXPECT_TRUE(graph.HasName("testscale0"));
  EXPECT_TRUE(graph.HasName("testscale0_weight"));
  EXPECT_TRUE(graph.HasName("testscale0_bias"));
  EXPECT_TRUE(graph.HasName("relu0"));
  EXPECT_TRUE(graph.HasName("testscale1_weight"));
  EXPECT_FALSE(graph.HasName("testscale1_bias"));
  EXPECT_EQ(graph.Variables(VariableRole::kParameter).size(), 3u);
  EXPECT_EQ(graph.Variables(VariableRole::kInput).size(), 1u);
  EXPECT_EQ(graph.EntryName(graph.outputs()[0]), "testscale1_output");
}

TEST(GraphBuilderTest, BuildPrunesWhatTheOutputsDoNotNeed) {
  GraphBuilder g;
  Symbol x = g.Input("data", {2, 3});
  Symbol used = g.Relu(x);
  g.Sigmoid(x);  // dead branch
  Graph graph = g.Build({used});
  EXPECT_EQ(graph.num_nodes(), 2);
  EXPECT_FALSE(graph.HasName("sigmoid0"));
  graph.Validate();
}

TEST(GraphBuilderTest, ErrorsNameTheNode) {
  GraphBuilder g;
  Symbol x = g.Input("data", {2, 3});
  try {
    g.Op("Activation", {x}, {{"act_type", "gelu"}}, "act7");
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("Activation act7: attribute act_type='gelu'"),
              std::string::npos)
        << error.what();
  }
  EXPECT_THROW(g.Op("NoSuchOp", {x}), Error);
  EXPECT_THROW(g.Input("data", {1}), Error);  // duplicate name
  EXPECT_THROW(g.Op("Activation", {x, x}, {{"act_type", "relu"}}), Error);
  GraphBuilder other;
  Symbol foreign = other.Input("data", {2, 3});
  EXPECT_THROW(g.Relu(foreign), Error);
}

TEST(InferShapesTest, FillsParametersAndOutputs) {
  GraphBuilder g;
  Symbol y = g.Op("TestScale", {g.Input("data", {8, 16})});
  Graph graph = g.Build({g.Tanh(y)});
  GraphShapes shapes = InferGraphShapes(graph);
  EXPECT_EQ(shapes.of({graph.Find("testscale0_weight"), 0}), (Shape{16}));
  EXPECT_EQ(shapes.of(graph.outputs()[0]), (Shape{8, 16}));
  EXPECT_EQ(shapes.dtype_of(graph.outputs()[0]), DType::kFloat32);
  // A new batch size flows through.
  GraphShapes rebatched = InferGraphShapes(graph, {{"data", Shape{3, 16}}});
  EXPECT_EQ(rebatched.of(graph.outputs()[0]), (Shape{3, 16}));
  EXPECT_THROW(InferGraphShapes(graph, {{"nothing", Shape{1}}}), Error);
}

TEST(InferShapesTest, MismatchNamesNodeOpAndBothShapes) {
  GraphBuilder g;
  Symbol w = g.Parameter("shared_weight", Shape{5});
  Symbol y = g.Op("TestScale", {g.Input("data", {8, 16}), w}, {}, "scale");
  Graph graph = g.Build({y});
  try {
    InferGraphShapes(graph);
    FAIL();
  } catch (const Error& error) {
    std::string message = error.what();
    EXPECT_NE(message.find("TestScale scale: input 'weight' has shape (5) but (16) is expected"),
              std::string::npos)
        << message;
  }
}

TEST(InferShapesTest, MissingInputShapeIsNamed) {
  Graph graph;
  int data = graph.AddVariable("data", VariableRole::kInput, std::nullopt);
  graph.AddOutput({graph.AddOpNode("Activation", "act", {{"act_type", "relu"}}, {{data, 0}}), 0});
  try {
    InferGraphShapes(graph);
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("data"), std::string::npos) << error.what();
  }
}

TEST(SummaryTest, ListsLayersShapesAndParameterCounts) {
  GraphBuilder g;
  Symbol y = g.Op("TestScale", {g.Input("data", {8, 1000})});
  Graph graph = g.Build({g.Relu(y)});
  GraphShapes shapes = InferGraphShapes(graph);
  std::string summary = GraphSummary(graph, shapes);
  EXPECT_NE(summary.find("testscale0 (TestScale)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("(8,1000)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("2,000"), std::string::npos) << summary;
  EXPECT_NE(summary.find("Total parameters: 2,000"), std::string::npos) << summary;
  EXPECT_EQ(CountParameters(graph, shapes), 2000);
}

}  // namespace
}  // namespace mxlite
