// add_n's GPU kernels (ops/add_n.cc).
#include <vector>

#include "ops/cuda/array_kernels.h"
#include "ops/cuda/cuda_util.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

using cuda::Owner;

void AddNForwardGpu(const OpContext& ctx, const Attributes&, const std::vector<TensorView>& inputs,
                    const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = Owner("add_n", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  if (inputs.size() == 1) {
    cuda::CopyDeviceAsync(inputs[0].data, outputs[0].data, outputs[0].bytes(), stream, owner);
    return;
  }
  MXLITE_GPU_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, owner, {
    T* out = outputs[0].data_as<T>();
    const int64_t n = outputs[0].size();
    // out = arg0 + arg1, then out += arg_i: the CPU kernel's order (out may be arg0).
    MXLITE_CUDA_CALL(
        cuda::AddArrays(inputs[0].data_as<T>(), inputs[1].data_as<T>(), out, n, stream), owner);
    for (size_t i = 2; i < inputs.size(); ++i) {
      MXLITE_CUDA_CALL(cuda::AddArrays(out, inputs[i].data_as<T>(), out, n, stream), owner);
    }
  });
}

void AddNBackwardGpu(const OpContext& ctx, const Attributes&,
                     const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                     const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                     const std::vector<WriteMode>& req) {
  const std::string owner = Owner("add_n", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  for (size_t i = 0; i < input_grads.size(); ++i) {
    if (req[i] == WriteMode::kNull) continue;
    cuda::CopyDeviceAsync(output_grads[0].data, input_grads[i].data, input_grads[i].bytes(), stream,
                          owner);
  }
}

}  // namespace

MXLITE_REGISTER_KERNELS(add_n, kGPU, AddNForwardGpu, AddNBackwardGpu);

}  // namespace mxlite
