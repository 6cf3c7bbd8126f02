// slice's GPU kernels (ops/slice.h): the window read as on the CPU (SliceGeometryOf), turned into
// element steps over the input, and moved by a strided copy (strided_copy.h).
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/strided_copy.h"
#include "ops/operator.h"
#include "ops/slice.h"

namespace mxlite {
namespace {

// The output (dense) and the input's window it reads: forward gathers, backward scatters.
cuda::StridedCopy CopyOf(const SliceGeometry& g, const Shape& data, DType dtype,
                         const std::string& owner) {
  MX_CHECK(data.ndim() <= cuda::kMaxKernelDims)
      << owner << ": " << data.ndim() << " dims; the GPU kernel takes up to "
      << cuda::kMaxKernelDims;
  cuda::StridedCopy copy;
  copy.ndim = data.ndim();
  copy.count = g.output.size();
  copy.element_size = static_cast<int>(DTypeSize(dtype));
  int64_t stride = 1;
  for (int d = data.ndim() - 1; d >= 0; --d) {
    copy.extents[d] = g.output[d];
    copy.steps[d] = stride * g.step[d];
    copy.base += stride * g.begin[d];
    stride *= data[d];
  }
  return copy;
}

void SliceForwardGpu(const OpContext& ctx, const Attributes& attrs,
                     const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                     const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = cuda::Owner("slice", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const TensorView& data = inputs[0];
  const cuda::StridedCopy copy =
      CopyOf(SliceGeometryOf(attrs, data.shape, owner), data.shape, data.dtype, owner);
  MXLITE_CUDA_CALL(cuda::RunStridedCopy(copy, data.size(), data.data, outputs[0].data, stream),
                   owner);
}

void SliceBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                      const std::vector<TensorView>& output_grads,
                      const std::vector<TensorView>&, const std::vector<TensorView>&,
                      const std::vector<TensorView>& input_grads,
                      const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = cuda::Owner("slice", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const TensorView& dx = input_grads[0];
  cuda::StridedCopy copy =
      CopyOf(SliceGeometryOf(attrs, dx.shape, owner), dx.shape, dx.dtype, owner);
  copy.scatter = true;
  MXLITE_CUDA_CALL(cudaMemsetAsync(dx.data, 0, dx.bytes(), stream), owner);
  MXLITE_CUDA_CALL(cuda::RunStridedCopy(copy, dx.size(), output_grads[0].data, dx.data, stream),
                   owner);
}

}  // namespace

MXLITE_REGISTER_KERNELS(slice, kGPU, SliceForwardGpu, SliceBackwardGpu);

}  // namespace mxlite
