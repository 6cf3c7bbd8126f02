// SoftmaxOutput's GPU kernels (ops/softmax_output.cc): softmax forward, the cross-entropy gradient
// backward; the classes read as on the CPU (ops/softmax.h).
#include <cmath>
#include <vector>

#include "ops/cuda/cuda_util.h"
#include "ops/cuda/kernels.h"
#include "ops/operator.h"
#include "ops/softmax.h"

namespace mxlite {
namespace {

cuda::SoftmaxGeometry ClassLayout(const Attributes& attrs, const Shape& data,
                                  const std::string& owner) {
  const SoftmaxExtent e = SoftmaxOutputClasses(attrs, data, owner);
  return {e.outer, e.length, e.inner};
}

void SoftmaxOutputForwardGpu(const OpContext& ctx, const Attributes& attrs,
                             const std::vector<TensorView>& inputs,
                             const std::vector<TensorView>& outputs,
                             const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "SoftmaxOutput " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const cuda::SoftmaxGeometry g = ClassLayout(attrs, inputs[0].shape, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(cuda::SoftmaxForward(g, inputs[0].data_as<T>(), outputs[0].data_as<T>(), 1.0,
                                          false, stream),
                     owner);
  });
}

// Class labels are read on the host (they are small) so that an invalid label is the same
// mxlite::Error as on the CPU; this synchronises the op's stream once.
template <typename T>
void HardLabelGradientGpu(const OpContext& ctx, const Attributes& attrs,
                          const cuda::SoftmaxGeometry& g, const TensorView& label, const T* y,
                          const T* dy, T* dx, cudaStream_t stream, const std::string& owner) {
  const int64_t positions = g.outer * g.inner;
  MX_CHECK(label.size() == positions) << owner << ": label has shape " << label.shape
                                      << " but the data needs " << positions << " class indices";
  std::vector<T> labels(static_cast<size_t>(positions));
  MXLITE_CUDA_CALL(cudaMemcpyAsync(labels.data(), label.data, labels.size() * sizeof(T),
                                   cudaMemcpyDeviceToHost, stream),
                   owner);
  MXLITE_CUDA_CALL(cudaStreamSynchronize(stream), owner);
  const bool use_ignore = attrs.GetBool("use_ignore");
  const int64_t ignore_label = static_cast<int64_t>(attrs.GetFloat("ignore_label"));
  std::vector<int64_t> class_index(static_cast<size_t>(positions));
  int64_t valid = 0;
  for (int64_t i = 0; i < positions; ++i) {
    const double value = static_cast<double>(static_cast<cuda::ComputeType<T>>(labels[i]));
    const bool matches_ignore = static_cast<int64_t>(value) == ignore_label;
    if (!matches_ignore) ++valid;
    if (use_ignore && matches_ignore) {
      class_index[i] = -1;
      continue;
    }
    MX_CHECK(std::floor(value) == value && value >= 0 && value < static_cast<double>(g.length))
        << owner << ": label " << value << " at position " << i << " is not a class index in [0, "
        << g.length << ")";
    class_index[i] = static_cast<int64_t>(value);
  }
  const double grad_scale = attrs.GetFloat("grad_scale");
  const std::string& normalization = attrs.GetString("normalization");
  double scale;
  if (normalization == "valid") {
    scale = grad_scale / static_cast<double>(std::max<int64_t>(valid, 1));
  } else {
    double normaliser = 1;
    if (normalization == "batch") {
      normaliser = attrs.GetBool("preserve_shape") ? static_cast<double>(label.shape.size())
                                                   : static_cast<double>(g.outer);
    }
    if (attrs.GetBool("multi_output")) normaliser *= static_cast<double>(g.inner);
    scale = grad_scale / normaliser;
  }
  const double alpha = attrs.GetFloat("smooth_alpha");
  const double on = 1 - alpha;
  const double off = g.length > 1 ? alpha / static_cast<double>(g.length - 1) : 0.0;
  int64_t* device_index = ctx.scratch->GetArray<int64_t>(std::max<int64_t>(positions, 1));
  MXLITE_CUDA_CALL(
      cudaMemcpyAsync(device_index, class_index.data(), class_index.size() * sizeof(int64_t),
                      cudaMemcpyHostToDevice, stream),
      owner);
  MXLITE_CUDA_CALL(
      cuda::SoftmaxOutputHardGradient(g, y, device_index, on, off, scale, dy, dx, stream), owner);
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
  const cuda::SoftmaxGeometry g = ClassLayout(attrs, data_shape, owner);
  const TensorView& label = inputs[1];
  const bool out_grad = attrs.GetBool("out_grad");
  MXLITE_GPU_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, owner, {
    const T* y = outputs[0].data_as<T>();
    const T* dy = out_grad ? output_grads[0].data_as<T>() : nullptr;
    T* dx = input_grads[0].data_as<T>();
    if (label.shape == data_shape) {
      MXLITE_CUDA_CALL(
          cuda::SoftmaxOutputSoftGradient(y, label.data_as<T>(), attrs.GetFloat("grad_scale"), dy,
                                          dx, data_shape.size(), stream),
          owner);
    } else {
      HardLabelGradientGpu<T>(ctx, attrs, g, label, y, dy, dx, stream, owner);
    }
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(SoftmaxOutput, kGPU, SoftmaxOutputForwardGpu, SoftmaxOutputBackwardGpu);

}  // namespace mxlite
