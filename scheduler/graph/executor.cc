#include "scheduler/graph/executor.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/logging.h"
#include "core/settings.h"
#include "ops/cpu/depthwise_block.h"
#include "ops/tensor_fill.h"
#include "scheduler/graph/summary.h"

namespace mxlite {

namespace {

// What a pushed step needs after the executor may be gone: shared, immutable pieces only.
struct StepKernelArgs {
  std::shared_ptr<const Node> node;
  std::shared_ptr<OpState> state;
  std::shared_ptr<std::mt19937_64> random;
  std::shared_ptr<TempSpace> temp;
};

// Wraps a step's closure so that each push copies a pointer, not the captured views and vectors.
template <typename Fn>
SyncFn SharedClosure(Fn fn) {
  auto shared = std::make_shared<const Fn>(std::move(fn));
  return [shared](RunContext run) { (*shared)(run); };
}

std::vector<VarHandle> Unique(std::vector<VarHandle> vars) {
  std::sort(vars.begin(), vars.end());
  vars.erase(std::unique(vars.begin(), vars.end()), vars.end());
  return vars;
}

}  // namespace

// Decides whether a constant step (ExecutionPlan) must run: it must unless its last inference
// pass completed and read the same versions of its inputs (ValueVersion). Runs inside the step,
// where every earlier write of those inputs has completed; the step writes its outputs, so its
// runs are serialised and need no lock.
class ConstantStepMemo {
 public:
  ConstantStepMemo(const Engine* engine, std::vector<ValueVersion> reads)
      : engine_(engine), reads_(std::move(reads)) {}

  bool UpToDate(bool is_train) {
    current_.clear();
    for (const ValueVersion& read : reads_) current_.push_back(read.Read(*engine_));
    if (!is_train && valid_ && current_ == ran_with_) return true;
    valid_ = false;  // until this run completes
    return false;
  }
  // After a completed run. A training pass may behave differently, so it is not remembered.
  void Ran(bool is_train) {
    ran_with_ = current_;
    valid_ = !is_train;
    runs_.fetch_add(1, std::memory_order_relaxed);
  }
  int64_t runs() const { return runs_.load(std::memory_order_relaxed); }

