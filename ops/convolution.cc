// Convolution: output = weight * data + bias, as MXNet's Convolution, over 1-D (NCW, NWC) and 2-D
// (NCHW, NHWC) windows with stride, pad, dilation and groups (depthwise when num_group equals the
// channels). Output channels [g*F/G, (g+1)*F/G) of group g see input channels [g*C/G, (g+1)*C/G).
//
//   data    (N, C, H, W)             NCHW      (N, H, W, C)             NHWC
//   weight  (F, C/G, KH, KW)  OIHW             (F, KH, KW, C/G)  OHWI  (as MXNet's NHWC weight)
//   bias    (F)                      absent when no_bias
//   output  (N, F, OH, OW)                     (N, OH, OW, F)
//   OH = (H + 2 * pad_h - dilate_h * (KH - 1) - 1) / stride_h + 1   (floor; likewise OW)
// 1-D (NCW / NWC) drops H, KH and OH. F = num_filter, G = num_group. weight and bias are
// parameters whose shapes are inferred from data.
//
// CPU: the algorithm per direction comes from the tuner when the node is bound (create_state:
// ops/conv/cpu_conv_tuning.h, per cudnn_tune / MXNET_CUDNN_AUTOTUNE_DEFAULT and the workspace
// limit, through the tuning DB); a call without that state, or with other shapes than were tuned,
// runs the heuristic's pick. The bias gradient is a per-channel sum. cudnn_off is validated here
// and used by the GPU kernels.
//
// act_min / act_max (conv_attributes.h) fuse a clamping activation: the kernels clamp each output
// element as they store it. Inference only: backward refuses a node that has them.
#include "ops/conv/cpu_conv_tuning.h"
#include "ops/conv_attributes.h"
#include "ops/cpu/conv_gemm.h"
#include "ops/operator.h"
#include "ops/weighted_layer.h"

namespace mxlite {
namespace {

using conv::ConvDirection;
using cpu::ConvGeometry;

std::string Owner(const std::string& node) { return "Convolution " + node; }

// The convolution of `data_shape` under `attrs`; errors name `owner` and the data shape.
ConvGeometry ConvolutionGeometry(const ConvWindow& window, const Shape& data_shape,
                                 const std::string& owner) {
  const ActivationExtents in = ReadActivation(window, data_shape, owner, "data");
  MX_CHECK(in.channels % window.num_group == 0)
      << owner << ": data " << data_shape << " has " << in.channels
      << " channels, which num_group=" << window.num_group << " does not divide";
  MX_CHECK(window.num_filter % window.num_group == 0)
      << owner << ": num_filter=" << window.num_filter
      << " is not divisible by num_group=" << window.num_group;
  ConvGeometry g;
  SetGeometryWindow(window, g);
  g.batch = in.batch;
  g.in_channels = in.channels;
  g.out_channels = window.num_filter;
  g.groups = window.num_group;
  g.in_h = in.height;
  g.in_w = in.width;
  const int64_t extent_h = g.dilate_h * (g.kernel_h - 1) + 1;
  const int64_t extent_w = g.dilate_w * (g.kernel_w - 1) + 1;
  MX_CHECK(extent_h <= g.in_h + 2 * g.pad_h && extent_w <= g.in_w + 2 * g.pad_w)
      << owner << ": the kernel " << FormatIntTuple(window.kernel) << " dilated by "
      << FormatIntTuple(window.dilate) << " spans more than data " << data_shape << " padded by "
      << FormatIntTuple(window.pad);
  g.out_h = (g.in_h + 2 * g.pad_h - extent_h) / g.stride_h + 1;
  g.out_w = (g.in_w + 2 * g.pad_w - extent_w) / g.stride_w + 1;
  return g;
}

Shape OutputShape(const ConvWindow& window, const ConvGeometry& g) {
  return ActivationShape(window, {g.batch, g.out_channels, g.out_h, g.out_w});
}

void InferShape(const Attributes& attrs, ShapeInference& shapes) {
  const std::string owner = shapes.op + " " + shapes.node;
  const ConvWindow window = ReadConvWindow(attrs, owner);
  const ConvGeometry g = ConvolutionGeometry(window, shapes.Input(0), owner);
  ReadOutputClamp(attrs, owner);  // validates act_min / act_max at bind
  shapes.AssignInput(1, ConvWeightShape(window, g.out_channels, g.in_channels_per_group()));
  if (!attrs.GetBool("no_bias")) shapes.AssignInput(2, Shape{g.out_channels});
  shapes.AssignOutput(0, OutputShape(window, g));
}

// The tuned plan of a bound node.
class ConvolutionState : public OpState, public conv::TunedState {
 public:
  explicit ConvolutionState(conv::CpuConvPlan plan) : plan_(std::move(plan)) {}
  const conv::CpuConvPlan& plan() const { return plan_; }
  const std::vector<conv::LayerTuning>& tuning_decisions() const override {
    return plan_.decisions;
  }

