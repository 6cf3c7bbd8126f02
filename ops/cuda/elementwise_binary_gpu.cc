// The GPU kernels of broadcast_* and elemwise_* add/sub/mul/div, broadcast_maximum / minimum /
// power (ops/elementwise_binary.cc) and the broadcast comparisons (ops/comparison.cc); the kernels
// are in ops/cuda/elementwise_binary_kernels.cu.
#include <algorithm>
#include <vector>

#include "ops/cuda/cuda_util.h"
#include "ops/cuda/elementwise_binary_kernels.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

using cuda::BinaryKind;
using cuda::Owner;

template <typename T>
void Binary(BinaryKind kind, const T* x, const Shape& x_shape, const T* y, const Shape& y_shape,
            T* out, const Shape& out_shape, cudaStream_t stream, const std::string& owner) {
  if (x_shape == out_shape && y_shape == out_shape) {  // no broadcast: no index arithmetic
    MXLITE_CUDA_CALL(cuda::ElementwiseBinary(kind, x, y, out, out_shape.size(), stream), owner);
    return;
  }
  MXLITE_CUDA_CALL(
      cuda::BroadcastBinary(kind, cuda::MakeBroadcastGeometry(out_shape, x_shape, y_shape), x, y,
                            out, out_shape.size(), stream),
      owner);
}

template <typename T>
void BinaryBackward(BinaryKind kind, const OpContext& ctx, const TensorView& out_grad,
                    const TensorView& lhs, const TensorView& rhs,
                    const std::vector<TensorView>& grads, const std::vector<WriteMode>& req,
                    const std::string& owner) {
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const Shape& out_shape = out_grad.shape;
  const T* dy = out_grad.data_as<T>();
  // A gradient: the reduction of `term` (output-shaped) times scale to the operand's shape.
  auto reduce = [&](const T* term, const TensorView& grad, double scale) {
    cuda::ReduceToShape<T>(term, out_shape, grad.data_as<T>(), grad.shape, scale, stream, owner);
  };
  auto scratch_term = [&]() { return ctx.scratch->GetArray<T>(out_shape.size()); };
  const bool want_lhs = req[0] != WriteMode::kNull, want_rhs = req[1] != WriteMode::kNull;
  switch (kind) {
    case BinaryKind::kAdd:
    case BinaryKind::kSub:
      if (want_lhs) reduce(dy, grads[0], 1.0);
      if (want_rhs) reduce(dy, grads[1], kind == BinaryKind::kAdd ? 1.0 : -1.0);
      break;
    case BinaryKind::kMul:
    case BinaryKind::kDiv:
      if (want_lhs) {
        T* term = scratch_term();
        Binary<T>(kind, dy, out_shape, rhs.data_as<T>(), rhs.shape, term, out_shape, stream, owner);
        reduce(term, grads[0], 1.0);
      }
      if (want_rhs) {
        T* term = scratch_term();
        Binary<T>(BinaryKind::kMul, dy, out_shape, lhs.data_as<T>(), lhs.shape, term, out_shape,
                  stream, owner);
        if (kind == BinaryKind::kDiv) {  // d(x/y)/dy = -x / y^2
          Binary<T>(BinaryKind::kDiv, term, out_shape, rhs.data_as<T>(), rhs.shape, term, out_shape,
                    stream, owner);
          Binary<T>(BinaryKind::kDiv, term, out_shape, rhs.data_as<T>(), rhs.shape, term, out_shape,
                    stream, owner);
        }
        reduce(term, grads[1], kind == BinaryKind::kDiv ? -1.0 : 1.0);
      }
      break;
    case BinaryKind::kMaximum:
    case BinaryKind::kMinimum: {
      // dy * [lhs wins] to lhs (lhs >= rhs for maximum, <= for minimum), dy * [rhs wins] to rhs.
      const bool larger = kind == BinaryKind::kMaximum;
      auto term_where = [&](BinaryKind wins) {
        T* term = scratch_term();
        Binary<T>(wins, lhs.data_as<T>(), lhs.shape, rhs.data_as<T>(), rhs.shape, term, out_shape,
                  stream, owner);
        Binary<T>(BinaryKind::kMul, dy, out_shape, term, out_shape, term, out_shape, stream, owner);
        return term;
      };
      if (want_lhs) {
        reduce(term_where(larger ? BinaryKind::kGreaterEqual : BinaryKind::kLesserEqual), grads[0],
               1.0);
      }
      if (want_rhs) {
        reduce(term_where(larger ? BinaryKind::kLesser : BinaryKind::kGreater), grads[1], 1.0);
      }
      break;
    }
    case BinaryKind::kPower: {
      // dy times a partial derivative of x^y at (lhs, rhs), broadcast to the output.
      auto dy_times = [&](BinaryKind partial) {
        T* term = scratch_term();
        Binary<T>(partial, lhs.data_as<T>(), lhs.shape, rhs.data_as<T>(), rhs.shape, term,
                  out_shape, stream, owner);
        Binary<T>(BinaryKind::kMul, dy, out_shape, term, out_shape, term, out_shape, stream, owner);
        return term;
      };
      if (want_lhs) reduce(dy_times(BinaryKind::kPowerBaseGradient), grads[0], 1.0);
      if (want_rhs) reduce(dy_times(BinaryKind::kPowerExponentGradient), grads[1], 1.0);
      break;
    }
    default:  // the comparisons: no gradient
      for (size_t i = 0; i < grads.size(); ++i) {
        if (req[i] == WriteMode::kNull) continue;
        MXLITE_CUDA_CALL(cudaMemsetAsync(grads[i].data_as<T>(), 0, grads[i].size() * sizeof(T),
                                         stream),
                         owner);
      }
      break;
  }
}

