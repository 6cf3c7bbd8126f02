// The operator registry: what an operator is, and how one is declared.
//
// An OpDef bundles everything the rest of mxlite needs to know about one operator:
//   - attributes (a typed schema, ops/attributes.h),
//   - named inputs and outputs (which may depend on attributes, e.g. no_bias drops "bias"),
//     and which inputs are parameters (created by the graph builder) or auxiliary states the op
//     updates itself (BatchNorm's moving statistics),
//   - shape and dtype inference, which may also fill in the shapes of parameters,
//   - forward and backward kernels per device, and what backward needs (inputs, outputs) so the
//     memory planner can free the rest,
//   - whether an output may reuse an input's memory (in place).
//
// An op lives in one file (or a small family) and registers itself with one line:
//
//   MXLITE_REGISTER_OP(Flatten) { return OpDef{...}; }
//
// Kernels that live in a device folder (ops/cuda/*.cu, large CPU kernels in ops/cpu/) register
// themselves beside the op, keyed by op name and device:
//
//   MXLITE_REGISTER_KERNELS(Convolution, kGPU, ConvolutionForwardGpu, ConvolutionBackwardGpu);
//
// An op that keeps per-node state (the convolution's tuned algorithms) gives a creator per device
// in OpDef::create_state, or registers one from its device folder the same way:
//
//   MXLITE_REGISTER_STATE_CREATOR(Convolution, kGPU, CreateConvolutionStateGpu);
//
// Looking up an unknown name is an mxlite::Error listing the known ops.
// Kernels are plain functions of (OpContext, Attributes, tensors); they run inside engine
// operations (engine/) but do not depend on the engine. Thread safety: the registry is filled
// during static initialisation and read-only afterwards; kernels must be reentrant.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ops/activation_layout.h"
#include "ops/attributes.h"
#include "ops/tensor.h"

namespace mxlite {

// What a kernel does with each output (or input gradient): write it, or skip it (not needed).
enum class WriteMode { kNull, kWrite };

// Where a kernel writes `view`, or null when `mode` says it is not needed.
template <typename T>
T* WrittenOrNull(const TensorView& view, WriteMode mode) {
  return mode == WriteMode::kNull ? nullptr : view.data_as<T>();
}

// Per-node state an op may keep across calls (e.g. the convolution algorithm chosen by the tuner).
class OpState {
 public:
  virtual ~OpState() = default;
  // Memory the state holds across calls (derived copies of parameters), for memory reports.
  virtual size_t kept_bytes() const { return 0; }
};

struct OpContext {
  Context ctx;
  bool is_train = false;
  void* stream = nullptr;                 // cudaStream_t on a GPU, nullptr on the CPU
  ScratchSpace* scratch = nullptr;        // temporary memory for this call
  std::mt19937_64* random = nullptr;      // for ops that draw random numbers (Dropout)
  OpState* state = nullptr;               // from OpDef::create_state, when the op has one
  std::string node_name;                  // for messages
  // Per input: a version that changes whenever the input's value may have (its engine var's
  // completed writes, or how often the executor recomputed a value it keeps from parameters),
  // read when this call began: every earlier write has completed by then, no later one has
  // started. An op may keep something derived from an input across calls (a convolution's packed
  // weight) and know from it whether the input changed. Empty when the caller cannot tell (calls
  // outside an executor): derive afresh every call.
  std::vector<uint64_t> input_versions;
};

// What an op's create_state gets: the node as bound.
struct StateRequest {
  const Attributes& attrs;
  std::vector<Shape> input_shapes;
  std::vector<DType> input_dtypes;
  std::vector<Shape> output_shapes;  // every output's, hidden ones included
  Context ctx;
  std::string node_name;
  bool training = false;  // backward will run too
};

using StateCreator = std::function<std::unique_ptr<OpState>(const StateRequest&)>;

// Shapes flowing through inference: a missing shape is not known yet.
struct ShapeInference {
  std::string op;    // "Convolution"
  std::string node;  // "conv0"
  std::vector<std::optional<Shape>> inputs;
  std::vector<std::optional<Shape>> outputs;
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;

