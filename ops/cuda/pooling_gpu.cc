// Pooling's GPU kernels (ops/pooling.cc), our own (ops/cuda/pooling_kernels.cu), not cuDNN's: the
// CPU op defines semantics cuDNN does not have (the 'full' convention, sum pooling, the divisor
// clipped to the padded input, empty windows giving 0, max gradients routed to the first maximum).
#include <vector>

#include "ops/cuda/cuda_util.h"
#include "ops/cuda/pooling_kernels.h"
#include "ops/operator.h"
#include "ops/pooling.h"

namespace mxlite {
namespace {

// The kernels' geometry of the op's (ops/pooling.h, read as on the CPU); NCHW16c is refused.
cuda::PoolingGeometry KernelGeometry(const Attributes& attrs, const Shape& data,
                                     const std::string& owner) {
  const PoolingGeometry op = PoolingGeometryOf(attrs, data, owner);
  MX_CHECK(!op.blocked) << owner << ": layout NCHW16c runs on the CPU only";
  cuda::PoolingGeometry g;
  static_assert(sizeof(g.in) / sizeof(g.in[0]) == kMaxPoolingSpatialDims,
                "the kernel's geometry holds as many spatial axes as the op's");
  g.batch = op.batch;
  g.channels = op.channels;
  for (int d = 0; d < kMaxPoolingSpatialDims; ++d) {
    g.in[d] = op.in[d];
    g.out[d] = op.out[d];
    g.kernel[d] = op.kernel[d];
    g.stride[d] = op.stride[d];
    g.pad[d] = op.pad[d];
    g.dilate[d] = op.dilate[d];
  }
  g.channels_last = op.channels_last;
  g.type = op.type == PoolingType::kMax ? 0 : op.type == PoolingType::kAvg ? 1 : 2;
  g.count_include_pad = op.count_include_pad;
  return g;
}

void PoolingForwardGpu(const OpContext& ctx, const Attributes& attrs,
                       const std::vector<TensorView>& inputs,
                       const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "Pooling " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const cuda::PoolingGeometry g = KernelGeometry(attrs, inputs[0].shape, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(
        cuda::PoolingForward(g, inputs[0].data_as<T>(), outputs[0].data_as<T>(), stream), owner);
  });
}

void PoolingBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                        const std::vector<TensorView>& output_grads,
                        const std::vector<TensorView>& inputs, const std::vector<TensorView>&,
                        const std::vector<TensorView>& input_grads,
                        const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "Pooling " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const cuda::PoolingGeometry g = KernelGeometry(attrs, input_grads[0].shape, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(input_grads[0].dtype, T, owner, {
    const T* x = g.type == 0 ? inputs[0].data_as<T>() : nullptr;
    MXLITE_CUDA_CALL(cuda::PoolingBackward(g, x, output_grads[0].data_as<T>(),
                                           input_grads[0].data_as<T>(), stream),
                     owner);
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(Pooling, kGPU, PoolingForwardGpu, PoolingBackwardGpu);

}  // namespace mxlite
