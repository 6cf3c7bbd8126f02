// GroupNorm (ops/group_norm.h): the OpDef and the CPU kernels. Each (image, group) row is one
// task of the intra-op threads: a pass for the mean, one for the variance about it, one to write
// y channel by channel (Eigen-vectorised over the spatial positions); backward gives each row its
// data gradient and each channel its gamma and beta gradients, all summed in double.
#include "ops/group_norm.h"

#include <cmath>

#include "core/error.h"
#include "ops/cpu/elementwise.h"
#include "ops/normalization_signature.h"
#include "ops/operator.h"

namespace mxlite {

GroupNormGeometry GroupNormGeometryOf(const Attributes& attrs, const Shape& data,
                                      const std::string& owner) {
  MX_CHECK(data.ndim() >= 2) << owner << ": data has shape " << data
                             << "; GroupNorm takes (N, C, ...)";
  const int64_t groups = attrs.GetInt("num_groups");
  MX_CHECK(groups >= 1 && data[1] % groups == 0)
      << owner << ": num_groups " << groups << " does not divide the " << data[1]
      << " channels of data " << data;
  GroupNormGeometry g;
  g.batch = data[0];
  g.groups = groups;
  g.channels_per_group = data[1] / groups;
  g.spatial = data.size(2, data.ndim());
  return g;
}

namespace {

using cpu::EigenArray;

enum Input { kData, kGamma, kBeta };
enum Output { kOut, kMean, kStd };

std::string Owner(const OpContext& ctx) { return "GroupNorm " + ctx.node_name; }

template <typename T>
void Forward(const GroupNormGeometry& g, double eps, const T* x, const T* gamma, const T* beta,
             T* y, T* mean, T* stdev) {
  const int64_t length = g.row();
  cpu::ForEachRowRange(g.rows(), length, [&](int64_t first, int64_t last) {
    for (int64_t row = first; row < last; ++row) {
      const T* in = x + row * length;
      double sum = 0;
      for (int64_t e = 0; e < length; ++e) sum += in[e];
      const double m = sum / static_cast<double>(length);
      double squares = 0;
      for (int64_t e = 0; e < length; ++e) squares += (in[e] - m) * (in[e] - m);
      const double s = std::sqrt(squares / static_cast<double>(length) + eps);
      const int64_t first_channel = row % g.groups * g.channels_per_group;
      for (int64_t k = 0; k < g.channels_per_group; ++k) {
        const int64_t c = first_channel + k;
        // In double: x - mean loses nothing to the mean's rounding when the data sit far from 0.
        const double scale = gamma[c] / s;
        EigenArray<T>(y + row * length + k * g.spatial, g.spatial) =
            ((EigenArray<const T>(in + k * g.spatial, g.spatial).template cast<double>() - m) *
                 scale +
             static_cast<double>(beta[c]))
                .template cast<T>();
      }
      mean[row] = static_cast<T>(m);
      stdev[row] = static_cast<T>(s);
    }
  });
}

// With xhat = (x - mean) / std and d = dy * gamma[c] over one row of L elements:
//   dx = (d - mean(d) - xhat * mean(d * xhat)) / std  [+ (dmean + dstd * xhat) / L when the
//        statistics are outputs someone reads],
//   dgamma[c] = sum of dy * xhat over the channel's elements,  dbeta[c] = sum of dy.
template <typename T>
void Backward(const GroupNormGeometry& g, const T* dy, const T* dmean, const T* dstd, const T* x,
              const T* gamma, const T* mean, const T* stdev, T* dx, T* dgamma, T* dbeta) {
  const int64_t length = g.row();
  const auto channel_of = [&](int64_t row, int64_t e) {
    return row % g.groups * g.channels_per_group + e / g.spatial;
  };
  if (dx != nullptr) {
    cpu::ForEachRowRange(g.rows(), length, [&](int64_t first, int64_t last) {
      for (int64_t row = first; row < last; ++row) {
        const T* xr = x + row * length;
        const T* dyr = dy + row * length;
        const double m = mean[row], inv = 1.0 / static_cast<double>(stdev[row]);
        double sum_d = 0, sum_d_xhat = 0;
        for (int64_t e = 0; e < length; ++e) {
          const double d = static_cast<double>(dyr[e]) * gamma[channel_of(row, e)];
          sum_d += d;
          sum_d_xhat += d * (xr[e] - m) * inv;
        }
        const double n = static_cast<double>(length);
        const double from_mean = dmean != nullptr ? static_cast<double>(dmean[row]) / n : 0;
        const double from_std = dstd != nullptr ? static_cast<double>(dstd[row]) / n : 0;
        for (int64_t e = 0; e < length; ++e) {
          const double d = static_cast<double>(dyr[e]) * gamma[channel_of(row, e)];
          const double xhat = (xr[e] - m) * inv;
          dx[row * length + e] = static_cast<T>((d - sum_d / n - xhat * sum_d_xhat / n) * inv +
                                                from_mean + from_std * xhat);
        }
      }
    });
  }
  if (dgamma == nullptr && dbeta == nullptr) return;
  cpu::ForEachRowRange(g.channels(), g.batch * g.spatial, [&](int64_t first, int64_t last) {
    for (int64_t c = first; c < last; ++c) {
      const int64_t group = c / g.channels_per_group, k = c % g.channels_per_group;
      double sum_dy = 0, sum_dy_xhat = 0;
      for (int64_t n = 0; n < g.batch; ++n) {
        const int64_t row = n * g.groups + group;
        const int64_t at = row * length + k * g.spatial;
        for (int64_t s = 0; s < g.spatial; ++s) {
          const double d = dy[at + s];
          sum_dy += d;
          sum_dy_xhat += d * (x[at + s] - static_cast<double>(mean[row])) / stdev[row];
        }
      }
      if (dgamma != nullptr) dgamma[c] = static_cast<T>(sum_dy_xhat);
      if (dbeta != nullptr) dbeta[c] = static_cast<T>(sum_dy);
    }
  });
}

void ForwardCpu(const OpContext& ctx, const Attributes& attrs,
                const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                const std::vector<WriteMode>&) {
  const GroupNormGeometry g = GroupNormGeometryOf(attrs, inputs[kData].shape, Owner(ctx));
  MXLITE_FLOAT_TYPE_SWITCH(inputs[kData].dtype, T, Owner(ctx), {
    Forward<T>(g, attrs.GetFloat("eps"), inputs[kData].data_as<T>(), inputs[kGamma].data_as<T>(),
               inputs[kBeta].data_as<T>(), outputs[kOut].data_as<T>(), outputs[kMean].data_as<T>(),
               outputs[kStd].data_as<T>());
  });
}

void BackwardCpu(const OpContext& ctx, const Attributes& attrs,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>& inputs,
                 const std::vector<TensorView>& outputs, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  const GroupNormGeometry g = GroupNormGeometryOf(attrs, inputs[kData].shape, Owner(ctx));
  MXLITE_FLOAT_TYPE_SWITCH(inputs[kData].dtype, T, Owner(ctx), {
    Backward<T>(g, output_grads[kOut].data_as<T>(), StatisticGradient<T>(output_grads, kMean),
                StatisticGradient<T>(output_grads, kStd), inputs[kData].data_as<T>(),
                inputs[kGamma].data_as<T>(), outputs[kMean].data_as<T>(),
                outputs[kStd].data_as<T>(), WrittenOrNull<T>(input_grads[kData], req[kData]),
                WrittenOrNull<T>(input_grads[kGamma], req[kGamma]),
                WrittenOrNull<T>(input_grads[kBeta], req[kBeta]));
  });
}

}  // namespace

MXLITE_REGISTER_OP(GroupNorm) {
  OpDef op;
  op.name = "GroupNorm";
  op.name_prefix = FixedNamePrefix("groupnorm");
  op.doc =
      "Group normalisation: each image's channels in num_groups groups, each normalised over its "
      "channels and positions, then scaled by gamma and shifted by beta per channel (MXNet's).";
  op.attributes.Int("num_groups", "how many groups of consecutive channels", Default("1"))
      .Float("eps", "added to the variance before the square root", Default("1e-05"));
  SetNormalizationSignature(op);
  op.infer_shape = [](const Attributes& attrs, ShapeInference& shapes) {
    const Shape& data = shapes.Input(kData);
    const GroupNormGeometry g = GroupNormGeometryOf(attrs, data, shapes.op + " " + shapes.node);
    shapes.AssignInput(kGamma, Shape{g.channels()});
    shapes.AssignInput(kBeta, Shape{g.channels()});
    shapes.AssignOutput(kOut, data);
    shapes.AssignOutput(kMean, Shape{g.batch, g.groups});
    shapes.AssignOutput(kStd, Shape{g.batch, g.groups});
  };
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{true, true, false}, {false, true, true}};
  };
  op.forward[DeviceType::kCPU] = ForwardCpu;
  op.backward[DeviceType::kCPU] = BackwardCpu;
  return op;
}

}  // namespace mxlite
