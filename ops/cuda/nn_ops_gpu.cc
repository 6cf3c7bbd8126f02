// GPU kernels of the neural-network ops other than convolution and GEMM: Activation (cuDNN for
// relu / sigmoid / tanh, .cu for softrelu / softsign), LeakyReLU, Pooling, BatchNorm, Dropout,
// softmax / log_softmax (also as Softmax / LogSoftmax) and SoftmaxOutput.
//
// Pooling, BatchNorm and softmax run our own kernels (ops/cuda/nn_kernels.cu), not cuDNN's:
// the CPU ops define semantics cuDNN does not have — pooling's 'full' convention, sum pooling,
// the divisor clipped to the padded input, empty windows giving 0 and max gradients routed to
// the first maximum; BatchNorm's moving variance from the biased batch variance (cuDNN keeps
// the unbiased one) and hidden outputs holding the variance (cuDNN saves 1/sqrt(var + eps)) with
// any eps >= 0 (cuDNN needs eps >= CUDNN_BN_MIN_EPSILON) and any channel axis; softmax's
// temperature. Matching the CPU exactly matters more here than cuDNN's speed.
#include <cmath>
#include <vector>

#include "ops/cuda/cuda_util.h"
#include "ops/cuda/kernels.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

// ---- Activation ----------------------------------------------------------------------------

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

// ---- LeakyReLU -----------------------------------------------------------------------------

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

// ---- Pooling -------------------------------------------------------------------------------

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

// ---- BatchNorm -----------------------------------------------------------------------------

enum BatchNormInput { kData, kGamma, kBeta, kMovingMean, kMovingVar };
enum BatchNormOutput { kOut, kMean, kVar };

cuda::BatchNormGeometry BatchNormGeometryOf(const Attributes& attrs, const Shape& data,
                                            const std::string& owner) {
  const int64_t axis = attrs.GetInt("axis");
  const int ndim = data.ndim();
  MX_CHECK(ndim >= 1 && axis >= -ndim && axis < ndim)
      << owner << ": axis " << axis << " is out of range for data of shape " << data;
  MX_CHECK(attrs.GetInt("channel_block") == 1)
      << owner << ": channel_block=" << attrs.GetInt("channel_block") << " runs on the CPU only";
  const int a = static_cast<int>(axis < 0 ? axis + ndim : axis);
  return {data.size(0, a), data[a], data.size(a + 1, ndim)};
}

cuda::BatchNormParams BatchNormParamsOf(const OpContext& ctx, const Attributes& attrs) {
  cuda::BatchNormParams p;
  p.eps = attrs.GetFloat("eps");
  p.momentum = attrs.GetFloat("momentum");
  p.fix_gamma = attrs.GetBool("fix_gamma");
  p.batch_stats = ctx.is_train && !attrs.GetBool("use_global_stats");
  return p;
}

void BatchNormForwardGpu(const OpContext& ctx, const Attributes& attrs,
                         const std::vector<TensorView>& inputs,
                         const std::vector<TensorView>& outputs,
                         const std::vector<WriteMode>& req) {
  const std::string owner = "BatchNorm " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const cuda::BatchNormGeometry g = BatchNormGeometryOf(attrs, inputs[kData].shape, owner);
  const cuda::BatchNormParams p = BatchNormParamsOf(ctx, attrs);
  MX_CHECK(p.eps >= 0) << owner << ": eps=" << p.eps << " must be >= 0";
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[kData].dtype, T, owner, {
    using P = cuda::BatchNormParamType<T>;  // float for float16 data
    cuda::BatchNormForwardArgs<T> a;
    a.x = inputs[kData].data_as<T>();
    a.gamma = inputs[kGamma].data_as<P>();
    a.beta = inputs[kBeta].data_as<P>();
    a.moving_mean = inputs[kMovingMean].data_as<P>();
    a.moving_var = inputs[kMovingVar].data_as<P>();
    a.saved_mean = req[kMean] == WriteMode::kNull ? nullptr : outputs[kMean].data_as<P>();
    a.saved_var = req[kVar] == WriteMode::kNull ? nullptr : outputs[kVar].data_as<P>();
    a.y = req[kOut] == WriteMode::kNull ? nullptr : outputs[kOut].data_as<T>();
    a.coefficients = ctx.scratch->GetArray<double>(2 * g.channels);
    MXLITE_CUDA_CALL(cuda::BatchNormForward(g, p, a, stream), owner);
  });
}

void BatchNormBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                          const std::vector<TensorView>& output_grads,
                          const std::vector<TensorView>& inputs,
                          const std::vector<TensorView>& outputs,
                          const std::vector<TensorView>& input_grads,
                          const std::vector<WriteMode>& req) {
  if (req[kData] == WriteMode::kNull && req[kGamma] == WriteMode::kNull &&
      req[kBeta] == WriteMode::kNull) {
    return;
  }
  const std::string owner = "BatchNorm " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const cuda::BatchNormGeometry g = BatchNormGeometryOf(attrs, inputs[kData].shape, owner);
  const cuda::BatchNormParams p = BatchNormParamsOf(ctx, attrs);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[kData].dtype, T, owner, {
    using P = cuda::BatchNormParamType<T>;
    cuda::BatchNormBackwardArgs<T> a;
    a.x = inputs[kData].data_as<T>();
    a.dy = output_grads[kOut].data_as<T>();
    a.gamma = inputs[kGamma].data_as<P>();
    a.saved_mean = outputs[kMean].data_as<P>();
    a.saved_var = outputs[kVar].data_as<P>();
    a.dx = req[kData] == WriteMode::kNull ? nullptr : input_grads[kData].data_as<T>();
    a.dgamma = req[kGamma] == WriteMode::kNull ? nullptr : input_grads[kGamma].data_as<P>();
    a.dbeta = req[kBeta] == WriteMode::kNull ? nullptr : input_grads[kBeta].data_as<P>();
    a.coefficients = ctx.scratch->GetArray<double>(3 * g.channels);
    MXLITE_CUDA_CALL(cuda::BatchNormBackward(g, p, a, stream), owner);
  });
}

// ---- Dropout -------------------------------------------------------------------------------

void DropoutForwardGpu(const OpContext& ctx, const Attributes& attrs,
                       const std::vector<TensorView>& inputs,
                       const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "Dropout " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const double p = attrs.GetFloat("p");
  const double scale = p < 1 ? 1.0 / (1.0 - p) : 0.0;
  const bool active = p > 0 && (ctx.is_train || attrs.GetString("mode") == "always");
  const Shape& shape = inputs[0].shape;
  if (!active) {
    cuda::CopyDeviceAsync(inputs[0].data, outputs[0].data, outputs[0].bytes(), stream, owner);
    return;
  }
  MX_CHECK(ctx.random != nullptr) << owner << ": no random generator in the op context";
  const uint64_t seed = (*ctx.random)();  // the CPU op's draw: the same mask for the same seed
  cuda::DropoutGeometry g;
  g.ndim = shape.ndim();
  for (int d = 0; d < shape.ndim(); ++d) g.extents[d] = g.drawn[d] = shape[d];
  for (int64_t axis : attrs.GetInts("axes")) {
    MX_CHECK(axis >= -shape.ndim() && axis < shape.ndim())
        << owner << ": axis " << axis << " of axes is out of range for data of shape " << shape;
    g.drawn[axis < 0 ? axis + shape.ndim() : axis] = 1;
  }
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    T* mask = req[1] == WriteMode::kNull ? nullptr : outputs[1].data_as<T>();
    MXLITE_CUDA_CALL(cuda::DropoutForward(g, seed, p, scale, inputs[0].data_as<T>(),
                                          outputs[0].data_as<T>(), mask, shape.size(), stream),
                     owner);
  });
}

void DropoutBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                        const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                        const std::vector<TensorView>& outputs,
                        const std::vector<TensorView>& input_grads,
                        const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "Dropout " + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const double p = attrs.GetFloat("p");
  const bool active = p > 0 && (ctx.is_train || attrs.GetString("mode") == "always");
  if (!active) {
    cuda::CopyDeviceAsync(output_grads[0].data, input_grads[0].data, input_grads[0].bytes(), stream,
                          owner);
    return;
  }
  MXLITE_GPU_FLOAT_TYPE_SWITCH(input_grads[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(
        cuda::MultiplyArrays(output_grads[0].data_as<T>(), outputs[1].data_as<T>(),
                             input_grads[0].data_as<T>(), input_grads[0].size(), stream),
        owner);
  });
}

