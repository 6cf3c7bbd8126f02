#include "scheduler/onnx/onnx_converter.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <utility>

#include "core/error.h"
#include "ops/attributes.h"

namespace mxlite {

// ---- NodeAttributes
// ------------------------------------------------------------------------------

NodeAttributes::NodeAttributes(const onnx::NodeProto& node, std::string where)
    : where_(std::move(where)) {
  for (const onnx::AttributeProto& attr : node.attribute()) by_name_[attr.name()] = &attr;
}

int64_t NodeAttributes::Int(const std::string& name, int64_t fallback) const {
  const onnx::AttributeProto* attr = Get(name, onnx::AttributeProto::INT);
  return attr ? attr->i() : fallback;
}

double NodeAttributes::Float(const std::string& name, double fallback) const {
  const onnx::AttributeProto* attr = Get(name, onnx::AttributeProto::FLOAT);
  return attr ? attr->f() : fallback;
}

std::string NodeAttributes::String(const std::string& name, const std::string& fallback) const {
  const onnx::AttributeProto* attr = Get(name, onnx::AttributeProto::STRING);
  return attr ? attr->s() : fallback;
}

std::vector<int64_t> NodeAttributes::Ints(const std::string& name,
                                          std::vector<int64_t> fallback) const {
  const onnx::AttributeProto* attr = Get(name, onnx::AttributeProto::INTS);
  return attr ? std::vector<int64_t>(attr->ints().begin(), attr->ints().end()) : fallback;
}

std::vector<float> NodeAttributes::Floats(const std::string& name) const {
  const onnx::AttributeProto* attr = Get(name, onnx::AttributeProto::FLOATS);
  return attr ? std::vector<float>(attr->floats().begin(), attr->floats().end())
              : std::vector<float>{};
}

std::vector<std::string> NodeAttributes::Strings(const std::string& name) const {
  const onnx::AttributeProto* attr = Get(name, onnx::AttributeProto::STRINGS);
  return attr ? std::vector<std::string>(attr->strings().begin(), attr->strings().end())
              : std::vector<std::string>{};
}

const onnx::TensorProto* NodeAttributes::Tensor(const std::string& name) const {
  const onnx::AttributeProto* attr = Get(name, onnx::AttributeProto::TENSOR);
  return attr ? &attr->t() : nullptr;
}

const onnx::GraphProto* NodeAttributes::Graph(const std::string& name) const {
  const onnx::AttributeProto* attribute = Get(name, onnx::AttributeProto::GRAPH);
  return attribute != nullptr ? &attribute->g() : nullptr;
}

const onnx::AttributeProto* NodeAttributes::Get(const std::string& name,
                                                onnx::AttributeProto::AttributeType type) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return nullptr;
  MX_CHECK(it->second->type() == type)
      << where_ << ": attribute '" << name << "' should be "
      << onnx::AttributeProto::AttributeType_Name(type) << ", not "
      << onnx::AttributeProto::AttributeType_Name(it->second->type());
  return it->second;
}

// ---- OnnxNode
// ------------------------------------------------------------------------------------

OnnxNode::OnnxNode(const onnx::NodeProto& proto, std::string name, std::string where, int64_t opset,
                   OnnxValues& values)
    : proto_(proto),
      name_(std::move(name)),
      where_(std::move(where)),
      opset_(opset),
      values_(values),
      attrs_(proto, where_) {}

std::string OnnxNode::input_name(int i) const {
  return i >= 0 && i < proto_.input_size() ? proto_.input(i) : std::string();
}

NodeEntry OnnxNode::Input(int i, VariableRole constant_role) {
  return values_.Entry(input_name(i), where_, constant_role);
}

std::vector<NodeEntry> OnnxNode::Inputs() {
  std::vector<NodeEntry> inputs;
  for (int i = 0; i < num_inputs(); ++i) inputs.push_back(Input(i));
  return inputs;
}

const HostTensor* OnnxNode::ConstantInput(int i) {
  const std::string name = input_name(i);
  return name.empty() ? nullptr : values_.Constant(name);
}

