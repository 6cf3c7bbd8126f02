// transpose's GPU kernels (ops/transpose.cc; ops/cuda/transpose_kernels.cu), the permutation read
// as on the CPU (ops/transpose.h).
#include <vector>

#include "ops/cuda/cuda_util.h"
#include "ops/cuda/transpose_kernels.h"
#include "ops/operator.h"
#include "ops/transpose.h"

namespace mxlite {
namespace {

using cuda::Owner;

void Transpose(const TensorView& in, const std::vector<int>& axes, const TensorView& out,
               cudaStream_t stream, const std::string& owner) {
  if (in.shape.ndim() == 0) {
    cuda::CopyDeviceAsync(in.data, out.data, out.bytes(), stream, owner);
    return;
  }
  MXLITE_CUDA_CALL(cuda::TransposeCopy(cuda::MakeTransposeGeometry(in.shape, axes), in.data,
                                       out.data, DTypeSize(in.dtype), in.size(), stream),
                   owner);
}

void TransposeForwardGpu(const OpContext& ctx, const Attributes& attrs,
                         const std::vector<TensorView>& inputs,
                         const std::vector<TensorView>& outputs,
                         const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = Owner("transpose", ctx);
  Transpose(inputs[0], TransposePermutation(attrs, inputs[0].shape.ndim(), owner), outputs[0],
            cuda::PrepareStream(ctx, owner), owner);
}

void TransposeBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                          const std::vector<TensorView>& output_grads,
                          const std::vector<TensorView>&, const std::vector<TensorView>&,
                          const std::vector<TensorView>& input_grads,
                          const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = Owner("transpose", ctx);
  const int ndim = output_grads[0].shape.ndim();
  const std::vector<int> axes = TransposePermutation(attrs, ndim, owner);
  std::vector<int> inverse(ndim);
  for (int i = 0; i < ndim; ++i) inverse[axes[i]] = i;
  Transpose(output_grads[0], inverse, input_grads[0], cuda::PrepareStream(ctx, owner), owner);
}

}  // namespace

MXLITE_REGISTER_KERNELS(transpose, kGPU, TransposeForwardGpu, TransposeBackwardGpu);

}  // namespace mxlite
