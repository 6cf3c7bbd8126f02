// LayerNorm (ops/layer_norm.h): the OpDef and the CPU kernels. Forward makes one pass over each
// group for the mean, one for the variance about it (as the exported formula and PyTorch's
// float kernel compute it: no cancellation) and one to write y, groups split over the intra-op
// threads; a group along the last axis is one contiguous row, vectorised by Eigen, and a group
// across an inner axis runs as rows of the inner extent, one per channel.
#include "ops/layer_norm.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "ops/cpu/elementwise.h"
#include "ops/normalization_signature.h"
#include "ops/operator.h"

namespace mxlite {

LayerNormGroups LayerNormGroupsOf(const Attributes& attrs, const Shape& data,
                                  const std::string& owner) {
  const int64_t rank = data.ndim();
  int64_t axis = attrs.GetInt("axis");
  MX_CHECK(axis >= -rank && axis < rank)
      << owner << ": axis " << axis << " is out of range for data of shape " << data << " (rank "
      << rank << ")";
  if (axis < 0) axis += rank;
  LayerNormGroups g;
  g.axis = static_cast<int>(axis);
  g.outer = data.size(0, g.axis);
  g.channels = data[g.axis];
  g.inner = data.size(g.axis + 1, static_cast<int>(rank));
  return g;
}

namespace {

using cpu::EigenArray;

enum Input { kData, kGamma, kBeta };
enum Output { kOut, kMean, kStd };

void LayerNormInferShape(const Attributes& attrs, ShapeInference& shapes) {
  const Shape& data = shapes.Input(kData);
  const LayerNormGroups g = LayerNormGroupsOf(attrs, data, shapes.op + " " + shapes.node);
  shapes.AssignInput(kGamma, Shape{g.channels});
  shapes.AssignInput(kBeta, Shape{g.channels});
  Shape stats = data;
  stats[g.axis] = 1;
  shapes.AssignOutput(kOut, data);
  shapes.AssignOutput(kMean, stats);
  shapes.AssignOutput(kStd, stats);
}

// Groups along the last axis: rows [first, last) of `channels` contiguous elements.
template <typename T>
void ForwardRows(const LayerNormGroups& g, T eps, const T* x, const T* gamma, const T* beta, T* y,
                 T* mean, T* stdev, int64_t first, int64_t last) {
  const auto scale = EigenArray<const T>(gamma, g.channels);
  const auto shift = EigenArray<const T>(beta, g.channels);
  for (int64_t row = first; row < last; ++row) {
    const auto in = EigenArray<const T>(x + row * g.channels, g.channels);
    const T m = in.sum() / static_cast<T>(g.channels);
    const T var = (in - m).square().sum() / static_cast<T>(g.channels);
    const T s = std::sqrt(var + eps);
    EigenArray<T>(y + row * g.channels, g.channels) = (in - m) * (T(1) / s) * scale + shift;
    mean[row] = m;
    stdev[row] = s;
  }
}

// Groups across an inner axis: for each outer index in [first, last), the channels are rows of
// `inner` contiguous elements, and each statistic is a row of `inner` values.
template <typename T>
void ForwardStrided(const LayerNormGroups& g, T eps, const T* x, const T* gamma, const T* beta,
                    T* y, T* mean, T* stdev, int64_t first, int64_t last) {
  const int64_t n = g.inner;
  const T count = static_cast<T>(g.channels);
  for (int64_t o = first; o < last; ++o) {
    const T* xo = x + o * g.channels * n;
    T* yo = y + o * g.channels * n;
    auto m = EigenArray<T>(mean + o * n, n);
    auto s = EigenArray<T>(stdev + o * n, n);
    m.setZero();
    for (int64_t c = 0; c < g.channels; ++c) m += EigenArray<const T>(xo + c * n, n);
    m /= count;
    s.setZero();
    for (int64_t c = 0; c < g.channels; ++c) s += (EigenArray<const T>(xo + c * n, n) - m).square();
    // The correctly rounded root (Eigen's packet sqrt is an estimate under EIGEN_FAST_MATH).
    s = (s / count + eps).unaryExpr([](T v) { return std::sqrt(v); });
    for (int64_t c = 0; c < g.channels; ++c) {
      EigenArray<T>(yo + c * n, n) =
          (EigenArray<const T>(xo + c * n, n) - m) / s * gamma[c] + beta[c];
    }
  }
}

template <typename T>
void LayerNormForward(const Attributes& attrs, const LayerNormGroups& g,
                      const std::vector<TensorView>& inputs,
                      const std::vector<TensorView>& outputs) {
  const T eps = static_cast<T>(attrs.GetFloat("eps"));
  const T* x = inputs[kData].data_as<T>();
  const T* gamma = inputs[kGamma].data_as<T>();
  const T* beta = inputs[kBeta].data_as<T>();
  T* y = outputs[kOut].data_as<T>();
  T* mean = outputs[kMean].data_as<T>();
  T* stdev = outputs[kStd].data_as<T>();
  if (g.inner == 1) {
    cpu::ForEachRowRange(g.outer, g.channels, [&](int64_t first, int64_t last) {
      ForwardRows(g, eps, x, gamma, beta, y, mean, stdev, first, last);
    });
  } else {
    cpu::ForEachRowRange(g.outer, g.channels * g.inner, [&](int64_t first, int64_t last) {
      ForwardStrided(g, eps, x, gamma, beta, y, mean, stdev, first, last);
    });
  }
}

// With xhat = (x - mean) / std and g = dy * gamma over one group of N elements:
//   dx = (g - mean(g) - xhat * mean(g * xhat)) / std  [+ (dmean + dstd * xhat) / N when the
//        statistics are outputs someone reads],
//   dgamma[c] = sum over groups of dy * xhat,  dbeta[c] = sum over groups of dy.
// Accumulated in double, one group (dx) or one channel (dgamma, dbeta) per task, so the sums do
// not depend on the thread count.
template <typename T>
void LayerNormBackward(const LayerNormGroups& g, const T* dy, const T* dmean, const T* dstd,
                       const T* x, const T* gamma, const T* mean, const T* stdev, T* dx,
                       T* dgamma, T* dbeta) {
  const int64_t n = g.inner, channels = g.channels;
  const auto at = [&](int64_t o, int64_t c, int64_t i) { return (o * channels + c) * n + i; };
  if (dx != nullptr) {
    cpu::ForEachRowRange(g.groups(), channels, [&](int64_t first, int64_t last) {
      for (int64_t group = first; group < last; ++group) {
        const int64_t o = group / n, i = group % n;
        const double m = mean[group], inv = 1.0 / static_cast<double>(stdev[group]);
        double sum_g = 0, sum_g_xhat = 0;
        for (int64_t c = 0; c < channels; ++c) {
          const double gc = static_cast<double>(dy[at(o, c, i)]) * gamma[c];
          sum_g += gc;
          sum_g_xhat += gc * (x[at(o, c, i)] - m) * inv;
        }
        const double mean_g = sum_g / static_cast<double>(channels);
        const double mean_g_xhat = sum_g_xhat / static_cast<double>(channels);
        const double from_mean =
            dmean != nullptr ? static_cast<double>(dmean[group]) / static_cast<double>(channels) : 0;
        const double from_std =
            dstd != nullptr ? static_cast<double>(dstd[group]) / static_cast<double>(channels) : 0;
        for (int64_t c = 0; c < channels; ++c) {
          const double gc = static_cast<double>(dy[at(o, c, i)]) * gamma[c];
          const double xhat = (x[at(o, c, i)] - m) * inv;
          dx[at(o, c, i)] = static_cast<T>((gc - mean_g - xhat * mean_g_xhat) * inv + from_mean +
                                           from_std * xhat);
        }
      }
    });
  }
  if (dgamma == nullptr && dbeta == nullptr) return;
  cpu::ForEachRowRange(channels, g.groups(), [&](int64_t first, int64_t last) {
    for (int64_t c = first; c < last; ++c) {
      double sum_dy = 0, sum_dy_xhat = 0;
      for (int64_t group = 0; group < g.groups(); ++group) {
        const int64_t o = group / n, i = group % n;
        const double d = dy[at(o, c, i)];
        sum_dy += d;
        sum_dy_xhat += d * (x[at(o, c, i)] - mean[group]) / stdev[group];
      }
      if (dgamma != nullptr) dgamma[c] = static_cast<T>(sum_dy_xhat);
      if (dbeta != nullptr) dbeta[c] = static_cast<T>(sum_dy);
    }
  });
}

std::string Owner(const OpContext& ctx) { return "LayerNorm " + ctx.node_name; }

void LayerNormForwardCpu(const OpContext& ctx, const Attributes& attrs,
                         const std::vector<TensorView>& inputs,
                         const std::vector<TensorView>& outputs, const std::vector<WriteMode>&) {
  const LayerNormGroups g = LayerNormGroupsOf(attrs, inputs[kData].shape, Owner(ctx));
  MXLITE_FLOAT_TYPE_SWITCH(inputs[kData].dtype, T, "LayerNorm",
                           { LayerNormForward<T>(attrs, g, inputs, outputs); });
}

void LayerNormBackwardCpu(const OpContext& ctx, const Attributes& attrs,
                          const std::vector<TensorView>& output_grads,
                          const std::vector<TensorView>& inputs,
                          const std::vector<TensorView>& outputs,
                          const std::vector<TensorView>& input_grads,
                          const std::vector<WriteMode>& req) {
  const LayerNormGroups g = LayerNormGroupsOf(attrs, inputs[kData].shape, Owner(ctx));
  MXLITE_FLOAT_TYPE_SWITCH(inputs[kData].dtype, T, "LayerNorm", {
    LayerNormBackward<T>(
        g, output_grads[kOut].data_as<T>(), StatisticGradient<T>(output_grads, kMean),
        StatisticGradient<T>(output_grads, kStd), inputs[kData].data_as<T>(),
        inputs[kGamma].data_as<T>(), outputs[kMean].data_as<T>(), outputs[kStd].data_as<T>(),
        WrittenOrNull<T>(input_grads[kData], req[kData]),
        WrittenOrNull<T>(input_grads[kGamma], req[kGamma]),
        WrittenOrNull<T>(input_grads[kBeta], req[kBeta]));
  });
}

}  // namespace

MXLITE_REGISTER_OP(LayerNorm) {
  OpDef op;
  op.name = "LayerNorm";
  op.name_prefix = FixedNamePrefix("layernorm");
  op.doc = "Layer normalisation along one axis, scaled by gamma and shifted by beta (MXNet's).";
  op.attributes.Int("axis", "the axis normalised; negative counts from the end", Default("-1"))
      .Float("eps", "added to the variance before the square root", Default("1e-05"));
  SetNormalizationSignature(op);
  op.infer_shape = LayerNormInferShape;
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{true, true, false}, {false, true, true}};
  };
  op.forward[DeviceType::kCPU] = LayerNormForwardCpu;
  op.backward[DeviceType::kCPU] = LayerNormBackwardCpu;
  return op;
}

}  // namespace mxlite