const HostTensor& OnnxNode::RequireConstant(int i, const std::string& what) {
  const HostTensor* tensor = ConstantInput(i);
  MX_CHECK(tensor != nullptr) << where_ << ": " << what << " ('" << input_name(i)
                              << "') must be a constant known at load (an initializer or a "
                                 "Constant), not a computed value";
  return *tensor;
}

Shape OnnxNode::InputShape(int i) {
  const std::string name = input_name(i);
  MX_CHECK(!name.empty()) << where_ << ": input " << i << " is missing";
  return values_.ShapeOf(name, where_);
}

DType OnnxNode::InputDType(int i) {
  const std::string name = input_name(i);
  MX_CHECK(!name.empty()) << where_ << ": input " << i << " is missing";
  return values_.DTypeOf(name, where_);
}

NodeEntry OnnxNode::NewScalar(const std::string& suffix, double value) {
  return NewScalar(suffix, value, InputDType(0));
}

NodeEntry OnnxNode::NewScalar(const std::string& suffix, double value, DType dtype) {
  return NewConstant(suffix, HostTensorOf(dtype, Shape{1}, std::vector<double>{value}, where_));
}

NodeEntry OnnxNode::NewPositions(const std::string& suffix, int rank, int axis, int64_t extent,
                                 DType dtype) {
  std::vector<int64_t> dims(static_cast<size_t>(rank), 1);
  dims[static_cast<size_t>(axis)] = extent;
  const Shape shape =
      CheckedOnnxShape(dims, where_ + " positions along axis " + std::to_string(axis));
  std::vector<double> positions(static_cast<size_t>(extent));
  for (int64_t i = 0; i < extent; ++i) positions[static_cast<size_t>(i)] = static_cast<double>(i);
  return NewConstant(suffix, HostTensorOf(dtype, shape, positions, where_));
}

NodeEntry OnnxNode::Emit(const std::string& op, const AttrText& attrs,
                         const std::vector<NodeEntry>& inputs, const std::string& suffix) {
  return values_.Emit(op, name_ + suffix, attrs, inputs);
}

NodeEntry OnnxNode::NewConstant(const std::string& suffix, HostTensor tensor) {
  return values_.NewConstant(name_ + suffix, std::move(tensor), VariableRole::kParameter);
}

void OnnxNode::SetOutput(int i, NodeEntry entry) {
  if (i < proto_.output_size() && !proto_.output(i).empty()) {
    values_.Define(proto_.output(i), entry);
  }
}

void OnnxNode::SetConstantOutput(HostTensor tensor) {
  MX_CHECK(proto_.output_size() >= 1) << where_ << ": has no output";
  values_.DefineConstant(proto_.output(0), std::move(tensor));
}

void OnnxNode::OutputsUnsupported(int first, const std::string& why) {
  for (int i = first; i < proto_.output_size(); ++i) {
    if (!proto_.output(i).empty()) values_.MarkUnsupported(proto_.output(i), why);
  }
}

// ---- The registry
// --------------------------------------------------------------------------------

std::string OnnxConverterEntry::ToString() const {
  return op_type + " (opsets " + std::to_string(first_opset) + "-" + std::to_string(last_opset) +
         ")";
}

OnnxConverterRegistry& OnnxConverterRegistry::Global() {
  static OnnxConverterRegistry registry;
  return registry;
}

void OnnxConverterRegistry::Register(OnnxConverterEntry entry) {
  std::vector<OnnxConverterEntry>& entries = by_op_type_[entry.op_type];
  for (const OnnxConverterEntry& other : entries) {
    if (entry.first_opset <= other.last_opset && other.first_opset <= entry.last_opset) {
      // A programming error found at static initialisation: say which and stop.
      std::fprintf(stderr, "mxlite: ONNX converters %s and %s overlap\n", entry.ToString().c_str(),
                   other.ToString().c_str());
      std::abort();
    }
  }
  entries.push_back(std::move(entry));
  std::sort(entries.begin(), entries.end(),
            [](const OnnxConverterEntry& a, const OnnxConverterEntry& b) {
              return a.first_opset < b.first_opset;
            });
}

