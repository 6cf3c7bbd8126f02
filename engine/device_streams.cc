#include "engine/device_streams.h"

#include "core/error.h"

#if MXLITE_USE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace mxlite::engine_internal {

#if MXLITE_USE_CUDA

namespace {
void CheckCuda(cudaError_t status, const char* what, const char* op_name) {
  if (status == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so the engine stays usable
  MX_THROW() << what << " for op '" << op_name << "': " << cudaGetErrorString(status);
}
}  // namespace

DeviceStreams::~DeviceStreams() {
  for (size_t device = 0; device < streams_.size(); ++device) {
    if (streams_[device] == nullptr) continue;
    cudaSetDevice(static_cast<int>(device));
    cudaStreamDestroy(static_cast<cudaStream_t>(streams_[device]));
  }
}

void* DeviceStreams::ForContext(Context ctx) {
  if (!ctx.is_gpu()) return nullptr;
  CheckCuda(cudaSetDevice(ctx.device_id), "cudaSetDevice", ctx.ToString().c_str());
  std::lock_guard<std::mutex> lock(mutex_);
  if (streams_.size() <= static_cast<size_t>(ctx.device_id)) streams_.resize(ctx.device_id + 1);
  void*& stream = streams_[ctx.device_id];
  if (stream == nullptr) {
    cudaStream_t created = nullptr;
    CheckCuda(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking), "cudaStreamCreate",
              ctx.ToString().c_str());
    stream = created;
  }
  return stream;
}

void DeviceStreams::Synchronize(void* stream, const char* op_name) {
  CheckCuda(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize",
            op_name);
}

#else

DeviceStreams::~DeviceStreams() = default;

void* DeviceStreams::ForContext(Context ctx) {
  if (!ctx.is_gpu()) return nullptr;
  MX_THROW() << "cannot run an op on " << ctx << ": mxlite was built without CUDA";
}

void DeviceStreams::Synchronize(void*, const char*) {}

#endif

}  // namespace mxlite::engine_internal
