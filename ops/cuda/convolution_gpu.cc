// GPU kernels of Convolution and Deconvolution on cuDNN (legacy convolution API), 1-D (as 2-D with
// height 1) and 2-D, NCHW / NHWC (weights OIHW / OHWI), and 3-D NCDHW (N-d descriptors), groups,
// stride, pad and dilation; float32, float64 and float16. Deconvolution is the adjoint convolution:
// its forward is cuDNN's backward data, its backward cuDNN's forward and backward filter, with data
// and output swapping roles.
//
// Algorithms: a bound Convolution node runs the algorithms its plan chose per direction
// (cudnn_tuning.cc: the tuner over cuDNN's Find, per cudnn_tune / MXNET_CUDNN_AUTOTUNE_DEFAULT and
// the tuning DB), a bound Deconvolution node its adjoint's. Without a plan for the call's shapes
// (imperative calls), cuDNN's heuristic (cudnnGet*Algorithm_v7) picks: the first candidate that
// succeeds, fits the layer's tuning policy (conv::LayerTuningRequestFor, the one the tuner gets:
// the `workspace` limit (MB) and, with MXNET_ENFORCE_DETERMINISM=1, determinism) and uses an
// allowed math type (cuda_util.h: float32 stays FMA unless
// MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION=1). The workspace comes from the op's scratch space.
// Bias: cudnnAddTensor forward, cudnnConvolutionBackwardBias backward; with a fused clamp
// (act_min / act_max) or residual addition, one epilogue kernel adds the bias and the residual and
// clamps (cuda::ConvEpilogue). A bound node describes its tensors once (TunedConvolutionGpuState).
// cudnn_off=true is refused (there is no non-cuDNN GPU convolution) with an error naming the layer.
#include <algorithm>
#include <array>
#include <vector>

#include "ops/conv_attributes.h"
#include "ops/cuda/convolution_kernels.h"
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/cudnn_convolution.h"
#include "ops/deconvolution.h"
#include "ops/operator.h"

