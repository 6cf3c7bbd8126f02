// cumsum's GPU kernels (ops/cumsum.cc; ops/cuda/cumsum_kernels.cu).
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/cumsum_kernels.h"
#include "ops/cumsum.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

void Sums(const OpContext& ctx, const Attributes& attrs, const TensorView& in,
          const TensorView& out, bool for_gradient) {
  const std::string owner = cuda::Owner("cumsum", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  MX_CHECK(in.data != out.data) << owner << ": cumsum does not run in place";
  const CumsumLines l = CumsumLinesOf(attrs, in.shape, for_gradient, owner);
  auto run = [&](auto* typed_in, auto* typed_out) {
    MXLITE_CUDA_CALL(cuda::Cumsum(typed_in, typed_out, l.outer, l.length, l.inner, l.exclusive,
                                  l.reverse, stream),
                     owner);
  };
  switch (in.dtype) {
    case DType::kInt32:
      return run(in.data_as<int32_t>(), out.data_as<int32_t>());
    case DType::kInt64:
      return run(in.data_as<int64_t>(), out.data_as<int64_t>());
    default:
      MXLITE_GPU_FLOAT_TYPE_SWITCH(in.dtype, T, owner, { run(in.data_as<T>(), out.data_as<T>()); });
  }
}

void ForwardGpu(const OpContext& ctx, const Attributes& attrs,
                const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                const std::vector<WriteMode>& req) {
  if (req[0] != WriteMode::kNull) Sums(ctx, attrs, inputs[0], outputs[0], false);
}

void BackwardGpu(const OpContext& ctx, const Attributes& attrs,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                 const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  if (req[0] != WriteMode::kNull) Sums(ctx, attrs, output_grads[0], input_grads[0], true);
}

}  // namespace

MXLITE_REGISTER_KERNELS(cumsum, kGPU, ForwardGpu, BackwardGpu);

}  // namespace mxlite
