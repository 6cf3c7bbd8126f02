// Activation's and LeakyReLU's GPU kernels (ops/activation.cc): cuDNN for relu, sigmoid and tanh,
// ops/cuda/activation_kernels.cu for softrelu, softsign and LeakyReLU.
#include <cmath>
#include <vector>

#include "ops/cuda/activation_kernels.h"
#include "ops/cuda/cuda_util.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

cuda::UnaryKind KindOf(const std::string& type) {
  if (type == "relu") return cuda::UnaryKind::kRelu;
  if (type == "sigmoid") return cuda::UnaryKind::kSigmoid;
  if (type == "tanh") return cuda::UnaryKind::kTanh;
  if (type == "softrelu") return cuda::UnaryKind::kSoftrelu;
  return cuda::UnaryKind::kSoftsign;
}

// relu, sigmoid and tanh go to cuDNN when the element count fits its int descriptors.
bool UsesCudnn(cuda::UnaryKind kind, int64_t n) {
  return (kind == cuda::UnaryKind::kRelu || kind == cuda::UnaryKind::kSigmoid ||
          kind == cuda::UnaryKind::kTanh) &&
         n > 0 && n <= INT32_MAX;
}

void SetActivation(const cuda::ActivationDescriptor& desc, cuda::UnaryKind kind,
                   const std::string& owner) {
  const cudnnActivationMode_t mode = kind == cuda::UnaryKind::kRelu      ? CUDNN_ACTIVATION_RELU
                                     : kind == cuda::UnaryKind::kSigmoid ? CUDNN_ACTIVATION_SIGMOID
                                                                         : CUDNN_ACTIVATION_TANH;
  MXLITE_CUDNN_CALL(cudnnSetActivationDescriptor(desc.get(), mode, CUDNN_PROPAGATE_NAN, 0.0),
                    owner);
}

void ActivationForwardGpu(const OpContext& ctx, const Attributes& attrs,
                          const std::vector<TensorView>& inputs,
                          const std::vector<TensorView>& outputs,
                          const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "Activation " + ctx.node_name;
  const cuda::UnaryKind kind = KindOf(attrs.GetString("act_type"));
  const int64_t n = inputs[0].size();
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    if (UsesCudnn(kind, n)) {
      cuda::ActivationDescriptor act;
      SetActivation(act, kind, owner);
      cuda::TensorDescriptor desc;
      desc.Set(inputs[0].dtype, false, 1, 1, 1, n, owner);
      const cuda::CudnnScalar<T> one = 1, zero = 0;
      MXLITE_CUDNN_CALL(
          cudnnActivationForward(cuda::CudnnHandle(ctx, owner), act.get(), &one, desc.get(),
                                 inputs[0].data, &zero, desc.get(), outputs[0].data),
          owner);
    } else {
      MXLITE_CUDA_CALL(
          cuda::ActivationForward(kind, inputs[0].data_as<T>(), outputs[0].data_as<T>(), n, stream),
          owner);
    }
  });
}

// Backward reads only the output (the op's declared dependency); cuDNN gets y for x, which its
// relu / sigmoid / tanh gradients allow (y > 0 iff x > 0; the others are written in y).
void ActivationBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                           const std::vector<TensorView>& output_grads,
                           const std::vector<TensorView>&, const std::vector<TensorView>& outputs,
                           const std::vector<TensorView>& input_grads,
                           const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "Activation " + ctx.node_name;
  const cuda::UnaryKind kind = KindOf(attrs.GetString("act_type"));
  const int64_t n = outputs[0].size();
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, owner, {
    if (UsesCudnn(kind, n)) {
      cuda::ActivationDescriptor act;
      SetActivation(act, kind, owner);
      cuda::TensorDescriptor desc;
      desc.Set(outputs[0].dtype, false, 1, 1, 1, n, owner);
      const cuda::CudnnScalar<T> one = 1, zero = 0;
      MXLITE_CUDNN_CALL(
          cudnnActivationBackward(cuda::CudnnHandle(ctx, owner), act.get(), &one, desc.get(),
                                  outputs[0].data, desc.get(), output_grads[0].data, desc.get(),
                                  outputs[0].data, &zero, desc.get(), input_grads[0].data),
          owner);
    } else {
      MXLITE_CUDA_CALL(
          cuda::ActivationBackward(kind, outputs[0].data_as<T>(), output_grads[0].data_as<T>(),
                                   input_grads[0].data_as<T>(), n, stream),
          owner);
    }
  });
}

void LeakyForwardGpu(const OpContext& ctx, const Attributes& attrs,
                     const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                     const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "LeakyReLU " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const bool elu = attrs.GetString("act_type") == "elu";
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(cuda::LeakyForward(elu, attrs.GetFloat("slope"), inputs[0].data_as<T>(),
                                        outputs[0].data_as<T>(), inputs[0].size(), stream),
                     owner);
  });
}

void LeakyBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                      const std::vector<TensorView>& output_grads,
                      const std::vector<TensorView>& inputs, const std::vector<TensorView>&,
                      const std::vector<TensorView>& input_grads,
                      const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "LeakyReLU " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const bool elu = attrs.GetString("act_type") == "elu";
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(cuda::LeakyBackward(elu, attrs.GetFloat("slope"), inputs[0].data_as<T>(),
                                         output_grads[0].data_as<T>(), input_grads[0].data_as<T>(),
                                         inputs[0].size(), stream),
                     owner);
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(Activation, kGPU, ActivationForwardGpu, ActivationBackwardGpu);
MXLITE_REGISTER_KERNELS(LeakyReLU, kGPU, LeakyForwardGpu, LeakyBackwardGpu);

}  // namespace mxlite
