// GroupNorm's GPU kernels (ops/group_norm.h): ops/cuda/group_norm_kernels.cu over the geometry
// GroupNormGeometryOf reads from the attributes, as on the CPU.
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/group_norm_kernels.h"
#include "ops/group_norm.h"
#include "ops/normalization_signature.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

cuda::GroupNormShape ShapeOf(const GroupNormGeometry& g) {
  return {g.batch, g.groups, g.channels_per_group, g.spatial};
}

void ForwardGpu(const OpContext& ctx, const Attributes& attrs,
                const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                const std::vector<WriteMode>&) {
  const std::string owner = "GroupNorm " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const GroupNormGeometry g = GroupNormGeometryOf(attrs, inputs[0].shape, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(cuda::GroupNormForward<T>(
                         ShapeOf(g), attrs.GetFloat("eps"), inputs[0].data_as<T>(),
                         inputs[1].data_as<T>(), inputs[2].data_as<T>(), outputs[0].data_as<T>(),
                         outputs[1].data_as<T>(), outputs[2].data_as<T>(), stream),
                     owner);
  });
}

void BackwardGpu(const OpContext& ctx, const Attributes& attrs,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>& inputs,
                 const std::vector<TensorView>& outputs, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  const std::string owner = "GroupNorm " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const GroupNormGeometry g = GroupNormGeometryOf(attrs, inputs[0].shape, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(
        cuda::GroupNormBackward<T>(
            ShapeOf(g), output_grads[0].data_as<T>(), StatisticGradient<T>(output_grads, 1),
            StatisticGradient<T>(output_grads, 2), inputs[0].data_as<T>(), inputs[1].data_as<T>(),
            outputs[1].data_as<T>(), outputs[2].data_as<T>(),
            WrittenOrNull<T>(input_grads[0], req[0]), WrittenOrNull<T>(input_grads[1], req[1]),
            WrittenOrNull<T>(input_grads[2], req[2]), stream),
        owner);
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(GroupNorm, kGPU, ForwardGpu, BackwardGpu);

}  // namespace mxlite
