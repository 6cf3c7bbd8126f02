#include "ops/attributes.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <sstream>

#include "core/error.h"

namespace mxlite {

namespace {

std::string Trim(const std::string& text) {
  size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return text.substr(begin, end - begin);
}

std::optional<int64_t> ParseInteger(const std::string& raw) {
  std::string text = Trim(raw);
  if (text.size() > 1 && text.back() == 'L') text.pop_back();  // Python 2 longs in old models
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> ParseFloat(const std::string& raw) {
  std::string text = Trim(raw);
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

std::optional<bool> ParseBoolean(const std::string& raw) {
  std::string text = Trim(raw);
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (text == "1" || text == "true") return true;
  if (text == "0" || text == "false") return false;
  return std::nullopt;
}

std::string FormatFloat(double value) {
  std::ostringstream out;
  out.precision(17);
  out << value;
  return out.str();
}

std::string FormatValue(const AttributeValue& value) {
  struct Formatter {
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return FormatFloat(v); }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(const std::string& v) const { return v; }
    std::string operator()(const std::vector<int64_t>& v) const { return FormatIntTuple(v); }
  };
  return std::visit(Formatter{}, value);
}

}  // namespace

std::optional<std::vector<int64_t>> ParseIntTuple(const std::string& raw) {
  std::string text = Trim(raw);
  if (!text.empty() && (text.front() == '(' || text.front() == '[')) {
    const char close = text.front() == '(' ? ')' : ']';
    if (text.back() != close) return std::nullopt;
    text = Trim(text.substr(1, text.size() - 2));
  }
  std::vector<int64_t> values;
  if (text.empty()) return values;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (Trim(item).empty() && stream.eof() && !values.empty()) break;  // "(3,)" is Python's 1-tuple
    std::optional<int64_t> value = ParseInteger(item);
    if (!value) return std::nullopt;
    values.push_back(*value);
  }
  return values;
}

std::string FormatIntTuple(const std::vector<int64_t>& values) {
  std::string text = "(";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ',';
    text += std::to_string(values[i]);
  }
  text += ')';
  return text;
}

std::string AttributeSpec::ExpectedText() const {
  std::ostringstream out;
  switch (type) {
    case AttributeType::kInt:
      out << "an integer";
      if (min > -1e300 && max < 1e300) {
        out << " in " << static_cast<int64_t>(min) << ".." << static_cast<int64_t>(max);
      } else if (min > -1e300) {
        out << " >= " << static_cast<int64_t>(min);
      }
      break;
    case AttributeType::kFloat: out << "a number"; break;
    case AttributeType::kBool: out << "a bool (0, 1, true, false)"; break;
    case AttributeType::kString: out << "text"; break;
    case AttributeType::kEnum:
      out << "one of ";
      for (size_t i = 0; i < choices.size(); ++i) out << (i ? ", " : "") << choices[i];
      break;
    case AttributeType::kIntTuple: out << "a tuple of integers such as (3,3)"; break;
  }
  return out.str();
}

AttributeSchema& AttributeSchema::Add(AttributeSpec spec) {
  MX_CHECK(Find(spec.name) == nullptr) << "attribute '" << spec.name << "' declared twice";
  specs_.push_back(std::move(spec));
  return *this;
}

AttributeSchema& AttributeSchema::Int(std::string name, std::string doc,
                                      AttributePresence presence, int64_t min, int64_t max) {
  AttributeSpec spec{std::move(name), AttributeType::kInt, std::move(doc), std::move(presence)};
  spec.min = min == INT64_MIN ? -1e300 : static_cast<double>(min);
  spec.max = max == INT64_MAX ? 1e300 : static_cast<double>(max);
  return Add(std::move(spec));
}

AttributeSchema& AttributeSchema::Float(std::string name, std::string doc,
                                        AttributePresence presence) {
  return Add({std::move(name), AttributeType::kFloat, std::move(doc), std::move(presence)});
}

AttributeSchema& AttributeSchema::Bool(std::string name, std::string doc,
                                       AttributePresence presence) {
  return Add({std::move(name), AttributeType::kBool, std::move(doc), std::move(presence)});
}

AttributeSchema& AttributeSchema::String(std::string name, std::string doc,
                                         AttributePresence presence) {
  return Add({std::move(name), AttributeType::kString, std::move(doc), std::move(presence)});
}

AttributeSchema& AttributeSchema::Enum(std::string name, std::vector<std::string> choices,
                                       std::string doc, AttributePresence presence) {
  AttributeSpec spec{std::move(name), AttributeType::kEnum, std::move(doc), std::move(presence)};
  spec.choices = std::move(choices);
  return Add(std::move(spec));
}

AttributeSchema& AttributeSchema::IntTuple(std::string name, std::string doc,
                                           AttributePresence presence) {
  return Add({std::move(name), AttributeType::kIntTuple, std::move(doc), std::move(presence)});
}

