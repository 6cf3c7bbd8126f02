// where's GPU kernels (ops/where.cc; ops/cuda/where_kernels.cu).
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/where_kernels.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

// out = condition ? x : y on the GPU; a null x or y reads zeros.
template <typename T>
void Select(const T* condition, const Shape& condition_shape, const T* x, const Shape& x_shape,
            const T* y, const Shape& y_shape, T* out, const Shape& out_shape, cudaStream_t stream,
            const std::string& owner) {
  MXLITE_CUDA_CALL(cuda::Where(cuda::MakeBroadcastGeometry(out_shape, condition_shape, x_shape),
                               cuda::MakeBroadcastGeometry(out_shape, y_shape, y_shape), condition,
                               x, y, out, out_shape.size(), stream),
                   owner);
}

void WhereForwardGpu(const OpContext& ctx, const Attributes&, const std::vector<TensorView>& inputs,
                     const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = cuda::Owner("where", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, owner, {
    Select<T>(inputs[0].data_as<T>(), inputs[0].shape, inputs[1].data_as<T>(), inputs[1].shape,
              inputs[2].data_as<T>(), inputs[2].shape, outputs[0].data_as<T>(), outputs[0].shape,
              stream, owner);
  });
}

void WhereBackwardGpu(const OpContext& ctx, const Attributes&,
                      const std::vector<TensorView>& output_grads,
                      const std::vector<TensorView>& inputs, const std::vector<TensorView>&,
                      const std::vector<TensorView>& input_grads,
                      const std::vector<WriteMode>& req) {
  const std::string owner = cuda::Owner("where", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const TensorView& dy = output_grads[0];
  if (req[0] != WriteMode::kNull) {
    MXLITE_CUDA_CALL(cudaMemsetAsync(input_grads[0].data, 0, input_grads[0].bytes(), stream),
                     owner);
  }
  MXLITE_GPU_FLOAT_TYPE_SWITCH(dy.dtype, T, owner, {
    for (int operand : {1, 2}) {
      if (req[operand] == WriteMode::kNull) continue;
      T* masked = ctx.scratch->GetArray<T>(dy.size());
      Select<T>(inputs[0].data_as<T>(), inputs[0].shape, operand == 1 ? dy.data_as<T>() : nullptr,
                dy.shape, operand == 2 ? dy.data_as<T>() : nullptr, dy.shape, masked, dy.shape,
                stream, owner);
      cuda::ReduceToShape<T>(masked, dy.shape, input_grads[operand].data_as<T>(),
                             input_grads[operand].shape, 1.0, stream, owner);
    }
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(where, kGPU, WhereForwardGpu, WhereBackwardGpu);

}  // namespace mxlite
