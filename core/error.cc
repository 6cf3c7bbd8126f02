#include "core/error.h"

namespace mxlite::detail {

ErrorStream::ErrorStream(const char* file, int line, const std::string& headline) {
  // __FILE__ is repository-relative: CMake maps the source prefix away (-fmacro-prefix-map).
  stream_ << file << ":" << line << ": " << headline;
}

void ErrorThrower::operator&(const ErrorStream& stream) const { throw Error(stream.str()); }

}  // namespace mxlite::detail
