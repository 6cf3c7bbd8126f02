// _concat_batch_norm: Concat followed by BatchNorm at inference, as one op (CPU, float32 and
// float64): each input is normalised with its channels' scale and shift as it is copied into its
// place in the output. DenseNet's dense layers join every earlier feature map and normalise the
// join before their first convolution; apart, the join was written out and read back by the
// normalisation, two passes over a tensor that grows through each block. The concat-norm fusion
// (scheduler/graph/fusion.h, MXNET_FUSE_CONCAT_NORM) makes it from the two nodes after layout
// planning.
//
//   arg0 .. arg<num_args - 1>   the joined inputs, as Concat's (joined along `dim`)
//   gamma, beta, moving_mean, moving_var   (C), as BatchNorm's, C the output's channels
//   output                      Concat's output shape: BatchNorm(Concat(args))
//
// Attributes: Concat's num_args and dim; BatchNorm's eps, fix_gamma, axis and channel_block
// (NCHW16c: `axis` holds the channel blocks, the last axis the 16 channels of a block) and fused
// activation (act_min / act_max). `dim` and `axis` name the same axis: the channels are joined.
// Values: the bits of Concat then BatchNorm with the moving statistics (the same per-channel
// scale and shift, ops/batch_norm.h's ChannelScaleShift, applied the same way, then the clamp).
// No backward: inference only.
#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "ops/activation_layout.h"
#include "ops/batch_norm.h"
#include "ops/concat.h"
#include "ops/cpu/parallel.h"
#include "ops/operator.h"
#include "ops/output_clamp.h"

