// Shared host-side helpers of the GPU kernels (ops/cuda/*_gpu.cc): status checks, per-thread
// cuDNN / cuBLAS handles, cuDNN descriptors and the Tensor Core settings.
//
//   MXLITE_CUDA_CALL(cudaMemcpyAsync(...), owner);   // throws mxlite::Error naming the call,
//   MXLITE_CUDNN_CALL(cudnnAddTensor(...), owner);   // the owner ("Convolution conv0") and the
//   MXLITE_CUBLAS_CALL(cublasSgemm(...), owner);     // library's message
//
// Handles: one cuDNN and one cuBLAS handle per (thread, device), created on first use and
// destroyed when the thread ends; CudnnHandle / CublasHandle bind them to the op's stream on every
// call, so they are safe for the engine's per-worker streams. Descriptors are RAII wrappers.
//
// Element types: MXLITE_GPU_FLOAT_TYPE_SWITCH binds T to float, double or __half (float16 on
// the GPU is computed in float, see kernel_types.h); CudnnScalar<T> is the type of cuDNN's alpha /
// beta scaling arguments for data of type T (float for float16 and float32, double for double).
//
// Tensor Cores (MXNet's settings): MXNET_CUDA_ALLOW_TENSOR_CORE (default 1) allows them for
// float16 (and float64 where the hardware has them); float32 may use them (TF32) only with
// MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION=1 as well. Otherwise float32 runs FMA-only, which
// keeps it within 1e-4 of the CPU kernels.
#pragma once

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <string>
#include <type_traits>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "ops/cuda/array_kernels.h"
#include "ops/cuda/kernel_types.h"
#include "ops/cuda/reduce_kernels.h"
#include "ops/cuda/transpose_kernels.h"
#include "ops/operator.h"

#define MXLITE_CUDA_CALL(call, owner)                                                    \
  do {                                                                                   \
    const cudaError_t mxlite_status_ = (call);                                           \
    MX_CHECK(mxlite_status_ == cudaSuccess)                                              \
        << (owner) << ": " #call " failed: " << cudaGetErrorName(mxlite_status_) << " (" \
        << cudaGetErrorString(mxlite_status_) << ")";                                    \
  } while (0)

#define MXLITE_CUDNN_CALL(call, owner)                                               \
  do {                                                                               \
    const cudnnStatus_t mxlite_status_ = (call);                                     \
    MX_CHECK(mxlite_status_ == CUDNN_STATUS_SUCCESS)                                 \
        << (owner) << ": " #call " failed: " << cudnnGetErrorString(mxlite_status_); \
  } while (0)

#define MXLITE_CUBLAS_CALL(call, owner)                                                     \
  do {                                                                                      \
    const cublasStatus_t mxlite_status_ = (call);                                           \
    MX_CHECK(mxlite_status_ == CUBLAS_STATUS_SUCCESS)                                       \
        << (owner) << ": " #call " failed: " << cublasGetStatusName(mxlite_status_) << " (" \
        << cublasGetStatusString(mxlite_status_) << ")";                                    \
  } while (0)

namespace mxlite {

template <>
struct DTypeOf<__half> {
  static constexpr DType value = DType::kFloat16;
};

}  // namespace mxlite

// As MXLITE_FLOAT_TYPE_SWITCH (ops/tensor.h), with float16 (T = __half) as well.
#define MXLITE_GPU_FLOAT_TYPE_SWITCH(dtype, T, op_name, ...)                            \
  switch (dtype) {                                                                      \
    MXLITE_DTYPE_CASE(kFloat32, float, T, __VA_ARGS__)                                  \
    MXLITE_DTYPE_CASE(kFloat64, double, T, __VA_ARGS__)                                 \
    MXLITE_DTYPE_CASE(kFloat16, __half, T, __VA_ARGS__)                                 \
    default:                                                                            \
      MX_THROW() << op_name << ": dtype " << (dtype) << " is not supported on the GPU " \
                 << "(float32, float64 and float16 are)";                               \
  }

namespace mxlite::cuda {

template <typename T>
using CudnnScalar = std::conditional_t<std::is_same_v<T, double>, double, float>;

// "Pad pad1": an op's name and the node's, how GPU kernels name themselves in errors.
inline std::string Owner(const char* op, const OpContext& ctx) {
  return std::string(op) + " " + ctx.node_name;
}

// The op's stream, after making the op's device current on this thread.
cudaStream_t PrepareStream(const OpContext& ctx, const std::string& owner);

// This thread's handles for the op's device, bound to the op's stream.
cudnnHandle_t CudnnHandle(const OpContext& ctx, const std::string& owner);
// Also sets the math mode for `dtype` from the Tensor Core settings.
cublasHandle_t CublasHandle(const OpContext& ctx, DType dtype, const std::string& owner);

// Tensor Core settings, read from the settings registry on each call.
bool TensorCoresAllowed(DType dtype);
// The widest cuDNN math type allowed for dtype, and whether a given one is allowed.
cudnnMathType_t ConvolutionMathType(DType dtype);
bool ConvolutionMathTypeAllowed(cudnnMathType_t math, DType dtype);
cublasMath_t CublasMathMode(DType dtype);

// float32 -> CUDNN_DATA_FLOAT, float64 -> DOUBLE, float16 -> HALF; others an error.
cudnnDataType_t CudnnDataType(DType dtype, const std::string& owner);

// 4-D tensor descriptor (n, c, h, w) in NCHW or NHWC memory order; or (SetVolume) a packed 5-D
// one (n, c, d, h, w) in NCDHW order.
class TensorDescriptor {
 public:
  TensorDescriptor();
  ~TensorDescriptor();
  TensorDescriptor(const TensorDescriptor&) = delete;
  TensorDescriptor& operator=(const TensorDescriptor&) = delete;
  void Set(DType dtype, bool channels_last, int64_t n, int64_t c, int64_t h, int64_t w,
           const std::string& owner);
  void SetVolume(DType dtype, const Shape& ncdhw, const std::string& owner);
  cudnnTensorDescriptor_t get() const { return desc_; }