const AttributeSpec* AttributeSchema::Find(const std::string& name) const {
  for (const AttributeSpec& spec : specs_) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

namespace {

AttributeValue ParseValue(const AttributeSpec& spec, const std::string& text,
                          const std::string& owner) {
  auto invalid = [&]() {
    MX_THROW() << owner << ": attribute " << spec.name << "='" << text << "' is invalid: expected "
               << spec.ExpectedText();
  };
  switch (spec.type) {
    case AttributeType::kInt: {
      std::optional<int64_t> value = ParseInteger(text);
      if (!value || *value < spec.min || *value > spec.max) invalid();
      return *value;
    }
    case AttributeType::kFloat: {
      std::optional<double> value = ParseFloat(text);
      if (!value || std::isnan(*value) || *value < spec.min || *value > spec.max) invalid();
      return *value;
    }
    case AttributeType::kBool: {
      std::optional<bool> value = ParseBoolean(text);
      if (!value) invalid();
      return *value;
    }
    case AttributeType::kString: return text;
    case AttributeType::kEnum:
      for (const std::string& choice : spec.choices) {
        if (Trim(text) == choice) return choice;
      }
      invalid();
      break;
    case AttributeType::kIntTuple: {
      std::optional<std::vector<int64_t>> value = ParseIntTuple(text);
      if (!value) invalid();
      return *value;
    }
  }
  invalid();
  return {};
}

}  // namespace

Attributes AttributeSchema::Parse(const std::map<std::string, std::string>& raw,
                                  const std::string& owner) const {
  Attributes attributes;
  for (const auto& [name, text] : raw) {
    const AttributeSpec* spec = Find(name);
    // MXNet's JSON writes "None" for attributes left unset: treat it as not given.
    if (spec != nullptr && text == "None" && spec->presence.kind != AttributePresence::Kind::kRequired) {
      continue;
    }
    if (spec == nullptr) {
      std::string known;
      for (const AttributeSpec& candidate : specs_) known += (known.empty() ? "" : ", ") + candidate.name;
      MX_THROW() << owner << ": unknown attribute '" << name << "'; known attributes: "
                 << (known.empty() ? "none" : known);
    }
    attributes.Set(name, ParseValue(*spec, text, owner));
  }
  for (const AttributeSpec& spec : specs_) {
    if (attributes.Has(spec.name)) continue;
    switch (spec.presence.kind) {
      case AttributePresence::Kind::kRequired:
        MX_THROW() << owner << ": missing required attribute '" << spec.name << "' ("
                   << spec.doc << "; expected " << spec.ExpectedText() << ")";
      case AttributePresence::Kind::kDefault:
        attributes.Set(spec.name, ParseValue(spec, spec.presence.default_text, owner));
        break;
      case AttributePresence::Kind::kOptional: break;
    }
  }
  return attributes;
}

const AttributeValue& Attributes::At(const std::string& name) const {
  auto it = values_.find(name);
  MX_CHECK(it != values_.end()) << "attribute '" << name << "' is not set";
  return it->second;
}

int64_t Attributes::GetInt(const std::string& name) const {
  const auto* value = std::get_if<int64_t>(&At(name));
  MX_CHECK(value != nullptr) << "attribute '" << name << "' is not an integer";
  return *value;
}

double Attributes::GetFloat(const std::string& name) const {
  const AttributeValue& value = At(name);
  if (const auto* number = std::get_if<double>(&value)) return *number;
  if (const auto* integer = std::get_if<int64_t>(&value)) return static_cast<double>(*integer);
  MX_THROW() << "attribute '" << name << "' is not a number";
}

bool Attributes::GetBool(const std::string& name) const {
  const auto* value = std::get_if<bool>(&At(name));
  MX_CHECK(value != nullptr) << "attribute '" << name << "' is not a bool";
  return *value;
}

const std::string& Attributes::GetString(const std::string& name) const {
  const auto* value = std::get_if<std::string>(&At(name));
  MX_CHECK(value != nullptr) << "attribute '" << name << "' is not text";
  return *value;
}

const std::vector<int64_t>& Attributes::GetInts(const std::string& name) const {
  const auto* value = std::get_if<std::vector<int64_t>>(&At(name));
  MX_CHECK(value != nullptr) << "attribute '" << name << "' is not a tuple of integers";
  return *value;
}

std::optional<std::string> Attributes::GetOptionalString(const std::string& name) const {
  if (!Has(name)) return std::nullopt;
  return GetString(name);
}

std::string Attributes::Text(const std::string& name) const { return FormatValue(At(name)); }

std::string Attributes::ToString() const {
  std::string text;
  for (const auto& [name, value] : values_) {
    text += (text.empty() ? "" : ", ") + name + "=" + FormatValue(value);
  }
  return text;
}

}  // namespace mxlite