void RegisterBinary(const char* name, BinaryKind kind) {
  const std::string op = name;
  ForwardKernel forward =
      [kind, op](const OpContext& ctx, const Attributes&, const std::vector<TensorView>& inputs,
                 const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
        if (req[0] == WriteMode::kNull) return;
        const std::string owner = op + " " + ctx.node_name;
        cudaStream_t stream = cuda::PrepareStream(ctx, owner);
        MXLITE_GPU_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, owner, {
          Binary<T>(kind, inputs[0].data_as<T>(), inputs[0].shape, inputs[1].data_as<T>(),
                    inputs[1].shape, outputs[0].data_as<T>(), outputs[0].shape, stream, owner);
        });
      };
  BackwardKernel backward = [kind, op](const OpContext& ctx, const Attributes&,
                                       const std::vector<TensorView>& output_grads,
                                       const std::vector<TensorView>& inputs,
                                       const std::vector<TensorView>&,
                                       const std::vector<TensorView>& input_grads,
                                       const std::vector<WriteMode>& req) {
    const std::string owner = op + " " + ctx.node_name;
    MXLITE_GPU_FLOAT_TYPE_SWITCH(output_grads[0].dtype, T, owner, {
      BinaryBackward<T>(kind, ctx, output_grads[0], inputs[0], inputs[1], input_grads, req, owner);
    });
  };
  OpRegistry::Global().RegisterKernels(op, DeviceType::kGPU, forward, backward);
}

struct BinaryRegistrar {
  BinaryRegistrar() {
    const std::pair<const char*, BinaryKind> kinds[] = {{"add", BinaryKind::kAdd},
                                                        {"sub", BinaryKind::kSub},
                                                        {"mul", BinaryKind::kMul},
                                                        {"div", BinaryKind::kDiv}};
    for (const auto& [suffix, kind] : kinds) {
      RegisterBinary((std::string("broadcast_") + suffix).c_str(), kind);
      RegisterBinary((std::string("elemwise_") + suffix).c_str(), kind);
    }
    // broadcast_maximum / minimum (ops/elementwise_binary.cc) and the comparisons
    // (ops/comparison.cc): NumPy broadcasting only.
    const std::pair<const char*, BinaryKind> broadcast_only[] = {
        {"broadcast_maximum", BinaryKind::kMaximum},
        {"broadcast_minimum", BinaryKind::kMinimum},
        {"broadcast_power", BinaryKind::kPower},
        {"broadcast_equal", BinaryKind::kEqual},
        {"broadcast_not_equal", BinaryKind::kNotEqual},
        {"broadcast_greater", BinaryKind::kGreater},
        {"broadcast_greater_equal", BinaryKind::kGreaterEqual},
        {"broadcast_lesser", BinaryKind::kLesser},
        {"broadcast_lesser_equal", BinaryKind::kLesserEqual}};
    for (const auto& [name, kind] : broadcast_only) RegisterBinary(name, kind);
  }
};
const BinaryRegistrar binary_registrar;

}  // namespace

}  // namespace mxlite
