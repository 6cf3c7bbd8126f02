// nll_loss's GPU kernels (ops/nll_loss.cc; ops/cuda/nll_loss_kernels.cu). The labels (and the
// class weights) are read on the host, as SoftmaxOutput's are: they are small, and a label that
// is no class is then the same mxlite::Error as on the CPU; this synchronises the op's stream
// once per call (twice for the weight's gradient, which the host sums per class).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "ops/cuda/cuda_util.h"
#include "ops/cuda/nll_loss_kernels.h"
#include "ops/nll_loss.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

template <typename T>
double AsDouble(T value) {
  return static_cast<double>(static_cast<cuda::ComputeType<T>>(value));
}

// The positions' classes and weights, checked on the host and uploaded to scratch memory.
struct PreparedPositions {
  cuda::NllPositions positions;
  std::vector<int64_t> labels;       // host copies
  std::vector<double> coefficients;  // class weight per position; 0 where ignored
  double total = 0.0;                // the sum of the coefficients: mean's denominator
};

template <typename T>
PreparedPositions Prepare(const OpContext& ctx, const NllGeometry& g,
                          const std::vector<TensorView>& inputs, cudaStream_t stream,
                          const std::string& owner) {
  const TensorView& label = inputs[1];
  std::vector<uint8_t> label_bytes =
      cuda::CopyToHost<uint8_t>(label.data, static_cast<int64_t>(label.bytes()), stream, owner);
  const TensorView host_label{label_bytes.data(), label.shape, label.dtype, Context::CPU()};
  PreparedPositions prepared;
  prepared.labels = ReadNllLabels(host_label, g, owner);
  std::vector<double> weights;
  if (g.use_weight) {
    for (const T& w : cuda::CopyToHost<T>(inputs[2].data, g.classes, stream, owner)) {
      weights.push_back(AsDouble(w));
    }
  }
  std::vector<int64_t> device_labels(prepared.labels.size());
  for (size_t i = 0; i < prepared.labels.size(); ++i) {
    const int64_t t = prepared.labels[i];
    const bool ignored = g.Ignored(t);
    const double coefficient =
        ignored ? 0.0 : (g.use_weight ? weights[static_cast<size_t>(t)] : 1.0);
    device_labels[i] = ignored ? -1 : t;
    prepared.coefficients.push_back(coefficient);
    prepared.total += coefficient;
  }
  const int64_t count = static_cast<int64_t>(device_labels.size());
  int64_t* label_array = ctx.scratch->GetArray<int64_t>(std::max<int64_t>(count, 1));
  double* coefficient_array = ctx.scratch->GetArray<double>(std::max<int64_t>(count, 1));
  cuda::CopyToDevice(device_labels, label_array, stream, owner);
  cuda::CopyToDevice(prepared.coefficients, coefficient_array, stream, owner);
  prepared.positions = {count, g.positions, g.classes, label_array, coefficient_array};
  return prepared;
}

// The scale of a reduced loss: 1 / the total weight for mean (0 / 0 is NaN, as on the CPU).
double ReductionScale(const NllGeometry& g, double total) { return g.Mean() ? 1.0 / total : 1.0; }

void ForwardGpu(const OpContext& ctx, const Attributes& attrs,
                const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = NllLossOwner(ctx.node_name);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const NllGeometry g = NllGeometryOf(attrs, inputs[0].shape, inputs[1].shape, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    const PreparedPositions p = Prepare<T>(ctx, g, inputs, stream, owner);
    MXLITE_CUDA_CALL(
        cuda::NllLossForward<T>(p.positions, inputs[0].data_as<T>(), g.Reduced(),
                                ReductionScale(g, p.total), outputs[0].data_as<T>(), stream),
        owner);
  });
}

// The weight's gradient, summed per class on the host as the CPU kernel sums it.
template <typename T>
void WeightGradient(const NllGeometry& g, const PreparedPositions& p, const TensorView& data,
                    const TensorView& output, const TensorView& dy, const TensorView& dweight,
                    double* picked, cudaStream_t stream, const std::string& owner) {
  MXLITE_CUDA_CALL(cuda::NllLossPick<T>(p.positions, data.data_as<T>(), picked, stream), owner);
  const std::vector<double> x = cuda::CopyToHost<double>(picked, p.positions.count, stream, owner);
  const bool reduce = g.Reduced();
  const std::vector<T> gradients =
      cuda::CopyToHost<T>(dy.data, reduce ? 1 : p.positions.count, stream, owner);
  const double mean =
      g.Mean() ? AsDouble(cuda::CopyToHost<T>(output.data, 1, stream, owner)[0]) : 0.0;
  const double scale = ReductionScale(g, p.total);
  std::vector<double> dw(static_cast<size_t>(g.classes), 0.0);
  for (size_t i = 0; i < p.labels.size(); ++i) {
    if (g.Ignored(p.labels[i])) continue;
    const double term = reduce ? AsDouble(gradients[0]) * scale : AsDouble(gradients[i]);
    dw[static_cast<size_t>(p.labels[i])] +=
        -x[i] * term - (g.Mean() ? mean * AsDouble(gradients[0]) * scale : 0.0);
  }
  std::vector<T> values;
  for (double value : dw)
    values.push_back(static_cast<T>(static_cast<cuda::ComputeType<T>>(value)));
  MXLITE_CUDA_CALL(cudaMemcpyAsync(dweight.data, values.data(), values.size() * sizeof(T),
                                   cudaMemcpyHostToDevice, stream),
                   owner);
  MXLITE_CUDA_CALL(cudaStreamSynchronize(stream), owner);
}

void BackwardGpu(const OpContext& ctx, const Attributes& attrs,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>& inputs,
                 const std::vector<TensorView>& outputs, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  const std::string owner = NllLossOwner(ctx.node_name);
  const bool use_weight = attrs.GetBool("use_weight");
  const bool weight_gradient = use_weight && req[2] != WriteMode::kNull;
  if (req[0] == WriteMode::kNull && !weight_gradient) return;  // nothing to wait for the labels
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  // Without weights backward keeps no data: its shape is dx's.
  const Shape& data_shape = use_weight ? inputs[0].shape : input_grads[0].shape;
  const NllGeometry g = NllGeometryOf(attrs, data_shape, inputs[1].shape, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(output_grads[0].dtype, T, owner, {
    const PreparedPositions p = Prepare<T>(ctx, g, inputs, stream, owner);
    const bool reduce = g.Reduced();
    if (req[0] != WriteMode::kNull) {
      MXLITE_CUDA_CALL(cuda::NllLossBackwardData<T>(p.positions, output_grads[0].data_as<T>(),
                                                    reduce, ReductionScale(g, p.total),
                                                    input_grads[0].data_as<T>(), stream),
                       owner);
    }
    if (weight_gradient) {
      double* picked = ctx.scratch->GetArray<double>(std::max<int64_t>(p.positions.count, 1));
      WeightGradient<T>(g, p, inputs[0], outputs[0], output_grads[0], input_grads[2], picked,
                        stream, owner);
    }
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(nll_loss, kGPU, ForwardGpu, BackwardGpu);

}  // namespace mxlite
