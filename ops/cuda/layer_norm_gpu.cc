// LayerNorm's GPU kernels (ops/layer_norm.h): ops/cuda/layer_norm_kernels.cu over the groups that
// LayerNormGroupsOf reads from the attributes, as on the CPU.
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/layer_norm_kernels.h"
#include "ops/layer_norm.h"
#include "ops/normalization_signature.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

cuda::LayerNormShape ShapeOf(const LayerNormGroups& g) { return {g.outer, g.channels, g.inner}; }

void LayerNormForwardGpu(const OpContext& ctx, const Attributes& attrs,
                         const std::vector<TensorView>& inputs,
                         const std::vector<TensorView>& outputs, const std::vector<WriteMode>&) {
  const std::string owner = "LayerNorm " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const LayerNormGroups g = LayerNormGroupsOf(attrs, inputs[0].shape, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(cuda::LayerNormForward<T>(ShapeOf(g), attrs.GetFloat("eps"),
                                               inputs[0].data_as<T>(), inputs[1].data_as<T>(),
                                               inputs[2].data_as<T>(), outputs[0].data_as<T>(),
                                               outputs[1].data_as<T>(), outputs[2].data_as<T>(),
                                               stream),
                     owner);
  });
}

void LayerNormBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                          const std::vector<TensorView>& output_grads,
                          const std::vector<TensorView>& inputs,
                          const std::vector<TensorView>& outputs,
                          const std::vector<TensorView>& input_grads,
                          const std::vector<WriteMode>& req) {
  const std::string owner = "LayerNorm " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const LayerNormGroups g = LayerNormGroupsOf(attrs, inputs[0].shape, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(
        cuda::LayerNormBackward<T>(
            ShapeOf(g), output_grads[0].data_as<T>(), StatisticGradient<T>(output_grads, 1),
            StatisticGradient<T>(output_grads, 2), inputs[0].data_as<T>(), inputs[1].data_as<T>(),
            outputs[1].data_as<T>(), outputs[2].data_as<T>(),
            WrittenOrNull<T>(input_grads[0], req[0]), WrittenOrNull<T>(input_grads[1], req[1]),
            WrittenOrNull<T>(input_grads[2], req[2]), stream),
        owner);
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(LayerNorm, kGPU, LayerNormForwardGpu, LayerNormBackwardGpu);

}  // namespace mxlite
