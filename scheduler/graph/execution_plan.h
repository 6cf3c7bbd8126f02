// ExecutionPlan: what the executor runs, as a list of steps over numbered value slots.
//
// Forward steps run each op node in graph order. For training, the gradient pass appends backward
// steps in reverse order: each op node whose inputs need a gradient runs its backward kernel; when
// several consumers contribute to one value's gradient, an accumulate step (the add_n op) sums the
// contributions first. With mirroring (MXNET_BACKWARD_DO_MIRROR), outputs of cheap ops that
// backward needs are not kept from forward: a recompute step re-runs the op just before the first
// backward step that reads them, so they live only briefly.
//
// Slots are the values: graph inputs, parameters, auxiliary states and parameter gradients are
// external (bound by the user, never shared); activations, their gradients and head gradients are
// internal and are given memory by the memory planner (scheduler/graph/memory_plan.h). A step lists
// the slots it reads and writes, which is all the planner and the engine need to order and share
// them.
//
// Constants. In a plan without training, a forward step whose inputs are all parameters or
// constants (a weight's layout transpose inserted by convolution planning, an imported model's
// transpose of an initialiser) computes the same values every pass until a parameter changes. Such
// a step is marked `constant`; its outputs are kConstant slots, which are never shared, so the
// executor may keep them across passes and run the step again only when what it reads has changed.
// Steps of ops that draw random numbers, and steps writing a graph output, are never constant.
//
// Pure function of the graph, its shapes and the options: no devices, no memory.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "scheduler/graph/graph.h"
#include "scheduler/graph/infer_shapes.h"

namespace mxlite {

enum class SlotKind {
  kInput,              // external: a graph input
  kParameter,          // external: a learned parameter
  kAuxiliary,          // external: op-updated state
  kParameterGradient,  // external: the gradient of a variable that asked for one
  kActivation,         // internal: an op output
  kGradient,           // internal: a gradient (contribution, sum, head gradient)
  kConstant,           // internal: written by a constant step; kept across passes, never shared
};

struct Slot {
  std::string name;
  Shape shape;
  DType dtype = DType::kFloat32;
  SlotKind kind = SlotKind::kActivation;

  bool external() const {
    return kind == SlotKind::kInput || kind == SlotKind::kParameter ||
           kind == SlotKind::kAuxiliary || kind == SlotKind::kParameterGradient;
  }
  // Given memory by the memory planner (shared with other slots as lifetimes allow).
  bool planned() const { return !external() && kind != SlotKind::kConstant; }
  size_t bytes() const { return static_cast<size_t>(shape.size()) * DTypeSize(dtype); }
};

enum class StepKind {
  kForward,     // node's forward kernel
  kRecompute,   // node's forward again, for mirrored outputs (writes only those)
  kBackward,    // node's backward kernel
  kAccumulate,  // writes[0] = sum of reads (add_n)
  kZero,        // writes[0] = 0 (a visible output no consumer took a gradient from)
};

const char* StepKindName(StepKind kind);

struct Step {
  StepKind kind = StepKind::kForward;
  int node = -1;  // the op node (-1 for kAccumulate and kZero)
  // kForward/kRecompute: reads = the node's inputs, writes = its outputs (-1: not needed).
  // kBackward: reads = output gradients (-1: hidden output), then forward inputs and outputs
  //            (-1 where BackwardDependencies says unused); writes = input gradients (-1: kNull).
  std::vector<int> reads;
  std::vector<int> writes;
  std::string label;  // "conv0", "backward conv0", "accumulate relu0_output"
  // kForward only: reads only parameters and constants, writes kConstant slots (see above).
  bool constant = false;
};

struct PlanOptions {
  bool training = false;
  bool mirror = false;  // MXNET_BACKWARD_DO_MIRROR
  // Variables (by node id) whose gradient is wanted; default: every parameter.
  std::vector<int> gradient_variables;
  bool default_gradients = true;
};

struct ExecutionPlan {
  std::vector<Slot> slots;
  std::vector<Step> forward;
  std::vector<Step> backward;
  std::map<NodeEntry, int> entry_slot;        // forward value of each entry
  std::map<int, int> variable_gradient_slot;  // variable node id -> its gradient slot
  std::vector<int> output_slots;              // the graph outputs' slots
  std::vector<int> head_gradient_slots;       // gradient slots of the graph outputs (training)
  int num_mirrored = 0;                       // outputs recomputed instead of kept

  const Slot& slot(int id) const { return slots.at(static_cast<size_t>(id)); }
};

ExecutionPlan BuildExecutionPlan(const Graph& graph, const GraphShapes& shapes,
                                 const PlanOptions& options);

// Default MXNet mirroring policy: cheap ops (OpDef::cheap_to_recompute) are mirrored.
bool ShouldMirror(const Node& node);

}  // namespace mxlite
