// _fused_depthwise_block: a MobileNet-style block as one op, [1x1 expansion] -> depthwise ->
// [1x1 projection] (+ residual), NHWC float32, CPU inference. The depthwise-block fusion pass
// (scheduler/graph/fusion.h, MXNET_CONV_FUSE_DEPTHWISE) makes it from the three Convolution nodes
// after layout planning, and the residual fusion (MXNET_CONV_FUSE_RESIDUAL) may fold the addition
// after its projection into it; the kernel walks the rows so the intermediates stay in L2
// (ops/cpu/depthwise_block.h).
//
//   data            (N, H, W, Cin)
//   expand_weight   (C, 1, 1, Cin)   expand_bias (C)     when expand_num_filter > 0
//   weight          (C, KH, KW, 1)   bias (C)            the depthwise stage, C = num_filter
//   project_weight  (Cout, 1, 1, C)  project_bias (Cout) when project_num_filter > 0
//   residual        (N, OH, OW, Cout)                    when residual=true (needs the projection)
//   output          (N, OH, OW, Cout)                    Cout = C without a projection
//
// Attributes: the depthwise convolution's own (kernel, stride, dilate, pad, num_filter, num_group
// == num_filter, no_bias, act_min / act_max, layout NHWC), per 1x1 stage <stage>_num_filter
// (0: absent), <stage>_no_bias and <stage>_act_min / _act_max, stage = expand or project, and
// `residual`: output = clamp(projection + project_bias + residual), as Convolution's.
// Absent biases are dropped from the inputs as no_bias drops Convolution's.
//
// Inside an executor the 1x1 weights are packed for the GEMM (on the AVX2 path) and the depthwise
// weight reordered by tap once, then kept in the node's state while the weights' versions stand
// (OpContext::input_versions), as Convolution keeps its prepared weight. No backward: inference
// only.
#include <memory>
#include <mutex>

#include "ops/conv_attributes.h"
#include "ops/cpu/conv_algorithms.h"
#include "ops/cpu/depthwise_block.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

std::string Owner(const std::string& node) { return "_fused_depthwise_block " + node; }

// Where each input sits for these attributes (-1: absent).
struct BlockInputs {
  int expand_weight = -1, expand_bias = -1, weight = -1, bias = -1, project_weight = -1,
      project_bias = -1, residual = -1;
  std::vector<std::string> names;

  explicit BlockInputs(const Attributes& attrs) {
    names.push_back("data");
    const auto add = [this](const std::string& name) {
      names.push_back(name);
      return static_cast<int>(names.size()) - 1;
    };
    if (attrs.GetInt("expand_num_filter") > 0) {
      expand_weight = add("expand_weight");
      if (!attrs.GetBool("expand_no_bias")) expand_bias = add("expand_bias");
    }
    weight = add("weight");
    if (!attrs.GetBool("no_bias")) bias = add("bias");
    if (attrs.GetInt("project_num_filter") > 0) {
      project_weight = add("project_weight");
      if (!attrs.GetBool("project_no_bias")) project_bias = add("project_bias");
    }
    if (attrs.GetBool("residual")) residual = add("residual");
  }
};