 private:
  const Engine* engine_;  // outlives every pushed op
  std::vector<ValueVersion> reads_;
  std::vector<uint64_t> current_, ran_with_;
  bool valid_ = false;
  std::atomic<int64_t> runs_{0};
};

uint64_t ValueVersion::Read(const Engine& engine) const {
  if (constant != nullptr) return static_cast<uint64_t>(constant->runs());
  return var != nullptr ? engine.VarVersion(var) : 0;
}

std::unique_ptr<Executor> Executor::Bind(const Graph& graph, const BindOptions& options) {
  std::unique_ptr<Executor> exec(new Executor(graph, options));
  if (exec->PlanNeedsCheck()) exec = CheckPlan(std::move(exec), graph, options);
  exec->LogTuning();
  return exec;
}

bool Executor::PlanNeedsCheck() const {
  if (options_.training || !conv_plan_.planned) return false;
  if (!options_.plan_guard.value_or(settings().GetBool("MXNET_CONV_PLAN_GUARD"))) return false;
  if (!conv_plan_.transforms.empty()) return true;
  for (const PlannedLayer& layer : conv_plan_.layers) {
    if (layer.chosen != layer.written) return true;
  }
  for (const PlannedDepthwiseBlock& block : conv_plan_.depthwise_blocks) {
    if (block.fuses()) return true;
  }
  return false;
}

namespace {

// One inference pass of `exec`, waited for.
void RunInferencePass(Executor& exec) {
  exec.Forward(/*is_train=*/false);
  for (const NDArray& output : exec.outputs()) output.WaitToRead();
}

}  // namespace

std::unique_ptr<Executor> Executor::CheckPlan(std::unique_ptr<Executor> planned,
                                              const Graph& graph, const BindOptions& options) {
  BindOptions as_written = options;
  as_written.conv_plan = ConvPlanKind::kNone;
  // Bound only if the cache has no times: a warm bind builds nothing more.
  std::unique_ptr<Executor> written;
  auto bind_written = [&] {
    if (!written) written.reset(new Executor(graph, as_written));
  };
  const std::string fingerprint =
      PlanFingerprint(planned->graph_, planned->shapes_, planned->conv_plan_.kind, options.ctx);
  const PlanCheck check = mxlite::CheckPlan(fingerprint, options.ctx, [&] {
    bind_written();
    const std::vector<conv::InterleavedTiming> timings =
        conv::TimeInterleaved({{[&] { RunInferencePass(*planned); }, {}},
                               {[&] { RunInferencePass(*written); }, {}}});
    for (const conv::InterleavedTiming& timing : timings) {
      if (timing.error) std::rethrow_exception(timing.error);
    }
    return PassTimes{timings[0].timing.median_ms, timings[1].timing.median_ms};
  });
  if (check.kept) {
    planned->plan_check_ = check;
    return planned;
  }
  bind_written();
  written->plan_check_ = check;
  written->refused_plan_ = planned->conv_plan_.Summary();
  return written;
}

Executor::Executor(const Graph& graph, const BindOptions& options)
    : source_graph_(graph), graph_(graph), options_(options), engine_(Engine::GetShared()) {
  graph_.Validate();
  FuseSigmoidGates();  // needs no shapes either; training too (silu has a backward)
  FuseActivations();   // needs no shapes: runs before the graph's shapes are inferred once
  shapes_ = InferGraphShapes(graph_, options_.input_shapes);
  FuseBiases();  // needs shapes (the vector's); training too (MatMul's bias has a gradient)
  TrimDeadTaps();
  PlanConvolutionLayouts();
  FuseDepthwiseBlocks();  // after planning: the layouts decide which convolutions are NHWC
  FuseResiduals();        // after planning: an addition's operands share one layout by then
  FuseConcatNorms();      // after planning: a join and its normalisation share one layout by then
  PlanOptions plan_options;
  plan_options.training = options_.training;
  plan_options.mirror = options_.training && settings().GetBool("MXNET_BACKWARD_DO_MIRROR");
  for (const std::string& name : options_.input_gradients) {
    const int id = graph_.Find(name);
    MX_CHECK(id >= 0 && graph_.node(id).is_variable())
        << "a gradient was asked for '" << name << "', which is not a variable of the graph";
    plan_options.gradient_variables.push_back(id);
  }
  plan_ = BuildExecutionPlan(graph_, shapes_, plan_options);
  memory_ = PlanMemory(graph_, plan_, MemoryPlanOptions::FromSettings());
  AllocateArrays();
  CreateNodeStates();
  CreateConstantMemos();
  CreateTempSpaces();
  replays_graphs_ = options_.cuda_graphs.value_or(settings().GetBool("MXNET_ENABLE_CUDA_GRAPHS"));
}

void Executor::FuseSigmoidGates() {
  if (!options_.fuse_silu.value_or(settings().GetBool("MXNET_FUSE_SILU"))) return;
  GateFusionResult fusion = mxlite::FuseSigmoidGates(graph_);
  if (fusion.fused.empty()) return;
  gates_ = std::move(fusion.fused);
  graph_ = std::move(fusion.graph);
}

void Executor::FuseBiases() {
  if (!options_.fuse_bias.value_or(settings().GetBool("MXNET_FUSE_BIAS"))) return;
  BiasFusionResult fusion = FuseBiasAdditions(graph_, shapes_);
  if (fusion.fused.empty()) return;
  biases_ = std::move(fusion.fused);
  graph_ = std::move(fusion.graph);
  shapes_ = InferGraphShapes(graph_, options_.input_shapes);
}

void Executor::TrimDeadTaps() {
  if (!options_.trim_dead_taps.value_or(settings().GetBool("MXNET_CONV_TRIM_DEAD_TAPS"))) return;
  DeadTapsResult trim = TrimDeadKernelTaps(graph_, shapes_);
  if (trim.trimmed.empty()) return;
  trimmed_ = std::move(trim.trimmed);
  graph_ = std::move(trim.graph);
  shapes_ = InferGraphShapes(graph_, options_.input_shapes);
}

void Executor::FuseActivations() {
  // A fused node has no backward. On the GPU a convolution's clamp still runs as a kernel after
  // cuDNN's, but together with the bias and without an engine step of its own; BatchNorm's joins
  // its own kernel.
  if (options_.training) return;
  if (!options_.fuse_activations.value_or(settings().GetBool("MXNET_CONV_FUSE_ACTIVATION"))) {
    return;
  }
  FusionResult fusion = FuseClampActivations(graph_);
  if (fusion.fused.empty()) return;
  fused_ = std::move(fusion.fused);
  graph_ = std::move(fusion.graph);
}

void Executor::PlanConvolutionLayouts() {
  ConvPlanOptions plan;
  plan.kind = options_.conv_plan.value_or(ConvPlanKindFromSettings());
  plan.training = options_.training;
  plan.ctx = options_.ctx;
  plan.fuse_depthwise = FusesDepthwiseBlocks();
  plan.fuse_residual = !options_.training && options_.fuse_residual.value_or(
                                                 settings().GetBool("MXNET_CONV_FUSE_RESIDUAL"));
  plan.fuse_activations =
      options_.fuse_activations.value_or(settings().GetBool("MXNET_CONV_FUSE_ACTIVATION"));
  PlannedGraph planned = PlanConvolutions(graph_, shapes_, plan);
  conv_plan_ = std::move(planned.report);
  if (!conv_plan_.planned) return;
  graph_ = std::move(planned.graph);
  shapes_ = InferGraphShapes(graph_, options_.input_shapes);
}

bool Executor::FusesDepthwiseBlocks() const {
  // The fused op has no backward and runs on the CPU only.
  return !options_.training && options_.ctx.device_type == DeviceType::kCPU &&
         options_.fuse_depthwise.value_or(settings().GetBool("MXNET_CONV_FUSE_DEPTHWISE"));
}

void Executor::FuseDepthwiseBlocks() {
  if (!FusesDepthwiseBlocks()) return;
  // The planner measured every block it found; the size heuristic decides the others (a stage
  // with tuning off, or no planning).
  DepthwiseFusionRule rule{.min_intermediate_bytes = cpu::DepthwiseBlockFusionMinBytes()};
  for (const PlannedDepthwiseBlock& block : conv_plan_.depthwise_blocks) {
    (block.fuses() ? rule.measured_faster_fused : rule.measured_slower_fused)
        .push_back(block.stages);
  }
  DepthwiseFusionResult fusion = mxlite::FuseDepthwiseBlocks(graph_, shapes_, rule);
  if (fusion.blocks.empty()) return;
  depthwise_blocks_ = std::move(fusion.blocks);
  graph_ = std::move(fusion.graph);
  shapes_ = InferGraphShapes(graph_, options_.input_shapes);
}

void Executor::FuseResiduals() {
  // The fused convolution has no backward.
  if (options_.training) return;
  if (!options_.fuse_residual.value_or(settings().GetBool("MXNET_CONV_FUSE_RESIDUAL"))) return;
  ResidualFusionResult fusion = FuseResidualAdditions(graph_, shapes_);
  if (fusion.fused.empty()) return;
  residuals_ = std::move(fusion.fused);
  graph_ = std::move(fusion.graph);
  if (options_.fuse_activations.value_or(settings().GetBool("MXNET_CONV_FUSE_ACTIVATION"))) {
    FusionResult activations = FuseClampActivations(graph_);
    fused_.insert(fused_.end(), activations.fused.begin(), activations.fused.end());
    graph_ = std::move(activations.graph);
  }
  shapes_ = InferGraphShapes(graph_, options_.input_shapes);
}

void Executor::FuseConcatNorms() {
  // The fused op has no backward and runs on the CPU only.
  if (options_.training || options_.ctx.device_type != DeviceType::kCPU) return;
  if (!options_.fuse_concat_norm.value_or(settings().GetBool("MXNET_FUSE_CONCAT_NORM"))) return;
  ConcatNormFusionResult fusion = FuseConcatBatchNorms(graph_, shapes_);
  if (fusion.fused.empty()) return;
  concat_norms_ = std::move(fusion.fused);
  graph_ = std::move(fusion.graph);
  shapes_ = InferGraphShapes(graph_, options_.input_shapes);
}

std::vector<conv::LayerTuning> Executor::TuningDecisions() const {
  // Planning tuned every convolution in each candidate layout first, so binding the planned graph
  // met its picks again in the cache; the planner's decision says where a pick really came from.
  std::map<std::pair<std::string, std::string>, const conv::LayerTuning*> planned;
  for (const conv::LayerTuning& decision : conv_plan_.decisions) {
    planned[{decision.layer, decision.problem.ToString()}] = &decision;
  }
  std::vector<conv::LayerTuning> decisions;
  for (const std::shared_ptr<OpState>& state : node_states_) {
    const auto* tuned = dynamic_cast<const conv::TunedState*>(state.get());
    if (tuned == nullptr) continue;
    for (const conv::LayerTuning& decision : tuned->tuning_decisions()) {
      auto found = planned.find({decision.layer, decision.problem.ToString()});
      // Unless the state runs another pick: a background tuning landed between the two.
      const bool same = found != planned.end() &&
                        found->second->record.algorithm == decision.record.algorithm &&
                        found->second->record.layout == decision.record.layout;
      decisions.push_back(same ? *found->second : decision);
    }
  }
  return decisions;
}

std::string Executor::TuningReport(bool verbose) const {
  return conv::FormatTuningReport(TuningDecisions(), verbose);
}

void Executor::LogTuning() const {
  const std::string what = settings().GetString("MXNET_TUNING_REPORT");
  if (what == "off") return;
  if (!gates_.empty()) {
    MX_LOG(INFO) << FormatGateFusions(gates_, what == "layers" || what == "verbose");
  }
  if (!biases_.empty()) {
    MX_LOG(INFO) << FormatBiasFusions(biases_, what == "layers" || what == "verbose");
  }
  if (!trimmed_.empty()) {
    MX_LOG(INFO) << FormatTrimmedTaps(trimmed_, what == "layers" || what == "verbose");
  }
  if (!fused_.empty()) MX_LOG(INFO) << FormatFusions(fused_, what == "layers" || what == "verbose");
  if (!depthwise_blocks_.empty()) {
    MX_LOG(INFO) << FormatDepthwiseBlocks(depthwise_blocks_, what == "layers" || what == "verbose");
  }
  if (!residuals_.empty()) {
    MX_LOG(INFO) << FormatResidualFusions(residuals_, what == "layers" || what == "verbose");
  }
  if (!concat_norms_.empty()) {
    MX_LOG(INFO) << FormatConcatNormFusions(concat_norms_, what == "layers" || what == "verbose");
  }
  if (conv_plan_.layers_tuning_in_background > 0) MX_LOG(INFO) << conv_plan_.Summary();
  if (conv_plan_.planned) {
    if (what == "summary") {
      MX_LOG(INFO) << conv_plan_.Summary();
    } else {
      MX_LOG(INFO) << "convolution planning:\n" << conv_plan_.Format(what == "verbose");
    }
  }
  if (!refused_plan_.empty()) MX_LOG(INFO) << refused_plan_;
  if (plan_check_) MX_LOG(INFO) << plan_check_->Summary();
  const std::vector<conv::LayerTuning> decisions = TuningDecisions();
  if (decisions.empty()) return;
  if (what == "summary") {
    MX_LOG(INFO) << conv::FormatTuningSummary(decisions);
  } else {
    MX_LOG(INFO) << "convolution tuning:\n"
                 << conv::FormatTuningReport(decisions, what == "verbose");
  }
}

Executor::~Executor() {
  // Each temp space goes once every op pushed with it has run.
  for (size_t i = 0; i < temp_spaces_.size(); ++i) {
    engine_->DeleteVariable([space = temp_spaces_[i]](RunContext) {}, options_.ctx, temp_vars_[i]);
  }
}

void Executor::CreateTempSpaces() {
  const int64_t count = settings().GetInt("MXNET_EXEC_NUM_TEMP");
  for (int64_t i = 0; i < count; ++i) {
    temp_spaces_.push_back(std::make_shared<TempSpace>(options_.ctx));
    temp_vars_.push_back(engine_->NewVar());
  }
}

void Executor::AllocateArrays() {
  const Context ctx = options_.ctx;
  std::set<int> own_array_slots(plan_.output_slots.begin(), plan_.output_slots.end());
  // Constants are kept across passes: arrays of their own as well.
  for (size_t slot = 0; slot < plan_.slots.size(); ++slot) {
    if (plan_.slots[slot].kind == SlotKind::kConstant)
      own_array_slots.insert(static_cast<int>(slot));
  }
  slot_arrays_.resize(plan_.slots.size());
  // Variables: given arrays or new zeros.
  for (int id = 0; id < graph_.num_nodes(); ++id) {
    const Node& node = graph_.node(id);
    if (!node.is_variable()) continue;
    const int slot = plan_.entry_slot.at({id, 0});
    variable_slot_[node.name] = slot;
    auto given = options_.arrays.find(node.name);
    if (given != options_.arrays.end()) {
      MX_CHECK(given->second.shape() == plan_.slot(slot).shape)
          << "array given for " << node.name << " has shape " << given->second.shape() << " but "
          << plan_.slot(slot).shape << " is expected";
      MX_CHECK(given->second.ctx() == ctx) << "array given for " << node.name << " is on "
                                           << given->second.ctx() << ", the executor on " << ctx;
      slot_arrays_[slot] = given->second;
    } else {
      slot_arrays_[slot] = NDArray::Zeros(plan_.slot(slot).shape, ctx, plan_.slot(slot).dtype);
    }
  }
  for (const auto& [variable, slot] : plan_.variable_gradient_slot) {
    const std::string& name = graph_.node(variable).name;
    gradient_slot_[name] = slot;
    auto given = options_.arrays.find(name + "_grad");
    slot_arrays_[slot] = given != options_.arrays.end()
                             ? given->second
                             : NDArray::Zeros(plan_.slot(slot).shape, ctx, plan_.slot(slot).dtype);
  }
  // Outputs and constants get arrays of their own: outputs stay valid for the user after the
  // step, constants for the next pass.
  for (int slot : own_array_slots) {
    if (slot_arrays_[slot].is_none()) {
      slot_arrays_[slot] = NDArray(plan_.slot(slot).shape, ctx, plan_.slot(slot).dtype);
    }
  }
  for (int slot : plan_.output_slots) outputs_.push_back(slot_arrays_[slot]);
  // Planned buffers.
  for (size_t bytes : memory_.block_bytes) {
    blocks_.emplace_back(Shape{static_cast<int64_t>(bytes)}, ctx, DType::kUInt8);
  }
}

void Executor::CreateNodeStates() {
  node_states_.resize(static_cast<size_t>(graph_.num_nodes()));
  node_random_.resize(static_cast<size_t>(graph_.num_nodes()));
  step_nodes_.resize(static_cast<size_t>(graph_.num_nodes()));
  for (int id = 0; id < graph_.num_nodes(); ++id) {
    const Node& node = graph_.node(id);
    if (node.is_variable()) continue;
    step_nodes_[id] = std::make_shared<const Node>(node);
    StateRequest request{
        node.attrs,       {}, {}, shapes_.shapes[static_cast<size_t>(id)], options_.ctx, node.name,
        options_.training};
    for (const NodeEntry& input : node.inputs) {
      request.input_shapes.push_back(shapes_.of(input));
      request.input_dtypes.push_back(shapes_.dtype_of(input));
    }
    node_states_[id] = CreateOpState(*node.op, request);
    if (node.op->needs_random) {
      node_random_[id] = std::make_shared<std::mt19937_64>(options_.seed * 1000003 + id);
    }
  }
}

void Executor::CreateConstantMemos() {
  constant_memos_.resize(static_cast<size_t>(graph_.num_nodes()));
  slot_constant_memo_.assign(plan_.slots.size(), nullptr);
  // In plan order: a constant step reading another constant finds that one's memo made.
  for (const Step& step : plan_.forward) {
    if (!step.constant) continue;
    std::vector<ValueVersion> reads;
    for (int slot : step.reads) reads.push_back(SlotValueVersion(slot));
    auto memo = std::make_shared<ConstantStepMemo>(engine_.get(), std::move(reads));
    constant_memos_[step.node] = memo;
    for (int slot : step.writes) {
      if (slot >= 0) slot_constant_memo_[slot] = memo;
    }
  }
}

ValueVersion Executor::SlotValueVersion(int slot) const {
  if (slot < 0) return ValueVersion{};
  if (slot_constant_memo_[slot] != nullptr) return ValueVersion{nullptr, slot_constant_memo_[slot]};
  return ValueVersion{SlotVar(slot), nullptr};
}

TensorView Executor::SlotView(int slot) const {
  if (slot < 0) return TensorView{};
  const Slot& info = plan_.slot(slot);
  const NDArray& own = slot_arrays_[slot];
  void* data = own.is_none() ? blocks_[memory_.slot_block[slot]].data() : own.data();
  return {data, info.shape, info.dtype, options_.ctx};
}

VarHandle Executor::SlotVar(int slot) const {
  const NDArray& own = slot_arrays_[slot];
  return own.is_none() ? blocks_[memory_.slot_block[slot]].var() : own.var();
}

Executor::PreparedStep Executor::PrepareStep(const Step& step, bool is_train) const {
  PreparedStep prepared;
  prepared.label = step.label;
  std::vector<VarHandle>& reads = prepared.reads;
  std::vector<VarHandle>& writes = prepared.writes;
  for (int slot : step.reads) {
    if (slot >= 0) reads.push_back(SlotVar(slot));
  }
  for (int slot : step.writes) {
    if (slot >= 0) writes.push_back(SlotVar(slot));
  }
  std::vector<TensorView> read_views, write_views;
  for (int slot : step.reads) read_views.push_back(SlotView(slot));
  for (int slot : step.writes) write_views.push_back(SlotView(slot));

  if (step.kind == StepKind::kZero) {
    prepared.fn = SharedClosure(
        [view = write_views[0]](RunContext run) { FillTensor(view, 0.0, run.stream); });
    return prepared;
  }
  if (step.kind == StepKind::kAccumulate) {
    const OpDef& add_n = OpRegistry::Global().Get("add_n");
    Attributes attrs =
        ParseOpAttributes(add_n, {{"num_args", std::to_string(read_views.size())}}, step.label);
    const ForwardKernel* kernel = &ForwardKernelFor(add_n, options_.ctx.device_type);
    prepared.fn =
        SharedClosure([kernel, attrs, read_views, write_views, label = step.label](RunContext run) {
          ScratchSpace scratch(run.ctx, run.stream);
          OpContext op_ctx{run.ctx, true, run.stream, &scratch, nullptr, nullptr, label};
          (*kernel)(op_ctx, attrs, read_views, write_views, {WriteMode::kWrite});
        });
    reads = Unique(reads);
    return prepared;
  }

  const Node& node = graph_.node(step.node);
  // Auxiliary states (BatchNorm's moving statistics) are updated by the forward in training.
  if (step.kind == StepKind::kForward && is_train) {
    const std::vector<InputRole> roles = InputRoles(*node.op, node.attrs);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (roles[i] == InputRole::kAuxiliary) writes.push_back(SlotVar(step.reads[i]));
    }
  }
  StepKernelArgs args{step_nodes_[step.node], nullptr, nullptr, nullptr};
  args.state = node_states_[step.node];
  args.random = node_random_[step.node];
  // Kernels share MXNET_EXEC_NUM_TEMP temporary workspaces, one op at a time on each.
  const size_t temp = static_cast<size_t>(step.node) % temp_spaces_.size();
  args.temp = temp_spaces_[temp];
  writes.push_back(temp_vars_[temp]);