namespace mxlite {
namespace {

std::string Owner(const ShapeInference& shapes) { return shapes.op + " " + shapes.node; }

int NumArgs(const Attributes& attrs) { return static_cast<int>(attrs.GetInt("num_args")); }

std::vector<std::string> FusedInputNames(const Attributes& attrs) {
  std::vector<std::string> names = ConcatArgNames(attrs);
  for (const char* name : {"gamma", "beta", "moving_mean", "moving_var"}) names.push_back(name);
  return names;
}

void ConcatBatchNormInferShape(const Attributes& attrs, ShapeInference& shapes) {
  const std::string owner = Owner(shapes);
  MX_CHECK(attrs.GetFloat("eps") >= 0)
      << owner << ": eps=" << attrs.GetFloat("eps") << " must be >= 0";
  ReadOutputClamp(attrs, owner);
  ConcatInferShape(attrs, shapes);
  const Shape& output = *shapes.outputs[0];
  const BatchNormChannels l = BatchNormChannelsOf(attrs, output, owner);
  const int axis = ConcatAxisOf(attrs, output.ndim());
  const int64_t given_axis = attrs.GetInt("axis");
  MX_CHECK(axis == (given_axis < 0 ? given_axis + output.ndim() : given_axis))
      << owner << ": dim=" << attrs.GetInt("dim") << " joins another axis than the normalised "
      << "one (axis=" << given_axis << ") of output " << output
      << "; the fused op joins along the channels";
  const Shape channels{l.channels};
  for (int i = 0; i < 4; ++i) shapes.AssignInput(NumArgs(attrs) + i, channels);
}

// One joined input: its data, its extent along the joined axis (channel blocks, or channels
// where the lanes are 1) and the extent of the inputs before it.
struct Part {
  const void* data;
  int64_t blocks;
  int64_t first_block;
};

// One run of `count` elements whose channels repeat every `lanes` (kLanes when fixed at compile
// time, so the lane loop vectorises as BatchNorm's blocked kernel does): element i has the scale
// and shift of lane i % lanes.
template <typename T, int kLanes>
void NormalizeRun(const T* in, T* out, int64_t count, int64_t runtime_lanes, const T* scale,
                  const T* shift, T low, T high) {
  const int64_t lanes = kLanes > 0 ? kLanes : runtime_lanes;
  for (int64_t p = 0; p < count; p += lanes) {
    for (int64_t k = 0; k < lanes; ++k) {
      out[p + k] = std::min(std::max(in[p + k] * scale[k] + shift[k], low), high);
    }
  }
}

// y = clamp(x * scale[c] + shift[c]) over the input `part` into its place in `y`. The data is seen
// as BatchNorm sees it, (outer, blocks, inner, lanes) with channel = block * lanes + lane; the
// output has `total_blocks` blocks per outer index. Where the channels are the last axis (inner 1,
// lanes 1) each outer index's channels run as one block of `blocks` lanes instead, so the inner
// loop stays long and contiguous.
template <typename T>
void Normalize(const BatchNormChannels& l, int64_t total_blocks, const Part& part, const T* scale,
               const T* shift, T low, T high, T* y) {
  const bool channels_last = l.inner == 1 && l.lanes == 1;
  const int64_t blocks = channels_last ? 1 : part.blocks;
  const int64_t lanes = channels_last ? part.blocks : l.lanes;
  const int64_t first_channel = part.first_block * l.lanes;
  const int64_t y_row = channels_last ? total_blocks : total_blocks * l.inner * lanes;
  const int64_t y_offset = channels_last ? part.first_block : part.first_block * l.inner * lanes;
  const int64_t run = l.inner * lanes, runs = l.outer * blocks;
  const T* x = static_cast<const T*>(part.data);
  constexpr int64_t kElementsPerTask = int64_t{1} << 15;  // fewer are not worth a thread's wake
  const int64_t runs_per_task = std::max<int64_t>(1, kElementsPerTask / run);
  cpu::ParallelFor((runs + runs_per_task - 1) / runs_per_task, [&](int64_t task) {
    const int64_t end = std::min(runs, (task + 1) * runs_per_task);
    for (int64_t r = task * runs_per_task; r < end; ++r) {
      const int64_t o = r / blocks, b = r % blocks;
      const T* in = x + r * run;
      T* out = y + o * y_row + y_offset + b * run;
      const int64_t channel = first_channel + b * lanes;
      if (lanes == 1) {
        const T a = scale[channel], s = shift[channel];
        for (int64_t i = 0; i < run; ++i) out[i] = std::min(std::max(in[i] * a + s, low), high);
      } else if (lanes == kChannelBlock) {
        NormalizeRun<T, kChannelBlock>(in, out, run, lanes, scale + channel, shift + channel, low,
                                       high);
      } else {
        NormalizeRun<T, 0>(in, out, run, lanes, scale + channel, shift + channel, low, high);
      }
    }
  });
}

template <typename T>
void Forward(const OpContext& ctx, const Attributes& attrs, const std::vector<TensorView>& inputs,
             const std::vector<TensorView>& outputs) {
  const std::string owner = "_concat_batch_norm " + ctx.node_name;
  const int args = NumArgs(attrs);
  const Shape& output = outputs[0].shape;
  const BatchNormChannels l = BatchNormChannelsOf(attrs, output, owner);
  const int axis = ConcatAxisOf(attrs, output.ndim());
  const double eps = attrs.GetFloat("eps");
  const bool fix_gamma = attrs.GetBool("fix_gamma");
  const OutputClamp clamp = ReadOutputClamp(attrs, owner);

  const T* gamma = inputs[args].data_as<T>();
  const T* beta = inputs[args + 1].data_as<T>();
  const T* mean = inputs[args + 2].data_as<T>();
  const T* var = inputs[args + 3].data_as<T>();
  T* scale = ctx.scratch->GetArray<T>(2 * l.channels);
  T* shift = scale + l.channels;
  for (int64_t c = 0; c < l.channels; ++c) {
    std::tie(scale[c], shift[c]) = ChannelScaleShift<T>(
        fix_gamma ? 1.0 : static_cast<double>(gamma[c]), static_cast<double>(beta[c]),
        static_cast<double>(mean[c]), InvStd(static_cast<double>(var[c]), eps));
  }
  const int64_t total_blocks = output[axis];
  int64_t first_block = 0;
  for (int i = 0; i < args; ++i) {
    const Part part{inputs[i].data, inputs[i].shape[axis], first_block};
    Normalize<T>(l, total_blocks, part, scale, shift, static_cast<T>(clamp.low),
                 static_cast<T>(clamp.high), outputs[0].data_as<T>());
    first_block += part.blocks;
  }
}

void ConcatBatchNormForwardCpu(const OpContext& ctx, const Attributes& attrs,
                               const std::vector<TensorView>& inputs,
                               const std::vector<TensorView>& outputs,
                               const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  switch (outputs[0].dtype) {
    case DType::kFloat32:
      Forward<float>(ctx, attrs, inputs, outputs);
      return;
    case DType::kFloat64:
      Forward<double>(ctx, attrs, inputs, outputs);
      return;
    default:
      MX_CHECK(false) << "_concat_batch_norm " << ctx.node_name << ": "
                      << DTypeName(outputs[0].dtype)
                      << " data is not supported (float32 or float64)";
  }
}

}  // namespace

MXLITE_REGISTER_OP(_concat_batch_norm) {
  OpDef op;
  op.name = "_concat_batch_norm";
  op.doc = "Concat then BatchNorm with the moving statistics, in one pass (inference, CPU).";
  op.attributes.Int("num_args", "number of joined inputs", Required(), 1)
      .Int("dim", "the axis to join along; negative counts from the end", Default("1"))
      .Float("eps", "added to the variance before the square root", Default("0.001"))
      .Bool("fix_gamma", "treat gamma as 1", Default("true"))
      .Int("axis", "the channel axis, the joined one; negative counts from the end", Default("1"))
      .Int("channel_block", "1, or channels in blocks of this many (NCHW16c: 16), as BatchNorm's",
           Default("1"), 1);
  AddFusedActivationAttributes(op.attributes);
  op.input_names = FusedInputNames;
  op.input_roles = [](const Attributes& attrs) {
    std::vector<InputRole> roles(NumArgs(attrs), InputRole::kData);
    roles.insert(roles.end(), {InputRole::kParameter, InputRole::kParameter, InputRole::kAuxiliary,
                               InputRole::kAuxiliary});
    return roles;
  };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = ConcatBatchNormInferShape;
  op.cpu_only = true;  // made by the concat-norm fusion on CPU executors only
  op.forward[DeviceType::kCPU] = ConcatBatchNormForwardCpu;
  return op;
}

}  // namespace mxlite
