// grid_sample's GPU kernels (ops/grid_sample.h; ops/cuda/grid_sample_kernels.cu). The data
// gradient sums with atomic adds, in no fixed order: with MXNET_ENFORCE_DETERMINISM=1 it is an
// error naming the node.
#include "core/settings.h"
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/grid_sample_kernels.h"
#include "ops/grid_sample.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

void ForwardGpu(const OpContext& ctx, const Attributes& attrs,
                const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = GridSampleOwner(ctx.node_name);
  const GridSampleGeometry g = GridSampleGeometryOf(attrs, inputs[0].shape, inputs[1].shape, owner);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(cuda::GridSampleForward<T>(g, inputs[0].data_as<T>(), inputs[1].data_as<T>(),
                                                outputs[0].data_as<T>(), stream),
                     owner);
  });
}

void BackwardGpu(const OpContext& ctx, const Attributes& attrs,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>& inputs,
                 const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  const std::string owner = GridSampleOwner(ctx.node_name);
  const GridSampleGeometry g = GridSampleGeometryOf(attrs, inputs[0].shape, inputs[1].shape, owner);
  MX_CHECK(req[0] == WriteMode::kNull || !Settings::Global().GetBool("MXNET_ENFORCE_DETERMINISM"))
      << owner << ": the GPU's gradient to the data sums with atomic adds in no fixed order, and "
      << "MXNET_ENFORCE_DETERMINISM=1 is set (the CPU's is deterministic)";
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    const T* dy = output_grads[0].data_as<T>();
    if (req[0] != WriteMode::kNull) {
      MXLITE_CUDA_CALL(cuda::GridSampleDataGradient<T>(g, inputs[1].data_as<T>(), dy,
                                                       input_grads[0].data_as<T>(), stream),
                       owner);
    }
    if (req[1] != WriteMode::kNull) {
      MXLITE_CUDA_CALL(
          cuda::GridSampleGridGradient<T>(g, inputs[0].data_as<T>(), inputs[1].data_as<T>(), dy,
                                          input_grads[1].data_as<T>(), stream),
          owner);
    }
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(grid_sample, kGPU, ForwardGpu, BackwardGpu);

}  // namespace mxlite