namespace mxlite {
namespace cuda {

namespace {

// A 3-D window (NCDHW): cuDNN's N-d descriptors, the same algorithms and Find.
void DescribeVolume(CudnnConvolution& c, const ConvWindow& window, DType dtype,
                    const Shape& x_shape, const Shape& y_shape, const std::vector<int64_t>& pad) {
  MX_CHECK(x_shape.ndim() == 5 && y_shape.ndim() == 5)
      << c.owner << ": the 3-D kernel " << FormatIntTuple(window.kernel)
      << " needs 5-D NCDHW tensors, not " << x_shape << " -> " << y_shape;
  c.dtype = dtype;
  c.x.SetVolume(dtype, x_shape, c.owner);
  c.y.SetVolume(dtype, y_shape, c.owner);
  c.bias.SetVolume(dtype, Shape{1, y_shape[1], 1, 1, 1}, c.owner);
  c.y_channels = y_shape[1];
  c.y_channel_run = y_shape[2] * y_shape[3] * y_shape[4];
  c.w.SetVolume(dtype,
                Shape{y_shape[1], x_shape[1] / window.num_group, window.kernel[0], window.kernel[1],
                      window.kernel[2]},
                c.owner);
  const cudnnDataType_t compute = dtype == DType::kFloat64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  std::array<int, 3> pads{}, strides{}, dilations{};
  for (size_t axis = 0; axis < 3; ++axis) {
    pads[axis] = CheckedInt(pad[axis], c.owner, "pad");
    strides[axis] = CheckedInt(window.stride[axis], c.owner, "stride");
    dilations[axis] = CheckedInt(window.dilate[axis], c.owner, "dilate");
  }
  MXLITE_CUDNN_CALL(
      cudnnSetConvolutionNdDescriptor(c.conv.get(), 3, pads.data(), strides.data(),
                                      dilations.data(), CUDNN_CROSS_CORRELATION, compute),
      c.owner);
  MXLITE_CUDNN_CALL(cudnnSetConvolutionGroupCount(
                        c.conv.get(), CheckedInt(window.num_group, c.owner, "num_group")),
                    c.owner);
  MXLITE_CUDNN_CALL(cudnnSetConvolutionMathType(c.conv.get(), ConvolutionMathType(dtype)), c.owner);
  std::array<int, 5> out{};
  MXLITE_CUDNN_CALL(
      cudnnGetConvolutionNdForwardOutputDim(c.conv.get(), c.x.get(), c.w.get(), 5, out.data()),
      c.owner);
  for (int i = 0; i < 5; ++i) {
    MX_CHECK(out[static_cast<size_t>(i)] == y_shape[i])
        << c.owner << ": cuDNN computes output (" << out[0] << "," << out[1] << "," << out[2] << ","
        << out[3] << "," << out[4] << ") for input " << x_shape << " but the op's is " << y_shape
        << "; this window (e.g. an adj at least the stride) is not supported on the GPU";
  }
}

}  // namespace

void DescribeConvolution(CudnnConvolution& c, const Attributes& attrs, const ConvWindow& window,
                         const conv::TuningPolicy& policy, DType dtype, const Shape& x_shape,
                         const Shape& y_shape, const std::vector<int64_t>& pad) {
  MX_CHECK(!attrs.GetBool("cudnn_off"))
      << c.owner << ": cudnn_off=true is not supported on the GPU (convolutions run on cuDNN)";
  MX_CHECK(window.data_layout != ActivationLayout::kNCHW16c)
      << c.owner << ": layout NCHW16c runs on the CPU only (the GPU runs NCHW and NHWC)";
  c.policy = policy;
  if (window.rank == 3) return DescribeVolume(c, window, dtype, x_shape, y_shape, pad);
  const ActivationExtents in = ReadActivation(window, x_shape, c.owner, "input");
  const ActivationExtents out = ReadActivation(window, y_shape, c.owner, "output");
  c.dtype = dtype;
  const bool last = window.channels_last;
  c.x.Set(dtype, last, in.batch, in.channels, in.height, in.width, c.owner);
  c.y.Set(dtype, last, out.batch, out.channels, out.height, out.width, c.owner);
  c.bias.Set(dtype, last, 1, out.channels, 1, 1, c.owner);
  c.y_channels = out.channels;
  c.y_channel_run = last ? 1 : out.height * out.width;
  const bool two_d = window.rank == 2;
  c.w.Set(dtype, last, out.channels, in.channels / window.num_group, two_d ? window.kernel[0] : 1,
          window.kernel.back(), c.owner);
  const cudnnDataType_t compute = dtype == DType::kFloat64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  auto axis = [&](const std::vector<int64_t>& values, int64_t fallback, bool height) {
    return CheckedInt(height ? (two_d ? values[0] : fallback) : values.back(), c.owner, "window");
  };
  MXLITE_CUDNN_CALL(
      cudnnSetConvolution2dDescriptor(c.conv.get(), axis(pad, 0, true), axis(pad, 0, false),
                                      axis(window.stride, 1, true), axis(window.stride, 1, false),
                                      axis(window.dilate, 1, true), axis(window.dilate, 1, false),
                                      CUDNN_CROSS_CORRELATION, compute),
      c.owner);
  MXLITE_CUDNN_CALL(cudnnSetConvolutionGroupCount(
                        c.conv.get(), CheckedInt(window.num_group, c.owner, "num_group")),
                    c.owner);
  MXLITE_CUDNN_CALL(cudnnSetConvolutionMathType(c.conv.get(), ConvolutionMathType(dtype)), c.owner);
  int n = 0, k = 0, h = 0, w = 0;
  MXLITE_CUDNN_CALL(
      cudnnGetConvolution2dForwardOutputDim(c.conv.get(), c.x.get(), c.w.get(), &n, &k, &h, &w),
      c.owner);
  MX_CHECK(n == out.batch && k == out.channels && h == out.height && w == out.width)
      << c.owner << ": cuDNN computes output (" << n << "," << k << "," << h << "," << w
      << ") for input " << x_shape << " but the op's is " << y_shape
      << "; this window (e.g. an adj at least the stride) is not supported on the GPU";
}

}  // namespace cuda

namespace {

using conv::ConvDirection;
using cuda::CudnnAlgorithm;
using cuda::CudnnConvolution;

// The first heuristic candidate that cuDNN can run within the layer's policy (its workspace limit
// and, with MXNET_ENFORCE_DETERMINISM=1, determinism) in an allowed math type.
template <typename Perf>
CudnnAlgorithm PickCandidate(const CudnnConvolution& c, const std::vector<Perf>& candidates,
                             int returned, const char* pass) {
  const conv::TuningPolicy& policy = c.policy;
  for (int i = 0; i < returned; ++i) {
    const Perf& p = candidates[i];
    if (p.status != CUDNN_STATUS_SUCCESS || p.memory > policy.workspace_limit_bytes) continue;
    if (!cuda::ConvolutionMathTypeAllowed(p.mathType, c.dtype)) continue;
    if (policy.deterministic_only && p.determinism != CUDNN_DETERMINISTIC) continue;
    return {static_cast<int>(p.algo), p.mathType};
  }
  MX_THROW() << c.owner << ": cuDNN offers no " << pass
             << " algorithm within workspace=" << (policy.workspace_limit_bytes >> 20) << " MB"
             << (policy.deterministic_only ? " that is deterministic (MXNET_ENFORCE_DETERMINISM=1)"
                                           : "")
             << "; raise the layer's workspace attribute";
}

void* Workspace(const OpContext& ctx, size_t bytes) {
  return bytes == 0 ? nullptr : ctx.scratch->Get(bytes);
}

// The heuristic's algorithm for each direction (used when no plan applies).
CudnnAlgorithm HeuristicForward(cudnnHandle_t handle, const CudnnConvolution& c) {
  int count = 0, returned = 0;
  MXLITE_CUDNN_CALL(cudnnGetConvolutionForwardAlgorithmMaxCount(handle, &count), c.owner);
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(std::max(count, 1));
  MXLITE_CUDNN_CALL(
      cudnnGetConvolutionForwardAlgorithm_v7(handle, c.x.get(), c.w.get(), c.conv.get(), c.y.get(),
                                             count, &returned, perf.data()),
      c.owner);
  return PickCandidate(c, perf, returned, "forward");
}

CudnnAlgorithm HeuristicBackwardData(cudnnHandle_t handle, const CudnnConvolution& c) {
  int count = 0, returned = 0;
  MXLITE_CUDNN_CALL(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(handle, &count), c.owner);
  std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(std::max(count, 1));
  MXLITE_CUDNN_CALL(
      cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, c.w.get(), c.y.get(), c.conv.get(),
                                                  c.x.get(), count, &returned, perf.data()),
      c.owner);
  return PickCandidate(c, perf, returned, "backward-data");
}

CudnnAlgorithm HeuristicBackwardFilter(cudnnHandle_t handle, const CudnnConvolution& c) {
  int count = 0, returned = 0;
  MXLITE_CUDNN_CALL(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(handle, &count), c.owner);
  std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(std::max(count, 1));
  MXLITE_CUDNN_CALL(
      cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle, c.x.get(), c.y.get(), c.conv.get(),
                                                    c.w.get(), count, &returned, perf.data()),
      c.owner);
  return PickCandidate(c, perf, returned, "backward-filter");
}