  if (step.kind == StepKind::kForward || step.kind == StepKind::kRecompute) {
    const ForwardKernel* kernel = &ForwardKernelFor(*node.op, options_.ctx.device_type);
    std::vector<WriteMode> req(write_views.size(), WriteMode::kWrite);
    std::shared_ptr<ConstantStepMemo> memo = step.constant ? constant_memos_[step.node] : nullptr;
    // Ops with state may keep what they derive from an input (a packed weight) while its version
    // stands; the others need no versions.
    std::vector<ValueVersion> input_versions;
    if (args.state != nullptr) {
      for (int slot : step.reads) input_versions.push_back(SlotValueVersion(slot));
    }
    const Engine* engine = engine_.get();  // outlives every pushed op
    prepared.fn = SharedClosure([kernel, args, read_views, write_views, req, is_train, memo,
                                 input_versions, engine](RunContext run) {
      if (memo && memo->UpToDate(is_train)) return;
      ScratchSpace scratch(run.ctx, run.stream, args.temp.get());
      OpContext op_ctx{run.ctx,           is_train,         run.stream,     &scratch,
                       args.random.get(), args.state.get(), args.node->name};
      op_ctx.input_versions.reserve(input_versions.size());
      for (const ValueVersion& version : input_versions) {
        op_ctx.input_versions.push_back(version.Read(*engine));
      }
      (*kernel)(op_ctx, args.node->attrs, read_views, write_views, req);
      if (memo) memo->Ran(is_train);
    });
    return prepared;
  }