 private:
  cudnnTensorDescriptor_t desc_ = nullptr;
};

// Convolution filter (k, c, r, s): KCRS (channels first) or KRSC (channels last) in memory; or
// (SetVolume) a 3-D one (k, c, kd, kh, kw) in that order.
class FilterDescriptor {
 public:
  FilterDescriptor();
  ~FilterDescriptor();
  FilterDescriptor(const FilterDescriptor&) = delete;
  FilterDescriptor& operator=(const FilterDescriptor&) = delete;
  void Set(DType dtype, bool channels_last, int64_t k, int64_t c, int64_t r, int64_t s,
           const std::string& owner);
  void SetVolume(DType dtype, const Shape& kcdhw, const std::string& owner);
  cudnnFilterDescriptor_t get() const { return desc_; }

 private:
  cudnnFilterDescriptor_t desc_ = nullptr;
};

class ConvolutionDescriptor {
 public:
  ConvolutionDescriptor();
  ~ConvolutionDescriptor();
  ConvolutionDescriptor(const ConvolutionDescriptor&) = delete;
  ConvolutionDescriptor& operator=(const ConvolutionDescriptor&) = delete;
  cudnnConvolutionDescriptor_t get() const { return desc_; }

 private:
  cudnnConvolutionDescriptor_t desc_ = nullptr;
};

class ActivationDescriptor {
 public:
  ActivationDescriptor();
  ~ActivationDescriptor();
  ActivationDescriptor(const ActivationDescriptor&) = delete;
  ActivationDescriptor& operator=(const ActivationDescriptor&) = delete;
  cudnnActivationDescriptor_t get() const { return desc_; }

 private:
  cudnnActivationDescriptor_t desc_ = nullptr;
};

// Narrowing for library APIs that take int: an error naming owner and what when it does not fit.
int CheckedInt(int64_t value, const std::string& owner, const char* what);

// Copies `bytes` from `from` to `to` on the stream unless they are the same memory.
void CopyDeviceAsync(const void* from, void* to, size_t bytes, cudaStream_t stream,
                     const std::string& owner);

// `count` values of type T from device memory, waited for: labels and indices the host checks
// before a kernel uses them (nll_loss, gather_elements, SoftmaxOutput).
template <typename T>
std::vector<T> CopyToHost(const void* device, int64_t count, cudaStream_t stream,
                          const std::string& owner) {
  std::vector<T> host(static_cast<size_t>(count));
  MXLITE_CUDA_CALL(
      cudaMemcpyAsync(host.data(), device, host.size() * sizeof(T), cudaMemcpyDeviceToHost, stream),
      owner);
  MXLITE_CUDA_CALL(cudaStreamSynchronize(stream), owner);
  return host;
}

// `values` uploaded to `device` (room for values.size()), waited for: the copy reads pageable
// host memory, which the caller may free as soon as this returns.
template <typename T>
void CopyToDevice(const std::vector<T>& values, T* device, cudaStream_t stream,
                  const std::string& owner) {
  MXLITE_CUDA_CALL(cudaMemcpyAsync(device, values.data(), values.size() * sizeof(T),
                                   cudaMemcpyHostToDevice, stream),
                   owner);
  MXLITE_CUDA_CALL(cudaStreamSynchronize(stream), owner);
}

// Broadcast of operands `a` and `b` (right-aligned, NumPy rules, already validated) to `out`.
BroadcastGeometry MakeBroadcastGeometry(const Shape& out, const Shape& a, const Shape& b);
// Transpose of `in` by `axes` (output axis i is input axis axes[i]) over the fewest axes:
// extent-1 axes dropped and input axes that stay neighbours merged (NCHW -> NHWC is (N, C, H*W)
// -> (N, H*W, C)); when what is left swaps the last two axes under unmoved ones, batch / rows /
// cols are set (the tiled kernel).
TransposeGeometry MakeTransposeGeometry(const Shape& in, const std::vector<int>& axes);
// Sum of `src` over the axes along which `dst` (which broadcasts to src) is broadcast.
ReduceGeometry MakeReduceGeometry(const Shape& src, const Shape& dst);

// dst = scale * src summed to dst's shape (a copy-scale when the shapes hold as many elements).
template <typename T>
void ReduceToShape(const T* src, const Shape& src_shape, T* dst, const Shape& dst_shape,
                   double scale, cudaStream_t stream, const std::string& owner) {
  if (dst_shape.size() == src_shape.size()) {
    MXLITE_CUDA_CALL(ScaleArray(src, dst, scale, dst_shape.size(), stream), owner);
    return;
  }
  MXLITE_CUDA_CALL(ReduceSum(MakeReduceGeometry(src_shape, dst_shape), src, dst, scale, stream),
                   owner);
}

}  // namespace mxlite::cuda