// The block's geometry for `data_shape`; errors name `owner`.
cpu::DepthwiseBlockGeometry BlockGeometry(const Attributes& attrs, const Shape& data_shape,
                                          const std::string& owner) {
  const ConvWindow window = ReadConvWindow(attrs, owner);
  MX_CHECK(window.rank == 2 && window.channels_last)
      << owner << ": runs 2-D NHWC windows only (layout=" << window.layout << ", kernel "
      << FormatIntTuple(window.kernel) << ")";
  MX_CHECK(window.num_group == window.num_filter)
      << owner << ": the depthwise stage needs num_group == num_filter (got " << window.num_group
      << " and " << window.num_filter << ")";
  const ActivationExtents in = ReadActivation(window, data_shape, owner, "data");
  cpu::DepthwiseBlockGeometry g;
  g.expand = attrs.GetInt("expand_num_filter") > 0;
  g.project = attrs.GetInt("project_num_filter") > 0;
  g.in_channels = in.channels;
  const int64_t channels = window.num_filter;
  g.out_channels = g.project ? attrs.GetInt("project_num_filter") : channels;
  MX_CHECK(!g.expand || attrs.GetInt("expand_num_filter") == channels)
      << owner << ": expand_num_filter=" << attrs.GetInt("expand_num_filter")
      << " must equal the depthwise num_filter=" << channels;
  MX_CHECK(g.expand || in.channels == channels)
      << owner << ": data " << data_shape << " has " << in.channels
      << " channels; without an expansion the depthwise stage needs num_filter=" << channels;
  MX_CHECK(g.expand || g.project) << owner << ": neither expand_num_filter nor project_num_filter";
  MX_CHECK(g.project || !attrs.GetBool("residual"))
      << owner << ": residual=true adds to the projection's output, and project_num_filter is 0";
  // The depthwise stage sees the data with its own channel count (the expansion's output).
  const Shape stage_input{in.batch, in.height, in.width, channels};
  g.depthwise = ConvolutionGeometry(window, stage_input, owner);
  return g;
}

void InferShape(const Attributes& attrs, ShapeInference& shapes) {
  const std::string owner = shapes.op + " " + shapes.node;
  const cpu::DepthwiseBlockGeometry g = BlockGeometry(attrs, shapes.Input(0), owner);
  for (const std::string prefix : {"expand_", "", "project_"})
    ReadOutputClamp(attrs, owner, prefix);
  const BlockInputs inputs(attrs);
  const cpu::ConvGeometry& d = g.depthwise;
  const int64_t channels = d.in_channels;
  if (g.expand) shapes.AssignInput(inputs.expand_weight, Shape{channels, 1, 1, g.in_channels});
  if (inputs.expand_bias >= 0) shapes.AssignInput(inputs.expand_bias, Shape{channels});
  shapes.AssignInput(inputs.weight, Shape{channels, d.kernel_h, d.kernel_w, 1});
  if (inputs.bias >= 0) shapes.AssignInput(inputs.bias, Shape{channels});
  if (g.project) shapes.AssignInput(inputs.project_weight, Shape{g.out_channels, 1, 1, channels});
  if (inputs.project_bias >= 0) shapes.AssignInput(inputs.project_bias, Shape{g.out_channels});
  const Shape output{d.batch, d.out_h, d.out_w, g.out_channels};
  if (inputs.residual >= 0) shapes.AssignInput(inputs.residual, output);
  shapes.AssignOutput(0, output);
}

// A weight as a kernel reads it, derived once per (pointer, version).
template <typename Derived>
struct KeptWeight {
  const float* source = nullptr;
  uint64_t version = 0;
  std::shared_ptr<const Derived> derived;
};

// The node's weights as the kernel reads them: the 1x1 weights packed as the GEMM's B (on the
// AVX2 path), the depthwise weight by tap.
class DepthwiseBlockState : public OpState {
 public:
  std::shared_ptr<const cpu::PackedGemmOperand> Packed(int stage, const float* weight,
                                                       uint64_t version, int64_t k, int64_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    KeptWeight<cpu::PackedGemmOperand>& kept = packed_[stage];
    if (kept.source != weight || kept.version != version || kept.derived == nullptr) {
      kept = {weight, version, PackPointwise(weight, k, n)};
    }
    return kept.derived;
  }
  std::shared_ptr<const cpu::PreparedConvWeight> ByTap(const cpu::ConvGeometry& g,
                                                       const float* weight, uint64_t version) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (by_tap_.source != weight || by_tap_.version != version || by_tap_.derived == nullptr) {
      by_tap_ = {weight, version, WeightByTap(g, weight)};
    }
    return by_tap_.derived;
  }
  size_t kept_bytes() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t bytes = by_tap_.derived != nullptr ? by_tap_.derived->bytes() : 0;
    for (const auto& kept : packed_) bytes += kept.derived != nullptr ? kept.derived->bytes() : 0;
    return bytes;
  }

  // W (n, k) as Sgemm's B = W^T (k x n).
  static std::shared_ptr<const cpu::PackedGemmOperand> PackPointwise(const float* weight, int64_t k,
                                                                     int64_t n) {
    return std::make_shared<const cpu::PackedGemmOperand>(cpu::PackedGemmOperand::Pack(
        cpu::PackedGemmOperand::Side::kB, cpu::Transpose::kYes, k, n, weight, k));
  }
  // The depthwise stage's weight as depthwise_direct NHWC prepares it: one row per tap.
  static std::shared_ptr<const cpu::PreparedConvWeight> WeightByTap(const cpu::ConvGeometry& g,
                                                                    const float* weight) {
    return cpu::DepthwiseAlgorithm(cpu::ConvLayout::kNHWC).PrepareWeight(g, weight);
  }

 private:
  mutable std::mutex mutex_;
  KeptWeight<cpu::PackedGemmOperand> packed_[2];  // expand, project
  KeptWeight<cpu::PreparedConvWeight> by_tap_;
};

