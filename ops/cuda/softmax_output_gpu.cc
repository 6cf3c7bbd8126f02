// SoftmaxOutput's GPU kernels (ops/softmax_output.cc): softmax forward, the cross-entropy gradient
// backward; the attributes, classes, labels and gradient scale read as on the CPU
// (ops/softmax_output.h).
#include <algorithm>
#include <vector>

#include "ops/cuda/cuda_util.h"
#include "ops/cuda/softmax_kernels.h"
#include "ops/cuda/softmax_output_kernels.h"
#include "ops/operator.h"
#include "ops/softmax_output.h"

namespace mxlite {
namespace {

cuda::SoftmaxGeometry ClassLayout(const SoftmaxExtent& e) { return {e.outer, e.length, e.inner}; }

void SoftmaxOutputForwardGpu(const OpContext& ctx, const Attributes& attrs,
                             const std::vector<TensorView>& inputs,
                             const std::vector<TensorView>& outputs,
                             const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "SoftmaxOutput " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const SoftmaxOutputParams p = SoftmaxOutputParamsOf(attrs, owner);
  const cuda::SoftmaxGeometry g = ClassLayout(SoftmaxOutputClasses(p, inputs[0].shape, owner));
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(cuda::SoftmaxForward(g, inputs[0].data_as<T>(), outputs[0].data_as<T>(), 1.0,
                                          false, stream),
                     owner);
  });
}

// Class labels are read on the host (they are small) so that an invalid label is the same
// mxlite::Error as on the CPU; this synchronises the op's stream once.
template <typename T>
void HardLabelGradientGpu(const OpContext& ctx, const SoftmaxOutputParams& p,
                          const SoftmaxExtent& classes, const TensorView& label, const T* y,
                          const T* dy, T* dx, cudaStream_t stream, const std::string& owner) {
  const cuda::SoftmaxGeometry g = ClassLayout(classes);
  const int64_t positions = g.outer * g.inner;
  MX_CHECK(label.size() == positions) << owner << ": label has shape " << label.shape
                                      << " but the data needs " << positions << " class indices";
  const std::vector<T> labels = cuda::CopyToHost<T>(label.data, positions, stream, owner);
  std::vector<int64_t> class_index(static_cast<size_t>(positions));
  int64_t valid = 0;
  for (int64_t i = 0; i < positions; ++i) {
    const double value = static_cast<double>(static_cast<cuda::ComputeType<T>>(labels[i]));
    if (!p.IsIgnoreLabel(value)) ++valid;
    class_index[i] = SoftmaxOutputClassIndex(p, value, i, g.length, owner);
  }
  const double scale = SoftmaxOutputGradientScale(p, classes, label.shape, valid);
  const SoftmaxOutputTarget smoothed = SoftmaxOutputTargetOf(p, g.length);
  int64_t* device_index = ctx.scratch->GetArray<int64_t>(std::max<int64_t>(positions, 1));
  cuda::CopyToDevice(class_index, device_index, stream, owner);
  MXLITE_CUDA_CALL(cuda::SoftmaxOutputHardGradient(g, y, device_index, smoothed.on, smoothed.off,
                                                   scale, dy, dx, stream),
                   owner);
}

void SoftmaxOutputBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                              const std::vector<TensorView>& output_grads,
                              const std::vector<TensorView>& inputs,
                              const std::vector<TensorView>& outputs,
                              const std::vector<TensorView>& input_grads,
                              const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "SoftmaxOutput " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const Shape& data_shape = outputs[0].shape;
  const SoftmaxOutputParams p = SoftmaxOutputParamsOf(attrs, owner);
  const SoftmaxExtent classes = SoftmaxOutputClasses(p, data_shape, owner);
  const TensorView& label = inputs[1];
  MXLITE_GPU_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, owner, {
    const T* y = outputs[0].data_as<T>();
    const T* dy = p.out_grad ? output_grads[0].data_as<T>() : nullptr;
    T* dx = input_grads[0].data_as<T>();
    if (label.shape == data_shape) {
      MXLITE_CUDA_CALL(cuda::SoftmaxOutputSoftGradient(y, label.data_as<T>(), p.grad_scale, dy, dx,
                                                       data_shape.size(), stream),
                       owner);
    } else {
      HardLabelGradientGpu<T>(ctx, p, classes, label, y, dy, dx, stream, owner);
    }
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(SoftmaxOutput, kGPU, SoftmaxOutputForwardGpu, SoftmaxOutputBackwardGpu);

}  // namespace mxlite
