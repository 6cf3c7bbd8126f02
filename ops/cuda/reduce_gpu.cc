// The reductions' GPU kernels (ops/reduce.h): ops/cuda/reduce_kernels.cu over the geometry of the
// data and its kept-dims shape, the same attributes read as on the CPU (ReducedAxesOf).
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/reduce_kernels.h"
#include "ops/operator.h"
#include "ops/reduce.h"

namespace mxlite {
namespace {

cuda::ReduceKind KindOf(Reduction reduction) {
  switch (reduction) {
    case Reduction::kSum:
    case Reduction::kMean:
      return cuda::ReduceKind::kSum;
    case Reduction::kMax:
      return cuda::ReduceKind::kMax;
    case Reduction::kMin:
      return cuda::ReduceKind::kMin;
    case Reduction::kProd:
      return cuda::ReduceKind::kProd;
  }
  return cuda::ReduceKind::kSum;
}

template <Reduction kReduction>
void ReduceForwardGpu(const OpContext& ctx, const Attributes& attrs,
                      const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                      const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = std::string(ReductionName(kReduction)) + " " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const ReducedAxes axes = ReducedAxesOf(attrs, inputs[0].shape, owner);
  const cuda::ReduceGeometry g = cuda::MakeReduceGeometry(inputs[0].shape, axes.kept_dims);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(
        cuda::Reduce(KindOf(kReduction), g, inputs[0].data_as<T>(), outputs[0].data_as<T>(),
                     ReductionScale(kReduction, axes.group), stream),
        owner);
  });
}

template <typename T>
void ProdBackwardGpu(const OpContext& ctx, const cuda::ReduceGeometry& g, const TensorView& x,
                     const T* dy, T* dx, cudaStream_t stream, const std::string& owner) {
  const int64_t n = x.size();
  T* nonzero = ctx.scratch->GetArray<T>(n);
  T* is_zero = ctx.scratch->GetArray<T>(n);
  T* product = ctx.scratch->GetArray<T>(g.kept_count);
  T* zeros = ctx.scratch->GetArray<T>(g.kept_count);
  MXLITE_CUDA_CALL(cuda::SplitZeros(x.data_as<T>(), nonzero, is_zero, n, stream), owner);
  MXLITE_CUDA_CALL(cuda::Reduce(cuda::ReduceKind::kProd, g, nonzero, product, 1.0, stream), owner);
  MXLITE_CUDA_CALL(cuda::Reduce(cuda::ReduceKind::kSum, g, is_zero, zeros, 1.0, stream), owner);
  MXLITE_CUDA_CALL(cuda::ProdBackward(g, x.data_as<T>(), dy, product, zeros, dx, n, stream), owner);
}

template <Reduction kReduction>
void ReduceBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                       const std::vector<TensorView>& output_grads,
                       const std::vector<TensorView>& inputs,
                       const std::vector<TensorView>& outputs,
                       const std::vector<TensorView>& input_grads,
                       const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = std::string(ReductionName(kReduction)) + " " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const TensorView& dx = input_grads[0];
  const ReducedAxes axes = ReducedAxesOf(attrs, dx.shape, owner);
  const cuda::ReduceGeometry g = cuda::MakeReduceGeometry(dx.shape, axes.kept_dims);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(dx.dtype, T, owner, {
    const T* dy = output_grads[0].data_as<T>();
    if (kReduction == Reduction::kProd) {
      ProdBackwardGpu<T>(ctx, g, inputs[0], dy, dx.data_as<T>(), stream, owner);
    } else {
      const T* x = inputs[0].data == nullptr ? nullptr : inputs[0].data_as<T>();
      const T* y = outputs[0].data == nullptr ? nullptr : outputs[0].data_as<T>();
      MXLITE_CUDA_CALL(
          cuda::ReduceBackward(KindOf(kReduction), g, x, y, dy, dx.data_as<T>(),
                               ReductionScale(kReduction, axes.group), dx.size(), stream),
          owner);
    }
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(sum, kGPU, ReduceForwardGpu<Reduction::kSum>,
                        ReduceBackwardGpu<Reduction::kSum>);
MXLITE_REGISTER_KERNELS(mean, kGPU, ReduceForwardGpu<Reduction::kMean>,
                        ReduceBackwardGpu<Reduction::kMean>);
MXLITE_REGISTER_KERNELS(max, kGPU, ReduceForwardGpu<Reduction::kMax>,
                        ReduceBackwardGpu<Reduction::kMax>);
MXLITE_REGISTER_KERNELS(min, kGPU, ReduceForwardGpu<Reduction::kMin>,
                        ReduceBackwardGpu<Reduction::kMin>);
MXLITE_REGISTER_KERNELS(prod, kGPU, ReduceForwardGpu<Reduction::kProd>,
                        ReduceBackwardGpu<Reduction::kProd>);

}  // namespace mxlite
