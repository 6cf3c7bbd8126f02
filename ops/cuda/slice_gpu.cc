// slice's GPU kernels (ops/slice.h; slice_kernels.cu): the window read as on the CPU
// (SliceGeometryOf), turned into element steps over the input.
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/slice_kernels.h"
#include "ops/operator.h"
#include "ops/slice.h"

namespace mxlite {
namespace {

cuda::SliceWindow WindowOf(const SliceGeometry& g, const Shape& data, const std::string& owner) {
  MX_CHECK(data.ndim() <= cuda::kMaxKernelDims)
      << owner << ": " << data.ndim() << " dims; the GPU kernel takes up to "
      << cuda::kMaxKernelDims;
  cuda::SliceWindow w;
  w.ndim = data.ndim();
  w.count = g.output.size();
  int64_t stride = 1;
  for (int d = data.ndim() - 1; d >= 0; --d) {
    w.output_extents[d] = g.output[d];
    w.input_steps[d] = stride * g.step[d];
    w.base += stride * g.begin[d];
    stride *= data[d];
  }
  return w;
}

void SliceForwardGpu(const OpContext& ctx, const Attributes& attrs,
                     const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                     const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = cuda::Owner("slice", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const Shape& data = inputs[0].shape;
  const cuda::SliceWindow w = WindowOf(SliceGeometryOf(attrs, data, owner), data, owner);
  MXLITE_CUDA_CALL(cuda::SliceCopy(w, inputs[0].data, outputs[0].data,
                                   static_cast<int>(DTypeSize(inputs[0].dtype)), false, stream),
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
  const cuda::SliceWindow w = WindowOf(SliceGeometryOf(attrs, dx.shape, owner), dx.shape, owner);
  MXLITE_CUDA_CALL(cudaMemsetAsync(dx.data, 0, dx.bytes(), stream), owner);
  MXLITE_CUDA_CALL(cuda::SliceCopy(w, output_grads[0].data, dx.data,
                                   static_cast<int>(DTypeSize(dx.dtype)), true, stream),
                   owner);
}

}  // namespace

MXLITE_REGISTER_KERNELS(slice, kGPU, SliceForwardGpu, SliceBackwardGpu);

}  // namespace mxlite