const void* One(DType dtype) {
  static const double one_d = 1;
  static const float one_f = 1;
  return dtype == DType::kFloat64 ? static_cast<const void*>(&one_d) : &one_f;
}

const void* Zero(DType dtype) {
  static const double zero_d = 0;
  static const float zero_f = 0;
  return dtype == DType::kFloat64 ? static_cast<const void*>(&zero_d) : &zero_f;
}

// The workspace bytes of the call's algorithm: `cached` (given for a bound node's planned
// algorithm) keeps cuDNN's answer after the first call; kUnknownBytes until then.
constexpr size_t kUnknownBytes = static_cast<size_t>(-1);

template <typename Query>
size_t WorkspaceBytes(size_t* cached, Query&& query) {
  if (cached != nullptr && *cached != kUnknownBytes) return *cached;
  const size_t bytes = query();
  if (cached != nullptr) *cached = bytes;
  return bytes;
}

// y = conv(x, w) (beta = 0), with `planned` when chosen, else the heuristic's algorithm.
void ConvolutionForward(const OpContext& ctx, CudnnConvolution& c, const void* x, const void* w,
                        void* y, const CudnnAlgorithm& planned = {},
                        size_t* cached_bytes = nullptr) {
  cudnnHandle_t handle = cuda::CudnnHandle(ctx, c.owner);
  const CudnnAlgorithm pick = planned.chosen() ? planned : HeuristicForward(handle, c);
  const auto algo = static_cast<cudnnConvolutionFwdAlgo_t>(pick.algo);
  MXLITE_CUDNN_CALL(cudnnSetConvolutionMathType(c.conv.get(), pick.math), c.owner);
  const size_t bytes = WorkspaceBytes(cached_bytes, [&] {
    size_t asked = 0;
    MXLITE_CUDNN_CALL(cudnnGetConvolutionForwardWorkspaceSize(
                          handle, c.x.get(), c.w.get(), c.conv.get(), c.y.get(), algo, &asked),
                      c.owner);
    return asked;
  });
  void* workspace = Workspace(ctx, bytes);
  MXLITE_CUDNN_CALL(
      cudnnConvolutionForward(handle, One(c.dtype), c.x.get(), x, c.w.get(), w, c.conv.get(), algo,
                              workspace, bytes, Zero(c.dtype), c.y.get(), y),
      c.owner);
}