  // Backward: reads are [output grads..., inputs..., outputs...], writes the input gradients.
  const size_t num_outputs = static_cast<size_t>(node.num_outputs());
  const size_t num_inputs = node.inputs.size();
  std::vector<TensorView> output_grads(read_views.begin(), read_views.begin() + num_outputs);
  std::vector<TensorView> inputs(read_views.begin() + num_outputs,
                                 read_views.begin() + num_outputs + num_inputs);
  std::vector<TensorView> outputs(read_views.begin() + num_outputs + num_inputs, read_views.end());
  std::vector<WriteMode> req;
  for (int slot : step.writes) req.push_back(slot >= 0 ? WriteMode::kWrite : WriteMode::kNull);
  const BackwardKernel* kernel = &BackwardKernelFor(*node.op, options_.ctx.device_type);
  prepared.fn = SharedClosure(
      [kernel, args, output_grads, inputs, outputs, write_views, req](RunContext run) {
        ScratchSpace scratch(run.ctx, run.stream, args.temp.get());
        OpContext op_ctx{run.ctx,          true,           run.stream, &scratch, args.random.get(),
                         args.state.get(), args.node->name};
        (*kernel)(op_ctx, args.node->attrs, output_grads, inputs, outputs, write_views, req);
      });
  reads = Unique(reads);
  return prepared;
}