std::unique_ptr<OpState> CreateState(const StateRequest&) {
  return std::make_unique<DepthwiseBlockState>();
}

// What one call reads: the kept weights where the executor gives versions, else derived now.
class CallWeights {
 public:
  CallWeights(const OpContext& ctx, const std::vector<TensorView>& inputs)
      : ctx_(ctx), inputs_(inputs), state_(dynamic_cast<DepthwiseBlockState*>(ctx.state)) {}

  // The 1x1 weight at `input` packed, or null where packing would not pay (Eigen's GEMM unpacks
  // it again on every product).
  const cpu::PackedGemmOperand* Packed(int stage, int input, int64_t k, int64_t n) {
    if (!cpu::PackedOperandsReadInPlace()) return nullptr;
    const float* weight = inputs_[input].data_as<float>();
    auto packed = Kept() ? state_->Packed(stage, weight, Version(input), k, n)
                         : DepthwiseBlockState::PackPointwise(weight, k, n);
    held_.push_back(packed);
    return packed.get();
  }
  const float* ByTap(const cpu::ConvGeometry& g, int input) {
    const float* weight = inputs_[input].data_as<float>();
    by_tap_ = Kept() ? state_->ByTap(g, weight, Version(input))
                     : DepthwiseBlockState::WeightByTap(g, weight);
    return by_tap_->by_tap.data();
  }

 private:
  bool Kept() const { return state_ != nullptr && ctx_.input_versions.size() == inputs_.size(); }
  uint64_t Version(int input) const { return ctx_.input_versions[static_cast<size_t>(input)]; }

  const OpContext& ctx_;
  const std::vector<TensorView>& inputs_;
  DepthwiseBlockState* state_;
  std::vector<std::shared_ptr<const cpu::PackedGemmOperand>> held_;
  std::shared_ptr<const cpu::PreparedConvWeight> by_tap_;
};

cpu::Epilogue<float> StageEpilogue(const Attributes& attrs, const std::string& owner,
                                   const std::string& prefix, const float* bias) {
  const OutputClamp clamp = ReadOutputClamp(attrs, owner, prefix);
  cpu::Epilogue<float> epilogue =
      cpu::Epilogue<float>::Clamp(static_cast<float>(clamp.low), static_cast<float>(clamp.high));
  epilogue.column_bias = bias;
  return epilogue;
}