// dx = the adjoint of the forward in x applied to dy.
void ConvolutionBackwardData(const OpContext& ctx, CudnnConvolution& c, const void* w,
                             const void* dy, void* dx, const CudnnAlgorithm& planned = {},
                             size_t* cached_bytes = nullptr) {
  cudnnHandle_t handle = cuda::CudnnHandle(ctx, c.owner);
  const CudnnAlgorithm pick = planned.chosen() ? planned : HeuristicBackwardData(handle, c);
  const auto algo = static_cast<cudnnConvolutionBwdDataAlgo_t>(pick.algo);
  MXLITE_CUDNN_CALL(cudnnSetConvolutionMathType(c.conv.get(), pick.math), c.owner);
  const size_t bytes = WorkspaceBytes(cached_bytes, [&] {
    size_t asked = 0;
    MXLITE_CUDNN_CALL(cudnnGetConvolutionBackwardDataWorkspaceSize(
                          handle, c.w.get(), c.y.get(), c.conv.get(), c.x.get(), algo, &asked),
                      c.owner);
    return asked;
  });
  void* workspace = Workspace(ctx, bytes);
  MXLITE_CUDNN_CALL(
      cudnnConvolutionBackwardData(handle, One(c.dtype), c.w.get(), w, c.y.get(), dy, c.conv.get(),
                                   algo, workspace, bytes, Zero(c.dtype), c.x.get(), dx),
      c.owner);
}

// dw = the adjoint of the forward in w applied to dy, summed over the batch.
void ConvolutionBackwardFilter(const OpContext& ctx, CudnnConvolution& c, const void* x,
                               const void* dy, void* dw, const CudnnAlgorithm& planned = {},
                               size_t* cached_bytes = nullptr) {
  cudnnHandle_t handle = cuda::CudnnHandle(ctx, c.owner);
  const CudnnAlgorithm pick = planned.chosen() ? planned : HeuristicBackwardFilter(handle, c);
  const auto algo = static_cast<cudnnConvolutionBwdFilterAlgo_t>(pick.algo);
  MXLITE_CUDNN_CALL(cudnnSetConvolutionMathType(c.conv.get(), pick.math), c.owner);
  const size_t bytes = WorkspaceBytes(cached_bytes, [&] {
    size_t asked = 0;
    MXLITE_CUDNN_CALL(cudnnGetConvolutionBackwardFilterWorkspaceSize(
                          handle, c.x.get(), c.y.get(), c.conv.get(), c.w.get(), algo, &asked),
                      c.owner);
    return asked;
  });
  void* workspace = Workspace(ctx, bytes);
  MXLITE_CUDNN_CALL(cudnnConvolutionBackwardFilter(handle, One(c.dtype), c.x.get(), x, c.y.get(),
                                                   dy, c.conv.get(), algo, workspace, bytes,
                                                   Zero(c.dtype), c.w.get(), dw),
                    c.owner);
}

