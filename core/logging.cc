#include "core/logging.h"

#include <unistd.h>

#include <mutex>

namespace mxlite {

namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
std::mutex g_sink_mutex;
LogSink g_sink;  // GUARDED_BY(g_sink_mutex); empty means stderr
}  // namespace

const char* LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kError: return "error";
  }
  return "?";
}

LogLevel CurrentLogLevel() { return static_cast<LogLevel>(g_level.load(std::memory_order_relaxed)); }
void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level), std::memory_order_relaxed); }
bool LogEnabled(LogLevel level) {
  return static_cast<int>(level) >= g_level.load(std::memory_order_relaxed);
}

void SetLogSink(LogSink sink) {
  std::lock_guard<std::mutex> lock(g_sink_mutex);
  g_sink = std::move(sink);
}

namespace detail {

LogLine::LogLine(LogLevel level, const char* file, int line) : level_(level) {
  // Warnings and errors are written for the user; the source location is for whoever debugs
  // mxlite, so it shows only at the debug level (MXNET_LOG_LEVEL=debug).
  const bool debugging = CurrentLogLevel() == LogLevel::kDebug;
  if (debugging) {
    stream_ << "[mxlite " << LogLevelName(level_) << " " << file << ":" << line << "] ";
  } else if (level_ >= LogLevel::kWarning) {
    stream_ << "[mxlite " << LogLevelName(level_) << "] ";
  } else {
    stream_ << "[mxlite] ";
  }
}

LogLine::~LogLine() {
  std::string text = stream_.str();
  std::lock_guard<std::mutex> lock(g_sink_mutex);
  if (g_sink) {
    g_sink(level_, text);
    return;
  }
  text.push_back('\n');
  // One write(2) per line keeps lines from different threads whole.
  ssize_t ignored = ::write(STDERR_FILENO, text.data(), text.size());
  (void)ignored;
}

}  // namespace detail
}  // namespace mxlite