// ---- softmax / log_softmax -----------------------------------------------------------------

cuda::SoftmaxGeometry AroundAxis(const Attributes& attrs, const Shape& data,
                                 const std::string& owner) {
  const int64_t axis = attrs.GetInt("axis");
  const int ndim = data.ndim();
  MX_CHECK(ndim >= 1 && axis >= -ndim && axis < ndim)
      << owner << ": axis " << axis << " is out of range for data of shape " << data;
  const int a = static_cast<int>(axis < 0 ? axis + ndim : axis);
  return {data.size(0, a), data[a], data.size(a + 1, ndim)};
}

double Temperature(const Attributes& attrs, const std::string& owner) {
  const double temperature = attrs.Has("temperature") ? attrs.GetFloat("temperature") : 1.0;
  MX_CHECK(temperature != 0) << owner << ": temperature must not be 0";
  return temperature;
}

template <bool kLog>
void SoftmaxForwardGpu(const OpContext& ctx, const Attributes& attrs,
                       const std::vector<TensorView>& inputs,
                       const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = std::string(kLog ? "log_softmax " : "softmax ") + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const cuda::SoftmaxGeometry g = AroundAxis(attrs, inputs[0].shape, owner);
  const double temperature = Temperature(attrs, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(cuda::SoftmaxForward(g, inputs[0].data_as<T>(), outputs[0].data_as<T>(),
                                          temperature, kLog, stream),
                     owner);
  });
}

template <bool kLog>
void SoftmaxBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                        const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                        const std::vector<TensorView>& outputs,
                        const std::vector<TensorView>& input_grads,
                        const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = std::string(kLog ? "log_softmax " : "softmax ") + ctx.node_name;
  cudaStream_t stream = cuda::PrepareStream(ctx, owner);
  const cuda::SoftmaxGeometry g = AroundAxis(attrs, outputs[0].shape, owner);
  const double temperature = Temperature(attrs, owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, owner, {
    MXLITE_CUDA_CALL(cuda::SoftmaxBackward(g, outputs[0].data_as<T>(), output_grads[0].data_as<T>(),
                                           input_grads[0].data_as<T>(), temperature, kLog, stream),
                     owner);
  });
}

// ---- SoftmaxOutput -------------------------------------------------------------------------

cuda::SoftmaxGeometry ClassLayout(const Attributes& attrs, const Shape& data,
                                  const std::string& owner) {
  MX_CHECK(data.ndim() >= 2) << owner << ": data must have at least 2 dims (batch, classes); got "
                             << data;
  if (attrs.GetBool("multi_output")) return {data[0], data[1], data.size(2, data.ndim())};
  if (attrs.GetBool("preserve_shape")) {
    return {data.size(0, data.ndim() - 1), data[data.ndim() - 1], 1};
  }
  return {data[0], data.size(1, data.ndim()), 1};
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

MXLITE_REGISTER_KERNELS(Activation, kGPU, ActivationForwardGpu, ActivationBackwardGpu);
MXLITE_REGISTER_KERNELS(LeakyReLU, kGPU, LeakyForwardGpu, LeakyBackwardGpu);
MXLITE_REGISTER_KERNELS(Pooling, kGPU, PoolingForwardGpu, PoolingBackwardGpu);
MXLITE_REGISTER_KERNELS(BatchNorm, kGPU, BatchNormForwardGpu, BatchNormBackwardGpu);
MXLITE_REGISTER_KERNELS(Dropout, kGPU, DropoutForwardGpu, DropoutBackwardGpu);
MXLITE_REGISTER_KERNELS(softmax, kGPU, SoftmaxForwardGpu<false>, SoftmaxBackwardGpu<false>);
MXLITE_REGISTER_KERNELS(log_softmax, kGPU, SoftmaxForwardGpu<true>, SoftmaxBackwardGpu<true>);
MXLITE_REGISTER_KERNELS(Softmax, kGPU, SoftmaxForwardGpu<false>, SoftmaxBackwardGpu<false>);
MXLITE_REGISTER_KERNELS(LogSoftmax, kGPU, SoftmaxForwardGpu<true>, SoftmaxBackwardGpu<true>);
MXLITE_REGISTER_KERNELS(SoftmaxOutput, kGPU, SoftmaxOutputForwardGpu, SoftmaxOutputBackwardGpu);

}  // namespace mxlite
