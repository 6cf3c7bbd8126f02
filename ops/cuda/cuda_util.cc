#include "ops/cuda/cuda_util.h"

#include <array>
#include <climits>
#include <map>
#include <utility>

#include "core/settings.h"

namespace mxlite::cuda {
namespace {

// This thread's handles per device; destroyed with the thread.
struct ThreadHandles {
  std::map<int, cudnnHandle_t> cudnn;
  std::map<int, cublasHandle_t> cublas;
  ~ThreadHandles() {
    for (auto& [device, handle] : cudnn) {
      if (cudaSetDevice(device) == cudaSuccess) cudnnDestroy(handle);
    }
    for (auto& [device, handle] : cublas) {
      if (cudaSetDevice(device) == cudaSuccess) cublasDestroy(handle);
    }
  }
};

ThreadHandles& Handles() {
  thread_local ThreadHandles handles;
  return handles;
}

}  // namespace

cudaStream_t PrepareStream(const OpContext& ctx, const std::string& owner) {
  MX_CHECK(ctx.ctx.is_gpu()) << owner << ": a GPU kernel called with context " << ctx.ctx;
  int current = -1;
  MXLITE_CUDA_CALL(cudaGetDevice(&current), owner);
  if (current != ctx.ctx.device_id) MXLITE_CUDA_CALL(cudaSetDevice(ctx.ctx.device_id), owner);
  return static_cast<cudaStream_t>(ctx.stream);
}

cudnnHandle_t CudnnHandle(const OpContext& ctx, const std::string& owner) {
  cudaStream_t stream = PrepareStream(ctx, owner);
  auto& handles = Handles().cudnn;
  auto found = handles.find(ctx.ctx.device_id);
  if (found == handles.end()) {
    cudnnHandle_t handle = nullptr;
    MXLITE_CUDNN_CALL(cudnnCreate(&handle), owner);
    found = handles.emplace(ctx.ctx.device_id, handle).first;
  }
  MXLITE_CUDNN_CALL(cudnnSetStream(found->second, stream), owner);
  return found->second;
}

cublasHandle_t CublasHandle(const OpContext& ctx, DType dtype, const std::string& owner) {
  cudaStream_t stream = PrepareStream(ctx, owner);
  auto& handles = Handles().cublas;
  auto found = handles.find(ctx.ctx.device_id);
  if (found == handles.end()) {
    cublasHandle_t handle = nullptr;
    MXLITE_CUBLAS_CALL(cublasCreate(&handle), owner);
    found = handles.emplace(ctx.ctx.device_id, handle).first;
  }
  MXLITE_CUBLAS_CALL(cublasSetStream(found->second, stream), owner);
  MXLITE_CUBLAS_CALL(cublasSetMathMode(found->second, CublasMathMode(dtype)), owner);
  return found->second;
}

bool TensorCoresAllowed(DType dtype) {
  const Settings& settings = Settings::Global();
  if (!settings.GetBool("MXNET_CUDA_ALLOW_TENSOR_CORE")) return false;
  if (dtype == DType::kFloat32) {
    return settings.GetBool("MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION");
  }
  return true;
}

cudnnMathType_t ConvolutionMathType(DType dtype) {
  if (!TensorCoresAllowed(dtype)) return CUDNN_FMA_MATH;
  return dtype == DType::kFloat32 ? CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION : CUDNN_TENSOR_OP_MATH;
}

bool ConvolutionMathTypeAllowed(cudnnMathType_t math, DType dtype) {
  if (math == CUDNN_FMA_MATH) return true;
  if (!TensorCoresAllowed(dtype)) return false;
  // Conversion to a narrower type is what ALLOW_CONVERSION governs; TensorCoresAllowed already
  // requires it for float32, and other types never need it.
  return math != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION || dtype == DType::kFloat32;
}

cublasMath_t CublasMathMode(DType dtype) {
  if (!TensorCoresAllowed(dtype)) return CUBLAS_PEDANTIC_MATH;
  return dtype == DType::kFloat32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
}

cudnnDataType_t CudnnDataType(DType dtype, const std::string& owner) {
  switch (dtype) {
    case DType::kFloat32:
      return CUDNN_DATA_FLOAT;
    case DType::kFloat64:
      return CUDNN_DATA_DOUBLE;
    case DType::kFloat16:
      return CUDNN_DATA_HALF;
    default:
      MX_THROW() << owner << ": dtype " << dtype << " is not supported by cuDNN";
  }
}

int CheckedInt(int64_t value, const std::string& owner, const char* what) {
  MX_CHECK(value >= INT_MIN && value <= INT_MAX)
      << owner << ": " << what << " = " << value
      << " does not fit the 32-bit integers of the GPU library call";
  return static_cast<int>(value);
}

void CopyDeviceAsync(const void* from, void* to, size_t bytes, cudaStream_t stream,
                     const std::string& owner) {
  if (from == to || bytes == 0) return;
  MXLITE_CUDA_CALL(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, stream), owner);
}

BroadcastGeometry MakeBroadcastGeometry(const Shape& out, const Shape& a, const Shape& b) {
  BroadcastGeometry g;
  g.ndim = out.ndim();
  const Shape* operands[2] = {&a, &b};
  for (int k = 0; k < 2; ++k) {
    const Shape& shape = *operands[k];
    int64_t stride = 1;
    for (int d = out.ndim() - 1; d >= 0; --d) {
      const int from_end = out.ndim() - d;
      const int64_t extent = from_end <= shape.ndim() ? shape[shape.ndim() - from_end] : 1;
      g.strides[k][d] = extent == 1 ? 0 : stride;
      stride *= extent;
    }
  }
  for (int d = 0; d < out.ndim(); ++d) g.extents[d] = out[d];
  if (g.ndim == 0) {  // a scalar output: one element
    g.ndim = 1;
    g.extents[0] = 1;
  }
  return g;
}

