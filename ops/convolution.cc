// Convolution: output = weight * data + bias, as MXNet's Convolution, over 1-D (NCW, NWC), 2-D
// (NCHW, NHWC) and 3-D (NCDHW) windows with stride, pad, dilation and groups (depthwise when
// num_group equals the channels). Output channels [g*F/G, (g+1)*F/G) of group g see input
// channels [g*C/G, (g+1)*C/G).
//
//   data    (N, C, H, W)             NCHW      (N, H, W, C)             NHWC
//   weight  (F, C/G, KH, KW)  OIHW             (F, KH, KW, C/G)  OHWI  (as MXNet's NHWC weight)
//   bias    (F)                      absent when no_bias
//   output  (N, F, OH, OW)                     (N, OH, OW, F)
// NCHW16c (ops/activation_layout.h; set by the convolution planner for CPU inference): data
// (N, C/16, H, W, 16), output (N, F/16, OH, OW, 16), weight OIHW as written (the algorithms
// reorder it), one group or depthwise, C and F multiples of 16; forward only.
//   OH = (H + 2 * pad_h - dilate_h * (KH - 1) - 1) / stride_h + 1   (floor; likewise OW)
// 1-D (NCW / NWC) drops H, KH and OH; 3-D adds D, KD and OD before them: data (N, C, D, H, W),
// weight (F, C/G, KD, KH, KW), output (N, F, OD, OH, OW), run on the CPU as batches of 2-D
// convolutions over slabs of the data (ops/conv_volume.h) whose 2-D problem is what the tuner
// times, on the GPU on cuDNN's N-d descriptors.
// F = num_filter, G = num_group. weight and bias are parameters whose shapes are inferred from
// data.
//
// CPU: the algorithm per direction comes from the tuner when the node is bound (create_state:
// ops/conv/cpu_conv_tuning.h, per cudnn_tune / MXNET_CUDNN_AUTOTUNE_DEFAULT and the workspace
// limit, through the tuning DB); a call without that state, or with other shapes than were tuned,
// runs the heuristic's pick. At inference inside an executor the forward's weight is prepared
// once as its algorithm reads it (packed for the GEMM paths, ops/cpu/conv_algorithms.h) and kept
// in the node's state until the weight's version moves (OpContext::input_versions), as MXNet's
// MKL-DNN convolution keeps its reordered weight (MXNET_CONV_PREPACK_WEIGHTS=0: packed per call).
// The bias gradient is a per-channel sum. cudnn_off is validated here and used by the GPU kernels.
//
// act_min / act_max (ops/output_clamp.h) fuse a clamping activation: the kernels clamp each output
// element as they store it. `residual` (true: one more input, `residual`, of the output's shape
// and layout, after the bias) fuses the addition of a residual connection: output = clamp(conv +
// bias + residual), added in the GEMM paths' store or in a pass right after the other kernels
// (ops/cpu/conv_algorithms.h), bit for bit what a separate addition gives; on the GPU one
// epilogue kernel after cuDNN adds the bias and the residual and clamps (ops/cuda/
// convolution_gpu.cc). The fusion passes set them (scheduler/graph/fusion.h). Inference only:
// backward refuses both.

#include <memory>
#include <mutex>
#include <type_traits>

#include "core/settings.h"
#include "ops/conv/cpu_conv_tuning.h"
#include "ops/conv_attributes.h"
#include "ops/conv_volume.h"
#include "ops/cpu/conv_gemm.h"
#include "ops/operator.h"
#include "ops/weighted_layer.h"