void ForwardCpu(const OpContext& ctx, const Attributes& attrs,
                const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = Owner(ctx.node_name);
  MX_CHECK(inputs[0].dtype == DType::kFloat32)
      << owner << ": runs float32 only, got data of dtype " << inputs[0].dtype;
  MX_CHECK(ctx.scratch != nullptr) << owner << ": no scratch space";
  const cpu::DepthwiseBlockGeometry g = BlockGeometry(attrs, inputs[0].shape, owner);
  const BlockInputs at(attrs);
  const auto bias = [&inputs](int input) {
    return input >= 0 ? inputs[input].data_as<float>() : nullptr;
  };
  const int64_t channels = g.depthwise.in_channels;
  CallWeights weights(ctx, inputs);
  cpu::DepthwiseBlockTensors t;
  t.data = inputs[0].data_as<float>();
  t.output = outputs[0].data_as<float>();
  if (g.expand) {
    t.expand.weight = inputs[at.expand_weight].data_as<float>();
    t.expand.packed = weights.Packed(0, at.expand_weight, g.in_channels, channels);
    t.expand.epilogue = StageEpilogue(attrs, owner, "expand_", bias(at.expand_bias));
  }
  t.depthwise.by_tap = weights.ByTap(g.depthwise, at.weight);
  t.depthwise.bias = bias(at.bias);
  t.depthwise.clamp = StageEpilogue(attrs, owner, "", nullptr);
  if (g.project) {
    t.project.weight = inputs[at.project_weight].data_as<float>();
    t.project.packed = weights.Packed(1, at.project_weight, channels, g.out_channels);
    t.project.epilogue = StageEpilogue(attrs, owner, "project_", bias(at.project_bias));
  }
  if (at.residual >= 0) t.residual = inputs[at.residual].data_as<float>();
  cpu::DepthwiseBlockForward(g, t, *ctx.scratch);
}

void AddStageAttributes(AttributeSchema& schema, const std::string& stage) {
  schema
      .Int(stage + "_num_filter", "output channels of the 1x1 " + stage + " stage; 0: absent",
           Default("0"), 0)
      .Bool(stage + "_no_bias", "the " + stage + " stage has no bias input", Default("false"));
  AddFusedActivationAttributes(schema, stage + "_");
}

}  // namespace

MXLITE_REGISTER_OP(_fused_depthwise_block) {
  OpDef op;
  op.name = "_fused_depthwise_block";
  op.doc =
      "[1x1 expansion] -> depthwise convolution -> [1x1 projection] in one pass over the rows, "
      "NHWC float32, CPU inference (made by the depthwise-block fusion, MXNET_CONV_FUSE_DEPTHWISE)";
  op.attributes.IntTuple("kernel", "depthwise window: (h,w)")
      .IntTuple("stride", "depthwise window step per axis; default 1", Default("()"))
      .IntTuple("dilate", "depthwise dilation per axis; default 1", Default("()"))
      .IntTuple("pad", "depthwise zero padding per axis; default 0", Default("()"))
      .Int("num_filter", "channels of the depthwise stage", Required(), 1)
      .Int("num_group", "must equal num_filter (depthwise)", Required(), 1)
      .Bool("no_bias", "the depthwise stage has no bias input", Default("false"))
      .Enum("layout", {"NHWC"}, "data layout (NHWC only)", Default("NHWC"));
  AddFusedActivationAttributes(op.attributes);
  AddStageAttributes(op.attributes, "expand");
  AddStageAttributes(op.attributes, "project");
  op.attributes.Bool("residual",
                     "fused residual addition: one more input, residual (the output's shape), "
                     "added after project_bias and before project_act_min / _max",
                     Default("false"));
  op.input_names = [](const Attributes& attrs) { return BlockInputs(attrs).names; };
  op.input_roles = [](const Attributes& attrs) {
    const BlockInputs inputs(attrs);
    std::vector<InputRole> roles(inputs.names.size(), InputRole::kParameter);
    roles[0] = InputRole::kData;
    if (inputs.residual >= 0) roles[inputs.residual] = InputRole::kData;
    return roles;
  };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = InferShape;
  op.cpu_only = true;
  // A residual joins the projection's store, before its clamp: only when it ends the block.
  op.fusion.takes_residual = [](const Attributes& attrs) {
    return attrs.GetInt("project_num_filter") > 0 && !attrs.GetBool("residual") &&
           !attrs.Has("project_act_min") && !attrs.Has("project_act_max");
  };
  op.create_state[DeviceType::kCPU] = CreateState;
  op.forward[DeviceType::kCPU] = ForwardCpu;
  return op;
}

}  // namespace mxlite
