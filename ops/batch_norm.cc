// BatchNorm: y = gamma * (x - mean) / sqrt(var + eps) + beta per channel (the `axis` dim), with
// MXNet's attributes and semantics. mxlite's channel_block (the convolution planner sets it for
// NCHW16c, ops/activation_layout.h) reads channels split over `axis` and the last axis; such data
// is normalised with the moving statistics, forward only, on the CPU.
//
// Statistics: in training (is_train and not use_global_stats) the batch mean and the biased batch
// variance (divided by the element count m, not m - 1) over every dim but `axis`; otherwise the
// moving statistics. Training also updates the auxiliary states, as MXNet's CPU kernel does with
// the biased variance:
//   moving_mean = moving_mean * momentum + batch_mean * (1 - momentum)
//   moving_var  = moving_var  * momentum + batch_var  * (1 - momentum)
// The statistics used are saved as the hidden outputs "mean" and "var" (visible with
// output_mean_var), and backward reads them instead of the moving states.
//
// dtypes (MXNet's rule): gamma, beta, the moving states and the saved statistics have the data's
// dtype, except for float16 data, whose statistics are kept in float32.
//
// fix_gamma (MXNet's default true): gamma is read as 1 and its gradient is 0.
// Backward, batch statistics (the mean and variance depend on x):
//   dx = gamma * invstd * (dy - mean(dy) - xhat * mean(dy * xhat)),  xhat = (x - mean) * invstd
// global statistics (constants): dx = gamma * invstd * dy. In both, dgamma = sum(dy * xhat) and
// dbeta = sum(dy).
#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

#include "ops/batch_norm.h"

#include "ops/cpu/elementwise.h"
#include "ops/cpu/parallel.h"
#include "ops/operator.h"
#include "ops/output_clamp.h"