  // Known shape of input `i`, or an error naming the node and the input.
  const Shape& Input(int i) const;
  // Sets input `i` (a parameter, usually) or checks it against what is already known; a mismatch
  // is an error naming the op, the node, the input and both shapes.
  void AssignInput(int i, const Shape& shape);
  void AssignOutput(int i, const Shape& shape);
};

struct DTypeInference {
  std::string op, node;
  std::vector<std::optional<DType>> inputs;
  std::vector<std::optional<DType>> outputs;
};

struct BackwardDependencies {
  std::vector<bool> inputs;   // backward reads forward input i
  std::vector<bool> outputs;  // backward reads forward output i
};

using ForwardKernel =
    std::function<void(const OpContext&, const Attributes&, const std::vector<TensorView>& inputs,
                       const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req)>;

// Backward: given the gradients of the outputs, write the gradients of the inputs.
// `inputs`/`outputs` hold the forward tensors that BackwardDependencies asked for (others are
// empty views). `req[i]` says whether input i's gradient is wanted. Gradients of hidden outputs
// (see num_visible_outputs) are empty views; a visible output nobody consumed gets zeros.
using BackwardKernel = std::function<void(
    const OpContext&, const Attributes&, const std::vector<TensorView>& output_grads,
    const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
    const std::vector<TensorView>& input_grads, const std::vector<WriteMode>& req)>;

enum class InputRole {
  kData,       // fed by the user or an upstream node
  kParameter,  // learned; the builder creates it (e.g. "conv0_weight")
  kAuxiliary,  // state the op updates itself in training (BatchNorm moving mean/var)
};

// How an op meets the layout planner (scheduler/planning/conv_planning.h), which chooses the
// layout of every 4-D activation: what the op lets it choose, and what the op's attributes become
// in another layout. The planner asks nothing else of an op, and nothing by its name.
enum class LayoutRole {
  kFixed,     // reads its data as written (channels first): the planner transforms around it
  kAgnostic,  // runs in whatever layout its data inputs share (element-wise, per channel)
  kFlexible,  // has kernels per layout, each costed on the device (convolution, pooling), when
              // its graph writes it channels first
};

struct LayoutTraits {
  LayoutRole role = LayoutRole::kFixed;
  // An agnostic op whose data inputs differ in shape broadcasts: it follows the planner's layout
  // only when they broadcast along the batch and spatial axes (a (N, C, 1, 1) gate), and stays
  // fixed otherwise; one that joins its inputs along an axis (Concat) does not broadcast.
  bool joins_along_axis = false;
  // Whether a node can run channel-blocked (NCHW16c), given its data inputs' NCHW shapes;
  // unset: it can.
  std::function<bool(const Attributes&, const std::vector<Shape>& data_inputs)>
      runs_channel_blocked;
  // The node's attributes once moved from NCHW to `layout` (its layout attribute, axes it names);
  // unset: unchanged.
  std::function<void(const Attributes&, ActivationLayout layout,
                     std::map<std::string, std::string>& attrs)>
      retarget;
  // The input that is read in the data's layout too in NHWC (a convolution's weight, OHWI
  // there); -1: none.
  int nhwc_weight_input = -1;
  // Its cost per layout comes from its tuned state (conv::TunedState: a convolution's picks).
  bool tuned = false;
};

// A clamp an activation applies, as its bounds' attribute text (none: unbounded on that side).
struct ClampBounds {
  std::optional<std::string> low, high;
  std::string description;  // "relu", "clip [0, 6]"
};

// The op that x * gate(x) becomes when a node is the gate of its own input: its name and attribute
// text (a sigmoid gives silu, a hard_sigmoid gives hard_swish with its alpha and beta).
struct SelfGate {
  std::string op;
  std::map<std::string, std::string> attrs;
};

// What the inference fusion passes (scheduler/graph/fusion.h) ask of an op.
struct FusionTraits {
  // A clamping activation says which clamp it applies to a node's attributes (their text);
  // nullopt: this node clamps nothing (an Activation that is not a relu).
  std::function<std::optional<ClampBounds>(const Attributes&,
                                           const std::map<std::string, std::string>& text)>
      clamp;
  // Adds its two inputs element-wise (of one shape: a residual shortcut another op may take in).
  bool adds = false;
  // Multiplies its two inputs element-wise (x * gate(x) becomes one op: see self_gate).
  bool multiplies = false;
  // A gate of its one input with these attributes (their text): what x * gate(x) becomes;
  // unset or nullopt: not a gate.
  std::function<std::optional<SelfGate>(const Attributes&,
                                        const std::map<std::string, std::string>& text)>
      self_gate;
  // Whether a node with these attributes can take a clamping activation after it (relu, clip)
  // into the store of its output: it then gets act_min / act_max (ops/output_clamp.h) and the
  // activation goes; unset: it cannot. Convolution, BatchNorm.
  std::function<bool(const Attributes&)> takes_clamp;
  // Whether a node can take a residual addition into the store of its output (it then gets
  // residual=true and the addend as one more input); unset: it cannot.
  std::function<bool(const Attributes&)> takes_residual;
  // Whether a node with these attributes and data inputs of these shapes can take the addition of
  // a vector along its output's last axis into the store of its output (it then gets bias=true
  // and the vector as one more input, `bias`); unset: it cannot. MatMul: a Linear layer written
  // as MatMul then Add.
  std::function<bool(const Attributes&, const std::vector<Shape>& inputs)> takes_bias;
  // A Convolution (attributes as ops/conv_attributes.h reads them): on the CPU its 1x1 and
  // depthwise NHWC instances fuse into depthwise blocks, and kernel taps that read only padding
  // are cut (scheduler/graph/dead_taps.h).
  bool convolution = false;
  // The op a node becomes when it takes in the join its data comes from (an op with
  // LayoutTraits::joins_along_axis, along the axis its attribute `axis` names), normalising each
  // input as it copies it into place; empty: it cannot. BatchNorm: _concat_batch_norm
  // (scheduler/graph/fusion.h).
  std::string with_join;
};

struct OpDef {
  std::string name;
  std::string doc;
  // The prefix of node names GraphBuilder makes up for it ("conv" -> conv0, conv1, ...), given the
  // node's attributes; unset: the lowercased op name.
  std::function<std::string(const std::map<std::string, std::string>& attrs)> name_prefix;
  AttributeSchema attributes;