// tensor += bias per channel (bias described by c.bias, tensor by `desc`).
void AddBias(const OpContext& ctx, const CudnnConvolution& c, const cuda::TensorDescriptor& desc,
             const void* bias, void* tensor) {
  MXLITE_CUDNN_CALL(cudnnAddTensor(cuda::CudnnHandle(ctx, c.owner), One(c.dtype), c.bias.get(),
                                   bias, One(c.dtype), desc.get(), tensor),
                    c.owner);
}

// bias_grad = the per-channel sum of `grad` (described by `desc`).
void BiasGradient(const OpContext& ctx, const CudnnConvolution& c,
                  const cuda::TensorDescriptor& desc, const void* grad, void* bias_grad) {
  MXLITE_CUDNN_CALL(
      cudnnConvolutionBackwardBias(cuda::CudnnHandle(ctx, c.owner), One(c.dtype), desc.get(), grad,
                                   Zero(c.dtype), c.bias.get(), bias_grad),
      c.owner);
}

// ---- Convolution ---------------------------------------------------------------------------

// A bound Convolution node on the GPU (or a Deconvolution's adjoint convolution): its cuDNN
// descriptors, described once for the shapes it was bound with, the tuned algorithm per direction
// and each one's workspace size. Building these per
// call cost more host time than many of the kernels take (cuDNN 9 re-derives its execution plan
// for new descriptors), so calls with the bound shapes reuse them; other calls (a reshaped
// imperative call) describe their own. The engine runs one call of a node at a time.
class TunedConvolutionGpuState : public OpState, public conv::TunedState {
 public:
  TunedConvolutionGpuState(std::unique_ptr<CudnnConvolution> described, cuda::CudnnConvPlan plan)
      : described_(std::move(described)), plan_(std::move(plan)) {}
  const std::vector<conv::LayerTuning>& tuning_decisions() const override {
    return plan_.decisions;
  }
  bool Binds(const Shape& data, const Shape& output, DType dtype) const {
    return data == plan_.data_shape && output == plan_.output_shape && dtype == plan_.dtype;
  }
  CudnnConvolution& described() { return *described_; }
  const CudnnAlgorithm& algorithm(ConvDirection direction) const { return plan_.For(direction); }
  size_t* workspace_bytes(ConvDirection direction) {
    return &workspace_bytes_[static_cast<int>(direction)];
  }

 private:
  std::unique_ptr<CudnnConvolution> described_;
  cuda::CudnnConvPlan plan_;
  size_t workspace_bytes_[3] = {kUnknownBytes, kUnknownBytes, kUnknownBytes};
};

std::vector<ConvDirection> AllDirections() {
  return {ConvDirection::kForward, ConvDirection::kBackwardData, ConvDirection::kBackwardFilter};
}

std::unique_ptr<OpState> CreateConvolutionStateGpu(const StateRequest& request) {
  auto c = std::make_unique<CudnnConvolution>();
  c->owner = "Convolution " + request.node_name;
  const ConvWindow window = ReadConvWindow(request.attrs, c->owner);
  const Shape& data_shape = request.input_shapes.at(0);
  const Shape& output_shape = request.output_shapes.at(0);
  const DType dtype = request.input_dtypes.empty() ? DType::kFloat32 : request.input_dtypes[0];
  const conv::LayerTuningRequest layer =
      conv::LayerTuningRequestFor(request.attrs, request.node_name);
  cuda::DescribeConvolution(*c, request.attrs, window, layer.policy, dtype, data_shape,
                            output_shape, window.pad);
  cuda::CudnnTuningRequest tuning{layer,        request.ctx, data_shape, request.input_shapes.at(1),
                                  output_shape, window,      window.pad};
  if (request.training) tuning.directions = AllDirections();
  cuda::CudnnConvPlan plan = cuda::TuneCudnnConvolution(tuning, *c);
  plan.data_shape = data_shape;
  plan.output_shape = output_shape;
  return std::make_unique<TunedConvolutionGpuState>(std::move(c), std::move(plan));
}

