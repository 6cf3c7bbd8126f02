// Resize's GPU kernels (ops/resize.h): the passes of ops/resize.cc, each with its axis's taps or
// readers (computed on the host, as on the CPU) copied to scratch device memory.
#include <vector>

#include "ops/cuda/cuda_util.h"
#include "ops/cuda/resize_kernels.h"
#include "ops/operator.h"
#include "ops/resize.h"

namespace mxlite {
namespace {

// `host` in scratch device memory (the copy is from pageable memory: `host` may go on return).
template <typename V>
const V* ToDevice(const OpContext& ctx, const std::vector<V>& host, cudaStream_t stream,
                  const std::string& owner) {
  V* device = ctx.scratch->GetArray<V>(static_cast<int64_t>(std::max<size_t>(host.size(), 1)));
  if (!host.empty()) {
    MXLITE_CUDA_CALL(cudaMemcpyAsync(device, host.data(), host.size() * sizeof(V),
                                     cudaMemcpyHostToDevice, stream),
                     owner);
  }
  return device;
}

cuda::ResizePass PassOf(const Shape& before, const ResizeAxis& a) {
  return {before.size(0, a.axis), a.in, a.out, before.size(a.axis + 1, before.ndim())};
}


void ResizeForwardGpu(const OpContext& ctx, const Attributes& attrs,
                      const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                      const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "Resize " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const ResizePlan plan = ResizePlanOf(attrs, inputs[0].shape, owner);
  if (plan.output.size() == 0) return;
  if (plan.axes.empty()) {
    MXLITE_CUDA_CALL(cudaMemcpyAsync(outputs[0].data, inputs[0].data, inputs[0].bytes(),
                                     cudaMemcpyDeviceToDevice, stream),
                     owner);
    return;
  }
  const std::vector<Shape> shapes = ResizePassShapes(inputs[0].shape, plan);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    const T* src = inputs[0].data_as<T>();
    for (size_t k = 0; k < plan.axes.size(); ++k) {
      const ResizeTaps taps = TapsOf(attrs, plan.axes[k]);
      const bool last = k + 1 == plan.axes.size();
      T* dst = last ? outputs[0].data_as<T>() : ctx.scratch->GetArray<T>(shapes[k + 1].size());
      MXLITE_CUDA_CALL(
          cuda::ResizeForwardPass<T>(PassOf(shapes[k], plan.axes[k]), taps.count,
                                     ToDevice(ctx, taps.index, stream, owner),
                                     ToDevice(ctx, taps.weight, stream, owner), src, dst, stream),
          owner);
      src = dst;
    }
  });
}

void ResizeBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                       const std::vector<TensorView>& output_grads,
                       const std::vector<TensorView>&, const std::vector<TensorView>&,
                       const std::vector<TensorView>& input_grads,
                       const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "Resize " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const TensorView& dx = input_grads[0];
  const ResizePlan plan = ResizePlanOf(attrs, dx.shape, owner);
  if (dx.size() == 0) return;
  if (plan.output.size() == 0) {
    MXLITE_CUDA_CALL(cudaMemsetAsync(dx.data, 0, dx.bytes(), stream), owner);
    return;
  }
  if (plan.axes.empty()) {
    MXLITE_CUDA_CALL(cudaMemcpyAsync(dx.data, output_grads[0].data, dx.bytes(),
                                     cudaMemcpyDeviceToDevice, stream),
                     owner);
    return;
  }
  const std::vector<Shape> shapes = ResizePassShapes(dx.shape, plan);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(dx.dtype, T, owner, {
    const T* grad = output_grads[0].data_as<T>();
    for (size_t k = plan.axes.size(); k-- > 0;) {
      const ResizeAxis& a = plan.axes[k];
      const ResizeReaders readers = ReadersOf(TapsOf(attrs, a), a.in);
      T* dst = k == 0 ? dx.data_as<T>() : ctx.scratch->GetArray<T>(shapes[k].size());
      MXLITE_CUDA_CALL(cuda::ResizeBackwardPass<T>(PassOf(shapes[k], a),
                                                   ToDevice(ctx, readers.begin, stream, owner),
                                                   ToDevice(ctx, readers.reader, stream, owner),
                                                   ToDevice(ctx, readers.weight, stream, owner),
                                                   grad, dst, stream),
                       owner);
      grad = dst;
    }
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(Resize, kGPU, ResizeForwardGpu, ResizeBackwardGpu);

}  // namespace mxlite