  std::function<std::vector<std::string>(const Attributes&)> input_names;
  std::function<std::vector<InputRole>(const Attributes&)> input_roles;  // default: all data
  std::function<std::vector<std::string>(const Attributes&)> output_names;
  // Outputs from this index on are internal (saved for backward, e.g. BatchNorm's batch mean);
  // default: all visible.
  std::function<int(const Attributes&)> num_visible_outputs;

  std::function<void(const Attributes&, ShapeInference&)> infer_shape;
  // Default: every unknown input and output gets the dtype of the first known input.
  std::function<void(const Attributes&, DTypeInference&)> infer_dtype;

  std::map<DeviceType, ForwardKernel> forward;
  std::map<DeviceType, BackwardKernel> backward;
  // Default (unset): backward needs every input and output.
  std::function<BackwardDependencies(const Attributes&)> backward_dependencies;
  // Inputs that have no gradient (labels, indices); default: none.
  std::function<std::vector<bool>(const Attributes&)> input_has_gradient;

  // (input, output) pairs whose memory the forward may share.
  std::vector<std::pair<int, int>> inplace;
  // More such pairs that depend on the attributes (null: none). The forward writes each element
  // of the output only after reading the same element of the input, and nothing else of that
  // input, so the memory planner shares them only when the node reads that input nowhere else
  // (a convolution's fused residual in NCHW16c; its data input must never be overwritten).
  std::function<std::vector<std::pair<int, int>>(const Attributes&)> inplace_with;
  bool needs_random = false;
  // Cheap, stateless and deterministic (activations, pooling, element-wise, reshapes): with
  // MXNET_BACKWARD_DO_MIRROR=1 its outputs are recomputed in backward instead of kept.
  bool cheap_to_recompute = false;
  // Made by a CPU inference fusion pass (scheduler/graph/fusion.h) and never bound on a GPU, so it
  // has no GPU kernels (ops that users write in graphs have both).
  bool cpu_only = false;
  // Per-node state per device, made once when the node is bound (the convolution tunes here).
  // A device without one gets no state (OpContext::state is null).
  std::map<DeviceType, StateCreator> create_state;
  LayoutTraits layout;
  FusionTraits fusion;
};

class OpRegistry {
 public:
  static OpRegistry& Global();