bool Executor::StillPrepared(const PreparedPass& pass) const {
  if (!pass.prepared) return false;
  for (size_t slot = 0; slot < slot_arrays_.size(); ++slot) {
    if (!slot_arrays_[slot].Is(pass.arrays[slot])) return false;
  }
  return true;
}

const std::vector<Executor::PreparedStep>& Executor::Prepared(PreparedPass& pass,
                                                              const std::vector<Step>& steps,
                                                              bool is_train) {
  if (StillPrepared(pass)) return pass.steps;
  std::set<int> gradient_slots;
  for (const auto& [variable, slot] : plan_.variable_gradient_slot) gradient_slots.insert(slot);
  pass.steps.clear();
  pass.segments.clear();
  pass.steps.reserve(steps.size());
  std::vector<PreparedStep> constant_steps;
  for (const Step& step : steps) {
    PreparedStep prepared = PrepareStep(step, is_train);
    prepared.writes_gradient = std::any_of(step.writes.begin(), step.writes.end(), [&](int slot) {
      return gradient_slots.count(slot) > 0;
    });
    (step.constant ? constant_steps : pass.steps).push_back(std::move(prepared));
  }
  if (!constant_steps.empty()) {
    pass.steps.insert(pass.steps.begin(), CombineSteps(std::move(constant_steps)));
  }
  pass.arrays.clear();
  for (size_t slot = 0; slot < slot_arrays_.size(); ++slot) {
    pass.arrays.push_back(slot_arrays_[slot].identity());
  }
  pass.prepared = true;
  return pass.steps;
}

