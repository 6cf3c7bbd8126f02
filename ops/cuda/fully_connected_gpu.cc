// FullyConnected's GPU kernels (ops/fully_connected.cc) on cuBLAS (ops/cuda/cublas_gemm.h); the
// bias through the broadcast and reduction kernels.
#include <vector>

#include "ops/cuda/array_kernels.h"
#include "ops/cuda/cublas_gemm.h"
#include "ops/cuda/cuda_util.h"
#include "ops/fully_connected.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

using cuda::GemmRowMajor;

void FullyConnectedForwardGpu(const OpContext& ctx, const Attributes& attrs,
                              const std::vector<TensorView>& inputs,
                              const std::vector<TensorView>& outputs,
                              const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "FullyConnected " + ctx.node_name;
  const FullyConnectedMatrix m = FullyConnectedMatrixOf(attrs, inputs[0].shape, owner);
  const int64_t hidden = attrs.GetInt("num_hidden");
  const bool has_bias = !attrs.GetBool("no_bias");
  cublasHandle_t handle = cuda::CublasHandle(ctx, inputs[0].dtype, owner);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    T* out = outputs[0].data_as<T>();
    if (has_bias) {  // every row starts as the bias, then the GEMM adds to it
      const Shape out_shape{m.rows, hidden};
      MXLITE_CUDA_CALL(cuda::BroadcastAssign(
                           cuda::MakeBroadcastGeometry(out_shape, Shape{hidden}, Shape{hidden}),
                           inputs[2].data_as<T>(), out, 1.0, out_shape.size(), stream),
                       owner);
    }
    GemmRowMajor<T>(handle, false, true, m.rows, hidden, m.inner, 1.0, inputs[0].data_as<T>(),
                    m.inner, inputs[1].data_as<T>(), m.inner, has_bias ? 1.0 : 0.0, out, hidden,
                    owner);
  });
}

void FullyConnectedBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                               const std::vector<TensorView>& output_grads,
                               const std::vector<TensorView>& inputs,
                               const std::vector<TensorView>&,
                               const std::vector<TensorView>& input_grads,
                               const std::vector<WriteMode>& req) {
  const std::string owner = "FullyConnected " + ctx.node_name;
  const FullyConnectedMatrix m = FullyConnectedMatrixOf(attrs, inputs[0].shape, owner);
  const int64_t hidden = attrs.GetInt("num_hidden");
  cublasHandle_t handle = cuda::CublasHandle(ctx, inputs[0].dtype, owner);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    const T* grad = output_grads[0].data_as<T>();
    if (req[0] != WriteMode::kNull) {  // (rows x K) = grad (rows x hidden) * weight (hidden x K)
      GemmRowMajor<T>(handle, false, false, m.rows, m.inner, hidden, 1.0, grad, hidden,
                      inputs[1].data_as<T>(), m.inner, 0.0, input_grads[0].data_as<T>(), m.inner,
                      owner);
    }
    if (req[1] != WriteMode::kNull) {  // (hidden x K) = grad^T (hidden x rows) * data (rows x K)
      GemmRowMajor<T>(handle, true, false, hidden, m.inner, m.rows, 1.0, grad, hidden,
                      inputs[0].data_as<T>(), m.inner, 0.0, input_grads[1].data_as<T>(), m.inner,
                      owner);
    }
    if (!attrs.GetBool("no_bias") && req[2] != WriteMode::kNull) {
      cuda::ReduceToShape<T>(grad, Shape{m.rows, hidden}, input_grads[2].data_as<T>(),
                             Shape{hidden}, 1.0, stream, owner);
    }
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(FullyConnected, kGPU, FullyConnectedForwardGpu, FullyConnectedBackwardGpu);

}  // namespace mxlite