namespace mxlite {
namespace {

using conv::ConvDirection;
using cpu::ConvGeometry;

std::string Owner(const std::string& node) { return "Convolution " + node; }

Shape OutputShape(const ConvWindow& window, const ConvGeometry& g) {
  return ActivationShape(window, {g.batch, g.out_channels, g.out_h, g.out_w});
}

void InferShape(const Attributes& attrs, ShapeInference& shapes) {
  const std::string owner = shapes.op + " " + shapes.node;
  const ConvWindow window = ReadConvWindow(attrs, owner);
  ReadOutputClamp(attrs, owner);  // validates act_min / act_max at bind
  int64_t filters = 0, channels_per_group = 0;
  Shape output;
  if (window.rank == 3) {
    const VolumeConvGeometry v = VolumeConvolutionGeometry(window, shapes.Input(0), owner);
    filters = v.out_channels;
    channels_per_group = v.in_channels / v.groups;
    output = v.output_shape();
  } else {
    const ConvGeometry g = ConvolutionGeometry(window, shapes.Input(0), owner);
    filters = g.out_channels;
    channels_per_group = g.in_channels_per_group();
    output = OutputShape(window, g);
  }
  shapes.AssignInput(1, ConvWeightShape(window, filters, channels_per_group));
  if (!attrs.GetBool("no_bias")) shapes.AssignInput(2, Shape{filters});
  if (attrs.GetBool("residual")) shapes.AssignInput(ConvolutionResidualInput(attrs), output);
  shapes.AssignOutput(0, output);
}

// The 2-D problem the node's algorithms run: its own geometry, or a 3-D window's chunk of slabs.
ConvGeometry TunedGeometry(const ConvWindow& window, const Shape& data_shape,
                           const std::string& owner) {
  if (window.rank == 3) return VolumeConvolutionGeometry(window, data_shape, owner).plane;
  return ConvolutionGeometry(window, data_shape, owner);
}

// The tuned plan of a bound node, and the forward's weight as its algorithm prepared it
// (packed for the GEMM), kept while the weight's version stands.
class ConvolutionState : public OpState, public conv::TunedState {
 public:
  // `prepack`: keep prepared weights (MXNET_CONV_PREPACK_WEIGHTS when bound; the plan was tuned
  // with it).
  ConvolutionState(conv::CpuConvPlan plan, bool prepack)
      : plan_(std::move(plan)), prepack_(prepack) {}
  const conv::CpuConvPlan& plan() const { return plan_; }
  bool prepack() const { return prepack_; }
  const std::vector<conv::LayerTuning>& tuning_decisions() const override {
    return plan_.decisions;
  }

  // `weight` (at engine version `version`) as `algorithm` prepares it for `g`: the kept one when
  // all four match the last call's, else prepared now and kept. Null when the algorithm prepares
  // nothing.
  std::shared_ptr<const cpu::PreparedConvWeight> PreparedWeight(const cpu::ConvAlgorithm& algorithm,
                                                                const ConvGeometry& g,
                                                                const float* weight,
                                                                uint64_t version) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (kept_.algorithm != &algorithm || !(kept_.geometry == g) || kept_.weight != weight ||
        kept_.version != version) {
      kept_ = {&algorithm, g, weight, version, algorithm.PrepareWeight(g, weight)};
    }
    return kept_.prepared;
  }
  size_t kept_bytes() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return kept_.prepared != nullptr ? kept_.prepared->bytes() : 0;
  }

 private:
  struct Kept {
    const cpu::ConvAlgorithm* algorithm = nullptr;
    ConvGeometry geometry;
    const float* weight = nullptr;
    uint64_t version = 0;
    std::shared_ptr<const cpu::PreparedConvWeight> prepared;
  };
  conv::CpuConvPlan plan_;
  bool prepack_;
  mutable std::mutex mutex_;
  Kept kept_;
};

// NCHW16c's kernels are forward only (the planner chooses the layout for inference).
void CheckBackwardLayout(const ConvWindow& window, const std::string& owner,
                         const std::string& what) {
  MX_CHECK(window.data_layout != ActivationLayout::kNCHW16c)
      << owner << ": layout NCHW16c runs forward only (inference), so it cannot " << what
      << "; bind for inference, or write the layer NCHW or NHWC";
}

std::unique_ptr<OpState> CreateState(const StateRequest& request) {
  const std::string owner = Owner(request.node_name);
  const ConvWindow window = ReadConvWindow(request.attrs, owner);
  if (request.training) CheckBackwardLayout(window, owner, "be bound for training");
  conv::CpuConvTuningRequest tuning;
  tuning.tuning = conv::LayerTuningRequestFor(request.attrs, request.node_name);
  tuning.geometry = TunedGeometry(window, request.input_shapes.at(0), owner);
  tuning.dtype = request.input_dtypes.empty() ? DType::kFloat32 : request.input_dtypes[0];
  if (request.training) {
    tuning.directions = {ConvDirection::kForward, ConvDirection::kBackwardData,
                         ConvDirection::kBackwardFilter};
  }
  // Inference passes keep the forward's weight prepared; training changes it every step, so its
  // forward is timed unprepared.
  const bool prepack = settings().GetBool("MXNET_CONV_PREPACK_WEIGHTS");
  tuning.prepared_weight = prepack && !request.training;
  return std::make_unique<ConvolutionState>(conv::TuneCpuConvolution(tuning), prepack);
}

