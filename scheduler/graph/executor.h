// Executor: a graph bound to a device, with memory for every value, run through the engine.
//
//   GraphBuilder g;  ...
//   auto exec = Executor::Bind(g.Build({loss}), {.ctx = Context::CPU(), .training = true});
//   exec->Arg("data").SyncCopyFromCPU(batch, bytes);
//   exec->Forward(/*is_train=*/true);
//   exec->Backward();
//   NDArray w_grad = exec->Gradient("conv0_weight");
//
// Binding folds relu / clip into the convolutions before them on inference executors
// (scheduler/graph/fusion.h, per MXNET_CONV_FUSE_ACTIVATION; residual additions after planning, per
// MXNET_CONV_FUSE_RESIDUAL), infers shapes, plans the layouts of
// convolutions and pooling (scheduler/planning/conv_planning.h, per MXNET_CONV_PLAN), runs each
// NHWC depthwise convolution with its 1x1 neighbours as one op on CPU inference executors
// (scheduler/graph/fusion.h, per MXNET_CONV_FUSE_DEPTHWISE) and each BatchNorm of a Concat's
// output with it (per MXNET_FUSE_CONCAT_NORM), builds the execution plan
// (scheduler/graph/execution_plan.h: forward, and for training the gradient pass, mirrored per
// MXNET_BACKWARD_DO_MIRROR) and the memory plan
// (scheduler/graph/memory_plan.h, per MXNET_EXEC_ENABLE_INPLACE and NNVM_EXEC_MATCH_RANGE), then
// allocates one block per planned buffer. Values computed from parameters alone (constant steps of
// an inference plan: weight transposes) get arrays of their own and are computed again only when a
// parameter they read was written since (its engine var's version changed); ops with state are
// told each input's version too (OpContext::input_versions), so a convolution keeps its packed
// weight while the weight is unchanged. Kernels take scratch memory from MXNET_EXEC_NUM_TEMP
// temporary workspaces, each used by one op at a time (ordered by an engine var), grown to the
// largest need seen. Variables (inputs, parameters, auxiliary states) are
// NDArrays: the ones given in BindOptions::arrays are used as they are (shared, e.g. between
// executors of two batch sizes), the others are created (zeros). Every step is pushed to the engine
// with the engine vars of what it reads and writes, bulked per MXNET_EXEC_BULK_EXEC_*; Forward and
// Backward return once everything is pushed; the steps of a pass are made ready to push once (their
// closures, views and vars; again only if a variable's array was replaced), since every pass
// pushes the same ones, and its constant steps are pushed as one, first. With
// BindOptions::cuda_graphs (MXNET_ENABLE_CUDA_GRAPHS) the recorded segments of a GPU inference pass
// are replayed as CUDA graphs under a key of the weights' and constants' versions and the
// workspaces (ReplayKey; engine/segment_graph.h). Reading an output or gradient (NDArray::ToVector,
// WaitToRead) waits, and rethrows an error of the op that failed, naming it.
//
// Thread safety: one thread drives an executor. Arrays it hands out may be read from any thread.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "engine/ndarray.h"
#include "ops/conv/tuner.h"
#include "scheduler/graph/dead_taps.h"
#include "scheduler/graph/execution_plan.h"
#include "scheduler/graph/fusion.h"
#include "scheduler/graph/graph.h"
#include "scheduler/graph/infer_shapes.h"
#include "scheduler/graph/memory_plan.h"
#include "scheduler/planning/conv_planning.h"
#include "scheduler/planning/plan_check.h"

