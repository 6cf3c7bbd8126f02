// FullyConnected, as MXNet's: output = data * weight^T + bias.
//
//   flatten=true  (default): data (N, d1, ..., dk) is read as (N, K), K = d1 * ... * dk;
//                            output (N, num_hidden)
//   flatten=false:           applied to the last axis: data (..., K), output (..., num_hidden)
//   weight (num_hidden, K), bias (num_hidden) (absent when no_bias); both are parameters whose
//   shapes are inferred from data.
//
// CPU: one Gemm<T> per pass (ops/cpu/blas.h); at inference, with more than one row, a weight that
// stands from pass to pass is kept packed for the GEMM (ops/cpu/kept_operand.h,
// MXNET_CONV_PREPACK_WEIGHTS). Backward: data_grad = output_grad * weight,
// weight_grad = output_grad^T * data, bias_grad = column sums of output_grad.
#include <algorithm>
#include <memory>
#include <type_traits>

#include "core/settings.h"
#include "ops/cpu/blas.h"
#include "ops/cpu/conv_gemm.h"
#include "ops/cpu/kept_operand.h"
#include "ops/fully_connected.h"
#include "ops/operator.h"
#include "ops/weighted_layer.h"

namespace mxlite {

FullyConnectedMatrix FullyConnectedMatrixOf(const Attributes& attrs, const Shape& data,
                                            const std::string& owner) {
  MX_CHECK(data.ndim() >= 1) << owner << ": data has shape " << data
                             << " but FullyConnected needs at least one axis";
  if (attrs.GetBool("flatten")) return {data[0], data.size(1, data.ndim())};
  return {data.size(0, data.ndim() - 1), data.dim(-1)};
}

namespace {

using cpu::Gemm;
using cpu::Transpose;

void InferShape(const Attributes& attrs, ShapeInference& shapes) {
  const std::string owner = shapes.op + " " + shapes.node;
  const Shape& data = shapes.Input(0);
  const FullyConnectedMatrix matrix = FullyConnectedMatrixOf(attrs, data, owner);
  const int64_t hidden = attrs.GetInt("num_hidden");
  shapes.AssignInput(1, Shape{hidden, matrix.inner});
  if (!attrs.GetBool("no_bias")) shapes.AssignInput(2, Shape{hidden});
  if (attrs.GetBool("flatten")) {
    shapes.AssignOutput(0, Shape{data[0], hidden});
  } else {
    Shape output = data;
    output[data.ndim() - 1] = hidden;
    shapes.AssignOutput(0, output);
  }
}

// An inference node's weight, kept packed while it stands (MXNET_CONV_PREPACK_WEIGHTS).
class FullyConnectedState : public OpState {
 public:
  cpu::KeptPackedOperand weight;
  size_t kept_bytes() const override { return weight.bytes(); }
};

std::unique_ptr<OpState> CreateState(const StateRequest& request) {
  if (request.training || !settings().GetBool("MXNET_CONV_PREPACK_WEIGHTS")) return nullptr;
  return std::make_unique<FullyConnectedState>();
}

// weight^T (K x hidden) packed, when this is an inference call of more than one row (one row
// reads the weight in place) of a node whose weight stood since its last call.
std::shared_ptr<const cpu::PackedGemmOperand> KeptWeight(const OpContext& ctx,
                                                         const FullyConnectedMatrix& m,
                                                         int64_t hidden, const float* weight) {
  auto* state = dynamic_cast<FullyConnectedState*>(ctx.state);
  if (ctx.is_train || state == nullptr || ctx.input_versions.size() < 2 || m.rows < 2) {
    return nullptr;
  }
  return state->weight.Get(cpu::PackedGemmOperand::Side::kB, Transpose::kYes, m.inner, hidden,
                           weight, m.inner, ctx.input_versions[1]);
}

template <typename T>
void Forward(const OpContext& ctx, const FullyConnectedMatrix& m, int64_t hidden, const T* data,
             const T* weight, const T* bias, T* output) {
  if (bias != nullptr) {
    for (int64_t row = 0; row < m.rows; ++row)
      std::copy(bias, bias + hidden, output + row * hidden);
  }
  const T beta = bias != nullptr ? T(1) : T(0);
  if constexpr (std::is_same_v<T, float>) {
    if (const auto packed = KeptWeight(ctx, m, hidden, weight)) {
      cpu::Sgemm(Transpose::kNo, m.rows, 1.0f, data, m.inner, *packed, beta, output, hidden);
      return;
    }
  }
  Gemm<T>(Transpose::kNo, Transpose::kYes, m.rows, hidden, m.inner, T(1), data, m.inner, weight,
          m.inner, beta, output, hidden);
}

void ForwardCpu(const OpContext& ctx, const Attributes& attrs,
                const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "FullyConnected " + ctx.node_name;
  const FullyConnectedMatrix m = FullyConnectedMatrixOf(attrs, inputs[0].shape, owner);
  const int64_t hidden = attrs.GetInt("num_hidden");
  const bool has_bias = !attrs.GetBool("no_bias");
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    Forward<T>(ctx, m, hidden, inputs[0].data_as<T>(), inputs[1].data_as<T>(),
               has_bias ? inputs[2].data_as<T>() : nullptr, outputs[0].data_as<T>());
  });
}

void BackwardCpu(const OpContext& ctx, const Attributes& attrs,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>& inputs,
                 const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  const std::string owner = "FullyConnected " + ctx.node_name;
  const FullyConnectedMatrix m = FullyConnectedMatrixOf(attrs, inputs[0].shape, owner);
  const int64_t hidden = attrs.GetInt("num_hidden");
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    const T* grad = output_grads[0].data_as<T>();
    if (req[0] != WriteMode::kNull) {  // (rows x K) = grad (rows x hidden) * weight (hidden x K)
      Gemm<T>(Transpose::kNo, Transpose::kNo, m.rows, m.inner, hidden, T(1), grad, hidden,
              inputs[1].data_as<T>(), m.inner, T(0), input_grads[0].data_as<T>(), m.inner);
    }
    if (req[1] != WriteMode::kNull) {  // (hidden x K) = grad^T (hidden x rows) * data (rows x K)
      Gemm<T>(Transpose::kYes, Transpose::kNo, hidden, m.inner, m.rows, T(1), grad, hidden,
              inputs[0].data_as<T>(), m.inner, T(0), input_grads[1].data_as<T>(), m.inner);
    }
    if (!attrs.GetBool("no_bias") && req[2] != WriteMode::kNull) {
      // One "image" of rows x hidden, channels last: the column sums.
      cpu::SumPerChannel<T>(grad, 1, hidden, m.rows, /*channels_last=*/true,
                            input_grads[2].data_as<T>());
    }
  });
}

}  // namespace

MXLITE_REGISTER_OP(FullyConnected) {
  OpDef op;
  op.name = "FullyConnected";
  op.name_prefix = FixedNamePrefix("fc");
  op.doc =
      "output = data * weight^T + bias; weight (num_hidden, K); flatten=true reads data as "
      "(N, K), flatten=false applies it to the last axis.";
  op.attributes.Int("num_hidden", "output features", Required(), 1)
      .Bool("no_bias", "no bias input", Default("false"))
      .Bool("flatten", "flatten all axes after the first into one", Default("true"));
  SetWeightedLayerSignature(op);
  op.infer_shape = InferShape;
  op.forward[DeviceType::kCPU] = ForwardCpu;
  op.backward[DeviceType::kCPU] = BackwardCpu;
  op.create_state[DeviceType::kCPU] = CreateState;
  return op;
}

}  // namespace mxlite