namespace mxlite {

BatchNormChannels BatchNormChannelsOf(const Attributes& attrs, const Shape& data,
                                      const std::string& owner) {
  const int64_t given = attrs.GetInt("axis");
  const int ndim = data.ndim();
  MX_CHECK(ndim >= 1 && given >= -ndim && given < ndim)
      << owner << ": axis " << given << " is out of range for data of shape " << data;
  const int axis = static_cast<int>(given < 0 ? given + ndim : given);
  const int64_t lanes = attrs.GetInt("channel_block");
  if (lanes == 1) return {data.size(0, axis), data[axis], data.size(axis + 1, data.ndim()), 1};
  const int last = data.ndim() - 1;
  MX_CHECK(axis < last && data[last] == lanes)
      << owner << ": channel_block=" << lanes << " splits the channels over axis " << axis
      << " and a last axis of " << lanes << ", which data of shape " << data << " does not have";
  return {data.size(0, axis), data[axis] * lanes, data.size(axis + 1, last), lanes};
}

BatchNormParams BatchNormParamsOf(const Attributes& attrs, const std::string& owner) {
  BatchNormParams p;
  p.eps = attrs.GetFloat("eps");
  p.momentum = attrs.GetFloat("momentum");
  p.fix_gamma = attrs.GetBool("fix_gamma");
  p.use_global_stats = attrs.GetBool("use_global_stats");
  MX_CHECK(p.eps >= 0) << owner << ": eps=" << p.eps << " must be >= 0";
  MX_CHECK(p.momentum >= 0 && p.momentum <= 1)
      << owner << ": momentum=" << p.momentum << " must be in [0, 1]";
  return p;
}

namespace {

enum Input { kData, kGamma, kBeta, kMovingMean, kMovingVar };
enum Output { kOut, kMean, kVar };

using ChannelLayout = BatchNormChannels;

ChannelLayout LayoutOf(const Attributes& attrs, const Shape& data, const std::string& owner) {
  return BatchNormChannelsOf(attrs, data, owner);
}

void BatchNormInferShape(const Attributes& attrs, ShapeInference& shapes) {
  const std::string owner = shapes.op + " " + shapes.node;
  BatchNormParamsOf(attrs, owner);  // checks eps and momentum
  ReadOutputClamp(attrs, owner);    // validates act_min / act_max at bind
  const Shape& data = shapes.Input(kData);
  const Shape channels{LayoutOf(attrs, data, owner).channels};
  for (int input : {kGamma, kBeta, kMovingMean, kMovingVar}) shapes.AssignInput(input, channels);
  shapes.AssignOutput(kOut, data);
  shapes.AssignOutput(kMean, channels);
  shapes.AssignOutput(kVar, channels);
}

// Work split over (row block, channel block) tiles: inner loops stay contiguous whether the
// channel axis is outermost-but-one (NCHW: long inner runs, one channel per tile) or last (NHWC:
// inner = 1, many channels per tile). The split depends on the shape only, so reductions add
// their partial sums in the same order on any thread count.
struct Tiling {
  int64_t rows_per_tile, channels_per_tile, row_tiles, channel_tiles;
  int64_t tiles() const { return row_tiles * channel_tiles; }
};

Tiling TilingOf(const ChannelLayout& l) {
  Tiling t;
  t.channels_per_tile = std::clamp<int64_t>(1024 / std::max<int64_t>(l.inner, 1), 1, l.channels);
  const int64_t tile_row_work = std::max<int64_t>(1, t.channels_per_tile * l.inner);
  t.rows_per_tile = std::clamp<int64_t>(cpu::kElementwiseGrain / tile_row_work, 1, l.outer);
  t.row_tiles = (l.outer + t.rows_per_tile - 1) / t.rows_per_tile;
  t.channel_tiles = (l.channels + t.channels_per_tile - 1) / t.channels_per_tile;
  return t;
}

// Calls fn(row_tile, c, offset, count) for every run of `count` contiguous elements of channel c,
// starting at flat `offset`, tile by tile on the intra-op pool.
template <typename Fn>
void ForEachChannelRun(const ChannelLayout& l, const Tiling& t, Fn&& fn) {
  if (l.outer * l.channels * l.inner == 0) return;
  auto run_tile = [&](int64_t tile) {
    const int64_t row_tile = tile / t.channel_tiles;
    const int64_t c0 = (tile % t.channel_tiles) * t.channels_per_tile;
    const int64_t c1 = std::min(l.channels, c0 + t.channels_per_tile);
    const int64_t r1 = std::min(l.outer, (row_tile + 1) * t.rows_per_tile);
    for (int64_t row = row_tile * t.rows_per_tile; row < r1; ++row) {
      for (int64_t c = c0; c < c1; ++c) fn(row_tile, c, (row * l.channels + c) * l.inner, l.inner);
    }
  };
  if (t.tiles() == 1) {
    run_tile(0);
  } else {
    cpu::ParallelFor(t.tiles(), run_tile);
  }
}

// sums[k * channels + c] = sum over channel c's runs of term(c, offset, count)[k], k < K.
// Partial sums per row tile live in scratch and are added in tile order (deterministic).
template <int K, typename Term>
void SumPerChannel(const ChannelLayout& l, ScratchSpace& scratch, double* sums, Term&& term) {
  const Tiling t = TilingOf(l);
  const int64_t stride = l.channels * K;
  double* partial = scratch.GetArray<double>(t.row_tiles * stride);
  std::fill(partial, partial + t.row_tiles * stride, 0.0);
  ForEachChannelRun(l, t, [&](int64_t row_tile, int64_t c, int64_t offset, int64_t count) {
    double values[K];
    term(c, offset, count, values);
    for (int k = 0; k < K; ++k) partial[row_tile * stride + k * l.channels + c] += values[k];
  });
  std::fill(sums, sums + stride, 0.0);
  for (int64_t r = 0; r < t.row_tiles; ++r) {
    for (int64_t i = 0; i < stride; ++i) sums[i] += partial[r * stride + i];
  }
}

// Per-channel statistics in double: the mean and variance used, and 1 / sqrt(var + eps).
struct ChannelStats {
  double* mean;
  double* var;
  double* invstd;
};

ChannelStats AllocateStats(ScratchSpace& scratch, int64_t channels) {
  double* block = scratch.GetArray<double>(3 * channels);
  return {block, block + channels, block + 2 * channels};
}

template <typename T>
void BatchStatistics(const ChannelLayout& l, const T* x, ScratchSpace& scratch, ChannelStats s) {
  const double m = static_cast<double>(l.per_channel());
  SumPerChannel<1>(l, scratch, s.mean, [&](int64_t, int64_t offset, int64_t count, double* out) {
    out[0] = cpu::EigenArray<const T>(x + offset, count).template cast<double>().sum();
  });
  for (int64_t c = 0; c < l.channels; ++c) s.mean[c] /= m;
  // Two passes (sum of squared deviations) rather than E[x^2] - E[x]^2, which cancels badly.
  SumPerChannel<1>(l, scratch, s.var, [&](int64_t c, int64_t offset, int64_t count, double* out) {
    out[0] = (cpu::EigenArray<const T>(x + offset, count).template cast<double>() - s.mean[c])
                 .square()
                 .sum();
  });
  for (int64_t c = 0; c < l.channels; ++c) s.var[c] /= m;
}

// The fused activation (act_min / act_max, ops/output_clamp.h) on one output value: bounds in the
// data type, a NaN kept (std::max / std::min return their first argument when a comparison
// fails), as a separate relu or clip after the normalisation gives it.
template <typename T>
struct Clamp {
  T low, high;
  T operator()(T value) const { return std::min(std::max(value, low), high); }
};

template <typename T>
Clamp<T> ClampOf(const OutputClamp& clamp) {
  return {static_cast<T>(clamp.low), static_cast<T>(clamp.high)};
}

// y = x * scale[c] + shift[c] over blocked data: per (outer, block) a contiguous run of
// inner x lanes elements whose lane is the channel within the block. Each pixel's lanes are one
// short contiguous vector, so the kernel walks pixels with the block's scale and shift at hand
// (kLanes > 0 fixes the lane count at compile time so the lane loop vectorises; 0 reads it from
// the layout). No per-element index arithmetic: that cost 20x over NCHW.
template <typename T, int kLanes>
void ApplyBlockedRange(const ChannelLayout& l, const T* x, const T* scale, const T* shift,
                       const Clamp<T>& clamp, T* y, int64_t begin, int64_t end) {
  const int64_t lanes = kLanes > 0 ? kLanes : l.lanes;
  const int64_t blocks = l.channels / lanes, run = l.inner * lanes;
  int64_t i = begin;
  while (i < end) {
    const int64_t run_end = std::min(end, (i / run + 1) * run);
    const T* s = scale + (i / run) % blocks * lanes;
    const T* b = shift + (i / run) % blocks * lanes;
    for (; i < run_end && i % lanes != 0; ++i) y[i] = clamp(x[i] * s[i % lanes] + b[i % lanes]);
    for (; i + lanes <= run_end; i += lanes) {
      for (int64_t k = 0; k < lanes; ++k) y[i + k] = clamp(x[i + k] * s[k] + b[k]);
    }
    for (; i < run_end; ++i) y[i] = clamp(x[i] * s[i % lanes] + b[i % lanes]);
  }
}

template <typename T>
void ApplyBlocked(const ChannelLayout& l, const T* x, const T* scale, const T* shift,
                  const Clamp<T>& clamp, T* y) {
  cpu::ForEachChunk(l.outer * l.channels * l.inner, [&](int64_t begin, int64_t end) {
    if (l.lanes == kChannelBlock) {
      ApplyBlockedRange<T, kChannelBlock>(l, x, scale, shift, clamp, y, begin, end);
    } else {
      ApplyBlockedRange<T, 0>(l, x, scale, shift, clamp, y, begin, end);
    }
  });
}

template <typename T>
void BatchNormForward(const OpContext& ctx, const Attributes& attrs,
                      const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                      const std::vector<WriteMode>& req) {
  const std::string owner = "BatchNorm " + ctx.node_name;
  const ChannelLayout l = LayoutOf(attrs, inputs[kData].shape, owner);
  const BatchNormParams p = BatchNormParamsOf(attrs, owner);
  const double eps = p.eps, momentum = p.momentum;
  const bool fix_gamma = p.fix_gamma;
  const bool batch_stats = p.UsesBatchStats(ctx.is_train);
  const OutputClamp output_clamp = ReadOutputClamp(attrs, owner);
  const Clamp<T> clamp = ClampOf<T>(output_clamp);
  const T* x = inputs[kData].data_as<T>();
  const T* gamma = inputs[kGamma].data_as<T>();
  const T* beta = inputs[kBeta].data_as<T>();
  T* moving_mean = inputs[kMovingMean].data_as<T>();
  T* moving_var = inputs[kMovingVar].data_as<T>();

  MX_CHECK(!(batch_stats && l.blocked()))
      << owner << ": channel_block=" << l.lanes << " (data in blocks of channels) normalises with "
      << "the moving statistics only (inference, or use_global_stats); batch statistics need "
      << "unblocked data";
  ChannelStats s = AllocateStats(*ctx.scratch, l.channels);
  if (batch_stats) {
    BatchStatistics(l, x, *ctx.scratch, s);
  } else {
    std::copy(moving_mean, moving_mean + l.channels, s.mean);
    std::copy(moving_var, moving_var + l.channels, s.var);
  }
  for (int64_t c = 0; c < l.channels; ++c) s.invstd[c] = InvStd(s.var[c], eps);
  const auto scale_shift_of = [&](int64_t c) {
    return ChannelScaleShift<T>(fix_gamma ? 1.0 : static_cast<double>(gamma[c]),
                                static_cast<double>(beta[c]), s.mean[c], s.invstd[c]);
  };

  if (req[kOut] != WriteMode::kNull && l.blocked()) {
    T* scale_shift = ctx.scratch->GetArray<T>(2 * l.channels);
    for (int64_t c = 0; c < l.channels; ++c) {
      std::tie(scale_shift[c], scale_shift[l.channels + c]) = scale_shift_of(c);
    }
    ApplyBlocked(l, x, scale_shift, scale_shift + l.channels, clamp, outputs[kOut].data_as<T>());
  } else if (req[kOut] != WriteMode::kNull) {
    T* y = outputs[kOut].data_as<T>();
    const bool clamps = output_clamp.active();
    ForEachChannelRun(l, TilingOf(l), [&](int64_t, int64_t c, int64_t offset, int64_t count) {
      const auto [a, b] = scale_shift_of(c);
      if (clamps) {  // one pass: the clamp as each value is stored
        for (int64_t i = offset; i < offset + count; ++i) y[i] = clamp(x[i] * a + b);
      } else {
        cpu::EigenArray<T>(y + offset, count) = cpu::EigenArray<const T>(x + offset, count) * a + b;
      }
    });
  }
  for (int64_t c = 0; c < l.channels; ++c) {
    if (req[kMean] != WriteMode::kNull) outputs[kMean].data_as<T>()[c] = static_cast<T>(s.mean[c]);
    if (req[kVar] != WriteMode::kNull) outputs[kVar].data_as<T>()[c] = static_cast<T>(s.var[c]);
  }
  if (batch_stats) {
    for (int64_t c = 0; c < l.channels; ++c) {
      moving_mean[c] = static_cast<T>(moving_mean[c] * momentum + s.mean[c] * (1 - momentum));
      moving_var[c] = static_cast<T>(moving_var[c] * momentum + s.var[c] * (1 - momentum));
    }
  }
}

template <typename T>
void BatchNormBackward(const OpContext& ctx, const Attributes& attrs, const T* dy,
                       const std::vector<TensorView>& inputs,
                       const std::vector<TensorView>& outputs,
                       const std::vector<TensorView>& input_grads,
                       const std::vector<WriteMode>& req) {
  const std::string owner = "BatchNorm " + ctx.node_name;
  const ChannelLayout l = LayoutOf(attrs, inputs[kData].shape, owner);
  MX_CHECK(!l.blocked()) << owner << ": channel_block=" << l.lanes
                         << " (data in blocks of channels) runs forward only (inference)";
  CheckNoFusedActivation(attrs, owner);
  const BatchNormParams p = BatchNormParamsOf(attrs, owner);
  const double eps = p.eps;
  const bool fix_gamma = p.fix_gamma;
  const bool batch_stats = p.UsesBatchStats(ctx.is_train);
  const T* x = inputs[kData].data_as<T>();
  const T* gamma = inputs[kGamma].data_as<T>();
  const T* saved_mean = outputs[kMean].data_as<T>();
  const T* saved_var = outputs[kVar].data_as<T>();

  ChannelStats s = AllocateStats(*ctx.scratch, l.channels);
  for (int64_t c = 0; c < l.channels; ++c) {
    s.mean[c] = saved_mean[c];
    s.invstd[c] = 1.0 / std::sqrt(static_cast<double>(saved_var[c]) + eps);
  }
  // sums[c] = sum(dy), sums[channels + c] = sum(dy * (x - mean)).
  double* sums = ctx.scratch->GetArray<double>(2 * l.channels);
  SumPerChannel<2>(
      l, *ctx.scratch, sums, [&](int64_t c, int64_t offset, int64_t count, double* out) {
        auto grad = cpu::EigenArray<const T>(dy + offset, count).template cast<double>();
        auto centred =
            cpu::EigenArray<const T>(x + offset, count).template cast<double>() - s.mean[c];
        out[0] = grad.sum();
        out[1] = (grad * centred).sum();
      });
  const double* sum_dy = sums;
  const double* sum_dy_centred = sums + l.channels;

  if (req[kGamma] != WriteMode::kNull) {
    T* dgamma = input_grads[kGamma].data_as<T>();
    for (int64_t c = 0; c < l.channels; ++c) {
      dgamma[c] = fix_gamma ? T(0) : static_cast<T>(sum_dy_centred[c] * s.invstd[c]);
    }
  }
  if (req[kBeta] != WriteMode::kNull) {
    T* dbeta = input_grads[kBeta].data_as<T>();
    for (int64_t c = 0; c < l.channels; ++c) dbeta[c] = static_cast<T>(sum_dy[c]);
  }
  if (req[kData] == WriteMode::kNull) return;
  T* dx = input_grads[kData].data_as<T>();
  const double m = static_cast<double>(l.per_channel());
  // dx = a * dy + b * x + d per channel, folding the formulas of the file comment.
  ForEachChannelRun(l, TilingOf(l), [&](int64_t, int64_t c, int64_t offset, int64_t count) {
    const double g = fix_gamma ? 1.0 : static_cast<double>(gamma[c]);
    const double a = g * s.invstd[c];
    double b = 0, d = 0;
    if (batch_stats) {
      b = -a * s.invstd[c] * s.invstd[c] * sum_dy_centred[c] / m;
      d = -a * sum_dy[c] / m - b * s.mean[c];
    }
    cpu::EigenArray<T>(dx + offset, count) =
        cpu::EigenArray<const T>(dy + offset, count) * static_cast<T>(a) +
        cpu::EigenArray<const T>(x + offset, count) * static_cast<T>(b) + static_cast<T>(d);
  });
}

void BatchNormForwardCpu(const OpContext& ctx, const Attributes& attrs,
                         const std::vector<TensorView>& inputs,
                         const std::vector<TensorView>& outputs,
                         const std::vector<WriteMode>& req) {
  MXLITE_FLOAT_TYPE_SWITCH(inputs[kData].dtype, T, "BatchNorm",
                           { BatchNormForward<T>(ctx, attrs, inputs, outputs, req); });
}

void BatchNormBackwardCpu(const OpContext& ctx, const Attributes& attrs,
                          const std::vector<TensorView>& output_grads,
                          const std::vector<TensorView>& inputs,
                          const std::vector<TensorView>& outputs,
                          const std::vector<TensorView>& input_grads,
                          const std::vector<WriteMode>& req) {
  if (req[kData] == WriteMode::kNull && req[kGamma] == WriteMode::kNull &&
      req[kBeta] == WriteMode::kNull) {
    return;
  }
  MXLITE_FLOAT_TYPE_SWITCH(inputs[kData].dtype, T, "BatchNorm", {
    BatchNormBackward<T>(ctx, attrs, output_grads[kOut].data_as<T>(), inputs, outputs, input_grads,
                         req);
  });
}

}  // namespace

DType ParamDTypeFor(DType data) { return data == DType::kFloat16 ? DType::kFloat32 : data; }

void BatchNormInferDType(const Attributes&, DTypeInference& dtypes) {
  std::optional<DType> data = dtypes.inputs[kData];
  if (!data) {  // from a declared parameter: float32 parameters mean float32 data
    for (size_t i = 1; i < dtypes.inputs.size() && !data; ++i) data = dtypes.inputs[i];
  }
  MX_CHECK(data.has_value()) << "BatchNorm " << dtypes.node << ": no input has a known dtype";
  const DType param = ParamDTypeFor(*data);
  static const char* const kNames[] = {"data", "gamma", "beta", "moving_mean", "moving_var"};
  for (size_t i = 1; i < dtypes.inputs.size(); ++i) {
    MX_CHECK(!dtypes.inputs[i] || *dtypes.inputs[i] == param)
        << "BatchNorm " << dtypes.node << ": " << kNames[i] << " has dtype " << *dtypes.inputs[i]
        << " but data of dtype " << *data << " needs " << param;
    dtypes.inputs[i] = param;
  }
  dtypes.inputs[kData] = data;
  dtypes.outputs[kOut] = data;
  dtypes.outputs[kMean] = param;
  dtypes.outputs[kVar] = param;
}

MXLITE_REGISTER_OP(BatchNorm) {
  OpDef op;
  op.name = "BatchNorm";
  op.doc = "Batch normalisation over every dim but `axis`, with moving statistics (MXNet's).";
  op.attributes.Float("eps", "added to the variance before the square root", Default("0.001"))
      .Float("momentum", "weight of the old moving statistics in their update", Default("0.9"))
      .Bool("fix_gamma", "treat gamma as 1 (its gradient is 0)", Default("true"))
      .Bool("use_global_stats", "normalise with the moving statistics in training too",
            Default("false"))
      .Bool("output_mean_var", "also output the mean and variance used", Default("false"))
      .Int("axis", "the channel axis; negative counts from the end", Default("1"))
      .Int("channel_block",
           "1, or channels in blocks of this many (NCHW16c: 16): `axis` then holds channel / "
           "channel_block and the last axis channel % channel_block. Blocked data is normalised "
           "with the moving statistics only (inference), forward only (CPU)",
           Default("1"), 1)
      .Bool("cudnn_off", "do not use cuDNN (no effect on the CPU)", Default("false"));
  AddFusedActivationAttributes(op.attributes);
  op.input_names = [](const Attributes&) {
    return std::vector<std::string>{"data", "gamma", "beta", "moving_mean", "moving_var"};
  };
  op.input_roles = [](const Attributes&) {
    return std::vector<InputRole>{InputRole::kData, InputRole::kParameter, InputRole::kParameter,
                                  InputRole::kAuxiliary, InputRole::kAuxiliary};
  };
  op.output_names = [](const Attributes&) {
    return std::vector<std::string>{"output", "mean", "var"};
  };
  op.num_visible_outputs = [](const Attributes& attrs) {
    return attrs.GetBool("output_mean_var") ? 3 : 1;
  };
  op.infer_shape = BatchNormInferShape;
  op.infer_dtype = BatchNormInferDType;
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{true, true, false, false, false}, {false, true, true}};
  };
  // Per channel: any layout, the channel axis moving with it (blocked: channel_block splits it).
  op.layout.role = LayoutRole::kAgnostic;
  op.layout.runs_channel_blocked = [](const Attributes& attrs, const std::vector<Shape>&) {
    const int64_t axis = attrs.GetInt("axis");
    return axis == 1 || axis == -3;
  };
  op.layout.retarget = [](const Attributes& attrs, ActivationLayout layout,
                          std::map<std::string, std::string>& text) {
    text["axis"] = AxisTextIn(layout, attrs.GetInt("axis"));
    if (layout == ActivationLayout::kNCHW16c) text["channel_block"] = std::to_string(kChannelBlock);
  };
  // A relu or clip after it joins its store at inference (DenseNet's and pre-activation
  // ResNets' BatchNorm + ReLU before each convolution: one pass over the tensor instead of two).
  op.fusion.takes_clamp = [](const Attributes&) { return true; };
  // The join before it comes along at inference (DenseNet's normalisation of each join: one pass
  // over the joined tensor instead of two).
  op.fusion.with_join = "_concat_batch_norm";
  op.forward[DeviceType::kCPU] = BatchNormForwardCpu;
  op.backward[DeviceType::kCPU] = BatchNormBackwardCpu;
  return op;
}

}  // namespace mxlite
