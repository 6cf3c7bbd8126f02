// Pad's GPU kernels (ops/pad.cc; ops/cuda/pad_kernels.cu).
#include <algorithm>
#include <vector>

#include "ops/cuda/cuda_util.h"
#include "ops/cuda/pad_kernels.h"
#include "ops/operator.h"
#include "ops/pad.h"

namespace mxlite {
namespace {

using cuda::Owner;

// The kernels' geometry: extents, front pads and mode (pad_kernels.h).
cuda::PadGeometry Geometry(const Attributes& attrs, const Shape& in, const Shape& out) {
  const std::vector<int64_t>& pads = attrs.GetInts("pad_width");
  cuda::PadGeometry g;
  g.ndim = in.ndim();
  g.mode = static_cast<int>(PadModeOf(attrs));
  for (int axis = 0; axis < in.ndim(); ++axis) {
    g.in_extents[axis] = in[axis];
    g.out_extents[axis] = out[axis];
    g.before[axis] = pads[2 * axis];
  }
  return g;
}

// Edge and reflect's backward lists (pad_kernels.h): per axis and input index, the output indices
// copying it (CSR), built on the host and copied into scratch device memory.
cuda::PadBackwardMaps BackwardMaps(const OpContext& ctx, const cuda::PadGeometry& g,
                                   cudaStream_t stream, const std::string& owner) {
  const PadMode mode = static_cast<PadMode>(g.mode);
  std::vector<int64_t> host;
  std::vector<size_t> first_at(g.ndim), outputs_at(g.ndim);
  for (int axis = 0; axis < g.ndim; ++axis) {
    const int64_t extent = g.in_extents[axis], out_extent = g.out_extents[axis];
    std::vector<int64_t> source(std::max<int64_t>(out_extent, 0));
    std::vector<int64_t> first(extent + 1, 0);
    for (int64_t j = 0; j < out_extent; ++j) {
      source[j] = PadSourceIndex(mode, j, g.before[axis], extent);
      if (source[j] >= 0) ++first[source[j] + 1];
    }
    for (int64_t i = 0; i < extent; ++i) first[i + 1] += first[i];
    std::vector<int64_t> outputs(static_cast<size_t>(first[extent]));
    std::vector<int64_t> cursor(first.begin(), first.end() - 1);
    for (int64_t j = 0; j < out_extent; ++j) {
      if (source[j] >= 0) outputs[cursor[source[j]]++] = j;
    }
    first_at[axis] = host.size();
    host.insert(host.end(), first.begin(), first.end());
    outputs_at[axis] = host.size();
    host.insert(host.end(), outputs.begin(), outputs.end());
  }
  int64_t* device =
      ctx.scratch->GetArray<int64_t>(static_cast<int64_t>(std::max<size_t>(host.size(), 1)));
  // Pageable source: the call returns once the data is staged, so `host` may go.
  MXLITE_CUDA_CALL(cudaMemcpyAsync(device, host.data(), host.size() * sizeof(int64_t),
                                   cudaMemcpyHostToDevice, stream),
                   owner);
  cuda::PadBackwardMaps maps;
  for (int axis = 0; axis < g.ndim; ++axis) {
    maps.first[axis] = device + first_at[axis];
    maps.outputs[axis] = device + outputs_at[axis];
  }
  return maps;
}

void PadForwardGpu(const OpContext& ctx, const Attributes& attrs,
                   const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                   const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull || outputs[0].size() == 0) return;
  const std::string owner = Owner("Pad", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const cuda::PadGeometry g = Geometry(attrs, inputs[0].shape, outputs[0].shape);
  const auto forward = [&](auto zero) {
    using T = decltype(zero);
    MXLITE_CUDA_CALL(
        cuda::PadForward(g, inputs[0].data_as<T>(), outputs[0].data_as<T>(),
                         PadFillFor(outputs[0].dtype, attrs.GetFloat("constant_value")),
                         outputs[0].size(), stream),
        owner);
  };
  switch (outputs[0].dtype) {
    case DType::kInt32:
      forward(int32_t{});
      break;
    case DType::kInt64:
      forward(int64_t{});
      break;
    case DType::kUInt8:
      forward(uint8_t{});
      break;
    default:
      MXLITE_GPU_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, owner, { forward(T{}); });
  }
}

void PadBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                    const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                    const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                    const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull || input_grads[0].size() == 0) return;
  const std::string owner = Owner("Pad", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const cuda::PadGeometry g = Geometry(attrs, input_grads[0].shape, output_grads[0].shape);
  const cuda::PadBackwardMaps maps = g.mode == static_cast<int>(PadMode::kConstant)
                                         ? cuda::PadBackwardMaps{}
                                         : BackwardMaps(ctx, g, stream, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(input_grads[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(cuda::PadBackward(g, maps, output_grads[0].data_as<T>(),
                                       input_grads[0].data_as<T>(), input_grads[0].size(), stream),
                     owner);
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(Pad, kGPU, PadForwardGpu, PadBackwardGpu);

}  // namespace mxlite
