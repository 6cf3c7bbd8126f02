#include "engine/profiler.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "core/error.h"
#include "core/logging.h"
#include "core/settings.h"
#include "memory/storage.h"

namespace mxlite {

namespace {

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void AppendJsonString(std::ostringstream& out, std::string_view text) {
  out << '"';
  for (char c : text) {
    switch (c) {
      case '"':
        out << "\\\"";
        break;
      case '\\':
        out << "\\\\";
        break;
      case '\n':
        out << "\\n";
        break;
      case '\t':
        out << "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
          out << buffer;
        } else {
          out << c;
        }
    }
  }
  out << '"';
}

// Trace process per device: 0 for the CPU, 1 + ordinal for GPUs.
int ProcessId(Context ctx) { return ctx.is_gpu() ? 1 + ctx.device_id : 0; }

void DumpAtExit() {
  Profiler& profiler = Profiler::Get();
  profiler.Stop();
  try {
    profiler.Dump("profile.json");
  } catch (const std::exception& e) {
    MX_LOG(ERROR) << "MXNET_PROFILER_AUTOSTART: " << e.what();
  }
}

}  // namespace

Profiler& Profiler::Get() {
  static Profiler* profiler = new Profiler();  // never destroyed: ops may finish during exit
  return *profiler;
}

Profiler::Profiler() : origin_ns_(SteadyNanos()) {
  if (settings().GetBool("MXNET_PROFILER_AUTOSTART")) {
    Start();
    // Registered while the engine that triggered this is still being built, so the engine's
    // static destructor (which drains pending ops) runs before this dump.
    std::atexit(DumpAtExit);
  }
}

void Profiler::Start() {
  Start(static_cast<ProfilerMode>(settings().GetInt("MXNET_PROFILER_MODE")));
}

void Profiler::Start(ProfilerMode mode) {
  state_.store(static_cast<int>(mode), std::memory_order_relaxed);
}

void Profiler::Stop() { state_.store(kOff, std::memory_order_relaxed); }

void Profiler::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.clear();
}

int64_t Profiler::NowMicros() const { return (SteadyNanos() - origin_ns_) / 1000; }

size_t Profiler::event_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<size_t>(
      std::count_if(events_.begin(), events_.end(), [](const Event& e) { return e.phase == 'X'; }));
}

std::vector<Profiler::RecordedOp> Profiler::RecordedOps() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<RecordedOp> ops;
  for (const Event& event : events_) {
    if (event.phase != 'X') continue;
    ops.push_back({event.name, event.category, event.ctx, event.start_us, event.duration_us});
  }
  return ops;
}

int Profiler::CurrentThreadIndex() {
  static std::atomic<int> next_index{0};
  thread_local int index = next_index.fetch_add(1, std::memory_order_relaxed);
  return index;
}

void Profiler::RecordOp(std::string_view name, std::string_view category, Context ctx,
                        int64_t start_us, int64_t end_us) {
  Event event{'X',
              std::string(name),
              std::string(category),
              ctx,
              CurrentThreadIndex(),
              start_us,
              end_us - start_us,
              0};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back(std::move(event));
  }
  SampleMemory(ctx);
}

void Profiler::SampleMemory(Context ctx) {
  // The pool's bytes after each op, as counters (only while profiling; never creates a pool).
  if (std::optional<StorageStats> stats = Storage::Global().FindStats(ctx)) {
    RecordCounter("memory in use (bytes)", ctx, static_cast<int64_t>(stats->bytes_in_use));
    RecordCounter("memory cached (bytes)", ctx, static_cast<int64_t>(stats->bytes_cached));
  }
}

void Profiler::RecordCounter(std::string_view name, Context ctx, int64_t value) {
  if (!running()) return;
  Event event{'C', std::string(name), "counter", ctx, CurrentThreadIndex(), NowMicros(), 0, value};
  std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(std::move(event));
}

void Profiler::SetThreadName(std::string_view name) {
  int thread = CurrentThreadIndex();
  std::lock_guard<std::mutex> lock(mutex_);
  thread_names_.emplace_back(thread, std::string(name));
}

std::string Profiler::ToJson() const {
  std::ostringstream out;
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
  std::lock_guard<std::mutex> lock(mutex_);
  bool first = true;
  auto separator = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  std::map<int, std::string> processes;  // trace pid -> device name
  for (const Event& event : events_) {
    separator();
    out << "{\"ph\":\"" << event.phase << "\",\"name\":";
    AppendJsonString(out, event.name);
    out << ",\"cat\":";
    AppendJsonString(out, event.category);
    out << ",\"pid\":" << ProcessId(event.ctx) << ",\"tid\":" << event.thread
        << ",\"ts\":" << event.start_us;
    if (event.phase == 'X') {
      out << ",\"dur\":" << event.duration_us << ",\"args\":{\"device\":\"" << event.ctx.ToString()
          << "\"}}";
    } else {
      out << ",\"args\":{";
      AppendJsonString(out, event.name);
      out << ":" << event.value << "}}";
    }
    processes.emplace(ProcessId(event.ctx), event.ctx.ToString());
  }
  for (const auto& [pid, device] : processes) {
    separator();
    out << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << pid
        << ",\"tid\":0,\"args\":{\"name\":\"" << device << "\"}}";
    for (const auto& [thread, name] : thread_names_) {
      separator();
      out << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << pid << ",\"tid\":" << thread
          << ",\"args\":{\"name\":";
      AppendJsonString(out, name);
      out << "}}";
    }
  }
  out << "]}\n";
  return out.str();
}

void Profiler::Dump(const std::string& path) {
  std::string json = ToJson();
  std::string temporary = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    MX_CHECK(file.good()) << "cannot write profile to " << temporary;
    file << json;
    file.flush();
    MX_CHECK(file.good()) << "writing profile to " << temporary << " failed";
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    MX_THROW() << "cannot rename " << temporary << " to " << path;
  }
}

}  // namespace mxlite
