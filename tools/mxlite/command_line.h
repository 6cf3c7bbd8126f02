// A small parser for `mxlite <command> [flags] [positional...]`.
//
// Each command declares its flags (name, whether it takes a value, help line). Parse() accepts
// "--name value", "--name=value" and boolean "--name"; anything else starting with "--" is an error
// naming the flag and listing the known ones. Errors throw mxlite::Error; main() prints them and
// exits with status 2.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mxlite::cli {

struct FlagSpec {
  std::string name;  // without the leading "--"
  bool takes_value = false;
  std::string help;
  bool repeatable = false;
};

class ParsedArgs {
 public:
  bool Has(const std::string& flag) const { return values_.count(flag) > 0; }
  std::optional<std::string> Value(const std::string& flag) const;
  std::vector<std::string> Values(const std::string& flag) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  friend ParsedArgs Parse(const std::string&, const std::vector<FlagSpec>&,
                          const std::vector<std::string>&);
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

// `command` names the subcommand in error messages ("mxlite info").
ParsedArgs Parse(const std::string& command, const std::vector<FlagSpec>& flags,
                 const std::vector<std::string>& args);

// "  --name VALUE   help" lines for --help output.
std::string FlagsHelp(const std::vector<FlagSpec>& flags);

}  // namespace mxlite::cli
