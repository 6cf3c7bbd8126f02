// Deconvolution (transposed convolution), as MXNet's: the adjoint of a Convolution with the same
// kernel, stride, dilate, pad and groups, mapping its output space back to its input space, plus a
// bias. Forward is that convolution's data gradient; backward is its forward (data gradient) and
// its weight gradient, with data and output swapping roles.
//
//   data    (N, C, H, W)                          NCHW (NCW drops H; NHWC puts C last)
//   weight  (C, F/G, KH, KW)  (NHWC: (C, KH, KW, F/G))
//   bias    (F)                                   present only when no_bias=false (default true)
//   output  (N, F, OH, OW)
// 3-D (NCDHW) adds D, KD and OD before H, KH and OH; on the CPU it runs as the adjoint of a 3-D
// Convolution's slabs (ops/conv_volume.h), on the GPU on cuDNN's N-d descriptors.
//   OH = stride_h * (H - 1) + dilate_h * (KH - 1) + 1 - 2 * pad_h + adj_h        (likewise OW)
// F = num_filter, G = num_group. When target_shape is given (any entry non-zero) it is the output's
// spatial size and pad and adj are derived from it as MXNet does (pad = ceil(t / 2), adj = t % 2
// for t = stride * (H - 1) + dilated kernel - target); the given pad and adj are then ignored.
// An explicit adj must be smaller than the stride or the dilation on its axis (as PyTorch and ONNX
// require).
//
// Tuning: a bound node tunes its adjoint convolution's directions as a Convolution tunes its own
// (ops/conv/cpu_conv_tuning.h on the CPU, cuDNN's Find on the GPU), per the layer's cudnn_tune,
// else MXNET_CUDNN_AUTOTUNE_DEFAULT, and its workspace limit, through the tuning DB: its forward
// runs the adjoint's backward_data pick, its backward the adjoint's forward and backward_filter
// picks; an imperative call runs the heuristic's.
#include <algorithm>

#include "ops/conv/cpu_conv_tuning.h"
#include "ops/conv_attributes.h"
#include "ops/conv_volume.h"
#include "ops/cpu/conv_gemm.h"
#include "ops/deconvolution.h"
#include "ops/operator.h"
#include "ops/weighted_layer.h"