 private:
  conv::CpuConvPlan plan_;
};

std::unique_ptr<OpState> CreateState(const StateRequest& request) {
  const std::string owner = Owner(request.node_name);
  const ConvWindow window = ReadConvWindow(request.attrs, owner);
  conv::CpuConvTuningRequest tuning;
  tuning.layer = request.node_name;
  tuning.geometry = ConvolutionGeometry(window, request.input_shapes.at(0), owner);
  tuning.dtype = request.input_dtypes.empty() ? DType::kFloat32 : request.input_dtypes[0];
  tuning.cudnn_tune = request.attrs.GetOptionalString("cudnn_tune");
  tuning.workspace_mb = request.attrs.GetInt("workspace");
  tuning.training = request.training;
  return std::make_unique<ConvolutionState>(conv::TuneCpuConvolution(tuning));
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

void ForwardCpu(const OpContext& ctx, const Attributes& attrs,
                const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = Owner(ctx.node_name);
  const ConvWindow window = ReadConvWindow(attrs, owner);
  const ConvGeometry g = ConvolutionGeometry(window, inputs[0].shape, owner);
  MX_CHECK(ctx.scratch != nullptr) << owner << ": no scratch space";
  const bool has_bias = !attrs.GetBool("no_bias");
  const OutputClamp clamp = ReadOutputClamp(attrs, owner);
  const cpu::ConvAlgorithm& algorithm = AlgorithmFor(ctx, g, ConvDirection::kForward);
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    cpu::ConvTensors<T> tensors;
    tensors.data = inputs[0].data_as<T>();
    tensors.weight = inputs[1].data_as<T>();
    tensors.bias = has_bias ? inputs[2].data_as<T>() : nullptr;
    tensors.output = outputs[0].data_as<T>();
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
  const ConvGeometry g = ConvolutionGeometry(window, inputs[0].shape, owner);
  MX_CHECK(ctx.scratch != nullptr) << owner << ": no scratch space";
  const bool has_bias = !attrs.GetBool("no_bias");
  CheckNoFusedActivation(attrs, owner);
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
      cpu::SumPerChannel<T>(output_grad, g.batch, g.out_channels, g.out_spatial(), g.channels_last,
                            input_grads[2].data_as<T>());
    }
  });
}

}  // namespace

MXLITE_REGISTER_OP(Convolution) {
  OpDef op;
  op.name = "Convolution";
  op.doc =
      "1-D or 2-D convolution with groups, stride, pad, dilation and bias (MXNet's Convolution); "
      "weight OIHW for NCHW/NCW, OHWI for NHWC/NWC.";
  op.attributes.IntTuple("kernel", "window size: (w,) or (h,w)")
      .IntTuple("stride", "window step per axis; default 1", Default("()"))
      .IntTuple("dilate", "dilation per axis; default 1", Default("()"))
      .IntTuple("pad", "zero padding on both sides per axis; default 0", Default("()"))
      .Int("num_filter", "output channels", Required(), 1)
      .Int("num_group", "channel groups (num_group == channels: depthwise)", Default("1"), 1)
      .Bool("no_bias", "no bias input", Default("false"))
      .Enum("layout", {"NCW", "NWC", "NCHW", "NHWC", "NCDHW", "NDHWC"},
            "data layout; absent: NCW for 1-D, NCHW for 2-D", Optional());
  AddConvTuningAttributes(op.attributes, 1024);
  AddFusedActivationAttributes(op.attributes);
  SetWeightedLayerSignature(op);
  op.infer_shape = InferShape;
  op.create_state[DeviceType::kCPU] = CreateState;
  op.forward[DeviceType::kCPU] = ForwardCpu;
  op.backward[DeviceType::kCPU] = BackwardCpu;
  return op;
}

}  // namespace mxlite