// The call's convolution: the bound node's descriptors, algorithms and cached workspace sizes when
// the call has the bound shapes; otherwise described now into `local`, with the heuristic's
// algorithms and sizes asked per call.
struct ConvolutionCall {
  CudnnConvolution* c = nullptr;
  TunedConvolutionGpuState* bound = nullptr;

  CudnnAlgorithm algorithm(ConvDirection direction) const {
    return bound != nullptr ? bound->algorithm(direction) : CudnnAlgorithm{};
  }
  // Only a planned algorithm's size is kept: the heuristic may pick differently per call.
  size_t* workspace_bytes(ConvDirection direction) const {
    return bound != nullptr && bound->algorithm(direction).chosen()
               ? bound->workspace_bytes(direction)
               : nullptr;
  }
};

ConvolutionCall PrepareConvolution(const OpContext& ctx, const Attributes& attrs, const Shape& data,
                                   const Shape& output, DType dtype, CudnnConvolution& local) {
  auto* state = dynamic_cast<TunedConvolutionGpuState*>(ctx.state);
  if (state != nullptr && state->Binds(data, output, dtype)) return {&state->described(), state};
  local.owner = "Convolution " + ctx.node_name;
  const ConvWindow window = ReadConvWindow(attrs, local.owner);
  cuda::DescribeConvolution(local, attrs, window,
                            conv::LayerTuningRequestFor(attrs, ctx.node_name).policy, dtype, data,
                            output, window.pad);
  return {&local, nullptr};
}

void ConvolutionForwardGpu(const OpContext& ctx, const Attributes& attrs,
                           const std::vector<TensorView>& inputs,
                           const std::vector<TensorView>& outputs,
                           const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  CudnnConvolution local;
  const ConvolutionCall call =
      PrepareConvolution(ctx, attrs, inputs[0].shape, outputs[0].shape, inputs[0].dtype, local);
  CudnnConvolution& c = *call.c;
  ConvolutionForward(ctx, c, inputs[0].data, inputs[1].data, outputs[0].data,
                     call.algorithm(ConvDirection::kForward),
                     call.workspace_bytes(ConvDirection::kForward));
  const bool bias = !attrs.GetBool("no_bias");
  const bool residual = attrs.GetBool("residual");
  const OutputClamp clamp = ReadOutputClamp(attrs, c.owner);
  if (!residual && !clamp.active()) {
    if (bias) AddBias(ctx, c, c.y, inputs[2].data, outputs[0].data);
    return;
  }
  // The fused forms (inference executors fold a relu / clip and a residual addition into the
  // convolution): bias, residual and clamp in one pass over the output, in place of up to three
  // kernels and two engine steps, which bound batch-1 passes (bench/RESULTS.md).
  cuda::ConvEpilogueGeometry g;
  g.n = outputs[0].size();
  g.channels = c.y_channels;
  g.inner = c.y_channel_run;
  cudaStream_t stream = cuda::PrepareStream(ctx, c.owner);
  MXLITE_GPU_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, c.owner, {
    MXLITE_CUDA_CALL(cuda::ConvEpilogue(
                         g, outputs[0].data_as<T>(), bias ? inputs[2].data_as<T>() : nullptr,
                         residual ? inputs[ConvolutionResidualInput(attrs)].data_as<T>() : nullptr,
                         clamp.low, clamp.high, stream),
                     c.owner);
  });
}

void ConvolutionBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                            const std::vector<TensorView>& output_grads,
                            const std::vector<TensorView>& inputs, const std::vector<TensorView>&,
                            const std::vector<TensorView>& input_grads,
                            const std::vector<WriteMode>& req) {
  CheckNoFusedActivation(attrs, "Convolution " + ctx.node_name);
  CudnnConvolution local;
  const ConvolutionCall call = PrepareConvolution(ctx, attrs, inputs[0].shape,
                                                  output_grads[0].shape, inputs[0].dtype, local);
  CudnnConvolution& c = *call.c;
  if (req[0] != WriteMode::kNull) {
    ConvolutionBackwardData(ctx, c, inputs[1].data, output_grads[0].data, input_grads[0].data,
                            call.algorithm(ConvDirection::kBackwardData),
                            call.workspace_bytes(ConvDirection::kBackwardData));
  }
  if (req[1] != WriteMode::kNull) {
    ConvolutionBackwardFilter(ctx, c, inputs[0].data, output_grads[0].data, input_grads[1].data,
                              call.algorithm(ConvDirection::kBackwardFilter),
                              call.workspace_bytes(ConvDirection::kBackwardFilter));
  }
  if (!attrs.GetBool("no_bias") && req[2] != WriteMode::kNull) {
    BiasGradient(ctx, c, c.y, output_grads[0].data, input_grads[2].data);
  }
}

// ---- Deconvolution -------------------------------------------------------------------------

// The padding of the adjoint convolution per spatial axis, read as on the CPU
// (ops/deconvolution.h): the given pad, or, when target_shape is given, ceil((full - target) / 2).
std::vector<int64_t> DeconvolutionPad(const Attributes& attrs, const ConvWindow& window,
                                      const Shape& data_shape, const std::string& owner) {
  const int first_spatial = window.channels_last ? 1 : 2;
  MX_CHECK(data_shape.ndim() >= first_spatial + window.rank)  // NCHW16c's has one more
      << owner << ": data has shape " << data_shape << " but the kernel "
      << FormatIntTuple(window.kernel) << " needs a " << window.rank + 2 << "-D tensor";
  std::vector<int64_t> pad(window.rank);
  for (int axis = 0; axis < window.rank; ++axis) {
    pad[axis] =
        DeconvolutionAxisOf(attrs, window, axis, data_shape[first_spatial + axis], owner).pad;
  }
  return pad;
}

// The adjoint convolution maps the Deconvolution's output (x) to its data (y); the bias runs over
// the Deconvolution's output channels, the adjoint's input.
void DescribeDeconvolution(CudnnConvolution& c, const Attributes& attrs,
                           const conv::TuningPolicy& policy, DType dtype, const Shape& data_shape,
                           const Shape& output_shape) {
  const ConvWindow window = ReadConvWindow(attrs, c.owner);
  cuda::DescribeConvolution(c, attrs, window, policy, dtype, output_shape, data_shape,
                            DeconvolutionPad(attrs, window, data_shape, c.owner));
  if (window.rank == 3) {
    c.bias.SetVolume(dtype, Shape{1, attrs.GetInt("num_filter"), 1, 1, 1}, c.owner);
  } else {
    c.bias.Set(dtype, window.channels_last, 1, attrs.GetInt("num_filter"), 1, 1, c.owner);
  }
}

// The adjoint convolution of a bound Deconvolution node, tuned as its directions run: the
// Deconvolution's forward is the adjoint's backward_data; its backward the adjoint's forward and
// backward_filter (per cudnn_tune / MXNET_CUDNN_AUTOTUNE_DEFAULT and the workspace limit).
std::unique_ptr<OpState> CreateDeconvolutionStateGpu(const StateRequest& request) {
  auto c = std::make_unique<CudnnConvolution>();
  c->owner = "Deconvolution " + request.node_name;
  const Shape& data_shape = request.input_shapes.at(0);
  const Shape& output_shape = request.output_shapes.at(0);
  const DType dtype = request.input_dtypes.empty() ? DType::kFloat32 : request.input_dtypes[0];
  const ConvWindow window = ReadConvWindow(request.attrs, c->owner);
  const conv::LayerTuningRequest layer =
      conv::LayerTuningRequestFor(request.attrs, request.node_name);
  DescribeDeconvolution(*c, request.attrs, layer.policy, dtype, data_shape, output_shape);
  cuda::CudnnTuningRequest tuning{layer,
                                  request.ctx,
                                  output_shape,  // the adjoint's input
                                  request.input_shapes.at(1),
                                  data_shape,  // the adjoint's output
                                  window,
                                  DeconvolutionPad(request.attrs, window, data_shape, c->owner)};
  tuning.directions = {ConvDirection::kBackwardData};  // the forward's, first
  if (request.training) {
    tuning.directions = {ConvDirection::kBackwardData, ConvDirection::kForward,
                         ConvDirection::kBackwardFilter};
  }
  cuda::CudnnConvPlan plan = cuda::TuneCudnnConvolution(tuning, *c);
  plan.data_shape = data_shape;
  plan.output_shape = output_shape;
  return std::make_unique<TunedConvolutionGpuState>(std::move(c), std::move(plan));
}