// The algorithm the node's plan chose for `direction`, or the heuristic's when there is no plan
// for this geometry.
const cpu::ConvAlgorithm& AlgorithmFor(const OpContext& ctx, const ConvGeometry& g,
                                       ConvDirection direction) {
  if (const auto* state = dynamic_cast<const ConvolutionState*>(ctx.state)) {
    const cpu::ConvAlgorithm* planned = state->plan().For(direction);
    if (planned != nullptr && state->plan().geometry == g) return *planned;
  }
  return conv::HeuristicCpuAlgorithm(g, direction);
}

// At inference, where a weight serves many calls, the weight as the algorithm prepares it, kept in
// the node's state until the weight is written (its version moves). Null in training (the
// weight changes every step: packing it apart from the product would only add a pass), outside
// an executor (no versions) and for algorithms that prepare nothing.
std::shared_ptr<const cpu::PreparedConvWeight> KeptPreparedWeight(
    const OpContext& ctx, const cpu::ConvAlgorithm& algorithm, const ConvGeometry& g,
    const float* weight) {
  auto* state = dynamic_cast<ConvolutionState*>(ctx.state);
  if (ctx.is_train || state == nullptr || ctx.input_versions.size() < 2) return nullptr;
  if (!state->prepack()) return nullptr;
  return state->PreparedWeight(algorithm, g, weight, ctx.input_versions[1]);
}

// With `residual`, the signature of a weighted layer gains a last input, `residual`: data read
// by the forward, never by backward (which refuses the node).
void AddResidualInput(OpDef& op) {
  const auto names = op.input_names;
  op.input_names = [names](const Attributes& attrs) {
    std::vector<std::string> inputs = names(attrs);
    if (attrs.GetBool("residual")) inputs.push_back("residual");
    return inputs;
  };
  const auto roles = op.input_roles;
  op.input_roles = [roles](const Attributes& attrs) {
    std::vector<InputRole> inputs = roles(attrs);
    if (attrs.GetBool("residual")) inputs.push_back(InputRole::kData);
    return inputs;
  };
  const auto dependencies = op.backward_dependencies;
  op.backward_dependencies = [dependencies](const Attributes& attrs) {
    BackwardDependencies deps = dependencies(attrs);
    if (attrs.GetBool("residual")) deps.inputs.push_back(false);
    return deps;
  };
}

// A 3-D window's forward: the 2-D problem of its slabs, run chunk by chunk (ops/conv_volume.h).
void ForwardVolume(const OpContext& ctx, const Attributes& attrs, const ConvWindow& window,
                   const std::vector<TensorView>& inputs, const TensorView& output) {
  const std::string owner = Owner(ctx.node_name);
  const VolumeConvGeometry v = VolumeConvolutionGeometry(window, inputs[0].shape, owner);
  const OutputClamp clamp = ReadOutputClamp(attrs, owner);
  const cpu::ConvAlgorithm& algorithm = AlgorithmFor(ctx, v.plane, ConvDirection::kForward);
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    cpu::ConvTensors<T> tensors;
    std::shared_ptr<const cpu::PreparedConvWeight> prepared;
    if constexpr (std::is_same_v<T, float>) {
      prepared = KeptPreparedWeight(ctx, algorithm, v.plane, inputs[1].data_as<float>());
      tensors.prepared_weight = prepared.get();
    }
    tensors.data = inputs[0].data_as<T>();
    tensors.weight = inputs[1].data_as<T>();
    tensors.bias = attrs.GetBool("no_bias") ? nullptr : inputs[2].data_as<T>();
    tensors.output = output.data_as<T>();
    if (attrs.GetBool("residual"))
      tensors.residual = inputs[ConvolutionResidualInput(attrs)].data_as<T>();
    tensors.clamp_low = static_cast<T>(clamp.low);
    tensors.clamp_high = static_cast<T>(clamp.high);
    RunVolume(algorithm, ConvDirection::kForward, v, tensors, *ctx.scratch);
  });
}