  void Register(OpDef def);
  void RegisterKernels(const std::string& op, DeviceType device, ForwardKernel forward,
                       BackwardKernel backward);
  // A state creator for (op, device) kept apart from the OpDef (the GPU's, from ops/cuda/).
  void RegisterStateCreator(const std::string& op, DeviceType device, StateCreator creator);
  // Throws mxlite::Error listing the known ops when `name` is unknown.
  const OpDef& Get(const std::string& name) const;
  const OpDef* Find(const std::string& name) const;
  std::vector<std::string> Names() const;
  // Kernels registered for (op, device), from the OpDef itself or from RegisterKernels.
  const ForwardKernel* FindForward(const std::string& op, DeviceType device) const;
  const BackwardKernel* FindBackward(const std::string& op, DeviceType device) const;
  const StateCreator* FindStateCreator(const std::string& op, DeviceType device) const;

 private:
  std::map<std::string, OpDef> ops_;
  std::map<std::pair<std::string, DeviceType>, std::pair<ForwardKernel, BackwardKernel>> kernels_;
  std::map<std::pair<std::string, DeviceType>, StateCreator> state_creators_;
};

// OpDef::name_prefix for a prefix that does not depend on the attributes.
std::function<std::string(const std::map<std::string, std::string>&)> FixedNamePrefix(
    std::string prefix);

// Helpers for OpDef users: parse attributes, list inputs with the defaults applied.
Attributes ParseOpAttributes(const OpDef& op, const std::map<std::string, std::string>& raw,
                             const std::string& node_name);
std::vector<std::string> InputNames(const OpDef& op, const Attributes& attrs);
std::vector<InputRole> InputRoles(const OpDef& op, const Attributes& attrs);
std::vector<std::string> OutputNames(const OpDef& op, const Attributes& attrs);
int NumVisibleOutputs(const OpDef& op, const Attributes& attrs);
BackwardDependencies BackwardDependenciesOf(const OpDef& op, const Attributes& attrs);
std::vector<bool> InputHasGradient(const OpDef& op, const Attributes& attrs);

// Shape and dtype inference with the defaults applied and every output checked to be known.
void InferShapes(const OpDef& op, const Attributes& attrs, ShapeInference& shapes);
void InferDTypes(const OpDef& op, const Attributes& attrs, DTypeInference& dtypes);

// The kernel for `device`, or an error naming the op and the device.
const ForwardKernel& ForwardKernelFor(const OpDef& op, DeviceType device);
const BackwardKernel& BackwardKernelFor(const OpDef& op, DeviceType device);
// The op's state for the node in `request` on request.ctx's device; null when it keeps none.
std::unique_ptr<OpState> CreateOpState(const OpDef& op, const StateRequest& request);

namespace detail {
struct OpRegistrar {
  explicit OpRegistrar(OpDef (*make)());
};
struct KernelRegistrar {
  KernelRegistrar(const char* op, DeviceType device, ForwardKernel forward,
                  BackwardKernel backward);
};
struct StateCreatorRegistrar {
  StateCreatorRegistrar(const char* op, DeviceType device, StateCreator creator);
};
}  // namespace detail

}  // namespace mxlite

// Declares and registers an operator: the body returns its OpDef.
#define MXLITE_REGISTER_OP(OpName)                                                  \
  static ::mxlite::OpDef MxliteMakeOp_##OpName();                                   \
  static const ::mxlite::detail::OpRegistrar mxlite_op_registrar_##OpName(          \
      &MxliteMakeOp_##OpName);                                                      \
  static ::mxlite::OpDef MxliteMakeOp_##OpName()

#define MXLITE_REGISTER_KERNELS(OpName, Device, forward, backward)                  \
  static const ::mxlite::detail::KernelRegistrar mxlite_kernel_registrar_##OpName(  \
      #OpName, ::mxlite::DeviceType::Device, forward, backward)

#define MXLITE_REGISTER_STATE_CREATOR(OpName, Device, creator)                           \
  static const ::mxlite::detail::StateCreatorRegistrar mxlite_state_registrar_##OpName( \
      #OpName, ::mxlite::DeviceType::Device, creator)