namespace mxlite {

struct BindOptions {
  Context ctx = Context::CPU();
  // Plan backward too (gradients of every parameter, plus the inputs listed below).
  bool training = false;
  // Input variables whose gradient is wanted as well (e.g. for adversarial examples or tests).
  std::vector<std::string> input_gradients = {};
  // Shapes of inputs that differ from the graph's declared ones (e.g. another batch size).
  std::map<std::string, Shape> input_shapes = {};
  // Arrays to use for variables or parameter gradients ("conv0_weight", "conv0_weight_grad").
  std::map<std::string, NDArray> arrays = {};
  // Seed of the random streams (Dropout); each node gets its own stream.
  uint64_t seed = 0;
  // How convolutions and pooling choose their layouts (scheduler/planning/conv_planning.h); unset:
  // MXNET_CONV_PLAN. Planned on the device that runs the graph (CPU kernels or cuDNN).
  std::optional<ConvPlanKind> conv_plan = std::nullopt;
  // Run x * sigmoid(x) as one silu op (scheduler/graph/fusion.h); unset: MXNET_FUSE_SILU.
  std::optional<bool> fuse_silu = std::nullopt;
  // Fold the addition of a vector along a MatMul's last axis into the MatMul (bias=true;
  // scheduler/graph/fusion.h); unset: MXNET_FUSE_BIAS. Training too.
  std::optional<bool> fuse_bias = std::nullopt;
  // Fold relu / clip into the op before them (a Convolution, a BatchNorm)
  // (scheduler/graph/fusion.h); unset: MXNET_CONV_FUSE_ACTIVATION. Applies to executors bound
  // without training.
  std::optional<bool> fuse_activations = std::nullopt;
  // Run each depthwise convolution with its 1x1 neighbours as one op (scheduler/graph/fusion.h);
  // unset: MXNET_CONV_FUSE_DEPTHWISE. Applies to CPU executors bound without training.
  std::optional<bool> fuse_depthwise = std::nullopt;
  // Fold an addition of a convolution's output and a value of its shape into the convolution
  // (scheduler/graph/fusion.h); unset: MXNET_CONV_FUSE_RESIDUAL. Applies to executors bound without
  // training.
  std::optional<bool> fuse_residual = std::nullopt;
  // Run a BatchNorm of a Concat's output as one op with it (scheduler/graph/fusion.h); unset:
  // MXNET_FUSE_CONCAT_NORM. Applies to CPU executors bound without training.
  std::optional<bool> fuse_concat_norm = std::nullopt;
  // Cut kernel taps that read only padding out of convolutions (scheduler/graph/dead_taps.h);
  // unset: MXNET_CONV_TRIM_DEAD_TAPS.
  std::optional<bool> trim_dead_taps = std::nullopt;
  // Replay GPU inference passes as CUDA graphs (engine/segment_graph.h); unset:
  // MXNET_ENABLE_CUDA_GRAPHS.
  std::optional<bool> cuda_graphs = std::nullopt;
  // Before keeping a plan that moves layers, time planned passes against passes as written and
  // keep the faster (scheduler/planning/plan_check.h); unset: MXNET_CONV_PLAN_GUARD. Applies to
  // executors bound without training.
  std::optional<bool> plan_guard = std::nullopt;
};

struct MemoryReport {
  size_t planned_bytes = 0;    // internal buffers with the memory plan
  size_t unplanned_bytes = 0;  // the same, one buffer per value
  size_t external_bytes = 0;   // variables and parameter gradients
  size_t constant_bytes = 0;   // values computed from parameters alone, kept across passes
  // Kept by ops across passes (OpState::kept_bytes: convolutions' prepared weights at inference);
  // grows as passes run.
  size_t op_state_bytes = 0;
  int inplace_count = 0;
  int mirrored_count = 0;

  // One line: "Memory: 3.1 MiB planned for values (...), ... kept by ops (prepared weights)".
  std::string Summary() const;
};

class ConstantStepMemo;  // executor.cc

// How to read the version of a value (a slot) inside a step that reads it: a value computed by a
// constant step counts that step's runs (the engine counts a constant step that found its
// parameters unchanged as a write of its outputs, though they did not change); any other value
// counts its engine var's completed writes.
struct ValueVersion {
  VarHandle var = nullptr;
  std::shared_ptr<const ConstantStepMemo> constant;
  uint64_t Read(const Engine& engine) const;  // 0 for neither
};

class Executor {
 public:
  static std::unique_ptr<Executor> Bind(const Graph& graph, const BindOptions& options);
  ~Executor();

  // Pushes the forward steps. With is_train, ops behave as in training (BatchNorm uses and updates
  // batch statistics, Dropout drops).
  void Forward(bool is_train);
  // Pushes the backward steps. `head_gradients` (one per graph output, or none for all ones)
  // seed the gradients of the outputs; loss ops such as SoftmaxOutput ignore them.
  void Backward(const std::vector<NDArray>& head_gradients = {});

  const std::vector<NDArray>& outputs() const { return outputs_; }
  // The array of a variable (input, parameter or auxiliary state) by name.
  NDArray& Arg(const std::string& name);
  // The gradient of a parameter (or of an input listed in BindOptions::input_gradients).
  NDArray& Gradient(const std::string& name);
  // Every parameter's name, in graph order.
  std::vector<std::string> ParameterNames() const;
  std::vector<std::string> AuxiliaryNames() const;

