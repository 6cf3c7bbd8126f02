// Operator attributes: each op declares a schema (name, type, default, allowed values, doc), and
// attributes arrive as strings — from the C++ graph builder, the C API, or an ONNX importer —
// in MXNet's spelling: "3", "0.5", "true", "(3,3)", "relu".
//
//   AttributeSchema schema;
//   schema.IntTuple("kernel", "convolution window, e.g. (3,3)")            // required
//         .Int("num_filter", "output channels", /*min=*/1)
//         .IntTuple("stride", "window step", Default("()"))
//         .Enum("cudnn_tune", {"off", "limited_workspace", "fastest"}, "tuning mode", Optional());
//   Attributes attrs = schema.Parse({{"kernel", "(5,5)"}, {"num_filter", "32"}}, "conv0");
//   attrs.GetInts("kernel");  // {5, 5}
//
// Parse() rejects an unknown attribute (listing the known ones), a missing required one, and a
// value of the wrong type or out of range, each as mxlite::Error naming the op or layer, the
// attribute and what was expected. Parsed Attributes are immutable values, cheap to copy, and
// print canonically (ToString) so they can key caches.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace mxlite {

using AttributeValue = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>>;

enum class AttributeType { kInt, kFloat, kBool, kString, kEnum, kIntTuple };

// How an attribute behaves when it is not given.
struct AttributePresence {
  enum class Kind { kRequired, kDefault, kOptional } kind = Kind::kRequired;
  std::string default_text;
};
inline AttributePresence Required() { return {AttributePresence::Kind::kRequired, ""}; }
inline AttributePresence Default(std::string text) {
  return {AttributePresence::Kind::kDefault, std::move(text)};
}
// Absent unless given (Attributes::Has() tells); e.g. cudnn_tune, where absence means "use the
// setting".
inline AttributePresence Optional() { return {AttributePresence::Kind::kOptional, ""}; }

struct AttributeSpec {
  std::string name;
  AttributeType type = AttributeType::kInt;
  std::string doc;
  AttributePresence presence;
  double min = -1e300, max = 1e300;  // kInt and kFloat
  std::vector<std::string> choices;  // kEnum

  std::string ExpectedText() const;  // "an integer >= 1", "one of relu, sigmoid", ...
};

class Attributes;

class AttributeSchema {
 public:
  AttributeSchema& Int(std::string name, std::string doc, AttributePresence presence = Required(),
                       int64_t min = INT64_MIN, int64_t max = INT64_MAX);
  AttributeSchema& Float(std::string name, std::string doc, AttributePresence presence = Required());
  AttributeSchema& Bool(std::string name, std::string doc, AttributePresence presence = Required());
  AttributeSchema& String(std::string name, std::string doc, AttributePresence presence = Required());
  AttributeSchema& Enum(std::string name, std::vector<std::string> choices, std::string doc,
                        AttributePresence presence = Required());
  // A tuple of integers: "(3,3)", "[3, 3]", "3,3" or a single "3"; "()" is the empty tuple.
  AttributeSchema& IntTuple(std::string name, std::string doc,
                            AttributePresence presence = Required());

  // `owner` names the op or layer in error messages ("Convolution conv0").
  Attributes Parse(const std::map<std::string, std::string>& raw, const std::string& owner) const;

  const std::vector<AttributeSpec>& specs() const { return specs_; }
  const AttributeSpec* Find(const std::string& name) const;

 private:
  AttributeSchema& Add(AttributeSpec spec);
  std::vector<AttributeSpec> specs_;
};

class Attributes {
 public:
  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  int64_t GetInt(const std::string& name) const;
  double GetFloat(const std::string& name) const;
  bool GetBool(const std::string& name) const;
  // kString and kEnum attributes.
  const std::string& GetString(const std::string& name) const;
  const std::vector<int64_t>& GetInts(const std::string& name) const;
  std::optional<std::string> GetOptionalString(const std::string& name) const;

  // The given text of an attribute (canonical form), e.g. "(3,3)".
  std::string Text(const std::string& name) const;
  // "kernel=(3,3), num_filter=64, ..." in name order: stable, for printing and cache keys.
  std::string ToString() const;
  const std::map<std::string, AttributeValue>& values() const { return values_; }

  // Adds or replaces a value (used by passes that rewrite attributes, e.g. layout planning).
  void Set(const std::string& name, AttributeValue value) { values_[name] = std::move(value); }

 private:
  const AttributeValue& At(const std::string& name) const;
  std::map<std::string, AttributeValue> values_;
};

// Parses "(3,3)", "[3, 3]", "3,3", "3" or "()" into integers; nullopt when malformed.
std::optional<std::vector<int64_t>> ParseIntTuple(const std::string& text);
std::string FormatIntTuple(const std::vector<int64_t>& values);

}  // namespace mxlite
