// Pooling's GPU kernels (ops/pooling.cc), our own (ops/cuda/pooling_kernels.cu), not cuDNN's: the
// CPU op defines semantics cuDNN does not have (the 'full' convention, sum pooling, the divisor
// clipped to the padded input, empty windows giving 0, max gradients routed to the first maximum).
#include <cmath>
#include <vector>

#include "ops/cuda/cuda_util.h"
#include "ops/cuda/pooling_kernels.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

// The geometry of ops/pooling.cc's MakeGeometry for data `in` pooled to `out` (whose shape the
// op's shape inference computed, with the pooling convention applied).
cuda::PoolingGeometry PoolingGeometryOf(const Attributes& attrs, const Shape& in, const Shape& out,
                                        const std::string& owner) {
  const int ndim = in.ndim();
  MX_CHECK(ndim >= 3 && ndim <= 5 && out.ndim() == ndim)
      << owner << ": data " << in << " and output " << out << " do not form a 1-D, 2-D or 3-D "
      << "pooling";
  const std::string layout = attrs.Has("layout") ? attrs.GetString("layout")
                             : ndim == 3         ? "NCW"
                             : ndim == 4         ? "NCHW"
                                                 : "NCDHW";
  MX_CHECK(layout != "NCHW16c") << owner << ": layout NCHW16c runs on the CPU only";
  cuda::PoolingGeometry g;
  const int spatial = ndim - 2;
  g.channels_last = layout.back() == 'C';
  g.batch = in[0];
  g.channels = g.channels_last ? in[ndim - 1] : in[1];
  const std::string& type = attrs.GetString("pool_type");
  g.type = type == "max" ? 0 : type == "avg" ? 1 : 2;
  g.count_include_pad = !attrs.Has("count_include_pad") || attrs.GetBool("count_include_pad");
  const int first = g.channels_last ? 1 : 2;
  const int offset = 3 - spatial;
  const bool global = attrs.GetBool("global_pool");
  auto per_dim = [&](const char* name, int64_t fallback) {
    std::vector<int64_t> values = attrs.GetInts(name);
    if (values.empty()) values.assign(spatial, fallback);
    MX_CHECK(static_cast<int>(values.size()) == spatial)
        << owner << ": " << name << "=" << FormatIntTuple(values) << " does not fit data " << in;
    return values;
  };
  for (int i = 0; i < spatial; ++i) {
    g.in[offset + i] = in[first + i];
    g.out[offset + i] = out[first + i];
  }
  if (global) {
    for (int i = 0; i < spatial; ++i) g.kernel[offset + i] = in[first + i];
    return g;
  }
  const std::vector<int64_t> kernel = per_dim("kernel", 1), stride = per_dim("stride", 1),
                             pad = per_dim("pad", 0);
  for (int i = 0; i < spatial; ++i) {
    g.kernel[offset + i] = kernel[i];
    g.stride[offset + i] = stride[i];
    g.pad[offset + i] = pad[i];
  }
  return g;
}

void PoolingForwardGpu(const OpContext& ctx, const Attributes& attrs,
                       const std::vector<TensorView>& inputs,
                       const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "Pooling " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const cuda::PoolingGeometry g =
      PoolingGeometryOf(attrs, inputs[0].shape, outputs[0].shape, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(
        cuda::PoolingForward(g, inputs[0].data_as<T>(), outputs[0].data_as<T>(), stream), owner);
  });
}

void PoolingBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                        const std::vector<TensorView>& output_grads,
                        const std::vector<TensorView>& inputs, const std::vector<TensorView>&,
                        const std::vector<TensorView>& input_grads,
                        const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "Pooling " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const cuda::PoolingGeometry g =
      PoolingGeometryOf(attrs, input_grads[0].shape, output_grads[0].shape, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(input_grads[0].dtype, T, owner, {
    const T* x = g.type == 0 ? inputs[0].data_as<T>() : nullptr;
    MXLITE_CUDA_CALL(cuda::PoolingBackward(g, x, output_grads[0].data_as<T>(),
                                           input_grads[0].data_as<T>(), stream),
                     owner);
  });
}

}  // namespace

MXLITE_REGISTER_KERNELS(Pooling, kGPU, PoolingForwardGpu, PoolingBackwardGpu);

}  // namespace mxlite
