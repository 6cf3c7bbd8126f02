// The gradient pass (ExecutionPlan) and the memory planner, on small graphs of test ops.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"
#include "scheduler/graph/execution_plan.h"
#include "scheduler/graph/graph_builder.h"
#include "scheduler/graph/memory_plan.h"

namespace mxlite {
namespace {

// y = a + b (same shapes), in place on a; backward needs nothing from forward.
MXLITE_REGISTER_OP(TestAdd) {
  OpDef op;
  op.name = "TestAdd";
  op.doc = "Test op: y = a + b.";
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"a", "b"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = [](const Attributes&, ShapeInference& shapes) {
    shapes.AssignInput(1, shapes.Input(0));
    shapes.AssignOutput(0, shapes.Input(0));
  };
  op.backward_dependencies = [](const Attributes&) {
    return BackwardDependencies{{false, false}, {false}};
  };
  op.inplace = {{0, 0}};
  op.forward[DeviceType::kCPU] = [](const OpContext&, const Attributes&,
                                    const std::vector<TensorView>&,
                                    const std::vector<TensorView>&,
                                    const std::vector<WriteMode>&) {};
  return op;
}

// y = x * w with a learned w of x's shape; backward needs x and w.
MXLITE_REGISTER_OP(TestMul) {
  OpDef op;
  op.name = "TestMul";
  op.doc = "Test op: y = x * w.";
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
                                    const std::vector<TensorView>&,
                                    const std::vector<TensorView>&,
                                    const std::vector<WriteMode>&) {};
  return op;
}

struct Planned {
  Graph graph;
  ExecutionPlan plan;
};

Planned Plan(const GraphBuilder& g, Symbol output, PlanOptions options) {
  Planned planned{g.Build({output}), {}};
  planned.plan = BuildExecutionPlan(planned.graph, InferGraphShapes(planned.graph), options);
  return planned;
}

std::vector<const Step*> AllSteps(const ExecutionPlan& plan) {
  std::vector<const Step*> steps;
  for (const Step& step : plan.forward) steps.push_back(&step);
  for (const Step& step : plan.backward) steps.push_back(&step);
  return steps;
}

// The planner's invariant, checked independently: two slots that share a block are never live at
// the same time, except an in-place pair at the step that hands the block over.
void ExpectNoLiveOverlap(const Graph& graph, const ExecutionPlan& plan, const MemoryPlan& memory) {
  std::vector<const Step*> steps = AllSteps(plan);
  const int end = static_cast<int>(steps.size());
  std::vector<int> first(plan.slots.size(), end), last(plan.slots.size(), -1);
  for (int slot : plan.head_gradient_slots) {
    if (slot >= 0) first[slot] = -1;
  }
  for (int t = 0; t < end; ++t) {
    for (int slot : steps[t]->writes) {
      if (slot >= 0) first[slot] = std::min(first[slot], t), last[slot] = std::max(last[slot], t);
    }
    for (int slot : steps[t]->reads) {
      if (slot >= 0) last[slot] = std::max(last[slot], t);
    }
  }
  for (int slot : plan.output_slots) last[slot] = end;
  for (size_t a = 0; a < plan.slots.size(); ++a) {
    if (memory.slot_block[a] < 0) continue;
    EXPECT_GE(memory.block_bytes[memory.slot_block[a]], plan.slots[a].bytes()) << plan.slots[a].name;
    for (size_t b = a + 1; b < plan.slots.size(); ++b) {
      if (memory.slot_block[b] != memory.slot_block[a]) continue;
      const bool overlap = first[a] < last[b] && first[b] < last[a];
      bool handover = false;
      if (last[a] == first[b] || last[b] == first[a]) {
        const Step& step = *steps[std::max(first[a], first[b])];
        handover = step.kind == StepKind::kForward || step.kind == StepKind::kRecompute;
        handover = handover && !graph.node(step.node).op->inplace.empty();
      }
      EXPECT_TRUE(!overlap || handover)
          << plan.slots[a].name << " [" << first[a] << "," << last[a] << "] and "
          << plan.slots[b].name << " [" << first[b] << "," << last[b] << "] share block "
          << memory.slot_block[a];
    }
  }
}

TEST(ExecutionPlanTest, InferenceChainRunsForwardOnly) {
  GraphBuilder g;
  Symbol y = g.Tanh(g.Sigmoid(g.Relu(g.Input("data", {4, 8}))));
  Planned planned = Plan(g, y, {});
  EXPECT_EQ(planned.plan.forward.size(), 3u);
  EXPECT_TRUE(planned.plan.backward.empty());
  ASSERT_EQ(planned.plan.output_slots.size(), 1u);
  EXPECT_EQ(planned.plan.slot(planned.plan.output_slots[0]).name, "tanh0_output");
}

TEST(ExecutionPlanTest, InferenceStepsOnParametersAloneAreConstant) {
  // transpose(w) and relu(transpose(w)) read parameters only; TestMul reads data; the last
  // transpose of a parameter is a graph output, which the user owns, so it is not constant.
  GraphBuilder g;
  Symbol w = g.Relu(g.Op("transpose", {g.Parameter("w", Shape{3, 2}, DType::kFloat32)}));
  Symbol y = g.Op("TestMul", {g.Input("data", {2, 3}), w});
  Symbol shown = g.Op("transpose", {g.Parameter("v", Shape{3, 2}, DType::kFloat32)});
  Graph graph = g.Build({y, shown});
  const GraphShapes shapes = InferGraphShapes(graph);
  const ExecutionPlan inference = BuildExecutionPlan(graph, shapes, {});
  std::vector<std::string> constant;
  for (const Step& step : inference.forward) {
    if (step.constant) constant.push_back(step.label);
    for (int slot : step.writes) {
      EXPECT_EQ(inference.slot(slot).kind == SlotKind::kConstant, step.constant) << step.label;
    }
  }
  EXPECT_EQ(constant, (std::vector<std::string>{"transpose0", "relu0"}));
  // Constants are kept across passes: the memory plan leaves them to the executor.
  const MemoryPlan memory = PlanMemory(graph, inference, MemoryPlanOptions{});
  for (size_t slot = 0; slot < inference.slots.size(); ++slot) {
    EXPECT_EQ(memory.slot_block[slot] >= 0, inference.slots[slot].planned())
        << inference.slots[slot].name;
  }
  // A training plan recomputes everything every pass.
  const ExecutionPlan training = BuildExecutionPlan(graph, shapes, {.training = true});
  for (const Step& step : training.forward) EXPECT_FALSE(step.constant) << step.label;
}

// A convolution's fused residual in NCHW16c takes the residual's block (OpDef::inplace_with) when
// nothing reads the residual later and the convolution reads it at no other input; in NCHW, or as
// its data too, it gets a block of its own.
TEST(MemoryPlanTest, AResidualInNchw16cSharesTheConvolutionsOutput) {
  const auto residual_net = [](const std::string& layout, bool residual_is_data) {
    GraphBuilder g;
    const bool blocked = layout == "NCHW16c";
    const Shape shape = blocked ? Shape{1, 2, 6, 6, 16} : Shape{1, 32, 6, 6};
    const std::map<std::string, std::string> attrs = {
        {"kernel", "(3,3)"}, {"pad", "(1,1)"}, {"num_filter", "32"}, {"layout", layout}};
    Symbol x = g.Relu(g.Input("data", shape), "x");
    Symbol c1 = g.Op("Convolution", {x}, attrs, "c1");
    std::map<std::string, std::string> fused = attrs;
    fused["residual"] = "true";
    Symbol data = residual_is_data ? x : c1;
    Symbol c2 = g.Op("Convolution", {data, g.Parameter("w2"), g.Parameter("b2"), x}, fused, "c2");
    return Plan(g, g.Relu(c2, "out"), {});
  };
  const auto shares = [](const Planned& planned) {
    const MemoryPlan memory = PlanMemory(planned.graph, planned.plan, {true, 0});
    ExpectNoLiveOverlap(planned.graph, planned.plan, memory);
    const int x = planned.plan.entry_slot.at({planned.graph.Find("x"), 0});
    const int c2 = planned.plan.entry_slot.at({planned.graph.Find("c2"), 0});
    return memory.slot_block[x] == memory.slot_block[c2];
  };
  EXPECT_TRUE(shares(residual_net("NCHW16c", false)));
  EXPECT_FALSE(shares(residual_net("NCHW", false)));
  EXPECT_FALSE(shares(residual_net("NCHW16c", true)));  // x is c2's data as well
}

TEST(MemoryPlanTest, InplaceBestFitAndNoSharing) {
  GraphBuilder g;
  Symbol y = g.Tanh(g.Sigmoid(g.Relu(g.Relu(g.Input("data", {4, 8})))));
  Planned planned = Plan(g, y, {});
  const size_t slot_bytes = 4 * 8 * 4;

  MemoryPlan inplace = PlanMemory(planned.graph, planned.plan, {true, 16});
  EXPECT_EQ(inplace.inplace_count, 3);  // relu1, sigmoid, tanh reuse their input's block
  EXPECT_EQ(inplace.planned_bytes, slot_bytes);
  ExpectNoLiveOverlap(planned.graph, planned.plan, inplace);

  MemoryPlan shared = PlanMemory(planned.graph, planned.plan, {false, 16});
  EXPECT_EQ(shared.inplace_count, 0);
  EXPECT_EQ(shared.planned_bytes, 2 * slot_bytes);  // ping-pong between two blocks
  ExpectNoLiveOverlap(planned.graph, planned.plan, shared);

  MemoryPlan unshared = PlanMemory(planned.graph, planned.plan, {false, 0});
  EXPECT_EQ(unshared.planned_bytes, 4 * slot_bytes);
  EXPECT_EQ(unshared.unplanned_bytes, 4 * slot_bytes);
}

TEST(ExecutionPlanTest, GradientsOfSharedValuesAreAccumulated) {
  // x (which depends on a weight) feeds two TestMul branches that are added: x's gradient has
  // two contributions, and each weight's gradient is written straight into its external slot.
  GraphBuilder g;
  Symbol x = g.Op("TestMul", {g.Relu(g.Input("data", {2, 3}))});
  Symbol y = g.Op("TestAdd", {g.Op("TestMul", {x}), g.Op("TestMul", {x})});
  Planned planned = Plan(g, y, {.training = true});
  const ExecutionPlan& plan = planned.plan;
  EXPECT_EQ(plan.variable_gradient_slot.size(), 3u);
  for (const auto& [variable, slot] : plan.variable_gradient_slot) {
    EXPECT_EQ(plan.slot(slot).kind, SlotKind::kParameterGradient);
    EXPECT_EQ(plan.slot(slot).name, planned.graph.node(variable).name + "_grad");
  }
  int accumulates = 0, backwards = 0;
  for (const Step& step : plan.backward) {
    if (step.kind == StepKind::kAccumulate) {
      ++accumulates;
      EXPECT_EQ(step.reads.size(), 2u);
      EXPECT_EQ(step.label, "accumulate testmul0_output");
    }
    backwards += step.kind == StepKind::kBackward;
  }
  EXPECT_EQ(accumulates, 1);
  EXPECT_EQ(backwards, 4);  // add and three muls; not relu (nothing before it wants a gradient)
  ASSERT_EQ(plan.head_gradient_slots.size(), 1u);
  EXPECT_GE(plan.head_gradient_slots[0], 0);
  MemoryPlan memory = PlanMemory(planned.graph, plan, MemoryPlanOptions{});
  ExpectNoLiveOverlap(planned.graph, plan, memory);
  EXPECT_LT(memory.planned_bytes, memory.unplanned_bytes);
}

TEST(ExecutionPlanTest, AskedInputGradientAndUnusedOutputs) {
  GraphBuilder g;
  Symbol data = g.Input("data", {2, 3});
  Symbol y = g.Op("TestMul", {g.Sigmoid(data)});
  Graph graph = g.Build({y});
  PlanOptions options{.training = true, .gradient_variables = {graph.Find("data")}};
  ExecutionPlan plan = BuildExecutionPlan(graph, InferGraphShapes(graph), options);
  EXPECT_EQ(plan.variable_gradient_slot.count(graph.Find("data")), 1u);
  EXPECT_EQ(plan.variable_gradient_slot.count(graph.Find("testmul0_weight")), 1u);
  PlanOptions bad{.training = true, .gradient_variables = {graph.Find("sigmoid0")}};
  EXPECT_THROW(BuildExecutionPlan(graph, InferGraphShapes(graph), bad), Error);
}

TEST(ExecutionPlanTest, MirroringRecomputesCheapOutputsAndSavesMemory) {
  // TestMul (kept) -> sigmoid -> TestMul -> sigmoid -> TestMul: the sigmoid outputs are read by
  // both the next TestMul's backward and their own backward.
  GraphBuilder g;
  Symbol y = g.Input("data", {16, 16});
  for (int i = 0; i < 3; ++i) y = g.Sigmoid(g.Sigmoid(g.Op("TestMul", {y})));
  Planned plain = Plan(g, y, {.training = true});
  Planned mirrored = Plan(g, y, {.training = true, .mirror = true});
  EXPECT_EQ(plain.plan.num_mirrored, 0);
  EXPECT_GT(mirrored.plan.num_mirrored, 0);
  int recomputes = 0;
  for (const Step& step : mirrored.plan.backward) recomputes += step.kind == StepKind::kRecompute;
  EXPECT_GT(recomputes, 0);
  MemoryPlan plain_memory = PlanMemory(plain.graph, plain.plan, MemoryPlanOptions{});
  MemoryPlan mirrored_memory = PlanMemory(mirrored.graph, mirrored.plan, MemoryPlanOptions{});
  ExpectNoLiveOverlap(mirrored.graph, mirrored.plan, mirrored_memory);
  EXPECT_LT(mirrored_memory.planned_bytes, plain_memory.planned_bytes);
}

}  // namespace
}  // namespace mxlite
