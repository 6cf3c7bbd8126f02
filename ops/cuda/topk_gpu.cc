// topk's GPU kernels (ops/topk.h; ops/cuda/topk_kernels.cu): the lines are ranked into scratch
// positions, then the outputs are read from them.
#include <algorithm>

#include "ops/cuda/cuda_util.h"
#include "ops/cuda/topk_kernels.h"
#include "ops/operator.h"
#include "ops/topk.h"

namespace mxlite {
namespace {

cuda::TopkLines LinesOf(const TopkGeometry& g) {
  return {g.outer, g.extent, g.inner, g.k, g.ascending};
}

// The picked positions of every line, in scratch memory.
template <typename T>
const int64_t* Rank(const OpContext& ctx, const cuda::TopkLines& lines, const T* data,
                    cudaStream_t stream, const std::string& owner) {
  int64_t* picked =
      ctx.scratch->GetArray<int64_t>(std::max<int64_t>(lines.outer * lines.k * lines.inner, 1));
  MXLITE_CUDA_CALL(cuda::TopkRank<T>(lines, data, picked, stream), owner);
  return picked;
}

void StorePositions(const cuda::TopkLines& lines, const int64_t* picked, const TensorView& out,
                    cudaStream_t stream, const std::string& owner) {
  switch (out.dtype) {
    case DType::kFloat32:
      MXLITE_CUDA_CALL(cuda::TopkStorePositions(lines, picked, out.data_as<float>(), stream),
                       owner);
      break;
    case DType::kFloat64:
      MXLITE_CUDA_CALL(cuda::TopkStorePositions(lines, picked, out.data_as<double>(), stream),
                       owner);
      break;
    case DType::kInt32:
      MXLITE_CUDA_CALL(cuda::TopkStorePositions(lines, picked, out.data_as<int32_t>(), stream),
                       owner);
      break;
    default:
      MXLITE_CUDA_CALL(cuda::TopkStorePositions(lines, picked, out.data_as<int64_t>(), stream),
                       owner);
  }
}

void ForwardGpu(const OpContext& ctx, const Attributes& attrs,
                const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                const std::vector<WriteMode>& req) {
  const std::string owner = TopkOwner(ctx.node_name);
  const TopkGeometry g = TopkGeometryOf(attrs, inputs[0].shape, owner);
  const cuda::TopkLines lines = LinesOf(g);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    const T* data = inputs[0].data_as<T>();
    const int64_t* picked = Rank<T>(ctx, lines, data, stream, owner);
    if (g.ret == TopkReturn::kMask) {
      MXLITE_CUDA_CALL(cuda::TopkMask<T>(lines, picked, outputs[0].data_as<T>(), stream), owner);
      return;
    }
    const bool values = g.ret == TopkReturn::kValue || g.ret == TopkReturn::kBoth;
    if (values && req[0] != WriteMode::kNull) {
      MXLITE_CUDA_CALL(
          cuda::TopkGatherValues<T>(lines, data, picked, outputs[0].data_as<T>(), stream), owner);
    }
    if (g.ret != TopkReturn::kValue) {
      StorePositions(lines, picked, outputs[values ? 1 : 0], stream, owner);
    }
  });
}

void BackwardGpu(const OpContext& ctx, const Attributes& attrs,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>& inputs,
                 const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = TopkOwner(ctx.node_name);
  const TopkGeometry g = TopkGeometryOf(attrs, inputs[0].shape, owner);
  const cuda::TopkLines lines = LinesOf(g);
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    T* dx = input_grads[0].data_as<T>();
    if (g.ret != TopkReturn::kValue && g.ret != TopkReturn::kBoth) {
      MXLITE_CUDA_CALL(cudaMemsetAsync(dx, 0, input_grads[0].bytes(), stream), owner);
      return;
    }
    const int64_t* picked = Rank<T>(ctx, lines, inputs[0].data_as<T>(), stream, owner);
    MXLITE_CUDA_CALL(
        cuda::TopkScatterGradient<T>(lines, picked, output_grads[0].data_as<T>(), dx, stream),
        owner);
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(topk, kGPU, ForwardGpu, BackwardGpu);

}  // namespace mxlite