// Constant steps (a weight's layout transpose, computed again only when a parameter changed) read
// parameters and other constants only, so they can all run first, in plan order, as one step:
// the pass then pays one push and one engine op for them instead of one per weight.
Executor::PreparedStep Executor::CombineSteps(std::vector<PreparedStep> steps) {
  if (steps.size() == 1) return std::move(steps.front());
  PreparedStep combined;
  combined.label =
      "constants (" + std::to_string(steps.size()) + " steps from " + steps.front().label + ")";
  std::vector<SyncFn> fns;
  for (PreparedStep& step : steps) {
    combined.reads.insert(combined.reads.end(), step.reads.begin(), step.reads.end());
    combined.writes.insert(combined.writes.end(), step.writes.begin(), step.writes.end());
    combined.writes_gradient = combined.writes_gradient || step.writes_gradient;
    fns.push_back(std::move(step.fn));
  }
  combined.reads = Unique(std::move(combined.reads));
  combined.writes = Unique(std::move(combined.writes));
  combined.fn = SharedClosure([fns = std::move(fns)](RunContext run) {
    for (const SyncFn& fn : fns) fn(run);
  });
  return combined;
}

void Executor::Push(const PreparedStep& step) const {
  engine_->PushSync(step.fn, options_.ctx, step.reads, step.writes, 0, step.label,
                    {FnProperty::kNormal, OpOrigin::kExecutor});
}

