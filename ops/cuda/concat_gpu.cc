// Concat's GPU kernels (ops/concat.cc): strided 2-D copies.
#include <vector>

#include "ops/concat.h"
#include "ops/cuda/cuda_util.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

using cuda::Owner;

// Copies between the output (outer rows of all parts) and each part (outer rows of its own).
void ConcatCopies(const OpContext& ctx, const Attributes& attrs, const TensorView& whole,
                  const std::vector<TensorView>& parts, const std::vector<WriteMode>* part_req,
                  bool to_output) {
  const std::string owner = Owner("Concat", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const int ndim = whole.shape.ndim();
  const int axis = ConcatAxisOf(attrs, ndim);
  const int64_t outer = whole.shape.size(0, axis);
  const size_t element = DTypeSize(whole.dtype);
  const size_t whole_row = static_cast<size_t>(whole.shape.size(axis, ndim)) * element;
  size_t start = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const size_t row = static_cast<size_t>(parts[i].shape.size(axis, ndim)) * element;
    const bool wanted = part_req == nullptr || (*part_req)[i] != WriteMode::kNull;
    if (wanted && row > 0 && outer > 0) {
      char* whole_bytes = static_cast<char*>(whole.data) + start;
      char* part_bytes = static_cast<char*>(parts[i].data);
      if (to_output) {
        MXLITE_CUDA_CALL(
            cudaMemcpy2DAsync(whole_bytes, whole_row, part_bytes, row, row,
                              static_cast<size_t>(outer), cudaMemcpyDeviceToDevice, stream),
            owner);
      } else {
        MXLITE_CUDA_CALL(
            cudaMemcpy2DAsync(part_bytes, row, whole_bytes, whole_row, row,
                              static_cast<size_t>(outer), cudaMemcpyDeviceToDevice, stream),
            owner);
      }
    }
    start += row;
  }
}

void ConcatForwardGpu(const OpContext& ctx, const Attributes& attrs,
                      const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                      const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  ConcatCopies(ctx, attrs, outputs[0], inputs, nullptr, /*to_output=*/true);
}

void ConcatBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                       const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                       const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                       const std::vector<WriteMode>& req) {
  ConcatCopies(ctx, attrs, output_grads[0], input_grads, &req, /*to_output=*/false);
}

}  // namespace

MXLITE_REGISTER_KERNELS(Concat, kGPU, ConcatForwardGpu, ConcatBackwardGpu);

}  // namespace mxlite
