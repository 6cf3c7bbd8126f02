#include "tools/mxlite/command_line.h"

#include <sstream>

#include "core/error.h"

namespace mxlite::cli {

std::optional<std::string> ParsedArgs::Value(const std::string& flag) const {
  auto it = values_.find(flag);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> ParsedArgs::Values(const std::string& flag) const {
  auto it = values_.find(flag);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

ParsedArgs Parse(const std::string& command, const std::vector<FlagSpec>& flags,
                 const std::vector<std::string>& args) {
  auto known_flags = [&]() {
    std::string text;
    for (const FlagSpec& flag : flags) text += (text.empty() ? "--" : ", --") + flag.name;
    return text.empty() ? std::string("none") : text;
  };
  ParsedArgs parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!arg.starts_with("--")) {
      parsed.positional_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> inline_value;
    if (size_t equals = name.find('='); equals != std::string::npos) {
      inline_value = name.substr(equals + 1);
      name = name.substr(0, equals);
    }
    const FlagSpec* spec = nullptr;
    for (const FlagSpec& flag : flags) {
      if (flag.name == name) spec = &flag;
    }
    MX_CHECK(spec != nullptr) << "unknown flag --" << name << " for '" << command
                              << "'; known flags: " << known_flags();
    MX_CHECK(spec->repeatable || !parsed.Has(name))
        << "flag --" << name << " given twice for '" << command << "'";
    if (!spec->takes_value) {
      MX_CHECK(!inline_value) << "flag --" << name << " of '" << command << "' takes no value";
      parsed.values_[name].push_back("");
      continue;
    }
    if (!inline_value) {
      MX_CHECK(i + 1 < args.size()) << "flag --" << name << " of '" << command << "' needs a value";
      inline_value = args[++i];
    }
    parsed.values_[name].push_back(*inline_value);
  }
  return parsed;
}

std::string FlagsHelp(const std::vector<FlagSpec>& flags) {
  std::ostringstream out;
  for (const FlagSpec& flag : flags) {
    std::string left = "  --" + flag.name + (flag.takes_value ? " VALUE" : "");
    out << left << std::string(left.size() < 26 ? 26 - left.size() : 1, ' ') << flag.help << "\n";
  }
  return out.str();
}

}  // namespace mxlite::cli
