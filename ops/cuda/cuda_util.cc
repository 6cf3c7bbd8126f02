#include "ops/cuda/cuda_util.h"

#include <algorithm>
#include <array>
#include <climits>
#include <map>
#include <numeric>
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

namespace {

// The same broadcast over fewer axes: extent-1 axes dropped, and an axis merged into the one
// outside it where each operand continues across the two as one axis (contiguous, or broadcast
// over both). A bias over the last axis of (N, H, W, C) becomes (N*H*W, C): kernels divide once
// per element instead of once per axis. At least one axis remains (a scalar: one element).
BroadcastGeometry MergedAxes(const BroadcastGeometry& g) {
  BroadcastGeometry merged;
  for (int d = 0; d < g.ndim; ++d) {
    if (g.extents[d] == 1) continue;
    const int last = merged.ndim - 1;
    const bool continues = last >= 0 && merged.strides[0][last] == g.strides[0][d] * g.extents[d] &&
                           merged.strides[1][last] == g.strides[1][d] * g.extents[d];
    if (continues) {
      merged.extents[last] *= g.extents[d];
      merged.strides[0][last] = g.strides[0][d];
      merged.strides[1][last] = g.strides[1][d];
      continue;
    }
    merged.extents[merged.ndim] = g.extents[d];
    merged.strides[0][merged.ndim] = g.strides[0][d];
    merged.strides[1][merged.ndim] = g.strides[1][d];
    ++merged.ndim;
  }
  if (merged.ndim == 0) {
    merged.ndim = 1;
    merged.extents[0] = 1;
  }
  return merged;
}

}  // namespace

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
  return MergedAxes(g);
}

TransposeGeometry MakeTransposeGeometry(const Shape& shape, const std::vector<int>& axes) {
  const int ndim = shape.ndim();
  // Input axes kept (extent > 1), renumbered in input order.
  std::vector<int> renumbered(ndim, -1);
  std::vector<int64_t> extents;
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] == 1) continue;
    renumbered[d] = static_cast<int>(extents.size());
    extents.push_back(shape[d]);
  }
  std::vector<int> perm;
  for (int axis : axes) {
    if (renumbered[axis] >= 0) perm.push_back(renumbered[axis]);
  }
  // Runs of consecutive input axes in the output order become one axis each.
  std::vector<std::vector<int>> groups;
  for (int axis : perm) {
    if (!groups.empty() && groups.back().back() + 1 == axis) {
      groups.back().push_back(axis);
    } else {
      groups.push_back({axis});
    }
  }
  // The merged input axes, in input order: group g's first axis orders them.
  std::vector<int> order(groups.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return groups[a].front() < groups[b].front(); });
  const int merged = static_cast<int>(groups.size());
  std::vector<int64_t> merged_extent(merged, 1), merged_stride(merged, 1);
  for (int g = 0; g < merged; ++g) {
    for (int axis : groups[g]) merged_extent[g] *= extents[axis];
  }
  int64_t stride = 1;
  for (int i = merged - 1; i >= 0; --i) {  // input order, innermost last
    merged_stride[order[i]] = stride;
    stride *= merged_extent[order[i]];
  }
  TransposeGeometry g;
  g.ndim = std::max(merged, 1);
  g.out_extents[0] = 1;
  for (int i = 0; i < merged; ++i) {
    g.out_extents[i] = merged_extent[i];
    g.in_strides_permuted[i] = merged_stride[i];
  }
  // order[i] = the output position of input axis i; a batched 2-D transpose keeps every axis but
  // the last two in place and swaps those.
  bool batched_swap =
      merged >= 2 && order[merged - 2] == merged - 1 && order[merged - 1] == merged - 2;
  for (int i = 0; batched_swap && i < merged - 2; ++i) batched_swap = order[i] == i;
  if (batched_swap) {
    g.cols = merged_extent[merged - 2];  // the input's inner axis, the output's outer
    g.rows = merged_extent[merged - 1];
    g.batch = 1;
    for (int i = 0; i < merged - 2; ++i) g.batch *= merged_extent[i];
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
