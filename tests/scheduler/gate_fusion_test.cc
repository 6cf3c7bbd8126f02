// Gate fusion (scheduler/graph/fusion.h): x * sigmoid(x) in either operand order becomes one silu
// node named after the product, x * hard_sigmoid(x) one hard_swish; a sigmoid read elsewhere, a sigmoid that is a graph
// output, or a product of a sigmoid of another value stays as written; fused executors compute
// the bits of unfused ones, forward and backward; the setting and the bind option turn it off.
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

// g1: c1 * sigmoid(c1) (fused); g2: sigmoid(c2) * c2 (fused, operands swapped); g3: the sigmoid
// is also read by an addition (not fused); g4: c4 * sigmoid(c1) (another value: not fused).
Graph GateNet() {
  GraphBuilder g;
  Symbol x = g.Input("data", {2, 4, 6, 6});
  Symbol c1 = g.Conv(x, {.num_filter = 8, .kernel = {3, 3}, .pad = {1, 1}}, "c1");
  Symbol g1 = g.Op("broadcast_mul", {c1, g.Sigmoid(c1, "s1")}, {}, "g1");
  Symbol c2 = g.Conv(g1, {.num_filter = 8, .kernel = {1, 1}}, "c2");
  Symbol g2 = g.Op("elemwise_mul", {g.Sigmoid(c2, "s2"), c2}, {}, "g2");
  Symbol c3 = g.Conv(g2, {.num_filter = 8, .kernel = {1, 1}}, "c3");
  Symbol s3 = g.Sigmoid(c3, "s3");
  Symbol g3 = g.Add(g.Op("broadcast_mul", {c3, s3}, {}, "g3"), s3, "a3");
  Symbol c4 = g.Conv(g3, {.num_filter = 8, .kernel = {1, 1}}, "c4");
  Symbol s4 = g.Sigmoid(c1, "s4");
  Symbol g4 = g.Op("broadcast_mul", {c4, s4}, {}, "g4");
  return g.Build({g4});
}

TEST(GateFusionTest, FoldsOnlyASigmoidOfTheOtherOperandReadByTheProductAlone) {
  const GateFusionResult result = FuseSigmoidGates(GateNet());
  ASSERT_EQ(result.fused.size(), 2u);
  EXPECT_EQ(result.fused[0].product, "g1");
  EXPECT_EQ(result.fused[0].gate, "s1");
  EXPECT_EQ(result.fused[1].product, "g2");
  EXPECT_EQ(result.fused[1].gate, "s2");
  const Graph& graph = result.graph;
  EXPECT_EQ(graph.node(graph.Find("g1")).op->name, "silu");
  EXPECT_EQ(graph.node(graph.Find("g2")).op->name, "silu");
  EXPECT_EQ(graph.node(graph.Find("g1")).inputs[0].node, graph.Find("c1"));
  EXPECT_FALSE(graph.HasName("s1"));
  EXPECT_FALSE(graph.HasName("s2"));
  EXPECT_TRUE(graph.HasName("s3"));
  EXPECT_EQ(graph.node(graph.Find("g3")).op->name, "broadcast_mul");
  EXPECT_EQ(graph.node(graph.Find("g4")).op->name, "broadcast_mul");
  EXPECT_NE(FormatGateFusions(result.fused, true).find("g2 <- s2"), std::string::npos);

  // x * hard_sigmoid(x) becomes hard_swish with the gate's alpha and beta.
  {
    GraphBuilder g;
    Symbol x = g.Input("data", {3, 5});
    Symbol gate = g.Op("hard_sigmoid", {x}, {{"alpha", "0.25"}, {"beta", "0.4"}}, "hs");
    const GateFusionResult swish = FuseSigmoidGates(g.Build({g.Op("elemwise_mul", {x, gate}, {}, "m")}));
    ASSERT_EQ(swish.fused.size(), 1u);
    const Node& m = swish.graph.node(swish.graph.Find("m"));
    EXPECT_EQ(m.op->name, "hard_swish");
    EXPECT_EQ(m.attr_text.at("alpha"), "0.25");
    EXPECT_EQ(m.attr_text.at("beta"), "0.4");
    EXPECT_FALSE(swish.graph.HasName("hs"));
  }

  // A sigmoid that is a graph output stays.
  GraphBuilder g;
  Symbol x = g.Input("data", {3, 5});
  Symbol s = g.Sigmoid(x, "s");
  const Graph both = g.Build({g.Op("elemwise_mul", {x, s}, {}, "m"), s});
  EXPECT_TRUE(FuseSigmoidGates(both).fused.empty());
}

TEST(GateFusionTest, FusedExecutorsComputeTheBitsOfUnfusedOnes) {
  const Graph graph = GateNet();
  for (bool training : {false, true}) {
    SCOPED_TRACE(training ? "training" : "inference");
    BindOptions apart{.training = training, .conv_plan = ConvPlanKind::kNone, .fuse_silu = false};
    BindOptions fused = apart;
    fused.fuse_silu = true;
    auto unfused_exec = Executor::Bind(graph, apart);
    auto fused_exec = Executor::Bind(graph, fused);
    EXPECT_EQ(fused_exec->fused_gates().size(), 2u);
    EXPECT_TRUE(unfused_exec->fused_gates().empty());
    const auto expected = testing_support::OutputsAndGradients(*unfused_exec, 11, training);
    const auto actual = testing_support::OutputsAndGradients(*fused_exec, 11, training);
    ASSERT_EQ(expected.size(), actual.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      if (i == 0) {
        EXPECT_EQ(expected[i], actual[i]) << "forward: the bits of the separate ops";
      } else {  // gradients: another order of the same products
        ASSERT_EQ(expected[i].size(), actual[i].size());
        for (size_t k = 0; k < expected[i].size(); ++k) {
          ASSERT_NEAR(expected[i][k], actual[i][k], 1e-5 * (1 + std::abs(expected[i][k])))
              << "gradient " << i << " element " << k;
        }
      }
    }
  }
}

TEST(GateFusionTest, TheSettingAndTheBindOptionTurnItOff) {
  settings().Set("MXNET_FUSE_SILU", "0");
  EXPECT_TRUE(Executor::Bind(GateNet(), {})->fused_gates().empty());
  EXPECT_EQ(Executor::Bind(GateNet(), {.fuse_silu = true})->fused_gates().size(), 2u);
  settings().Reset("MXNET_FUSE_SILU");
  EXPECT_EQ(Executor::Bind(GateNet(), {})->fused_gates().size(), 2u);
  EXPECT_TRUE(Executor::Bind(GateNet(), {.fuse_silu = false})->fused_gates().empty());
}

}  // namespace
}  // namespace mxlite