namespace mxlite {

DeconvolutionAxis DeconvolutionAxisOf(const Attributes& attrs, const ConvWindow& window, int axis,
                                      int64_t in, const std::string& owner) {
  const int64_t full =
      window.stride[axis] * (in - 1) + window.dilate[axis] * (window.kernel[axis] - 1) + 1;
  const std::vector<int64_t>& target = attrs.GetInts("target_shape");
  if (std::any_of(target.begin(), target.end(), [](int64_t t) { return t != 0; })) {
    MX_CHECK(static_cast<int>(target.size()) == window.rank)
        << owner << ": target_shape=" << FormatIntTuple(target) << " has " << target.size()
        << " values but the kernel " << FormatIntTuple(window.kernel) << " has " << window.rank;
    const int64_t trim = full - target[axis];
    MX_CHECK(trim >= 0 && target[axis] >= 1)
        << owner << ": target_shape=" << FormatIntTuple(target) << " cannot be reached on axis "
        << axis << ": the window gives at most " << full;
    return {target[axis], (trim + 1) / 2};
  }
  const std::vector<int64_t>& adj = attrs.GetInts("adj");
  MX_CHECK(adj.empty() || static_cast<int>(adj.size()) == window.rank)
      << owner << ": adj=" << FormatIntTuple(adj) << " has " << adj.size()
      << " values but the kernel " << FormatIntTuple(window.kernel) << " has " << window.rank;
  const int64_t extra = adj.empty() ? 0 : adj[axis];
  MX_CHECK(extra >= 0 && (extra < window.stride[axis] || extra < window.dilate[axis]))
      << owner << ": adj=" << FormatIntTuple(adj) << " must be >= 0 and smaller than the stride "
      << FormatIntTuple(window.stride) << " or the dilation " << FormatIntTuple(window.dilate);
  const int64_t size = full - 2 * window.pad[axis] + extra;
  MX_CHECK(size >= 1) << owner << ": pad=" << FormatIntTuple(window.pad)
                      << " leaves no output on axis " << axis << " (the window gives " << full
                      << ")";
  return {size, window.pad[axis]};
}

namespace {

using conv::ConvDirection;
using cpu::ConvGeometry;

// The convolution whose adjoint this Deconvolution is: its input is our output (F channels), its
// output is our data (C channels).
ConvGeometry AdjointGeometry(const Attributes& attrs, const ConvWindow& window,
                             const Shape& data_shape, const std::string& owner) {
  const ActivationExtents in = ReadGroupedData(window, data_shape, owner);
  ConvGeometry g;
  SetGeometryWindow(window, g);
  g.batch = in.batch;
  g.in_channels = window.num_filter;
  g.out_channels = in.channels;
  g.groups = window.num_group;
  g.out_h = in.height;
  g.out_w = in.width;
  const DeconvolutionAxis width =
      DeconvolutionAxisOf(attrs, window, window.rank - 1, in.width, owner);
  g.in_w = width.size;
  g.pad_w = width.pad;
  if (window.rank == 2) {
    const DeconvolutionAxis height = DeconvolutionAxisOf(attrs, window, 0, in.height, owner);
    g.in_h = height.size;
    g.pad_h = height.pad;
  }
  return g;
}

// The 3-D convolution whose adjoint this Deconvolution is (its input our output, its output our
// data), as ops/conv_volume.h runs it.
VolumeConvGeometry AdjointVolume(const Attributes& attrs, const ConvWindow& window,
                                 const Shape& data_shape, const std::string& owner) {
  MX_CHECK(data_shape.ndim() == 5)
      << owner << ": data has shape " << data_shape << " but the 3-D kernel "
      << FormatIntTuple(window.kernel) << " needs a 5-D NCDHW tensor (N, C, D, H, W)";
  MX_CHECK(data_shape[1] % window.num_group == 0)
      << owner << ": data " << data_shape << " has " << data_shape[1]
      << " channels, which num_group=" << window.num_group << " does not divide";
  MX_CHECK(window.num_filter % window.num_group == 0)
      << owner << ": num_filter=" << window.num_filter
      << " is not divisible by num_group=" << window.num_group;
  ConvWindow adjoint = window;
  adjoint.num_filter = data_shape[1];
  std::vector<int64_t> adjoint_data = {data_shape[0], window.num_filter};
  for (int axis = 0; axis < 3; ++axis) {
    const DeconvolutionAxis out =
        DeconvolutionAxisOf(attrs, window, axis, data_shape[axis + 2], owner);
    adjoint_data.push_back(out.size);
    adjoint.pad[axis] = out.pad;
  }
  return VolumeGeometryWithOutput(adjoint, Shape(adjoint_data),
                                  {data_shape[2], data_shape[3], data_shape[4]}, owner);
}

Shape VolumeOutputShape(const VolumeConvGeometry& adjoint) {
  return Shape{adjoint.batch, adjoint.in_channels, adjoint.in_d, adjoint.in_h, adjoint.in_w};
}

// The 2-D problem the node's algorithms run: the adjoint's, or a 3-D adjoint's chunk of slabs.
ConvGeometry TunedGeometry(const Attributes& attrs, const ConvWindow& window,
                           const Shape& data_shape, const std::string& owner) {
  if (window.rank == 3) return AdjointVolume(attrs, window, data_shape, owner).plane;
  return AdjointGeometry(attrs, window, data_shape, owner);
}

void InferShape(const Attributes& attrs, ShapeInference& shapes) {
  const std::string owner = shapes.op + " " + shapes.node;
  const ConvWindow window = ReadConvWindow(attrs, owner);
  if (window.rank == 3) {
    const VolumeConvGeometry v = AdjointVolume(attrs, window, shapes.Input(0), owner);
    shapes.AssignInput(1, ConvWeightShape(window, v.out_channels, v.in_channels / v.groups));
    if (!attrs.GetBool("no_bias")) shapes.AssignInput(2, Shape{v.in_channels});
    shapes.AssignOutput(0, VolumeOutputShape(v));
    return;
  }
  const ConvGeometry g = AdjointGeometry(attrs, window, shapes.Input(0), owner);
  shapes.AssignInput(1, ConvWeightShape(window, g.out_channels, g.in_channels_per_group()));
  if (!attrs.GetBool("no_bias")) shapes.AssignInput(2, Shape{g.in_channels});
  shapes.AssignOutput(0, ActivationShape(window, {g.batch, g.in_channels, g.in_h, g.in_w}));
}

// The tuned plan of a bound node: its adjoint convolution's algorithms for the directions it runs
// (forward: the adjoint's backward_data; backward: its forward and backward_filter).
class DeconvolutionState : public OpState, public conv::TunedState {
 public:
  explicit DeconvolutionState(conv::CpuConvPlan plan) : plan_(std::move(plan)) {}
  const std::vector<conv::LayerTuning>& tuning_decisions() const override {
    return plan_.decisions;
  }
  const conv::CpuConvPlan& plan() const { return plan_; }