int64_t Executor::constant_step_runs() const {
  int64_t runs = 0;
  for (const std::shared_ptr<ConstantStepMemo>& memo : constant_memos_) {
    if (memo) runs += memo->runs();
  }
  return runs;
}

// A segment ends after each step that writes a parameter's gradient, so that what waits for that
// gradient (a KVStore's allreduce) starts while the rest of backward runs, as MXNet ends its
// backward segments at gradient outputs.
std::vector<std::shared_ptr<const OpSegment>> Executor::RecordSegments(
    const std::vector<PreparedStep>& steps, int bulk_size, const SegmentReplayKey& key) const {
  std::vector<std::shared_ptr<const OpSegment>> segments;
  std::vector<SegmentStep> chunk;
  for (const PreparedStep& step : steps) {
    chunk.push_back({step.fn, step.reads, step.writes, step.label});
    if (static_cast<int>(chunk.size()) >= bulk_size || step.writes_gradient) {
      segments.push_back(engine_->NewSegment(options_.ctx, std::move(chunk), key));
      chunk.clear();
    }
  }
  if (!chunk.empty()) segments.push_back(engine_->NewSegment(options_.ctx, std::move(chunk), key));
  return segments;
}

// A GPU inference pass queues the same work every time while nothing its steps decide on the host
// changes (engine/segment_graph.h): the steps' views are fixed while the pass stays prepared, so
// what remains is the workspaces (grown by a call that needed more) and the parameters and
// constants, from which convolutions and constant steps derive what they keep (a weight written
// by the user makes them derive it again). Training passes are not replayed: the optimizer writes
// every weight between passes, and ops that draw random numbers draw new ones each call.
SegmentReplayKey Executor::ReplayKey(const std::vector<Step>& steps, bool is_train) const {
  if (!replays_graphs_ || is_train || !options_.ctx.is_gpu()) return nullptr;
  std::set<int> kept_slots;
  for (const Step& step : steps) {
    if (step.node >= 0 && graph_.node(step.node).op->needs_random) return nullptr;
    for (int slot : step.reads) {
      if (slot < 0) continue;
      const SlotKind kind = plan_.slot(slot).kind;
      if (kind == SlotKind::kParameter || kind == SlotKind::kAuxiliary ||
          kind == SlotKind::kConstant) {
        kept_slots.insert(slot);
      }
    }
  }
  std::vector<ValueVersion> versions;
  for (int slot : kept_slots) versions.push_back(SlotValueVersion(slot));
  const Engine* engine = engine_.get();  // outlives every pushed op
  return [engine, versions, temps = temp_spaces_] {
    std::vector<uint64_t> key;
    key.reserve(versions.size() + 2 * temps.size());
    for (const ValueVersion& version : versions) key.push_back(version.Read(*engine));
    for (const std::shared_ptr<TempSpace>& temp : temps) {
      key.push_back(reinterpret_cast<uintptr_t>(temp->data()));
      key.push_back(temp->capacity());
    }
    return key;
  };
}

// Bulked passes push recorded segments: a pass of fifty steps cost ~95 us of per-step bulking on
// the pushing thread before its first op could start (MobileNet-V2, one image, 10 ms a pass).
void Executor::PushPass(PreparedPass& pass, const std::vector<Step>& steps, bool is_train,
                        int bulk_size) {
  const std::vector<PreparedStep>& prepared = Prepared(pass, steps, is_train);
  if (bulk_size <= 0) {
    for (const PreparedStep& step : prepared) Push(step);
    return;
  }
  if (pass.segments.empty() || pass.segment_size != bulk_size) {
    pass.segments = RecordSegments(prepared, bulk_size, ReplayKey(steps, is_train));
    pass.segment_size = bulk_size;
  }
  for (const std::shared_ptr<const OpSegment>& segment : pass.segments) {
    engine_->PushSegment(segment, 0, {FnProperty::kNormal, OpOrigin::kExecutor});
  }
}

void Executor::Forward(bool is_train) {
  PushPass(is_train ? prepared_training_ : prepared_inference_, plan_.forward, is_train,
           BulkSizeFromSettings(is_train));
}

void Executor::PushHeadGradient(int slot, const NDArray* given) {
  const TensorView view = SlotView(slot);
  if (given == nullptr) {
    engine_->PushSync([view](RunContext run) { FillTensor(view, 1.0, run.stream); }, options_.ctx,
                      {}, {SlotVar(slot)}, 0, "head gradient",
                      {FnProperty::kNormal, OpOrigin::kExecutor});
    return;
  }
  MX_CHECK(given->shape() == view.shape && given->dtype() == view.dtype)
      << "head gradient for " << plan_.slot(slot).name << " has shape " << given->shape()
      << " and dtype " << given->dtype() << "; expected " << view.shape << " " << view.dtype;
  const TensorView source{given->data(), given->shape(), given->dtype(), given->ctx()};
  engine_->PushSync([source, view](RunContext run) { CopyTensor(source, view, run.stream); },
                    options_.ctx, {given->var()}, {SlotVar(slot)}, 0, "head gradient",
                    {FnProperty::kNormal, OpOrigin::kExecutor});
}

