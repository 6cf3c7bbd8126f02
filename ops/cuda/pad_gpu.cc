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

// The per-axis maps of ops/pad.cc (source index per output index, ops/pad.h's PadSourceIndex; CSR
// list of output indices per input index), built on the host and copied into scratch device memory.
cuda::PadGeometry PadMaps(const OpContext& ctx, const Attributes& attrs, const Shape& in,
                          const Shape& out, cudaStream_t stream, const std::string& owner) {
  const std::vector<int64_t>& pads = attrs.GetInts("pad_width");
  const PadMode mode = PadModeOf(attrs);
  const int ndim = in.ndim();
  std::vector<int64_t> host;
  std::vector<size_t> source_at(ndim), first_at(ndim), outputs_at(ndim);
  for (int axis = 0; axis < ndim; ++axis) {
    const int64_t extent = in[axis], before = pads[2 * axis], out_extent = out[axis];
    source_at[axis] = host.size();
    for (int64_t j = 0; j < out_extent; ++j) {
      host.push_back(PadSourceIndex(mode, j, before, extent));
    }
    first_at[axis] = host.size();
    std::vector<int64_t> first(extent + 1, 0), outputs(std::max<int64_t>(out_extent, 0));
    for (int64_t j = 0; j < out_extent; ++j) {
      const int64_t s = host[source_at[axis] + j];
      if (s >= 0) ++first[s + 1];
    }
    for (int64_t i = 0; i < extent; ++i) first[i + 1] += first[i];
    std::vector<int64_t> cursor(first.begin(), first.end() - 1);
    int64_t listed = 0;
    for (int64_t j = 0; j < out_extent; ++j) {
      const int64_t s = host[source_at[axis] + j];
      if (s >= 0) {
        outputs[cursor[s]++] = j;
        ++listed;
      }
    }
    host.insert(host.end(), first.begin(), first.end());
    outputs_at[axis] = host.size();
    host.insert(host.end(), outputs.begin(), outputs.begin() + listed);
  }
  int64_t* device =
      ctx.scratch->GetArray<int64_t>(static_cast<int64_t>(std::max<size_t>(host.size(), 1)));
  // Pageable source: the call returns once the data is staged, so `host` may go.
  MXLITE_CUDA_CALL(cudaMemcpyAsync(device, host.data(), host.size() * sizeof(int64_t),
                                   cudaMemcpyHostToDevice, stream),
                   owner);
  cuda::PadGeometry g;
  g.ndim = ndim;
  for (int axis = 0; axis < ndim; ++axis) {
    g.in_extents[axis] = in[axis];
    g.out_extents[axis] = out[axis];
    g.source[axis] = device + source_at[axis];
    g.first[axis] = device + first_at[axis];
    g.outputs[axis] = device + outputs_at[axis];
  }
  return g;
}

void PadForwardGpu(const OpContext& ctx, const Attributes& attrs,
                   const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                   const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull || outputs[0].size() == 0) return;
  const std::string owner = Owner("Pad", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const cuda::PadGeometry g = PadMaps(ctx, attrs, inputs[0].shape, outputs[0].shape, stream, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(cuda::PadForward(g, inputs[0].data_as<T>(), outputs[0].data_as<T>(),
                                      attrs.GetFloat("constant_value"), outputs[0].size(), stream),
                     owner);
  });
}

void PadBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                    const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                    const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                    const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull || input_grads[0].size() == 0) return;
  const std::string owner = Owner("Pad", ctx);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const cuda::PadGeometry g =
      PadMaps(ctx, attrs, input_grads[0].shape, output_grads[0].shape, stream, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(input_grads[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(cuda::PadBackward(g, output_grads[0].data_as<T>(), input_grads[0].data_as<T>(),
                                       input_grads[0].size(), stream),
                     owner);
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(Pad, kGPU, PadForwardGpu, PadBackwardGpu);

}  // namespace mxlite
