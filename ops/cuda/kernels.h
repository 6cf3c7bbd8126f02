// Launchers of mxlite's own CUDA kernels (the .cu files beside this header), called by the GPU
// op files (ops/cuda/*_gpu.cc). This header is included by nvcc (C++17) and g++ (C++20), so it uses
// only C++17 and the CUDA runtime: plain structs passed to kernels by value, fixed-size arrays.
//
// Every launcher enqueues work on `stream` and returns cudaGetLastError() of the launch (the op
// checks it with MXLITE_CUDA_CALL). Sizes are element counts; pointers are device memory. Each
// kernel mirrors the CPU kernel of its op (named beside it) in formula and, where the CPU fixes
// one, in summation order, so results agree to rounding.
//
// Typed launchers are templates over the element type T, defined (explicitly instantiated in
// the .cu files) for float, double and __half. float16 data is computed in float: each kernel
// widens what it loads to ComputeType<T> and rounds once when it stores, as cuDNN's and cuBLAS's
// float16 paths with float accumulation do; float and double compute in their own type.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "core/dtype.h"

namespace mxlite::cuda {

constexpr int kMaxKernelDims = 6;  // Shape::kMaxDims

// The arithmetic type of element type T: float for __half, T itself otherwise.
template <typename T>
struct ComputeTypeOf {
  using type = T;
};
template <>
struct ComputeTypeOf<__half> {
  using type = float;
};
template <typename T>
using ComputeType = typename ComputeTypeOf<T>::type;

// ---- element-wise (elementwise_kernels.cu) ---------------------------------------------------

enum class UnaryKind { kRelu, kSigmoid, kTanh, kSoftrelu, kSoftsign };
// Activation (ops/activation.cc): y = f(x); dx = dy * f'(x) written with y.
template <typename T>
cudaError_t ActivationForward(UnaryKind kind, const T* x, T* y, int64_t n, cudaStream_t s);
template <typename T>
cudaError_t ActivationBackward(UnaryKind kind, const T* y, const T* dy, T* dx, int64_t n,
                               cudaStream_t s);

// LeakyReLU (leaky or elu), forward from x, backward from x.
template <typename T>
cudaError_t LeakyForward(bool elu, double slope, const T* x, T* y, int64_t n, cudaStream_t s);
template <typename T>
cudaError_t LeakyBackward(bool elu, double slope, const T* x, const T* dy, T* dx, int64_t n,
                          cudaStream_t s);

// clip: y = min(max(x, low), high); dx = dy where low <= x <= high, else 0.
template <typename T>
cudaError_t ClipForward(const T* x, T* y, int64_t n, double low, double high, cudaStream_t s);
template <typename T>
cudaError_t ClipBackward(const T* x, const T* dy, T* dx, int64_t n, double low, double high,
                         cudaStream_t s);

// out = a + b (out may be a or b); out += a.
template <typename T>
cudaError_t AddArrays(const T* a, const T* b, T* out, int64_t n, cudaStream_t s);
template <typename T>
cudaError_t ScaleArray(const T* x, T* y, double scale, int64_t n, cudaStream_t s);
template <typename T>
cudaError_t MultiplyArrays(const T* a, const T* b, T* out, int64_t n, cudaStream_t s);

// A right-aligned broadcast of up to two operands over an output of `ndim` dims: operand k's
// element for output multi-index i is at sum_d i[d] * strides[k][d] (0 where it is broadcast).
struct BroadcastGeometry {
  int ndim = 0;
  int64_t extents[kMaxKernelDims] = {};
  int64_t strides[2][kMaxKernelDims] = {};
};
// Arithmetic (broadcast_* / elemwise_*), the extrema (broadcast_maximum / minimum) and the
// comparisons (ops/comparison.cc: 1 where it holds, else 0).
enum class BinaryKind {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMaximum,
  kMinimum,
  kEqual,
  kNotEqual,
  kGreater,
  kGreaterEqual,
  kLesser,
  kLesserEqual,
};
// out[i] = lhs[.] op rhs[.] over the output's elements (broadcast_* / elemwise_*).
template <typename T>
cudaError_t BroadcastBinary(BinaryKind kind, const BroadcastGeometry& g, const T* lhs, const T* rhs,
                            T* out, int64_t n, cudaStream_t s);
// out[i] = lhs[i] op rhs[i]: both operands of the output's shape (no index arithmetic; the common
// case of residual adds).
template <typename T>
cudaError_t ElementwiseBinary(BinaryKind kind, const T* lhs, const T* rhs, T* out, int64_t n,
                              cudaStream_t s);
// out[i] = scale * x[.] with x broadcast (operand 0 of g) to the output (Gemm's C).
template <typename T>
cudaError_t BroadcastAssign(const BroadcastGeometry& g, const T* x, T* out, double scale, int64_t n,
                            cudaStream_t s);

// dst (kept axes) = scale * the sum of src over the reduced axes (ReduceToShape). dst element j
// is the row-major index over kept_extents; its src base is sum kept_index * kept_strides.
struct ReduceGeometry {
  int kept_ndim = 0, reduced_ndim = 0;
  int64_t kept_extents[kMaxKernelDims] = {}, kept_strides[kMaxKernelDims] = {};
  int64_t reduced_extents[kMaxKernelDims] = {}, reduced_strides[kMaxKernelDims] = {};
  int64_t kept_count = 1, reduced_count = 1;
};
template <typename T>
cudaError_t ReduceSum(const ReduceGeometry& g, const T* src, T* dst, double scale, cudaStream_t s);

// Dropout (ops/dropout.cc): element e keeps with SplitMix64(seed, drawn index) as the CPU op
// does; the drawn index decodes e over `extents` and re-encodes it over `drawn` (extent 1 on the
// shared axes). y = x * factor, mask = factor (mask may be null).
struct DropoutGeometry {
  int ndim = 0;
  int64_t extents[kMaxKernelDims] = {}, drawn[kMaxKernelDims] = {};
};
template <typename T>
cudaError_t DropoutForward(const DropoutGeometry& g, uint64_t seed, double p, double scale,
                           const T* x, T* y, T* mask, int64_t n, cudaStream_t s);

// ---- Cast (cast_kernels.cu) ------------------------------------------------------------------

// out (dtype `to`) = in (dtype `from`) converted by ops/cast.cc's rules; cudaErrorInvalidValue
// when either dtype is not one Cast supports.
cudaError_t CastArray(DType from, const void* in, DType to, void* out, int64_t n, cudaStream_t s);

// ---- layout kernels (layout_kernels.cu), any dtype by element size (1, 2, 4 or 8 bytes) -----

// out (out_extents) = in permuted: output axis i is input axis perm[i]; in_strides_permuted[i]
// is the input stride of axis perm[i].
struct TransposeGeometry {
  int ndim = 0;
  int64_t out_extents[kMaxKernelDims] = {}, in_strides_permuted[kMaxKernelDims] = {};
};
cudaError_t TransposeCopy(const TransposeGeometry& g, const void* in, void* out,
                          size_t element_size, int64_t n, cudaStream_t s);

// Pad (ops/pad.cc). Per axis a: source[a] maps each output index to its input index (-1:
// constant); first[a] / outputs[a] list, per input index, the output indices copying it (CSR).
struct PadGeometry {
  int ndim = 0;
  int64_t in_extents[kMaxKernelDims] = {}, out_extents[kMaxKernelDims] = {};
  const int64_t* source[kMaxKernelDims] = {};
  const int64_t* first[kMaxKernelDims] = {};
  const int64_t* outputs[kMaxKernelDims] = {};
};
template <typename T>
cudaError_t PadForward(const PadGeometry& g, const T* x, T* y, double fill, int64_t n,
                       cudaStream_t s);
template <typename T>
cudaError_t PadBackward(const PadGeometry& g, const T* dy, T* dx, int64_t n, cudaStream_t s);

// ---- nn kernels (nn_kernels.cu) --------------------------------------------------------------

// Pooling (ops/pooling.cc): spatial dims right-aligned into (d, h, w).
struct PoolingGeometry {
  int64_t batch = 0, channels = 0;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1},
          pad[3] = {0, 0, 0};
  bool channels_last = false;
  int type = 0;  // 0 max, 1 avg, 2 sum
  bool count_include_pad = true;
};
template <typename T>
cudaError_t PoolingForward(const PoolingGeometry& g, const T* x, T* y, cudaStream_t s);
// x is read only for max (may be null otherwise).
template <typename T>
cudaError_t PoolingBackward(const PoolingGeometry& g, const T* x, const T* dy, T* dx,
                            cudaStream_t s);