void Executor::Backward(const std::vector<NDArray>& head_gradients) {
  MX_CHECK(options_.training) << "Backward on an executor bound without training = true";
  MX_CHECK(head_gradients.empty() || head_gradients.size() == plan_.head_gradient_slots.size())
      << "Backward got " << head_gradients.size() << " head gradients for "
      << plan_.head_gradient_slots.size() << " outputs";
  const int bulk_size = BulkSizeFromSettings(true);
  {
    BulkScope bulk(*engine_, bulk_size);
    for (size_t i = 0; i < plan_.head_gradient_slots.size(); ++i) {
      const int slot = plan_.head_gradient_slots[i];
      if (slot >= 0) PushHeadGradient(slot, head_gradients.empty() ? nullptr : &head_gradients[i]);
    }
  }
  PushPass(prepared_backward_, plan_.backward, true, bulk_size);
}

NDArray& Executor::Arg(const std::string& name) {
  auto it = variable_slot_.find(name);
  MX_CHECK(it != variable_slot_.end()) << "the graph has no variable '" << name << "'";
  return slot_arrays_[it->second];
}

NDArray& Executor::Gradient(const std::string& name) {
  auto it = gradient_slot_.find(name);
  MX_CHECK(it != gradient_slot_.end())
      << "no gradient for '" << name << "': it is not a parameter of a training executor (bind "
      << "with training = true, or list an input in input_gradients)";
  return slot_arrays_[it->second];
}

std::vector<std::string> Executor::ParameterNames() const {
  std::vector<std::string> names;
  for (int id : graph_.Variables(VariableRole::kParameter)) names.push_back(graph_.node(id).name);
  return names;
}

std::vector<std::string> Executor::AuxiliaryNames() const {
  std::vector<std::string> names;
  for (int id : graph_.Variables(VariableRole::kAuxiliary)) names.push_back(graph_.node(id).name);
  return names;
}

std::unique_ptr<Executor> Executor::Reshape(
    const std::map<std::string, Shape>& input_shapes) const {
  BindOptions options = options_;
  for (const auto& [name, shape] : input_shapes) options.input_shapes[name] = shape;
  options.arrays.clear();
  // Variables are the source graph's (planning never changes them); it is planned again for the
  // new shapes.
  const GraphShapes new_shapes = InferGraphShapes(source_graph_, options.input_shapes);
  for (const auto& [name, slot] : variable_slot_) {
    const int id = source_graph_.Find(name);
    if (source_graph_.node(id).role == VariableRole::kInput) continue;  // inputs follow the shapes
    if (new_shapes.of({id, 0}) == slot_arrays_[slot].shape())
      options.arrays[name] = slot_arrays_[slot];
  }
  for (const auto& [name, slot] : gradient_slot_) {
    if (new_shapes.of({source_graph_.Find(name), 0}) == slot_arrays_[slot].shape()) {
      options.arrays[name + "_grad"] = slot_arrays_[slot];
    }
  }
  return Bind(source_graph_, options);
}

void Executor::FillPlannedBuffers(double value) {
  for (const NDArray& block : blocks_) {
    // Whole float32 elements; a trailing partial element (never read as data) stays.
    const TensorView view{block.data(), Shape{static_cast<int64_t>(block.bytes() / 4)},
                          DType::kFloat32, options_.ctx};
    engine_->PushSync([view, value](RunContext run) { FillTensor(view, value, run.stream); },
                      options_.ctx, {}, {block.var()}, 0, "fill planned buffer");
  }
}

MemoryReport Executor::memory_report() const {
  MemoryReport report;
  report.planned_bytes = memory_.planned_bytes;
  report.unplanned_bytes = memory_.unplanned_bytes;
  report.inplace_count = memory_.inplace_count;
  report.mirrored_count = plan_.num_mirrored;
  for (const Slot& slot : plan_.slots) {
    if (slot.external()) report.external_bytes += slot.bytes();
    if (slot.kind == SlotKind::kConstant) report.constant_bytes += slot.bytes();
  }
  for (const std::shared_ptr<OpState>& state : node_states_) {
    if (state != nullptr) report.op_state_bytes += state->kept_bytes();
  }
  return report;
}

std::string MemoryReport::Summary() const {
  std::ostringstream out;
  out << "Memory: " << FormatBytes(planned_bytes) << " planned for values ("
      << FormatBytes(unplanned_bytes) << " without the plan; " << inplace_count << " in place, "
      << mirrored_count << " recomputed), " << FormatBytes(external_bytes)
      << " for variables and gradients";
  if (constant_bytes > 0) {
    out << ", " << FormatBytes(constant_bytes) << " for values computed from parameters";
  }
  if (op_state_bytes > 0) {
    out << ", " << FormatBytes(op_state_bytes) << " kept by ops (prepared weights)";
  }
  return out.str();
}

std::string Executor::Summary() const {
  return GraphSummary(graph_, shapes_) + memory_report().Summary() + "\n";
}

}  // namespace mxlite