const OnnxConverterEntry* OnnxConverterRegistry::Find(const std::string& op_type,
                                                      int64_t opset) const {
  auto it = by_op_type_.find(op_type);
  if (it == by_op_type_.end()) return nullptr;
  for (const OnnxConverterEntry& entry : it->second) {
    if (opset >= entry.first_opset && opset <= entry.last_opset) return &entry;
  }
  return nullptr;
}

std::vector<OnnxConverterEntry> OnnxConverterRegistry::ConvertersOf(
    const std::string& op_type) const {
  auto it = by_op_type_.find(op_type);
  return it == by_op_type_.end() ? std::vector<OnnxConverterEntry>{} : it->second;
}

std::vector<std::string> OnnxConverterRegistry::OpTypes() const {
  std::vector<std::string> types;
  for (const auto& [op_type, entries] : by_op_type_) types.push_back(op_type);
  return types;
}

std::string WhyNotImported(const std::string& op_type, int64_t opset) {
  const std::vector<OnnxConverterEntry> entries =
      OnnxConverterRegistry::Global().ConvertersOf(op_type);
  if (entries.empty()) return "not imported";
  std::ostringstream out;
  out << "imported for opsets ";
  for (size_t i = 0; i < entries.size(); ++i) {
    out << (i ? ", " : "") << entries[i].first_opset << "-" << entries[i].last_opset;
  }
  out << ", not " << opset;
  return out.str();
}

namespace detail {
OnnxConverterRegistrar::OnnxConverterRegistrar(const char* op_type, int64_t first_opset,
                                               int64_t last_opset, OnnxConverter convert,
                                               bool chooses_subgraphs) {
  OnnxConverterRegistry::Global().Register(
      {op_type, first_opset, last_opset, convert, chooses_subgraphs});
}
}  // namespace detail

// ---- Helpers
// -------------------------------------------------------------------------------------

std::string Tuple(const std::vector<int64_t>& values) { return FormatIntTuple(values); }

std::string Number(double value) {
  std::ostringstream out;
  out.precision(17);
  out << value;
  return out.str();
}

int64_t NormalizeAxis(int64_t axis, int64_t rank, const std::string& where) {
  MX_CHECK(axis >= -rank && axis < std::max<int64_t>(rank, 1))
      << where << ": axis " << axis << " is out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

int64_t BroadcastOffset(const Shape& from, const Shape& to, int64_t index) {
  int64_t offset = 0, stride = 1;
  for (int d = 1; d <= to.ndim(); ++d) {
    const int64_t coordinate = index % to[to.ndim() - d];
    index /= to[to.ndim() - d];
    if (d > from.ndim()) continue;
    const int64_t extent = from[from.ndim() - d];
    if (extent != 1) offset += coordinate * stride;
    stride *= extent;
  }
  return offset;
}

NodeEntry JoinValues(OnnxNode& node, const std::vector<std::string>& names, int64_t axis,
                     bool new_axis, const std::string& suffix) {
  std::vector<NodeEntry> parts;
  for (size_t i = 0; i < names.size(); ++i) {
    NodeEntry part = node.values().Entry(names[i], node.where(), VariableRole::kParameter);
    if (new_axis) {
      std::vector<int64_t> dims = node.values().ShapeOf(names[i], node.where()).to_vector();
      dims.insert(dims.begin() + axis, 1);
      std::string name = suffix;  // appended: GCC 12 warns falsely on "_" + std::string
      name += "_part";
      name += std::to_string(i);
      part = node.Emit("Reshape", {{"shape", Tuple(dims)}}, {part}, name);
    }
    parts.push_back(part);
  }
  return node.Emit("Concat",
                   {{"dim", std::to_string(axis)}, {"num_args", std::to_string(parts.size())}},
                   parts, suffix);
}

HostTensor Reshaped(HostTensor tensor, const Shape& shape) {
  tensor.shape = shape;
  return tensor;
}

}  // namespace mxlite
