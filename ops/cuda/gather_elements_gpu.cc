// gather_elements' GPU kernels (ops/gather_elements.cc; ops/cuda/gather_elements_kernels.cu)
// over the index's data offsets (ops/cuda/element_index_gpu.h). The backward adds with atomics:
// MXNET_ENFORCE_DETERMINISM=1 makes it an error.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/settings.h"
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/element_index_gpu.h"
#include "ops/cuda/gather_elements_kernels.h"
#include "ops/gather_elements.h"
#include "ops/index_values.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

// The offsets of the node's index (device memory) into data of `data_shape`, in scratch memory.
const int64_t* DeviceOffsets(const OpContext& ctx, const Attributes& attrs, const Shape& data_shape,
                             const TensorView& index, cudaStream_t stream,
                             const std::string& owner) {
  const int axis = ElementIndexAxis(attrs, data_shape, index.shape, owner, "gathered");
  return DeviceElementOffsets(ctx, index, data_shape, axis, stream, owner);
}

void ForwardGpu(const OpContext& ctx, const Attributes& attrs,
                const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = GatherElementsOwner(ctx.node_name);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const int64_t* offsets = DeviceOffsets(ctx, attrs, inputs[0].shape, inputs[1], stream, owner);
  MXLITE_CUDA_CALL(cuda::GatherElements(inputs[0].data, offsets, inputs[1].size(),
                                        DTypeSize(inputs[0].dtype), outputs[0].data, stream),
                   owner);
}

void BackwardGpu(const OpContext& ctx, const Attributes& attrs,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>& inputs,
                 const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = GatherElementsOwner(ctx.node_name);
  MX_CHECK(!Settings::Global().GetBool("MXNET_ENFORCE_DETERMINISM"))
      << owner << ": the GPU's gradient to the data adds with atomics in no fixed order, and "
      << "MXNET_ENFORCE_DETERMINISM=1 is set (the CPU's is deterministic)";
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const int64_t* offsets =
      DeviceOffsets(ctx, attrs, input_grads[0].shape, inputs[1], stream, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(output_grads[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(
        cuda::GatherElementsBackward<T>(output_grads[0].data_as<T>(), offsets, inputs[1].size(),
                                        input_grads[0].data_as<T>(), input_grads[0].size(), stream),
        owner);
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(gather_elements, kGPU, ForwardGpu, BackwardGpu);

}  // namespace mxlite
