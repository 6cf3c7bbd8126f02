// mxlite: the command-line face of the engine. `mxlite --help` lists the subcommands.
#include <iostream>
#include <string>
#include <vector>

#include "core/error.h"
#include "tools/mxlite/commands.h"

namespace mxlite::cli {

const std::vector<Command>& AllCommands() {
  static const std::vector<Command> commands = {
      {"info", "print every setting (value, source, default, doc) and the build", RunInfoCommand},
      {"run", "run an ONNX model on TensorProto inputs; write its outputs as .pb files",
       RunRunCommand},
      {"tune", "tune a model's convolutions, print the report and fill the tuning DB",
       RunTuneCommand},
      {"bench", "inference latency percentiles and throughput of an ONNX model", RunBenchCommand},
  };
  return commands;
}

namespace {

void PrintUsage(std::ostream& out) {
  out << "usage: mxlite <command> [flags]\n\ncommands:\n";
  for (const Command& command : AllCommands()) {
    std::string name = command.name;
    out << "  " << name << std::string(name.size() < 10 ? 10 - name.size() : 1, ' ')
        << command.summary << "\n";
  }
  out << "\n`mxlite <command> --help` describes a command's flags.\n"
         "Settings come from MXNET_* environment variables; `mxlite info` lists them.\n";
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    PrintUsage(std::cerr);
    return 2;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    PrintUsage(std::cout);
    return 0;
  }
  for (const Command& command : AllCommands()) {
    if (args[0] == command.name) {
      return command.run(std::vector<std::string>(args.begin() + 1, args.end()));
    }
  }
  std::cerr << "mxlite: unknown command '" << args[0] << "'\n\n";
  PrintUsage(std::cerr);
  return 2;
}

}  // namespace
}  // namespace mxlite::cli

int main(int argc, char** argv) {
  try {
    return mxlite::cli::Main(argc, argv);
  } catch (const mxlite::Error& error) {
    std::cerr << "mxlite: error: " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "mxlite: unexpected error: " << error.what() << "\n";
    return 1;
  }
}