// A convolution's output epilogue after cuDNN (ops/convolution.cc's fused forms): in place,
// y = clamp(round(round(y + bias[c]) + residual), low, high), element by element, where c is the
// element's channel, (i / inner) % channels (inner: H*W channels-first, 1 channels-last). bias and
// residual may be null (not added); low / high may be infinite. Each addition rounds to T as the
// separate bias (cudnnAddTensor) and addition kernels would, so float16 results match them.
struct ConvEpilogueGeometry {
  int64_t n = 0, channels = 1, inner = 1;
};
template <typename T>
cudaError_t ConvEpilogue(const ConvEpilogueGeometry& g, T* y, const T* bias, const T* residual,
                         double low, double high, cudaStream_t s);

// Softmax along the middle axis of (outer, length, inner) (ops/cpu/softmax.h).
struct SoftmaxGeometry {
  int64_t outer = 1, length = 1, inner = 1;
};
template <typename T>
cudaError_t SoftmaxForward(const SoftmaxGeometry& g, const T* x, T* y, double temperature, bool log,
                           cudaStream_t s);
template <typename T>
cudaError_t SoftmaxBackward(const SoftmaxGeometry& g, const T* y, const T* dy, T* dx,
                            double temperature, bool log, cudaStream_t s);

// SoftmaxOutput gradients (ops/softmax_output.cc). class_index: one per (outer, inner) position,
// -1 for ignored positions; dy may be null (out_grad=false).
template <typename T>
cudaError_t SoftmaxOutputHardGradient(const SoftmaxGeometry& g, const T* y,
                                      const int64_t* class_index, double on, double off,
                                      double scale, const T* dy, T* dx, cudaStream_t s);
