// The settings registry: every runtime setting of mxlite, declared once (core/settings_catalog.cc)
// with its type, default, allowed values and a one-line doc. Reading a setting goes through here.
//
// Precedence, highest first (docs/design.md, Settings):
//   1. a per-op attribute (e.g. a Convolution's cudnn_tune), passed to Resolve();
//   2. a value set by the program with Set();
//   3. the process environment, read once when the registry is created (ReloadEnvironment() again);
//   4. the built-in default.
// Every read returns the value together with its source, so `mxlite info` and the tuning report can
// say where each effective value came from.
//
// Invalid values are never replaced by a default: Set() throws at once; an invalid environment
// value throws mxlite::Error on the first read of that setting (and is listed by Validate()).
// Messages name the variable, the value and what is allowed.
//
// Environment audit: an MXNET_* / NNVM_* variable the registry does not know is reported once with
// the closest known name (typo catching); MXNet variables that mxlite recognises but does not use
// get a one-line notice instead. Global() logs these once per process.
//
// Thread safety: all methods may be called concurrently; Set()/Reset()/ReloadEnvironment() take a
// writer lock. Reads parse the stored text each time, so hot paths should read once and keep the
// value.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

namespace mxlite {

enum class SettingType { kBool, kInt, kEnum, kString, kPath };
enum class SettingSource { kAttribute, kProgram, kEnvironment, kDefault };

const char* SettingTypeName(SettingType type);
const char* SettingSourceName(SettingSource source);

// One allowed value of an enum setting. `value` is the canonical spelling (what the environment
// variable takes, e.g. "1"); `aliases` are other accepted spellings (e.g. "limited_workspace", the
// name a Convolution's cudnn_tune attribute uses).
struct SettingChoice {
  std::string value;
  std::vector<std::string> aliases;
};

struct SettingSpec {
  std::string name;
  SettingType type = SettingType::kString;
  std::string default_value;  // as documented; for kPath may start with "~/"
  std::string doc;            // one line
  int64_t min = INT64_MIN;    // kInt only, inclusive
  int64_t max = INT64_MAX;    // kInt only, inclusive
  std::vector<SettingChoice> choices;  // kEnum only

  // "0, 1, 2 (or off, limited_workspace, fastest)", "an integer in 20..34", "0 or 1 (true/false)".
  std::string AllowedText() const;
};

// A variable from MXNet's documentation that mxlite accepts but does not act on, and why.
struct RecognisedUnusedVariable {
  std::string name;
  std::string reason;
};

struct SettingValue {
  std::string text;  // canonical text (enum aliases mapped to their value; "~" expanded for paths)
  SettingSource source = SettingSource::kDefault;

  bool as_bool() const;
  int64_t as_int() const;
};

// What the environment audit found about one variable.
struct EnvironmentNotice {
  enum class Kind { kUnknownVariable, kRecognisedUnused };
  Kind kind;
  std::string variable;
  std::string message;  // the full line to print
};

using EnvironmentMap = std::map<std::string, std::string>;

class Settings {
 public:
  // The process-wide registry with the catalog of core/settings_catalog.cc and the process
  // environment. Logs the environment audit once.
  static Settings& Global();

  // A registry over the given specs and environment snapshot (tests build their own).
  Settings(std::vector<SettingSpec> specs, std::vector<RecognisedUnusedVariable> unused,
           EnvironmentMap environment);

  Settings(const Settings&) = delete;
  Settings& operator=(const Settings&) = delete;

  // Effective value with its source: program > environment > default. Throws mxlite::Error for an
  // unknown name (suggesting the closest) or an invalid environment value.
  SettingValue Get(std::string_view name) const;
  bool GetBool(std::string_view name) const { return Get(name).as_bool(); }
  int64_t GetInt(std::string_view name) const { return Get(name).as_int(); }
  std::string GetString(std::string_view name) const { return Get(name).text; }

  // As Get(), with a per-op attribute value in front when it is present. `attribute_label` names
  // the attribute in error messages (e.g. "attribute cudnn_tune of layer conv3").
  SettingValue Resolve(std::string_view name, std::optional<std::string_view> attribute_value,
                       std::string_view attribute_label) const;

  // Sets the program value (validated; throws mxlite::Error on an invalid value). Reset() removes it.
  void Set(std::string_view name, std::string_view value);
  void Reset(std::string_view name);

  // Validates `value` for `name` and returns its canonical text; throws mxlite::Error otherwise.
  // `origin` describes where the value came from, for the message ("environment", "program", ...).
  std::string Canonicalize(std::string_view name, std::string_view value,
                           std::string_view origin) const;

  const SettingSpec& Spec(std::string_view name) const;
  bool Has(std::string_view name) const;
  const std::vector<SettingSpec>& specs() const { return specs_; }
  const std::vector<RecognisedUnusedVariable>& recognised_unused() const { return unused_; }

  // One message per invalid environment value (empty when all are valid).
  std::vector<std::string> Validate() const;
  // Unknown MXNET_*/NNVM_* variables (with the closest known name) and recognised-unused ones.
  std::vector<EnvironmentNotice> AuditEnvironment() const;

  // Re-reads the process environment (for programs that change it after start, and tests).
  void ReloadEnvironment();
  void ReplaceEnvironment(EnvironmentMap environment);

  // The closest known name (settings and recognised-unused variables) by edit distance.
  std::string ClosestName(std::string_view name) const;

 private:
  const SettingSpec* Find(std::string_view name) const;
  const SettingSpec& SpecOrThrow(std::string_view name) const;

  std::vector<SettingSpec> specs_;               // immutable after construction
  std::vector<RecognisedUnusedVariable> unused_;  // immutable after construction
  mutable std::shared_mutex mutex_;
  EnvironmentMap environment_;                   // GUARDED_BY(mutex_): MXNET_*/NNVM_* only
  std::map<std::string, std::string, std::less<>> program_values_;  // GUARDED_BY(mutex_)
};

// Shorthand for Settings::Global(), as in `mxlite::settings().Set("MXNET_ENGINE_TYPE", ...)`.
inline Settings& settings() { return Settings::Global(); }

// The catalog (core/settings_catalog.cc).
std::vector<SettingSpec> BuiltinSettingSpecs();
std::vector<RecognisedUnusedVariable> BuiltinRecognisedUnusedVariables();

// The process environment's MXNET_* and NNVM_* variables.
EnvironmentMap ReadProcessEnvironment();

// docs/settings.md's table of environment variables, generated from the registry (a test keeps
// the page equal to it).
std::string SettingsMarkdownTable(const Settings& settings);

}  // namespace mxlite
