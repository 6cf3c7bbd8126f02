// softmax's and log_softmax's GPU kernels (ops/softmax.cc; also as Softmax and LogSoftmax), our own
// (ops/cuda/softmax_kernels.cu) for the temperature; the attributes read as on the CPU
// (ops/softmax.h).
#include <cmath>
#include <vector>

#include "ops/cuda/cuda_util.h"
#include "ops/cuda/softmax_kernels.h"
#include "ops/operator.h"
#include "ops/softmax.h"

namespace mxlite {
namespace {

cuda::SoftmaxGeometry AroundAxis(const Attributes& attrs, const Shape& data,
                                 const std::string& owner) {
  const SoftmaxExtent e = SoftmaxAroundAxis(attrs, data, owner);
  return {e.outer, e.length, e.inner};
}

template <bool kLog>
void SoftmaxForwardGpu(const OpContext& ctx, const Attributes& attrs,
                       const std::vector<TensorView>& inputs,
                       const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = std::string(kLog ? "log_softmax " : "softmax ") + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const cuda::SoftmaxGeometry g = AroundAxis(attrs, inputs[0].shape, owner);
  const double temperature = SoftmaxTemperature(attrs, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(cuda::SoftmaxForward(g, inputs[0].data_as<T>(), outputs[0].data_as<T>(),
                                          temperature, kLog, stream),
                     owner);
  });
}

template <bool kLog>
void SoftmaxBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                        const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                        const std::vector<TensorView>& outputs,
                        const std::vector<TensorView>& input_grads,
                        const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = std::string(kLog ? "log_softmax " : "softmax ") + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const cuda::SoftmaxGeometry g = AroundAxis(attrs, outputs[0].shape, owner);
  const double temperature = SoftmaxTemperature(attrs, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(cuda::SoftmaxBackward(g, outputs[0].data_as<T>(), output_grads[0].data_as<T>(),
                                           input_grads[0].data_as<T>(), temperature, kLog, stream),
                     owner);
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(softmax, kGPU, SoftmaxForwardGpu<false>, SoftmaxBackwardGpu<false>);
MXLITE_REGISTER_KERNELS(log_softmax, kGPU, SoftmaxForwardGpu<true>, SoftmaxBackwardGpu<true>);
MXLITE_REGISTER_KERNELS(Softmax, kGPU, SoftmaxForwardGpu<false>, SoftmaxBackwardGpu<false>);
MXLITE_REGISTER_KERNELS(LogSoftmax, kGPU, SoftmaxForwardGpu<true>, SoftmaxBackwardGpu<true>);

}  // namespace mxlite
