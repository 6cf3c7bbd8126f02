// Running the built `mxlite` binary from a test as a user would: a clean environment (so the
// developer's own MXNET_* variables cannot leak in), stdout and stderr together, the exit status.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace mxlite::cli_test {

struct CliResult {
  int status = -1;     // the exit status; -1 when the command could not run or was killed
  std::string output;  // stdout and stderr together
};

// The loader's search path is passed on: where CUDA or cuDNN live outside the system folders (a
// pip wheel's cuDNN, say) the binary cannot start without it, and it sets no MXNET_* behaviour.
inline std::string InheritedLibraryPath() {
  const char* path = std::getenv("LD_LIBRARY_PATH");
  return path ? "LD_LIBRARY_PATH='" + std::string(path) + "' " : std::string();
}

// Runs `env -i PATH=... HOME=/tmp [LD_LIBRARY_PATH=...] <environment> mxlite <args>`.
inline CliResult RunCli(const std::string& environment, const std::string& args) {
  const std::string command = "env -i PATH=/usr/bin:/bin HOME=/tmp " + InheritedLibraryPath() +
                              environment + " " + MXLITE_CLI_PATH + " " + args + " 2>&1";
  CliResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    result.output.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace mxlite::cli_test
