// The profiler: records engine ops and counters and writes them in Chrome trace format (open the
// file in Perfetto or chrome://tracing).
//
// Events: one complete ("X") event per executed op, also inside bulked segments, with the op's
// name, device ("cpu(0)", "gpu(1)"; also the trace process), the worker's thread, start and
// duration in µs; counter ("C") events from RecordCounter — after each recorded op, the bytes in
// use and cached in that device's memory pool.
// What is recorded follows MXNET_PROFILER_MODE: kSymbolic (0) records ops the executor pushes
// (OpOrigin::kExecutor); kAll (1) records every op, imperative ones and copies included.
//
// MXNET_PROFILER_AUTOSTART=1 starts the profiler when it is first used (the engine touches it when
// created) and writes profile.json in the working directory at exit. Dump() writes every event
// recorded since the last Start() to a temporary file and renames it, so the file is always
// complete, valid JSON.
//
// Cost. The engine asks ShouldRecord() once per push: one relaxed atomic load, no lock, when off.
//
// Thread safety: every method may be called from any thread. The singleton is never destroyed, so
// ops finishing during process exit can still record.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/context.h"

namespace mxlite {

enum class ProfilerMode { kSymbolic = 0, kAll = 1 };

class Profiler {
 public:
  static Profiler& Get();

  // Starts recording with the given mode (or MXNET_PROFILER_MODE); keeps earlier events.
  void Start();
  void Start(ProfilerMode mode);
  void Stop();
  bool running() const { return state_.load(std::memory_order_relaxed) != kOff; }
  // Drops every recorded event.
  void Clear();
  // Writes the recorded events to `path` (via a temporary file and a rename); throws mxlite::Error
  // when the file cannot be written.
  void Dump(const std::string& path);

  // Whether an op pushed now with `executor_op` should be recorded. One relaxed load.
  bool ShouldRecord(bool executor_op) const {
    int state = state_.load(std::memory_order_relaxed);
    return state == kAll || (state == kSymbolic && executor_op);
  }

  // Records a complete event; times from NowMicros(). `category` is "operator" or "copy".
  void RecordOp(std::string_view name, std::string_view category, Context ctx, int64_t start_us,
                int64_t end_us);
  // Records a counter sample (e.g. "memory in use", bytes) for a device, if running.
  void RecordCounter(std::string_view name, Context ctx, int64_t value);
  // Records the memory pool counters of `ctx` (if it has a pool).
  void SampleMemory(Context ctx);
  // Names the calling thread in the trace ("cpu worker 0").
  void SetThreadName(std::string_view name);

  // Microseconds on a steady clock, since the profiler was created.
  int64_t NowMicros() const;
  // Op events (not counters) recorded so far (for tests).
  size_t event_count() const;

  // One recorded op event.
  struct RecordedOp {
    std::string name;
    std::string category;  // "operator" or "copy"
    Context ctx;
    int64_t start_us = 0;
    int64_t duration_us = 0;
  };
  // The op events recorded since the last Clear(), in the order they were recorded.
  std::vector<RecordedOp> RecordedOps() const;

 private:
  Profiler();
  static constexpr int kOff = -1;
  static constexpr int kSymbolic = static_cast<int>(ProfilerMode::kSymbolic);
  static constexpr int kAll = static_cast<int>(ProfilerMode::kAll);

  struct Event {
    char phase;  // 'X' or 'C'
    std::string name;
    std::string category;
    Context ctx;
    int thread;
    int64_t start_us;
    int64_t duration_us;  // 'X' only
    int64_t value;        // 'C' only
  };

  static int CurrentThreadIndex();
  std::string ToJson() const;

  std::atomic<int> state_{kOff};
  const int64_t origin_ns_;
  mutable std::mutex mutex_;
  std::vector<Event> events_;                              // GUARDED_BY(mutex_)
  std::vector<std::pair<int, std::string>> thread_names_;  // GUARDED_BY(mutex_)
};

}  // namespace mxlite
