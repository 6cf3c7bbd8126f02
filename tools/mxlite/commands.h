// The subcommands of the `mxlite` CLI. Each takes the arguments after its name, handles its own
// --help, and returns the process exit status (0 success, 1 failure, 2 usage error). Errors are
// thrown as mxlite::Error and printed by main().
#pragma once

#include <string>
#include <vector>

namespace mxlite::cli {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

int RunInfoCommand(const std::vector<std::string>& args);
int RunTuneCommand(const std::vector<std::string>& args);
int RunRunCommand(const std::vector<std::string>& args);
int RunBenchCommand(const std::vector<std::string>& args);

// Every subcommand, in the order `mxlite --help` lists them.
const std::vector<Command>& AllCommands();

}  // namespace mxlite::cli
