// mxlite::Error and the check macros: the one error policy of every layer.
//
//   MX_CHECK(ptr != nullptr) << "layer " << name << " has no weight";
//   MX_CHECK_EQ(a.ndim(), 4) << "input of " << name;
//   MX_THROW() << "unknown op '" << op << "'";
//
// A failed check throws mxlite::Error. A check that says what went wrong (a streamed context) is
// written for the user, and its what() is that context alone, plus both operands of a comparison:
//   "<context>"  /  "<context> (<lhs> vs <rhs>)"
// A check without a context is an internal assertion, and its what() says where it failed:
//   "<file>:<line>: Check failed: <condition> (<lhs> vs <rhs>)"
// With MXNET_LOG_LEVEL=debug every error carries its place: "<file>:<line>: Check failed:
// <condition> (<lhs> vs <rhs>): <context>" (MX_THROW's headline is "Error").
// The streamed context is only evaluated when the check fails. Errors that happen inside engine
// operations travel on the variables they write (engine/) and are rethrown at the next wait.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace mxlite {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Thrown when a device or pool cannot satisfy an allocation; a subclass so callers may retry.
class OutOfMemoryError : public Error {
 public:
  explicit OutOfMemoryError(const std::string& message) : Error(message) {}
};

namespace detail {

// Collects the message of a failing check; ErrorThrower turns it into an exception.
class ErrorStream {
 public:
  // `operands`: " (lhs vs rhs)" for a comparison, else "".
  ErrorStream(const char* file, int line, std::string headline, std::string operands = "");
  template <typename T>
  ErrorStream& operator<<(const T& value) {
    context_ << value;
    has_context_ = true;
    return *this;
  }
  // The message, as the contract above says.
  std::string str() const;

 private:
  const char* file_;
  int line_;
  std::string headline_;
  std::string operands_;
  std::ostringstream context_;
  bool has_context_ = false;
};

// `thrower & stream` has lower precedence than `<<`, so the whole message is built first.
struct ErrorThrower {
  [[noreturn]] void operator&(const ErrorStream& stream) const;
};

template <typename A, typename B>
std::string FormatOperands(const A& a, const B& b) {
  std::ostringstream out;
  out << " (" << a << " vs " << b << ")";
  return out.str();
}

}  // namespace detail
}  // namespace mxlite

#define MX_THROW() \
  ::mxlite::detail::ErrorThrower() & ::mxlite::detail::ErrorStream(__FILE__, __LINE__, "Error")

#define MX_CHECK(condition)                                                                  \
  if (condition) {                                                                           \
  } else /* NOLINT */                                                                        \
    ::mxlite::detail::ErrorThrower() &                                                       \
        ::mxlite::detail::ErrorStream(__FILE__, __LINE__, "Check failed: " #condition)

#define MX_CHECK_OP_(a, b, op)                                                                \
  if ((a)op(b)) {                                                                             \
  } else /* NOLINT */                                                                         \
    ::mxlite::detail::ErrorThrower() &                                                        \
        ::mxlite::detail::ErrorStream(__FILE__, __LINE__, "Check failed: " #a " " #op " " #b, \
                                      ::mxlite::detail::FormatOperands((a), (b)))

#define MX_CHECK_EQ(a, b) MX_CHECK_OP_(a, b, ==)
#define MX_CHECK_NE(a, b) MX_CHECK_OP_(a, b, !=)
#define MX_CHECK_LT(a, b) MX_CHECK_OP_(a, b, <)
#define MX_CHECK_LE(a, b) MX_CHECK_OP_(a, b, <=)
#define MX_CHECK_GT(a, b) MX_CHECK_OP_(a, b, >)
#define MX_CHECK_GE(a, b) MX_CHECK_OP_(a, b, >=)
