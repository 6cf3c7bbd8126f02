#include "core/settings.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <mutex>
#include <sstream>

#include "core/error.h"
#include "core/logging.h"

extern char** environ;

namespace mxlite {

namespace {

std::string Lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<bool> ParseBool(std::string_view text) {
  std::string lower = Lowercase(text);
  if (lower == "1" || lower == "true") return true;
  if (lower == "0" || lower == "false") return false;
  return std::nullopt;
}

std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::string ExpandHome(std::string_view path) {
  if (path == "~" || path.starts_with("~/")) {
    const char* home = std::getenv("HOME");
    return std::string(home ? home : "") + std::string(path.substr(1));
  }
  return std::string(path);
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

[[noreturn]] void ThrowInvalidValue(const SettingSpec& spec, std::string_view value,
                                    std::string_view origin) {
  MX_THROW() << "invalid value '" << value << "' for " << spec.name << " (from " << origin
             << "): allowed values are " << spec.AllowedText();
}

bool IsAuditedName(std::string_view name) {
  return name.starts_with("MXNET_") || name.starts_with("NNVM_");
}

// MXNET_LOG_LEVEL sets the logging threshold; an invalid value is reported, not fatal here
// (Validate() and the first Get() report it too).
void ApplyLogLevel(const Settings& registry) {
  try {
    std::string level = registry.GetString("MXNET_LOG_LEVEL");
    if (level == "debug") SetLogLevel(LogLevel::kDebug);
    if (level == "info") SetLogLevel(LogLevel::kInfo);
    if (level == "warning") SetLogLevel(LogLevel::kWarning);
    if (level == "error") SetLogLevel(LogLevel::kError);
  } catch (const Error& error) {
    MX_LOG(ERROR) << error.what();
  }
}

}  // namespace

const char* SettingTypeName(SettingType type) {
  switch (type) {
    case SettingType::kBool: return "bool";
    case SettingType::kInt: return "int";
    case SettingType::kEnum: return "enum";
    case SettingType::kString: return "string";
    case SettingType::kPath: return "path";
  }
  return "?";
}

const char* SettingSourceName(SettingSource source) {
  switch (source) {
    case SettingSource::kAttribute: return "attribute";
    case SettingSource::kProgram: return "program";
    case SettingSource::kEnvironment: return "environment";
    case SettingSource::kDefault: return "default";
  }
  return "?";
}

std::string SettingSpec::AllowedText() const {
  std::ostringstream out;
  switch (type) {
    case SettingType::kBool:
      out << "0 or 1 (also false/true)";
      break;
    case SettingType::kInt:
      if (max == INT64_MAX) {
        out << "an integer >= " << min;
      } else {
        out << "an integer in " << min << ".." << max;
      }
      break;
    case SettingType::kEnum: {
      std::vector<std::string> aliases;
      for (size_t i = 0; i < choices.size(); ++i) {
        out << (i ? ", " : "") << choices[i].value;
        for (const std::string& alias : choices[i].aliases) aliases.push_back(alias);
      }
      if (!aliases.empty()) {
        out << " (or ";
        for (size_t i = 0; i < aliases.size(); ++i) out << (i ? ", " : "") << aliases[i];
        out << ")";
      }
      break;
    }
    case SettingType::kString: out << "any text"; break;
    case SettingType::kPath: out << "a file system path"; break;
  }
  return out.str();
}

bool SettingValue::as_bool() const {
  std::optional<bool> value = ParseBool(text);
  MX_CHECK(value.has_value()) << "'" << text << "' is not a bool";
  return *value;
}

int64_t SettingValue::as_int() const {
  std::optional<int64_t> value = ParseInt(text);
  MX_CHECK(value.has_value()) << "'" << text << "' is not an integer";
  return *value;
}

Settings::Settings(std::vector<SettingSpec> specs, std::vector<RecognisedUnusedVariable> unused,
                   EnvironmentMap environment)
    : specs_(std::move(specs)), unused_(std::move(unused)), environment_(std::move(environment)) {
  for (const SettingSpec& spec : specs_) {
    // A catalog whose own default is invalid is a programming error; catch it at start.
    Canonicalize(spec.name, spec.default_value, "built-in default");
  }
}

Settings& Settings::Global() {
  static Settings* global = [] {
    auto* registry = new Settings(BuiltinSettingSpecs(), BuiltinRecognisedUnusedVariables(),
                                  ReadProcessEnvironment());
    for (const EnvironmentNotice& notice : registry->AuditEnvironment()) {
      if (notice.kind == EnvironmentNotice::Kind::kUnknownVariable) {
        MX_LOG(WARNING) << notice.message;
      } else {
        MX_LOG(INFO) << notice.message;
      }
    }
    ApplyLogLevel(*registry);
    return registry;
  }();
  return *global;
}

const SettingSpec* Settings::Find(std::string_view name) const {
  for (const SettingSpec& spec : specs_) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

bool Settings::Has(std::string_view name) const { return Find(name) != nullptr; }

const SettingSpec& Settings::SpecOrThrow(std::string_view name) const {
  const SettingSpec* spec = Find(name);
  MX_CHECK(spec != nullptr) << "unknown setting '" << name << "'; did you mean "
                            << ClosestName(name) << "? (`mxlite info` lists every setting)";
  return *spec;
}

const SettingSpec& Settings::Spec(std::string_view name) const { return SpecOrThrow(name); }

std::string Settings::Canonicalize(std::string_view name, std::string_view value,
                                   std::string_view origin) const {
  const SettingSpec& spec = SpecOrThrow(name);
  auto invalid = [&]() { ThrowInvalidValue(spec, value, origin); };
  switch (spec.type) {
    case SettingType::kBool:
      if (!ParseBool(value)) invalid();
      return std::string(value);
    case SettingType::kInt: {
      std::optional<int64_t> number = ParseInt(value);
      if (!number || *number < spec.min || *number > spec.max) invalid();
      return std::to_string(*number);
    }
    case SettingType::kEnum:
      for (const SettingChoice& choice : spec.choices) {
        if (value == choice.value) return choice.value;
        for (const std::string& alias : choice.aliases) {
          if (value == alias) return choice.value;
        }
      }
      invalid();
      break;
    case SettingType::kString: return std::string(value);
    case SettingType::kPath: return ExpandHome(value);
  }
  ThrowInvalidValue(spec, value, origin);
}

SettingValue Settings::Get(std::string_view name) const {
  const SettingSpec& spec = SpecOrThrow(name);
  std::shared_lock<std::shared_mutex> lock(mutex_);
  if (auto it = program_values_.find(name); it != program_values_.end()) {
    return {it->second, SettingSource::kProgram};
  }
  if (auto it = environment_.find(spec.name); it != environment_.end()) {
    return {Canonicalize(name, it->second, "environment"), SettingSource::kEnvironment};
  }
  return {Canonicalize(name, spec.default_value, "built-in default"), SettingSource::kDefault};
}

SettingValue Settings::Resolve(std::string_view name,
                               std::optional<std::string_view> attribute_value,
                               std::string_view attribute_label) const {
  if (attribute_value.has_value()) {
    return {Canonicalize(name, *attribute_value, attribute_label), SettingSource::kAttribute};
  }
  return Get(name);
}

void Settings::Set(std::string_view name, std::string_view value) {
  std::string canonical = Canonicalize(name, value, "program");
  std::unique_lock<std::shared_mutex> lock(mutex_);
  program_values_[std::string(name)] = std::move(canonical);
}

void Settings::Reset(std::string_view name) {
  SpecOrThrow(name);
  std::unique_lock<std::shared_mutex> lock(mutex_);
  if (auto it = program_values_.find(name); it != program_values_.end()) program_values_.erase(it);
}

std::vector<std::string> Settings::Validate() const {
  std::vector<std::string> errors;
  for (const SettingSpec& spec : specs_) {
    try {
      Get(spec.name);
    } catch (const Error& error) {
      errors.push_back(error.what());
    }
  }
  return errors;
}

std::vector<EnvironmentNotice> Settings::AuditEnvironment() const {
  std::vector<EnvironmentNotice> notices;
  std::shared_lock<std::shared_mutex> lock(mutex_);
  for (const auto& [variable, value] : environment_) {
    if (Find(variable)) continue;
    // A named copy: clang 14 cannot capture a structured binding (needed by the fuzz build).
    const std::string& name = variable;
    auto unused = std::find_if(unused_.begin(), unused_.end(),
                               [&](const auto& entry) { return entry.name == name; });
    if (unused != unused_.end()) {
      notices.push_back({EnvironmentNotice::Kind::kRecognisedUnused, variable,
                         variable + " is an MXNet setting that mxlite does not use: " +
                             unused->reason + "; ignored"});
      continue;
    }
    notices.push_back({EnvironmentNotice::Kind::kUnknownVariable, variable,
                       "unknown environment variable " + variable + "=" + value +
                           " is ignored; did you mean " + ClosestName(variable) + "?"});
  }
  return notices;
}

std::string Settings::ClosestName(std::string_view name) const {
  std::string best;
  size_t best_distance = SIZE_MAX;
  auto consider = [&](const std::string& candidate) {
    size_t distance = EditDistance(name, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  };
  for (const SettingSpec& spec : specs_) consider(spec.name);
  for (const RecognisedUnusedVariable& entry : unused_) consider(entry.name);
  return best;
}

void Settings::ReloadEnvironment() { ReplaceEnvironment(ReadProcessEnvironment()); }

void Settings::ReplaceEnvironment(EnvironmentMap environment) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  environment_ = std::move(environment);
}

EnvironmentMap ReadProcessEnvironment() {
  EnvironmentMap variables;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string_view text(*entry);
    size_t equals = text.find('=');
    if (equals == std::string_view::npos) continue;
    std::string_view name = text.substr(0, equals);
    if (IsAuditedName(name)) variables[std::string(name)] = std::string(text.substr(equals + 1));
  }
  return variables;
}

std::string SettingsMarkdownTable(const Settings& settings) {
  auto escape = [](std::string text) {
    std::string out;
    for (char c : text) {
      if (c == '|') out += "\\";
      out += c;
    }
    return out;
  };
  std::ostringstream out;
  out << "| Variable | Type | Default | Allowed | Description |\n";
  out << "| --- | --- | --- | --- | --- |\n";
  for (const SettingSpec& spec : settings.specs()) {
    out << "| `" << spec.name << "` | " << SettingTypeName(spec.type) << " | ";
    if (spec.default_value.empty()) {
      out << "(unset)";
    } else {
      out << "`" << escape(spec.default_value) << "`";
    }
    out << " | " << escape(spec.AllowedText()) << " | " << escape(spec.doc) << " |\n";
  }
  return out.str();
}

}  // namespace mxlite
