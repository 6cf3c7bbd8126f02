// The GPU kernels of the ops whose output is their input's elements unchanged (Flatten, Reshape,
// identity; ops/copy_kernels.h on the CPU): a device copy, skipped when run in place.
#include "ops/cuda/cuda_util.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

using cuda::Owner;

template <const char* kName>
void CopyForwardGpu(const OpContext& ctx, const Attributes&, const std::vector<TensorView>& inputs,
                    const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = Owner(kName, ctx);
  cuda::CopyDeviceAsync(inputs[0].data, outputs[0].data, outputs[0].bytes(),
                        cuda::PrepareStream(ctx, owner), owner);
}

template <const char* kName>
void CopyBackwardGpu(const OpContext& ctx, const Attributes&,
                     const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                     const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                     const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = Owner(kName, ctx);
  cuda::CopyDeviceAsync(output_grads[0].data, input_grads[0].data, input_grads[0].bytes(),
                        cuda::PrepareStream(ctx, owner), owner);
}

constexpr char kFlatten[] = "Flatten";
constexpr char kReshape[] = "Reshape";
constexpr char kIdentity[] = "identity";

}  // namespace

MXLITE_REGISTER_KERNELS(Flatten, kGPU, CopyForwardGpu<kFlatten>, CopyBackwardGpu<kFlatten>);
MXLITE_REGISTER_KERNELS(Reshape, kGPU, CopyForwardGpu<kReshape>, CopyBackwardGpu<kReshape>);
MXLITE_REGISTER_KERNELS(identity, kGPU, CopyForwardGpu<kIdentity>, CopyBackwardGpu<kIdentity>);

}  // namespace mxlite