ReduceGeometry MakeReduceGeometry(const Shape& src, const Shape& dst) {
  ReduceGeometry g;
  int64_t stride = 1;
  int64_t kept_strides[kMaxKernelDims], kept_extents[kMaxKernelDims];
  int64_t reduced_strides[kMaxKernelDims], reduced_extents[kMaxKernelDims];
  int kept = 0, reduced = 0;
  for (int d = src.ndim() - 1; d >= 0; --d) {  // collected last axis first
    const int from_end = src.ndim() - d;
    const int64_t extent = from_end <= dst.ndim() ? dst[dst.ndim() - from_end] : 1;
    if (extent == src[d]) {
      kept_extents[kept] = src[d];
      kept_strides[kept++] = stride;
    } else {
      reduced_extents[reduced] = src[d];
      reduced_strides[reduced++] = stride;
    }
    stride *= src[d];
  }
  g.kept_ndim = kept;
  g.reduced_ndim = reduced;
  for (int i = 0; i < kept; ++i) {
    g.kept_extents[i] = kept_extents[kept - 1 - i];
    g.kept_strides[i] = kept_strides[kept - 1 - i];
    g.kept_count *= g.kept_extents[i];
  }
  for (int i = 0; i < reduced; ++i) {
    g.reduced_extents[i] = reduced_extents[reduced - 1 - i];
    g.reduced_strides[i] = reduced_strides[reduced - 1 - i];
    g.reduced_count *= g.reduced_extents[i];
  }
  return g;
}

TensorDescriptor::TensorDescriptor() {
  MXLITE_CUDNN_CALL(cudnnCreateTensorDescriptor(&desc_), "cuDNN tensor descriptor");
}
TensorDescriptor::~TensorDescriptor() { cudnnDestroyTensorDescriptor(desc_); }

void TensorDescriptor::Set(DType dtype, bool channels_last, int64_t n, int64_t c, int64_t h,
                           int64_t w, const std::string& owner) {
  MXLITE_CUDNN_CALL(
      cudnnSetTensor4dDescriptor(desc_, channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                 CudnnDataType(dtype, owner), CheckedInt(n, owner, "batch"),
                                 CheckedInt(c, owner, "channels"), CheckedInt(h, owner, "height"),
                                 CheckedInt(w, owner, "width")),
      owner);
}

namespace {

// The dims of a 5-D shape as cuDNN's ints; an error naming `owner` when one does not fit.
std::array<int, 5> VolumeDims(const Shape& shape, const std::string& owner, const char* what) {
  MX_CHECK(shape.ndim() == 5) << owner << ": " << what << " " << shape << " is not 5-D";
  std::array<int, 5> dims{};
  for (int i = 0; i < 5; ++i) dims[static_cast<size_t>(i)] = CheckedInt(shape[i], owner, what);
  return dims;
}

}  // namespace

void TensorDescriptor::SetVolume(DType dtype, const Shape& ncdhw, const std::string& owner) {
  const std::array<int, 5> dims = VolumeDims(ncdhw, owner, "tensor");
  MXLITE_CUDNN_CALL(cudnnSetTensorNdDescriptorEx(desc_, CUDNN_TENSOR_NCHW,
                                                 CudnnDataType(dtype, owner), 5, dims.data()),
                    owner);
}

FilterDescriptor::FilterDescriptor() {
  MXLITE_CUDNN_CALL(cudnnCreateFilterDescriptor(&desc_), "cuDNN filter descriptor");
}
FilterDescriptor::~FilterDescriptor() { cudnnDestroyFilterDescriptor(desc_); }

void FilterDescriptor::Set(DType dtype, bool channels_last, int64_t k, int64_t c, int64_t r,
                           int64_t s, const std::string& owner) {
  MXLITE_CUDNN_CALL(
      cudnnSetFilter4dDescriptor(
          desc_, CudnnDataType(dtype, owner), channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
          CheckedInt(k, owner, "filters"), CheckedInt(c, owner, "channels"),
          CheckedInt(r, owner, "kernel height"), CheckedInt(s, owner, "kernel width")),
      owner);
}

void FilterDescriptor::SetVolume(DType dtype, const Shape& kcdhw, const std::string& owner) {
  const std::array<int, 5> dims = VolumeDims(kcdhw, owner, "filter");
  MXLITE_CUDNN_CALL(cudnnSetFilterNdDescriptor(desc_, CudnnDataType(dtype, owner),
                                               CUDNN_TENSOR_NCHW, 5, dims.data()),
                    owner);
}

ConvolutionDescriptor::ConvolutionDescriptor() {
  MXLITE_CUDNN_CALL(cudnnCreateConvolutionDescriptor(&desc_), "cuDNN convolution descriptor");
}
ConvolutionDescriptor::~ConvolutionDescriptor() { cudnnDestroyConvolutionDescriptor(desc_); }

ActivationDescriptor::ActivationDescriptor() {
  MXLITE_CUDNN_CALL(cudnnCreateActivationDescriptor(&desc_), "cuDNN activation descriptor");
}
ActivationDescriptor::~ActivationDescriptor() { cudnnDestroyActivationDescriptor(desc_); }

}  // namespace mxlite::cuda
