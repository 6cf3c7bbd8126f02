#include "ops/tensor_fill.h"

#include <algorithm>
#include <cstring>
#include <vector>

#if MXLITE_USE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "core/error.h"
#include "core/half.h"

namespace mxlite {

namespace {

// Host memory of `count` elements of a floating dtype, each `value` (float16 rounded to nearest
// even).
void FillHost(void* data, DType dtype, int64_t count, double value) {
  if (dtype == DType::kFloat16) {
    std::fill_n(static_cast<uint16_t*>(data), count, FloatToHalf(static_cast<float>(value)));
    return;
  }
  MXLITE_FLOAT_TYPE_SWITCH(dtype, T, "FillTensor",
                           std::fill_n(static_cast<T*>(data), count, static_cast<T>(value)));
}

#if MXLITE_USE_CUDA
void CheckCuda(cudaError_t status, const char* what) {
  MX_CHECK(status == cudaSuccess) << what << " failed: " << cudaGetErrorString(status);
}
#endif

}  // namespace

void FillTensor(const TensorView& view, double value, void* stream) {
  if (view.size() == 0) return;
  if (view.ctx.is_host()) {
    FillHost(view.data, view.dtype, view.size(), value);
    return;
  }
#if MXLITE_USE_CUDA
  auto cuda_stream = static_cast<cudaStream_t>(stream);
  if (value == 0.0) {
    CheckCuda(cudaMemsetAsync(view.data, 0, view.bytes(), cuda_stream), "cudaMemsetAsync");
    return;
  }
  // A host buffer of the value, copied over; synchronised so the buffer may go.
  std::vector<double> host_storage((view.bytes() + 7) / 8);
  FillHost(host_storage.data(), view.dtype, view.size(), value);
  CheckCuda(cudaMemcpyAsync(view.data, host_storage.data(), view.bytes(), cudaMemcpyHostToDevice,
                            cuda_stream),
            "cudaMemcpyAsync");
  CheckCuda(cudaStreamSynchronize(cuda_stream), "cudaStreamSynchronize");
#else
  (void)stream;
  MX_THROW() << "FillTensor: " << view.ctx << " in a build without CUDA";
#endif
}

void CopyTensor(const TensorView& from, const TensorView& to, void* stream) {
  MX_CHECK_EQ(from.bytes(), to.bytes()) << "CopyTensor from " << from.shape << " to " << to.shape;
  if (from.bytes() == 0) return;
  if (from.ctx.is_host() && to.ctx.is_host()) {
    std::memcpy(to.data, from.data, from.bytes());
    return;
  }
#if MXLITE_USE_CUDA
  CheckCuda(cudaMemcpyAsync(to.data, from.data, from.bytes(), cudaMemcpyDefault,
                            static_cast<cudaStream_t>(stream)),
            "cudaMemcpyAsync");
#else
  (void)stream;
  MX_THROW() << "CopyTensor between " << from.ctx << " and " << to.ctx << " without CUDA";
#endif
}

}  // namespace mxlite