 private:
  conv::CpuConvPlan plan_;
};

std::unique_ptr<OpState> CreateState(const StateRequest& request) {
  const std::string owner = "Deconvolution " + request.node_name;
  const ConvWindow window = ReadConvWindow(request.attrs, owner);
  conv::CpuConvTuningRequest tuning;
  tuning.tuning = conv::LayerTuningRequestFor(request.attrs, request.node_name);
  tuning.geometry = TunedGeometry(request.attrs, window, request.input_shapes.at(0), owner);
  tuning.dtype = request.input_dtypes.empty() ? DType::kFloat32 : request.input_dtypes[0];
  tuning.directions = {ConvDirection::kBackwardData};
  if (request.training) {
    tuning.directions = {ConvDirection::kBackwardData, ConvDirection::kForward,
                         ConvDirection::kBackwardFilter};
  }
  return std::make_unique<DeconvolutionState>(conv::TuneCpuConvolution(tuning));
}

// The adjoint's algorithm the node's plan chose for `direction`, or the heuristic's when there is
// no plan for this geometry (imperative calls).
const cpu::ConvAlgorithm& AlgorithmFor(const OpContext& ctx, const ConvGeometry& g,
                                       ConvDirection direction) {
  if (const auto* state = dynamic_cast<const DeconvolutionState*>(ctx.state)) {
    const cpu::ConvAlgorithm* planned = state->plan().For(direction);
    if (planned != nullptr && state->plan().geometry == g) return *planned;
  }
  return conv::HeuristicCpuAlgorithm(g, direction);
}

// A 3-D window: the adjoint's backward_data over its slabs, then the bias.
void ForwardVolume(const OpContext& ctx, const Attributes& attrs, const ConvWindow& window,
                   const std::vector<TensorView>& inputs, const TensorView& output) {
  const std::string owner = "Deconvolution " + ctx.node_name;
  const VolumeConvGeometry v = AdjointVolume(attrs, window, inputs[0].shape, owner);
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    cpu::ConvTensors<T> tensors;  // the adjoint's data gradient of our data
    tensors.output_grad = inputs[0].data_as<T>();
    tensors.weight = inputs[1].data_as<T>();
    tensors.data_grad = output.data_as<T>();
    RunVolume(AlgorithmFor(ctx, v.plane, ConvDirection::kBackwardData),
              ConvDirection::kBackwardData, v, tensors, *ctx.scratch);
    if (!attrs.GetBool("no_bias")) {
      cpu::AddPerChannel<T>(inputs[2].data_as<T>(), v.batch, v.in_channels, v.in_d * v.in_plane(),
                            false, output.data_as<T>());
    }
  });
}

// A 3-D window: the adjoint's forward (data gradient) and backward_filter over its slabs.
void BackwardVolume(const OpContext& ctx, const Attributes& attrs, const ConvWindow& window,
                    const TensorView& output_grad, const std::vector<TensorView>& inputs,
                    const std::vector<TensorView>& input_grads, const std::vector<WriteMode>& req) {
  const std::string owner = "Deconvolution " + ctx.node_name;
  const VolumeConvGeometry v = AdjointVolume(attrs, window, inputs[0].shape, owner);
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    if (req[0] != WriteMode::kNull) {
      cpu::ConvTensors<T> tensors;
      tensors.data = output_grad.data_as<T>();
      tensors.weight = inputs[1].data_as<T>();
      tensors.output = input_grads[0].data_as<T>();
      RunVolume(AlgorithmFor(ctx, v.plane, ConvDirection::kForward), ConvDirection::kForward, v,
                tensors, *ctx.scratch);
    }
    if (req[1] != WriteMode::kNull) {
      cpu::ConvTensors<T> tensors;
      tensors.data = output_grad.data_as<T>();
      tensors.output_grad = inputs[0].data_as<T>();
      tensors.weight_grad = input_grads[1].data_as<T>();
      RunVolume(AlgorithmFor(ctx, v.plane, ConvDirection::kBackwardFilter),
                ConvDirection::kBackwardFilter, v, tensors, *ctx.scratch);
    }
    if (!attrs.GetBool("no_bias") && req[2] != WriteMode::kNull) {
      cpu::SumPerChannel<T>(output_grad.data_as<T>(), v.batch, v.in_channels, v.in_d * v.in_plane(),
                            false, input_grads[2].data_as<T>());
    }
  });
}