// As PrepareConvolution, for a Deconvolution's adjoint.
ConvolutionCall PrepareDeconvolution(const OpContext& ctx, const Attributes& attrs,
                                     const Shape& data, const Shape& output, DType dtype,
                                     CudnnConvolution& local) {
  auto* state = dynamic_cast<TunedConvolutionGpuState*>(ctx.state);
  if (state != nullptr && state->Binds(data, output, dtype)) return {&state->described(), state};
  local.owner = "Deconvolution " + ctx.node_name;
  DescribeDeconvolution(local, attrs, conv::LayerTuningRequestFor(attrs, ctx.node_name).policy,
                        dtype, data, output);
  return {&local, nullptr};
}

void DeconvolutionForwardGpu(const OpContext& ctx, const Attributes& attrs,
                             const std::vector<TensorView>& inputs,
                             const std::vector<TensorView>& outputs,
                             const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  CudnnConvolution local;
  const ConvolutionCall call =
      PrepareDeconvolution(ctx, attrs, inputs[0].shape, outputs[0].shape, inputs[0].dtype, local);
  CudnnConvolution& c = *call.c;
  ConvolutionBackwardData(ctx, c, inputs[1].data, inputs[0].data, outputs[0].data,
                          call.algorithm(ConvDirection::kBackwardData),
                          call.workspace_bytes(ConvDirection::kBackwardData));
  if (!attrs.GetBool("no_bias")) AddBias(ctx, c, c.x, inputs[2].data, outputs[0].data);
}

void DeconvolutionBackwardGpu(const OpContext& ctx, const Attributes& attrs,
                              const std::vector<TensorView>& output_grads,
                              const std::vector<TensorView>& inputs, const std::vector<TensorView>&,
                              const std::vector<TensorView>& input_grads,
                              const std::vector<WriteMode>& req) {
  CudnnConvolution local;
  const ConvolutionCall call = PrepareDeconvolution(ctx, attrs, inputs[0].shape,
                                                    output_grads[0].shape, inputs[0].dtype, local);
  CudnnConvolution& c = *call.c;
  if (req[0] != WriteMode::kNull) {
    ConvolutionForward(ctx, c, output_grads[0].data, inputs[1].data, input_grads[0].data,
                       call.algorithm(ConvDirection::kForward),
                       call.workspace_bytes(ConvDirection::kForward));
  }
  if (req[1] != WriteMode::kNull) {
    ConvolutionBackwardFilter(ctx, c, output_grads[0].data, inputs[0].data, input_grads[1].data,
                              call.algorithm(ConvDirection::kBackwardFilter),
                              call.workspace_bytes(ConvDirection::kBackwardFilter));
  }
  if (!attrs.GetBool("no_bias") && req[2] != WriteMode::kNull) {
    BiasGradient(ctx, c, c.x, output_grads[0].data, input_grads[2].data);
  }
}

}  // namespace

MXLITE_REGISTER_KERNELS(Convolution, kGPU, ConvolutionForwardGpu, ConvolutionBackwardGpu);
MXLITE_REGISTER_STATE_CREATOR(Convolution, kGPU, CreateConvolutionStateGpu);
MXLITE_REGISTER_KERNELS(Deconvolution, kGPU, DeconvolutionForwardGpu, DeconvolutionBackwardGpu);
MXLITE_REGISTER_STATE_CREATOR(Deconvolution, kGPU, CreateDeconvolutionStateGpu);

}  // namespace mxlite
