// Levelled logging to stderr.
//
//   MX_LOG(INFO) << "tuned " << n << " convolutions";
//   MX_LOG_ONCE(WARNING) << "...";           // at most once per call site per process
//
// Lines below the threshold cost one comparison and build no string. The threshold comes from the
// setting MXNET_LOG_LEVEL (debug|info|warning|error, default info) and can be changed with
// SetLogLevel(). Each line is written with a single write so lines from threads never interleave.
// Lines read "[mxlite] ..." (info) or "[mxlite warning] ..."; at the debug level every line also
// names its source file and line. Tests can capture lines with SetLogSink().
#pragma once

#include <atomic>
#include <functional>
#include <sstream>
#include <string>

namespace mxlite {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

const char* LogLevelName(LogLevel level);
LogLevel CurrentLogLevel();
void SetLogLevel(LogLevel level);
bool LogEnabled(LogLevel level);

// Receives each finished line (without trailing newline). Passing nullptr restores stderr.
using LogSink = std::function<void(LogLevel, const std::string&)>;
void SetLogSink(LogSink sink);

namespace detail {

class LogLine {
 public:
  LogLine(LogLevel level, const char* file, int line);
  ~LogLine();
  template <typename T>
  LogLine& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  LogLevel level_;
  std::ostringstream stream_;
};

// Makes `cond ? (void)0 : voidify & line << ...` type-check.
struct LogVoidify {
  void operator&(const LogLine&) const {}
};

}  // namespace detail
}  // namespace mxlite

#define MX_LOG_LEVEL_DEBUG ::mxlite::LogLevel::kDebug
#define MX_LOG_LEVEL_INFO ::mxlite::LogLevel::kInfo
#define MX_LOG_LEVEL_WARNING ::mxlite::LogLevel::kWarning
#define MX_LOG_LEVEL_ERROR ::mxlite::LogLevel::kError

#define MX_LOG(severity)                                      \
  !::mxlite::LogEnabled(MX_LOG_LEVEL_##severity)              \
      ? (void)0                                               \
      : ::mxlite::detail::LogVoidify() &                      \
            ::mxlite::detail::LogLine(MX_LOG_LEVEL_##severity, __FILE__, __LINE__)

#define MX_LOG_ONCE(severity)                                                       \
  for (static std::atomic<bool> mx_logged_once_{false};                             \
       !mx_logged_once_.exchange(true, std::memory_order_relaxed);)                 \
  MX_LOG(severity)