// A 3-D window's backward: both directions of its slabs' 2-D problem (ops/conv_volume.h).
void BackwardVolume(const OpContext& ctx, const Attributes& attrs, const ConvWindow& window,
                    const TensorView& output_grad, const std::vector<TensorView>& inputs,
                    const std::vector<TensorView>& input_grads, const std::vector<WriteMode>& req) {
  const std::string owner = Owner(ctx.node_name);
  const VolumeConvGeometry v = VolumeConvolutionGeometry(window, inputs[0].shape, owner);
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    if (req[0] != WriteMode::kNull) {
      cpu::ConvTensors<T> tensors;
      tensors.output_grad = output_grad.data_as<T>();
      tensors.weight = inputs[1].data_as<T>();
      tensors.data_grad = input_grads[0].data_as<T>();
      RunVolume(AlgorithmFor(ctx, v.plane, ConvDirection::kBackwardData),
                ConvDirection::kBackwardData, v, tensors, *ctx.scratch);
    }
    if (req[1] != WriteMode::kNull) {
      cpu::ConvTensors<T> tensors;
      tensors.data = inputs[0].data_as<T>();
      tensors.output_grad = output_grad.data_as<T>();
      tensors.weight_grad = input_grads[1].data_as<T>();
      RunVolume(AlgorithmFor(ctx, v.plane, ConvDirection::kBackwardFilter),
                ConvDirection::kBackwardFilter, v, tensors, *ctx.scratch);
    }
    if (!attrs.GetBool("no_bias") && req[2] != WriteMode::kNull) {
      cpu::SumPerChannel<T>(output_grad.data_as<T>(), v.batch, v.out_channels,
                            v.out_d * v.out_plane(), false, input_grads[2].data_as<T>());
    }
  });
}

void ForwardCpu(const OpContext& ctx, const Attributes& attrs,
                const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = Owner(ctx.node_name);
  const ConvWindow window = ReadConvWindow(attrs, owner);
  MX_CHECK(ctx.scratch != nullptr) << owner << ": no scratch space";
  if (window.rank == 3) return ForwardVolume(ctx, attrs, window, inputs, outputs[0]);
  const ConvGeometry g = ConvolutionGeometry(window, inputs[0].shape, owner);
  const bool has_bias = !attrs.GetBool("no_bias");
  const OutputClamp clamp = ReadOutputClamp(attrs, owner);
  const cpu::ConvAlgorithm& algorithm = AlgorithmFor(ctx, g, ConvDirection::kForward);
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    cpu::ConvTensors<T> tensors;
    std::shared_ptr<const cpu::PreparedConvWeight> prepared;
    if constexpr (std::is_same_v<T, float>) {
      prepared = KeptPreparedWeight(ctx, algorithm, g, inputs[1].data_as<float>());
      tensors.prepared_weight = prepared.get();
    }
    tensors.data = inputs[0].data_as<T>();
    tensors.weight = inputs[1].data_as<T>();
    tensors.bias = has_bias ? inputs[2].data_as<T>() : nullptr;
    tensors.output = outputs[0].data_as<T>();
    if (attrs.GetBool("residual"))
      tensors.residual = inputs[ConvolutionResidualInput(attrs)].data_as<T>();
    tensors.clamp_low = static_cast<T>(clamp.low);
    tensors.clamp_high = static_cast<T>(clamp.high);
    algorithm.Run(ConvDirection::kForward, g, tensors, *ctx.scratch);
  });
}

void BackwardCpu(const OpContext& ctx, const Attributes& attrs,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>& inputs,
                 const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  const std::string owner = Owner(ctx.node_name);
  const ConvWindow window = ReadConvWindow(attrs, owner);
  MX_CHECK(ctx.scratch != nullptr) << owner << ": no scratch space";
  CheckBackwardLayout(window, owner, "run backward");
  CheckNoFusedActivation(attrs, owner);
  CheckNoFusedResidual(attrs, owner);
  if (window.rank == 3) {
    return BackwardVolume(ctx, attrs, window, output_grads[0], inputs, input_grads, req);
  }
  const ConvGeometry g = ConvolutionGeometry(window, inputs[0].shape, owner);
  const bool has_bias = !attrs.GetBool("no_bias");
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    const T* output_grad = output_grads[0].data_as<T>();
    if (req[0] != WriteMode::kNull) {
      cpu::ConvTensors<T> tensors;
      tensors.output_grad = output_grad;
      tensors.weight = inputs[1].data_as<T>();
      tensors.data_grad = input_grads[0].data_as<T>();
      AlgorithmFor(ctx, g, ConvDirection::kBackwardData)
          .Run(ConvDirection::kBackwardData, g, tensors, *ctx.scratch);
    }
    if (req[1] != WriteMode::kNull) {
      cpu::ConvTensors<T> tensors;
      tensors.data = inputs[0].data_as<T>();
      tensors.output_grad = output_grad;
      tensors.weight_grad = input_grads[1].data_as<T>();
      AlgorithmFor(ctx, g, ConvDirection::kBackwardFilter)
          .Run(ConvDirection::kBackwardFilter, g, tensors, *ctx.scratch);
    }
    if (has_bias && req[2] != WriteMode::kNull) {
      cpu::SumPerChannel<T>(output_grad, g.batch, g.out_channels, g.out_spatial(),
                            g.channels_last(), input_grads[2].data_as<T>());
    }
  });
}

