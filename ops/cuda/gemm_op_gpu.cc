// Gemm's GPU kernels (ops/gemm_op.cc) on cuBLAS (ops/cuda/cublas_gemm.h); C through the broadcast
// and reduction kernels.
#include <vector>

#include "ops/cuda/array_kernels.h"
#include "ops/cuda/cublas_gemm.h"
#include "ops/cuda/cuda_util.h"
#include "ops/gemm_op.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

using cuda::GemmRowMajor;

void GemmForwardGpu(const OpContext& ctx, const Attributes& attrs,
                    const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                    const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "Gemm " + ctx.node_name;
  const TensorView& a = inputs[0];
  const TensorView& b = inputs[1];
  const bool trans_a = attrs.GetBool("transA"), trans_b = attrs.GetBool("transB");
  const GemmSizes sizes = GemmSizesOf(attrs, a.shape, b.shape);
  const int64_t m = sizes.m, n = sizes.n, k = sizes.k;
  const double alpha = attrs.GetFloat("alpha"), beta = attrs.GetFloat("beta");
  const bool add_c = !attrs.GetBool("no_bias") && beta != 0;
  cublasHandle_t handle = cuda::CublasHandle(ctx, outputs[0].dtype, owner);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, owner, {
    T* y = outputs[0].data_as<T>();
    if (add_c) {
      MXLITE_CUDA_CALL(
          cuda::BroadcastAssign(
              cuda::MakeBroadcastGeometry(outputs[0].shape, inputs[2].shape, inputs[2].shape),
              inputs[2].data_as<T>(), y, beta, outputs[0].size(), stream),
          owner);
    }
    GemmRowMajor<T>(handle, trans_a, trans_b, m, n, k, alpha, a.data_as<T>(), a.shape[1],
                    b.data_as<T>(), b.shape[1], add_c ? 1.0 : 0.0, y, n, owner);
  });
}

void GemmBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                     const std::vector<TensorView>& output_grads,
                     const std::vector<TensorView>& inputs, const std::vector<TensorView>&,
                     const std::vector<TensorView>& grads, const std::vector<WriteMode>& req) {
  const std::string owner = "Gemm " + ctx.node_name;
  const TensorView& a = inputs[0];
  const TensorView& b = inputs[1];
  const bool trans_a = attrs.GetBool("transA"), trans_b = attrs.GetBool("transB");
  const GemmSizes sizes = GemmSizesOf(attrs, a.shape, b.shape);
  const int64_t m = sizes.m, n = sizes.n, k = sizes.k;
  const double alpha = attrs.GetFloat("alpha"), beta = attrs.GetFloat("beta");
  cublasHandle_t handle = cuda::CublasHandle(ctx, output_grads[0].dtype, owner);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(output_grads[0].dtype, T, owner, {
    const T* dy = output_grads[0].data_as<T>();
    if (req[0] != WriteMode::kNull) {
      if (!trans_a) {  // dA (M, K) = alpha * dY op(B)^T
        GemmRowMajor<T>(handle, false, !trans_b, m, k, n, alpha, dy, n, b.data_as<T>(), b.shape[1],
                        0.0, grads[0].data_as<T>(), k, owner);
      } else {  // dA (K, M) = alpha * op(B) dY^T
        GemmRowMajor<T>(handle, trans_b, true, k, m, n, alpha, b.data_as<T>(), b.shape[1], dy, n,
                        0.0, grads[0].data_as<T>(), m, owner);
      }
    }
    if (req[1] != WriteMode::kNull) {
      if (!trans_b) {  // dB (K, N) = alpha * op(A)^T dY
        GemmRowMajor<T>(handle, !trans_a, false, k, n, m, alpha, a.data_as<T>(), a.shape[1], dy, n,
                        0.0, grads[1].data_as<T>(), n, owner);
      } else {  // dB (N, K) = alpha * dY^T op(A)
        GemmRowMajor<T>(handle, true, trans_a, n, k, m, alpha, dy, n, a.data_as<T>(), a.shape[1],
                        0.0, grads[1].data_as<T>(), k, owner);
      }
    }
    if (!attrs.GetBool("no_bias") && req[2] != WriteMode::kNull) {
      cuda::ReduceToShape<T>(dy, output_grads[0].shape, grads[2].data_as<T>(), grads[2].shape, beta,
                             stream, owner);
    }
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(Gemm, kGPU, GemmForwardGpu, GemmBackwardGpu);

}  // namespace mxlite