  // An executor for new input shapes that shares this one's parameters, auxiliary states and
  // gradient arrays (what did not change shape) — rebinding to a new batch size.
  std::unique_ptr<Executor> Reshape(const std::map<std::string, Shape>& input_shapes) const;

  // The graph as run: the bound graph after activation fusion and convolution planning
  // (activations folded, transposes inserted, layouts set), which is the bound graph itself when
  // nothing changed.
  const Graph& graph() const { return graph_; }
  // The activations folded into the ops before them at bind (scheduler/graph/fusion.h), in graph
  // order.
  const std::vector<FusedActivation>& fused_activations() const { return fused_; }
  const std::vector<FusedGate>& fused_gates() const { return gates_; }
  // The bias additions folded into their products at bind (scheduler/graph/fusion.h).
  const std::vector<FusedBias>& fused_biases() const { return biases_; }
  // The convolutions whose dead kernel taps were cut at bind (scheduler/graph/dead_taps.h).
  const std::vector<TrimmedConvolution>& trimmed_convolutions() const { return trimmed_; }
  // The depthwise blocks run as one op each (scheduler/graph/fusion.h), in graph order.
  const std::vector<FusedDepthwiseBlock>& fused_depthwise_blocks() const {
    return depthwise_blocks_;
  }
  // The residual additions folded into convolutions at bind (scheduler/graph/fusion.h), in graph
  // order.
  const std::vector<FusedResidual>& fused_residuals() const { return residuals_; }
  // The joins run with the normalisations after them at bind (scheduler/graph/fusion.h), in
  // graph order.
  const std::vector<FusedConcatNorm>& fused_concat_norms() const { return concat_norms_; }
  // What convolution planning decided at bind (scheduler/planning/conv_planning.h).
  // The layout plan the graph runs with. When the plan check refused a plan, the executor runs
  // the graph as written and this is its (unplanned) report; plan_check() has the figures.
  const ConvPlanReport& conv_plan() const { return conv_plan_; }
  // The check of the plan at bind (scheduler/planning/plan_check.h), when one ran: planned and
  // as-written pass times, and whether the plan was kept.
  const std::optional<PlanCheck>& plan_check() const { return plan_check_; }
  const GraphShapes& shapes() const { return shapes_; }
  const ExecutionPlan& plan() const { return plan_; }
  Context context() const { return options_.ctx; }
  MemoryReport memory_report() const;
  // How often constant steps (weight transposes of an inference plan) have computed so far;
  // passes that found their parameters unchanged do not count. Wait for the passes first.
  int64_t constant_step_runs() const;
  // Fills every planned buffer with `value` (pushed; for tests that catch reads of values the
  // plan let another tensor overwrite: poison with NaN, and results must not change).
  void FillPlannedBuffers(double value);
  // The graph summary (layers, output shapes, parameter counts) and the memory report.
  std::string Summary() const;
  // What the convolution tuner decided at bind for the layouts that run, per layer and direction,
  // in graph order (the planner's alternatives are in conv_plan().decisions).
  std::vector<conv::LayerTuning> TuningDecisions() const;
  // The tuning report (ops/conv/tuner.h): a line per decision (every candidate with `verbose`)
  // and the one-line summary. Binding logs it as MXNET_TUNING_REPORT says (default: the summary).
  std::string TuningReport(bool verbose) const;

