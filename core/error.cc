#include "core/error.h"

#include <utility>

#include "core/logging.h"

namespace mxlite::detail {

ErrorStream::ErrorStream(const char* file, int line, std::string headline, std::string operands)
    : file_(file), line_(line), headline_(std::move(headline)), operands_(std::move(operands)) {}

std::string ErrorStream::str() const {
  if (has_context_ && !LogEnabled(LogLevel::kDebug)) return context_.str() + operands_;
  // __FILE__ is repository-relative: CMake maps the source prefix away (-fmacro-prefix-map).
  std::ostringstream out;
  out << file_ << ":" << line_ << ": " << headline_ << operands_;
  if (has_context_) out << ": " << context_.str();
  return out.str();
}

void ErrorThrower::operator&(const ErrorStream& stream) const { throw Error(stream.str()); }

}  // namespace mxlite::detail
