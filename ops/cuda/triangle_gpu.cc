// tril's and triu's GPU kernels (ops/triangle.cc; ops/cuda/triangle_kernels.cu).
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/triangle_kernels.h"
#include "ops/operator.h"
#include "ops/triangle.h"

namespace mxlite {
namespace {

// out = in under the mask of the node's tril (kUpper false) or triu.
template <bool kUpper>
void Masked(const OpContext& ctx, const Attributes& attrs, const TensorView& in,
            const TensorView& out) {
  const std::string owner = TriangleOwner(kUpper, ctx.node_name);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const TriangleMask mask = TriangleMaskOf(attrs, kUpper, in.shape, owner);
  MXLITE_CUDA_CALL(cuda::Triangle(in.data, out.data, DTypeSize(in.dtype), mask.matrices, mask.rows,
                                  mask.columns, mask.k, kUpper, stream),
                   owner);
}

template <bool kUpper>
void ForwardGpu(const OpContext& ctx, const Attributes& attrs,
                const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                const std::vector<WriteMode>& req) {
  if (req[0] != WriteMode::kNull) Masked<kUpper>(ctx, attrs, inputs[0], outputs[0]);
}

template <bool kUpper>
void BackwardGpu(const OpContext& ctx, const Attributes& attrs,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                 const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  if (req[0] != WriteMode::kNull) Masked<kUpper>(ctx, attrs, output_grads[0], input_grads[0]);
}

}  // namespace

MXLITE_REGISTER_KERNELS(tril, kGPU, ForwardGpu<false>, BackwardGpu<false>);
MXLITE_REGISTER_KERNELS(triu, kGPU, ForwardGpu<true>, BackwardGpu<true>);

}  // namespace mxlite
