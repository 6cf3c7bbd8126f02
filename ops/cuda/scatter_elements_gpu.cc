// scatter_elements' GPU kernels (ops/scatter_elements.h; ops/cuda/scatter_elements_kernels.cu)
// over the index's data offsets (ops/cuda/element_index_gpu.h).
#include <algorithm>

#include "core/error.h"
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/element_index_gpu.h"
#include "ops/cuda/scatter_elements_kernels.h"
#include "ops/index_values.h"
#include "ops/operator.h"
#include "ops/scatter_elements.h"

namespace mxlite {
namespace {

using cuda::ScatterKind;

ScatterKind KindOf(ScatterReduction reduction) {
  switch (reduction) {
    case ScatterReduction::kAdd:
      return ScatterKind::kAdd;
    case ScatterReduction::kMul:
      return ScatterKind::kMul;
    case ScatterReduction::kMax:
      return ScatterKind::kMax;
    case ScatterReduction::kMin:
      return ScatterKind::kMin;
    default:
      return ScatterKind::kNone;
  }
}

// The node's lines and the index's data offsets on the device.
struct DeviceScatter {
  ScatterKind kind;
  cuda::ScatterLineGeometry lines;
  const int64_t* offsets;
};
DeviceScatter ScatterOf(const OpContext& ctx, const Attributes& attrs, const Shape& data,
                        const TensorView& index, cudaStream_t stream, const std::string& owner) {
  const int axis = ElementIndexAxis(attrs, data, index.shape, owner, "scattered");
  const ScatterLines lines = ScatterLinesOf(index.shape, axis);
  return {KindOf(ScatterReductionOf(attrs)),
          {lines.lines, lines.steps, lines.inner},
          DeviceElementOffsets(ctx, index, data, axis, stream, owner)};
}

void ForwardGpu(const OpContext& ctx, const Attributes& attrs,
                const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = ScatterElementsOwner(ctx.node_name);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const TensorView& data = inputs[0];
  const DeviceScatter s = ScatterOf(ctx, attrs, data.shape, inputs[1], stream, owner);
  if (outputs[0].data != data.data) {
    MXLITE_CUDA_CALL(
        cudaMemcpyAsync(outputs[0].data, data.data, data.bytes(), cudaMemcpyDeviceToDevice, stream),
        owner);
  }
  if (s.kind == ScatterKind::kNone) {
    MXLITE_CUDA_CALL(cuda::ScatterElementsWrite(s.lines, s.offsets, inputs[2].data,
                                                DTypeSize(data.dtype), outputs[0].data, stream),
                     owner);
    return;
  }
  const auto combine = [&](auto zero) {
    using T = decltype(zero);
    MXLITE_CUDA_CALL(
        cuda::ScatterElementsCombine<T>(s.kind, s.lines, s.offsets, inputs[2].data_as<T>(),
                                        outputs[0].data_as<T>(), stream),
        owner);
  };
  switch (data.dtype) {
    case DType::kFloat32:
      combine(float{});
      break;
    case DType::kFloat64:
      combine(double{});
      break;
    case DType::kFloat16:
      combine(__half{});
      break;
    case DType::kInt32:
      combine(int32_t{});
      break;
    case DType::kInt64:
      combine(int64_t{});
      break;
    default:
      MX_THROW() << owner << ": a reduction needs float32, float64, float16, int32 or int64 data "
                 << "on the GPU, not " << data.dtype;
  }
}

void BackwardGpu(const OpContext& ctx, const Attributes& attrs,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>& inputs,
                 const std::vector<TensorView>& outputs, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  const bool want_data = req[0] != WriteMode::kNull, want_update = req[2] != WriteMode::kNull;
  if (!want_data && !want_update) return;
  const std::string owner = ScatterElementsOwner(ctx.node_name);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  // dy has data's shape (data itself is there only when the reduction reads it).
  const DeviceScatter s = ScatterOf(ctx, attrs, output_grads[0].shape, inputs[1], stream, owner);
  const bool reads_values =
      s.kind == ScatterKind::kMul || s.kind == ScatterKind::kMax || s.kind == ScatterKind::kMin;
  MXLITE_GPU_FLOAT_TYPE_SWITCH(output_grads[0].dtype, T, owner, {
    T* d_data = want_data ? input_grads[0].data_as<T>() : nullptr;
    if (d_data != nullptr) {
      MXLITE_CUDA_CALL(cudaMemcpyAsync(d_data, output_grads[0].data, output_grads[0].bytes(),
                                       cudaMemcpyDeviceToDevice, stream),
                       owner);
    }
    using C = cuda::ComputeType<T>;
    C* there = reads_values ? ctx.scratch->GetArray<C>(std::max<int64_t>(output_grads[0].size(), 1))
                            : nullptr;
    MXLITE_CUDA_CALL(
        cuda::ScatterElementsBackward<T>(
            s.kind, s.lines, s.offsets, reads_values ? inputs[0].data_as<T>() : nullptr,
            reads_values ? inputs[2].data_as<T>() : nullptr,
            reads_values ? outputs[0].data_as<T>() : nullptr, output_grads[0].data_as<T>(), d_data,
            want_update ? input_grads[2].data_as<T>() : nullptr, there, stream),
        owner);
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(scatter_elements, kGPU, ForwardGpu, BackwardGpu);

}  // namespace mxlite
