// One convolution as cuDNN sees it, and its algorithms: the descriptors the GPU Convolution and
// Deconvolution kernels build per call (convolution_gpu.cc), and the tuning of a node, cuDNN's back
// end of the tuning front (ops/conv/tuner.h, TuneLayer; the CPU's is ops/conv/cpu_conv_tuning.h),
// into a plan of one algorithm per direction.
//
// Candidates are every algorithm cuDNN lists for the direction (cudnnGet*Algorithm_v7, in its
// heuristic order, which is also the ranking `off` uses), each with the math type it runs in:
// "implicit_precomp_gemm" (FMA), "implicit_precomp_gemm+tensor_op" (Tensor Cores),
// "...+tf32" (Tensor Cores through float32 -> TF32 conversion). A math type the Tensor Core
// settings forbid is listed as unsupported with the setting that forbids it. Timings come from
// cudnnFind*AlgorithmEx on pooled buffers of the problem's shapes; the workspace it may use is the
// layer's limit (limited_workspace) or the largest any candidate asks (fastest), allocated from the
// pool before timing, so no pool lock is held while cuDNN times.
#pragma once

#include <string>
#include <vector>

#include "ops/conv/tuner.h"
#include "ops/conv_attributes.h"
#include "ops/cuda/cuda_util.h"

namespace mxlite::cuda {

struct CudnnConvolution {
  TensorDescriptor x, y, bias;
  FilterDescriptor w;
  ConvolutionDescriptor conv;
  DType dtype = DType::kFloat32;
  // The layer's tuning policy (conv::LayerTuningRequestFor, resolved once from cudnn_tune,
  // workspace and the settings): its workspace limit and determinism bound the heuristic's pick
  // when no tuned plan applies, as they bound the tuner's.
  conv::TuningPolicy policy;
  std::string owner;
  // y's channels and the elements of one channel's run in it (H*W channels-first, 1
  // channels-last): where a per-channel bias goes in an element-wise pass over y.
  int64_t y_channels = 1, y_channel_run = 1;
};

// Sets up the descriptors of the convolution from x_shape to y_shape (shapes of the op's tensors
// in the window's layout) with `pad` per axis (Deconvolution derives its own), and keeps the
// layer's `policy`. Errors name c.owner.
void DescribeConvolution(CudnnConvolution& c, const Attributes& attrs, const ConvWindow& window,
                         const conv::TuningPolicy& policy, DType dtype, const Shape& x_shape,
                         const Shape& y_shape, const std::vector<int64_t>& pad);

// An algorithm of one direction with the math type it runs in; algo < 0: none chosen.
struct CudnnAlgorithm {
  int algo = -1;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  bool chosen() const { return algo >= 0; }
};

// "implicit_precomp_gemm+tensor_op"; the inverse returns an unchosen algorithm for unknown text.
std::string CudnnAlgorithmName(conv::ConvDirection direction, const CudnnAlgorithm& algorithm);
CudnnAlgorithm ParseCudnnAlgorithm(conv::ConvDirection direction, const std::string& name);

// The tuned algorithms of one Convolution node, for the shapes it was bound with.
struct CudnnConvPlan {
  Shape data_shape, output_shape;
  DType dtype = DType::kFloat32;
  CudnnAlgorithm forward, backward_data, backward_filter;
  std::vector<conv::LayerTuning> decisions;

  const CudnnAlgorithm& For(conv::ConvDirection direction) const;
};

// What to tune of one described convolution: the layer's request, the shapes c was described
// with (x its input, w, y its output), the padding, and the directions the layer runs (a
// Convolution's forward, and both backward directions when training; a Deconvolution's
// backward_data, with forward and backward_filter when training).
struct CudnnTuningRequest {
  conv::LayerTuningRequest tuning;
  Context ctx;
  Shape x_shape, w_shape, y_shape;
  ConvWindow window;  // stride, dilation, groups and layout, for the DB key
  std::vector<int64_t> pad;
  std::vector<conv::ConvDirection> directions = {conv::ConvDirection::kForward};
};

// Tunes each requested direction of `c` through ConvTuner::Global(); the plan's data and output
// shapes are left for the caller (what its op binds).
CudnnConvPlan TuneCudnnConvolution(const CudnnTuningRequest& request, CudnnConvolution& c);

}  // namespace mxlite::cuda