void ForwardCpu(const OpContext& ctx, const Attributes& attrs,
                const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "Deconvolution " + ctx.node_name;
  const ConvWindow window = ReadConvWindow(attrs, owner);
  MX_CHECK(ctx.scratch != nullptr) << owner << ": no scratch space";
  if (window.rank == 3) return ForwardVolume(ctx, attrs, window, inputs, outputs[0]);
  const ConvGeometry g = AdjointGeometry(attrs, window, inputs[0].shape, owner);
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    T* output = outputs[0].data_as<T>();
    cpu::ConvTensors<T> tensors;  // the adjoint's data gradient of our data
    tensors.output_grad = inputs[0].data_as<T>();
    tensors.weight = inputs[1].data_as<T>();
    tensors.data_grad = output;
    AlgorithmFor(ctx, g, ConvDirection::kBackwardData)
        .Run(ConvDirection::kBackwardData, g, tensors, *ctx.scratch);
    if (!attrs.GetBool("no_bias")) {
      cpu::AddPerChannel<T>(inputs[2].data_as<T>(), g.batch, g.in_channels, g.in_spatial(),
                            g.channels_last(), output);
    }
  });
}

void BackwardCpu(const OpContext& ctx, const Attributes& attrs,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>& inputs,
                 const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  const std::string owner = "Deconvolution " + ctx.node_name;
  const ConvWindow window = ReadConvWindow(attrs, owner);
  MX_CHECK(ctx.scratch != nullptr) << owner << ": no scratch space";
  if (window.rank == 3) {
    return BackwardVolume(ctx, attrs, window, output_grads[0], inputs, input_grads, req);
  }
  const ConvGeometry g = AdjointGeometry(attrs, window, inputs[0].shape, owner);
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    const T* output_grad = output_grads[0].data_as<T>();
    if (req[0] != WriteMode::kNull) {  // the adjoint's forward of our output's gradient
      cpu::ConvTensors<T> tensors;
      tensors.data = output_grad;
      tensors.weight = inputs[1].data_as<T>();
      tensors.output = input_grads[0].data_as<T>();
      AlgorithmFor(ctx, g, ConvDirection::kForward)
          .Run(ConvDirection::kForward, g, tensors, *ctx.scratch);
    }
    if (req[1] != WriteMode::kNull) {  // the adjoint's weight gradient
      cpu::ConvTensors<T> tensors;
      tensors.data = output_grad;
      tensors.output_grad = inputs[0].data_as<T>();
      tensors.weight_grad = input_grads[1].data_as<T>();
      AlgorithmFor(ctx, g, ConvDirection::kBackwardFilter)
          .Run(ConvDirection::kBackwardFilter, g, tensors, *ctx.scratch);
    }
    if (!attrs.GetBool("no_bias") && req[2] != WriteMode::kNull) {
      cpu::SumPerChannel<T>(output_grad, g.batch, g.in_channels, g.in_spatial(), g.channels_last(),
                            input_grads[2].data_as<T>());
    }
  });
}

}  // namespace

MXLITE_REGISTER_OP(Deconvolution) {
  OpDef op;
  op.name = "Deconvolution";
  op.name_prefix = FixedNamePrefix("deconv");
  op.doc =
      "1-D, 2-D or 3-D (NCDHW) transposed convolution (MXNet's Deconvolution): the adjoint "
      "of Convolution, with adj / target_shape for the output size; weight (C, F/G, KH, KW).";
  op.attributes.IntTuple("kernel", "window size: (w,), (h,w) or (d,h,w)")
      .IntTuple("stride", "stride of the matching convolution; default 1", Default("()"))
      .IntTuple("dilate", "dilation per axis; default 1", Default("()"))
      .IntTuple("pad", "padding of the matching convolution; default 0", Default("()"))
      .IntTuple("adj", "extra output rows/columns at the end; default 0", Default("()"))
      .IntTuple("target_shape", "output spatial size; overrides pad and adj", Default("()"))
      .Int("num_filter", "output channels", Required(), 1)
      .Int("num_group", "channel groups", Default("1"), 1)
      .Bool("no_bias", "no bias input", Default("true"))
      .Enum("layout", {"NCW", "NCHW", "NCDHW", "NHWC", "NDHWC"},
            "data layout; absent: NCW for 1-D, NCHW for 2-D, NCDHW for 3-D (NDHWC is refused)",
            Optional());
  AddConvTuningAttributes(op.attributes, 512);
  SetWeightedLayerSignature(op);
  op.infer_shape = InferShape;
  op.create_state[DeviceType::kCPU] = CreateState;
  op.forward[DeviceType::kCPU] = ForwardCpu;
  op.backward[DeviceType::kCPU] = BackwardCpu;
  return op;
}

}  // namespace mxlite
