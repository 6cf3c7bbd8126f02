// Bias fusion (scheduler/graph/fusion.h): MatMul then the addition of a vector along its last axis
// becomes one MatMul with bias=true named after the product, in either operand order; an addend
// that is not such a vector, a product read elsewhere, or an addition that is a graph output
// stays as written; fused executors compute the bits of unfused ones forward and the same
// gradients backward; the setting and the bind option turn it off.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/settings.h"
#include "scheduler/graph/executor.h"
#include "scheduler/graph/fusion.h"
#include "scheduler/graph/graph_builder.h"
#include "tests/scheduler/random_arguments.h"

namespace mxlite {
namespace {

// l1 = x w1 + b1 (fused); l2 = b2 + gelu(l1) w2 with b2 (1, 1, 4) (fused, operands swapped);
// l3 = l2 w3 + c3 with c3 (5, 4) (not a vector: stays); l4 = l3 w4 + b4 with the product also
// read by a multiplication (stays).
Graph LinearNet() {
  GraphBuilder g;
  Symbol x = g.Input("data", {2, 5, 8});
  auto linear = [&](Symbol in, int64_t k, int64_t n, const std::string& name) {
    return g.Op("MatMul", {in, g.Parameter(name + "_weight", Shape{k, n})}, {}, name);
  };
  Symbol l1 = g.Add(linear(x, 8, 6, "mm1"), g.Parameter("b1", Shape{6}), "add1");
  Symbol l2 = g.Add(g.Parameter("b2", Shape{1, 1, 4}), linear(g.Gelu(l1), 6, 4, "mm2"), "add2");
  Symbol l3 = g.Add(linear(l2, 4, 4, "mm3"), g.Parameter("c3", Shape{5, 4}), "add3");
  Symbol m4 = linear(l3, 4, 3, "mm4");
  Symbol l4 = g.Add(m4, g.Parameter("b4", Shape{3}), "add4");
  return g.Build({g.Multiply(l4, m4, "out")});
}

TEST(BiasFusionTest, FoldsOnlyAVectorAlongTheLastAxisOfAProductReadByTheAdditionAlone) {
  const Graph source = LinearNet();
  const BiasFusionResult result = FuseBiasAdditions(source, InferGraphShapes(source));
  ASSERT_EQ(result.fused.size(), 2u);
  EXPECT_EQ(result.fused[0].product, "mm1");
  EXPECT_EQ(result.fused[0].addition, "add1");
  EXPECT_EQ(result.fused[1].product, "mm2");
  EXPECT_EQ(result.fused[1].addition, "add2");
  const Graph& graph = result.graph;
  const Node& mm1 = graph.node(graph.Find("mm1"));
  EXPECT_EQ(mm1.attr_text.at("bias"), "true");
  ASSERT_EQ(mm1.inputs.size(), 3u);
  EXPECT_EQ(mm1.inputs[2].node, graph.Find("b1"));
  EXPECT_EQ(graph.node(graph.Find("mm2")).inputs[2].node, graph.Find("b2"));
  EXPECT_FALSE(graph.HasName("add1"));
  EXPECT_FALSE(graph.HasName("add2"));
  EXPECT_TRUE(graph.HasName("add3"));
  EXPECT_TRUE(graph.HasName("add4"));
  EXPECT_EQ(graph.node(graph.Find("mm3")).attr_text.count("bias"), 0u);
  EXPECT_NE(FormatBiasFusions(result.fused, true).find("mm2 <- add2"), std::string::npos);

  // An addition that is a graph output keeps its name: not fused.
  GraphBuilder g;
  Symbol x = g.Input("data", {3, 4});
  Symbol product = g.Op("MatMul", {x, g.Parameter("w", Shape{4, 2})}, {}, "mm");
  const Graph head = g.Build({g.Add(product, g.Parameter("b", Shape{2}), "add")});
  EXPECT_TRUE(FuseBiasAdditions(head, InferGraphShapes(head)).fused.empty());
  // Nor a product by a vector B (no axis of B's columns).
  GraphBuilder v;
  Symbol y = v.Input("data", {3, 4});
  Symbol dot = v.Op("MatMul", {y, v.Parameter("w", Shape{4})}, {}, "mm");
  const Graph by_vector = v.Build({v.Relu(v.Add(dot, v.Parameter("b", Shape{3}), "add"))});
  EXPECT_TRUE(FuseBiasAdditions(by_vector, InferGraphShapes(by_vector)).fused.empty());
}

TEST(BiasFusionTest, FusedExecutorsComputeTheBitsOfUnfusedOnes) {
  const Graph graph = LinearNet();
  for (bool training : {false, true}) {
    SCOPED_TRACE(training ? "training" : "inference");
    BindOptions apart{.training = training, .conv_plan = ConvPlanKind::kNone, .fuse_bias = false};
    BindOptions fused = apart;
    fused.fuse_bias = true;
    auto unfused_exec = Executor::Bind(graph, apart);
    auto fused_exec = Executor::Bind(graph, fused);
    EXPECT_EQ(fused_exec->fused_biases().size(), 2u);
    EXPECT_TRUE(unfused_exec->fused_biases().empty());
    // Two passes: at inference the second reads the weights kept packed for the GEMM.
    const auto expected = testing_support::OutputsAndGradients(*unfused_exec, 5, training, 2);
    const auto actual = testing_support::OutputsAndGradients(*fused_exec, 5, training, 2);
    ASSERT_EQ(expected.size(), actual.size());
    EXPECT_EQ(expected[0], actual[0]) << "forward: the bits of the separate addition";
    for (size_t i = 1; i < expected.size(); ++i) {  // gradients: the same sums, perhaps reordered
      ASSERT_EQ(expected[i].size(), actual[i].size());
      for (size_t k = 0; k < expected[i].size(); ++k) {
        ASSERT_NEAR(expected[i][k], actual[i][k], 1e-5 * (1 + std::abs(expected[i][k])))
            << "gradient " << i << " element " << k;
      }
    }
  }
}

TEST(BiasFusionTest, TheSettingAndTheBindOptionTurnItOff) {
  settings().Set("MXNET_FUSE_BIAS", "0");
  EXPECT_TRUE(Executor::Bind(LinearNet(), {})->fused_biases().empty());
  EXPECT_EQ(Executor::Bind(LinearNet(), {.fuse_bias = true})->fused_biases().size(), 2u);
  settings().Reset("MXNET_FUSE_BIAS");
  EXPECT_EQ(Executor::Bind(LinearNet(), {})->fused_biases().size(), 2u);
  EXPECT_TRUE(Executor::Bind(LinearNet(), {.fuse_bias = false})->fused_biases().empty());
}

}  // namespace
}  // namespace mxlite
