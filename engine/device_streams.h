// Internal to engine/: the CUDA streams of one engine worker (NaiveEngine shares one among the
// threads that push to it; ForContext is thread-safe). Streams are created on a device's first op
// and destroyed with the object. Without CUDA (MXLITE_USE_CUDA=0)
// asking for a GPU stream throws mxlite::Error.
#pragma once

#include <mutex>
#include <vector>

#include "core/context.h"

namespace mxlite::engine_internal {

class DeviceStreams {
 public:
  DeviceStreams() = default;
  ~DeviceStreams();
  DeviceStreams(const DeviceStreams&) = delete;
  DeviceStreams& operator=(const DeviceStreams&) = delete;

  // nullptr for the CPU. For a GPU: makes it the calling thread's current device and returns this
  // worker's stream on it (a cudaStream_t), creating it on first use.
  void* ForContext(Context ctx);

  // Waits for the work queued on `stream`; throws mxlite::Error naming `op_name` on a CUDA error.
  static void Synchronize(void* stream, const char* op_name);

 private:
  std::mutex mutex_;
  std::vector<void*> streams_;  // GUARDED_BY(mutex_); by GPU ordinal, nullptr until created
};

}  // namespace mxlite::engine_internal