// A fused residual in NCHW16c may share the output's memory: every NCHW16c algorithm (the only
// ones that run that layout) reads each residual element right before it stores the same output
// element and reads no other, so the output can be written over the residual, as ONNX Runtime
// adds a residual. It saves one stream of the output's size through memory per pass (a 1x1
// 64->256 at 56x56 with its caches flushed: 1.52 -> 1.27 ms). Other layouts' algorithms add the
// residual after the GEMM's k blocks or in a pass after the kernel, which needs it intact.
std::vector<std::pair<int, int>> ResidualInPlace(const Attributes& attrs) {
  if (!attrs.GetBool("residual") || attrs.GetOptionalString("layout") != "NCHW16c") return {};
  return {{ConvolutionResidualInput(attrs), 0}};
}

}  // namespace

MXLITE_REGISTER_OP(Convolution) {
  OpDef op;
  op.name = "Convolution";
  op.name_prefix = FixedNamePrefix("conv");
  op.doc =
      "1-D, 2-D or 3-D convolution with groups, stride, pad, dilation and bias (MXNet's "
      "Convolution); weight OIHW for NCHW/NCW (OIDHW for NCDHW), OHWI for NHWC/NWC.";
  op.attributes.IntTuple("kernel", "window size: (w,), (h,w) or (d,h,w)")
      .IntTuple("stride", "window step per axis; default 1", Default("()"))
      .IntTuple("dilate", "dilation per axis; default 1", Default("()"))
      .IntTuple("pad", "zero padding on both sides per axis; default 0", Default("()"))
      .Int("num_filter", "output channels", Required(), 1)
      .Int("num_group", "channel groups (num_group == channels: depthwise)", Default("1"), 1)
      .Bool("no_bias", "no bias input", Default("false"))
      .Enum("layout", {"NCW", "NWC", "NCHW", "NHWC", "NCHW16c", "NCDHW", "NDHWC"},
            "data layout; absent: NCW for 1-D, NCHW for 2-D, NCDHW for 3-D (NDHWC is refused). "
            "NCHW16c: channels in blocks of 16, data (N, C/16, H, W, 16), weight OIHW, forward "
            "only",
            Optional());
  AddConvTuningAttributes(op.attributes, 1024);
  AddFusedActivationAttributes(op.attributes);
  op.attributes.Bool("residual",
                     "fused residual addition: one more input, residual (the output's shape), "
                     "added after the bias and before act_min / act_max. Inference only",
                     Default("false"));
  SetWeightedLayerSignature(op);
  AddResidualInput(op);
  op.infer_shape = InferShape;
  op.create_state[DeviceType::kCPU] = CreateState;
  // Kernels per layout, tuned in each; blocked where RunsChannelBlocked; weight OHWI in NHWC.
  op.layout.role = LayoutRole::kFlexible;
  op.layout.tuned = true;
  op.layout.nhwc_weight_input = 1;
  op.layout.runs_channel_blocked = [](const Attributes& attrs, const std::vector<Shape>& data) {
    return RunsChannelBlocked(data.at(0)[1], attrs.GetInt("num_filter"), attrs.GetInt("num_group"));
  };
  op.layout.retarget = [](const Attributes&, ActivationLayout layout,
                          std::map<std::string, std::string>& text) {
    text["layout"] = ActivationLayoutName(layout);
  };
  op.fusion.convolution = true;
  op.fusion.takes_clamp = [](const Attributes&) { return true; };
  op.inplace_with = ResidualInPlace;
  op.fusion.takes_residual = [](const Attributes& attrs) {
    return !attrs.Has("act_min") && !attrs.Has("act_max") && !attrs.GetBool("residual");
  };
  op.forward[DeviceType::kCPU] = ForwardCpu;
  op.backward[DeviceType::kCPU] = BackwardCpu;
  return op;
}

}  // namespace mxlite