 private:
  Executor(const Graph& graph, const BindOptions& options);
  void AllocateArrays();
  void FuseSigmoidGates();
  void FuseBiases();    // needs the shapes
  void TrimDeadTaps();  // needs the shapes; before layout planning
  void FuseActivations();
  void PlanConvolutionLayouts();
  bool FusesDepthwiseBlocks() const;  // CPU inference with MXNET_CONV_FUSE_DEPTHWISE
  void FuseDepthwiseBlocks();
  // Residual additions into convolutions, then the activation fusion again (a relu after the
  // addition joins the same store).
  void FuseResiduals();
  void FuseConcatNorms();  // CPU inference with MXNET_FUSE_CONCAT_NORM; after planning
  void CreateNodeStates();
  void CreateConstantMemos();
  // Whether the plan moves a layer and the plan check applies (inference, the setting on).
  bool PlanNeedsCheck() const;
  // `planned` (this graph bound with its plan) or, when the check refuses the plan, the graph
  // bound as written; the result carries the check.
  static std::unique_ptr<Executor> CheckPlan(std::unique_ptr<Executor> planned, const Graph& graph,
                                             const BindOptions& options);
  void LogTuning() const;
  void CreateTempSpaces();
  // A step ready to push: the engine closure with everything it needs, its vars and label.
  struct PreparedStep {
    SyncFn fn;
    std::vector<VarHandle> reads, writes;
    std::string label;
    bool writes_gradient = false;  // a parameter's gradient: Backward ends its bulk segment here
  };
  // Steps made ready for one kind of pass, valid while every slot keeps the array they captured.
  struct PreparedPass {
    std::vector<PreparedStep> steps;
    std::vector<NDArray::Identity> arrays;  // per slot, when prepared
    bool prepared = false;
    // The steps recorded as engine segments of at most segment_size steps (each also ending after
    // a step that writes a parameter's gradient), made on the first bulked push after preparing.
    std::vector<std::shared_ptr<const OpSegment>> segments;
    int segment_size = 0;
  };
  PreparedStep PrepareStep(const Step& step, bool is_train) const;
  static PreparedStep CombineSteps(std::vector<PreparedStep> steps);
  const std::vector<PreparedStep>& Prepared(PreparedPass& pass, const std::vector<Step>& steps,
                                            bool is_train);
  bool StillPrepared(const PreparedPass& pass) const;
  void Push(const PreparedStep& step) const;
  // Pushes a pass's steps: as recorded segments of bulk_size steps, or one op each (bulk_size 0).
  void PushPass(PreparedPass& pass, const std::vector<Step>& steps, bool is_train, int bulk_size);
  std::vector<std::shared_ptr<const OpSegment>> RecordSegments(
      const std::vector<PreparedStep>& steps, int bulk_size, const SegmentReplayKey& key) const;
  // What a pass's recorded segments may be replayed under as CUDA graphs (null: never).
  SegmentReplayKey ReplayKey(const std::vector<Step>& steps, bool is_train) const;
  void PushHeadGradient(int slot, const NDArray* given);
  TensorView SlotView(int slot) const;
  VarHandle SlotVar(int slot) const;
  ValueVersion SlotValueVersion(int slot) const;

  Graph source_graph_;  // as bound, before planning (Reshape plans it again)
  Graph graph_;
  BindOptions options_;
  std::vector<FusedActivation> fused_;
  std::vector<FusedGate> gates_;
  std::vector<FusedBias> biases_;
  std::vector<TrimmedConvolution> trimmed_;
  std::vector<FusedDepthwiseBlock> depthwise_blocks_;
  std::vector<FusedResidual> residuals_;
  std::vector<FusedConcatNorm> concat_norms_;
  ConvPlanReport conv_plan_;
  std::optional<PlanCheck> plan_check_;
  std::string refused_plan_;  // the summary of a plan the check refused, for the log
  GraphShapes shapes_;
  ExecutionPlan plan_;
  MemoryPlan memory_;
  std::shared_ptr<Engine> engine_;

  std::vector<NDArray> blocks_;               // planned buffers
  std::vector<NDArray> slot_arrays_;          // per slot: its own array (external, outputs)
  std::map<std::string, int> variable_slot_;  // variable name -> slot
  std::map<std::string, int> gradient_slot_;  // variable name -> its gradient slot
  std::vector<NDArray> outputs_;
  // Per node (null where unused); shared with pushed steps, which may outlive the executor.
  std::vector<std::shared_ptr<const Node>> step_nodes_;  // copies made once, not per push
  std::vector<std::shared_ptr<OpState>> node_states_;
  std::vector<std::shared_ptr<std::mt19937_64>> node_random_;
  // Per node: the memo of its constant forward step (ExecutionPlan), null for the others.
  std::vector<std::shared_ptr<ConstantStepMemo>> constant_memos_;
  // Per slot: the memo of the constant step that writes it, null for the others.
  std::vector<std::shared_ptr<ConstantStepMemo>> slot_constant_memo_;
  // MXNET_EXEC_NUM_TEMP workspaces, each with the engine var that serialises its users.
  std::vector<std::shared_ptr<TempSpace>> temp_spaces_;
  std::vector<VarHandle> temp_vars_;
  // Forward for inference, forward for training, backward (built on first use).
  PreparedPass prepared_inference_, prepared_training_, prepared_backward_;
  bool replays_graphs_ = false;  // BindOptions::cuda_graphs, resolved at bind
};

}  // namespace mxlite