template <typename T>
cudaError_t SoftmaxOutputSoftGradient(const T* y, const T* label, double scale, const T* dy, T* dx,
                                      int64_t n, cudaStream_t s);

// BatchNorm (ops/batch_norm.cc) over (outer, channels, inner).
struct BatchNormGeometry {
  int64_t outer = 1, channels = 1, inner = 1;
};
struct BatchNormParams {
  double eps = 1e-3, momentum = 0.9;
  bool fix_gamma = true, batch_stats = true;
};
// The type of BatchNorm's parameters, moving states and saved statistics for data type T:
// float for float16 data (MXNet's rule: statistics of float16 data are kept in float32), T
// otherwise.
template <typename T>
using BatchNormParamType = ComputeType<T>;
// Per channel: the statistics (batch or moving), the moving-state update (batch_stats), the
// hidden outputs (when not null), and y = x * a[c] + b[c] coefficients into `coefficients`
// (2 * channels doubles: a then b).
template <typename T>
struct BatchNormForwardArgs {
  using P = BatchNormParamType<T>;
  const T* x;
  const P* gamma;
  const P* beta;
  P* moving_mean;
  P* moving_var;
  P* saved_mean;  // may be null
  P* saved_var;   // may be null
  T* y;           // may be null
  double* coefficients;
};
template <typename T>
cudaError_t BatchNormForward(const BatchNormGeometry& g, const BatchNormParams& p,
                             const BatchNormForwardArgs<T>& a, cudaStream_t s);
template <typename T>
struct BatchNormBackwardArgs {
  using P = BatchNormParamType<T>;
  const T* x;
  const T* dy;
  const P* gamma;
  const P* saved_mean;
  const P* saved_var;
  T* dx;                 // may be null
  P* dgamma;             // may be null
  P* dbeta;              // may be null
  double* coefficients;  // 3 * channels doubles of scratch
};
template <typename T>
cudaError_t BatchNormBackward(const BatchNormGeometry& g, const BatchNormParams& p,
                              const BatchNormBackwardArgs<T>& a, cudaStream_t s);

}  // namespace mxlite::cuda
