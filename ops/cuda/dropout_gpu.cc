// Dropout's GPU kernels (ops/dropout.cc): the CPU op's draws, bit for bit
// (ops/cuda/dropout_kernels.cu).
#include <cmath>
#include <vector>

#include "ops/cuda/array_kernels.h"
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/dropout_kernels.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

void DropoutForwardGpu(const OpContext& ctx, const Attributes& attrs,
                       const std::vector<TensorView>& inputs,
                       const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "Dropout " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const double p = attrs.GetFloat("p");
  const double scale = p < 1 ? 1.0 / (1.0 - p) : 0.0;
  const bool active = p > 0 && (ctx.is_train || attrs.GetString("mode") == "always");
  const Shape& shape = inputs[0].shape;
  if (!active) {
    cuda::CopyDeviceAsync(inputs[0].data, outputs[0].data, outputs[0].bytes(), stream, owner);
    return;
  }
  MX_CHECK(ctx.random != nullptr) << owner << ": no random generator in the op context";
  const uint64_t seed = (*ctx.random)();  // the CPU op's draw: the same mask for the same seed
  cuda::DropoutGeometry g;
  g.ndim = shape.ndim();
  for (int d = 0; d < shape.ndim(); ++d) g.extents[d] = g.drawn[d] = shape[d];
  for (int64_t axis : attrs.GetInts("axes")) {
    MX_CHECK(axis >= -shape.ndim() && axis < shape.ndim())
        << owner << ": axis " << axis << " of axes is out of range for data of shape " << shape;
    g.drawn[axis < 0 ? axis + shape.ndim() : axis] = 1;
  }
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    T* mask = req[1] == WriteMode::kNull ? nullptr : outputs[1].data_as<T>();
    MXLITE_CUDA_CALL(cuda::DropoutForward(g, seed, p, scale, inputs[0].data_as<T>(),
                                          outputs[0].data_as<T>(), mask, shape.size(), stream),
                     owner);
  });
}

void DropoutBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                        const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                        const std::vector<TensorView>& outputs,
                        const std::vector<TensorView>& input_grads,
                        const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "Dropout " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const double p = attrs.GetFloat("p");
  const bool active = p > 0 && (ctx.is_train || attrs.GetString("mode") == "always");
  if (!active) {
    cuda::CopyDeviceAsync(output_grads[0].data, input_grads[0].data, input_grads[0].bytes(), stream,
                          owner);
    return;
  }
  MXLITE_GPU_FLOAT_TYPE_SWITCH(input_grads[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(
        cuda::MultiplyArrays(output_grads[0].data_as<T>(), outputs[1].data_as<T>(),
                             input_grads[0].data_as<T>(), input_grads[0].size(), stream),
        owner);
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(Dropout, kGPU, DropoutForwardGpu, DropoutBackwardGpu);

}  // namespace mxlite
