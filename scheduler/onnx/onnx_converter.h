// ONNX converters: how each ONNX op becomes mxlite graph nodes.
//
// A converter turns one ONNX node into mxlite nodes (or into a constant known at load). It is
// registered for an op type and the range of opsets whose semantics it implements, in the file of
// its ONNX op family (scheduler/onnx/convert_*.cc), with one line:
//
//   void ConvertFlatten(OnnxNode& node) {
//     node.SetOutput(0, node.Emit("Flatten", {{"axis", std::to_string(node.attrs().Int("axis",
//     1))}},
//                                 {node.Input(0)}));
//   }
//   MXLITE_REGISTER_ONNX_CONVERTER(Flatten, 1, kMaxOnnxOpset, ConvertFlatten);
//
// An op whose meaning changed at some opset (Squeeze's axes moved from an attribute to an input at
// 13) registers one converter per range. The importer (onnx_import.h) calls, for each node, the
// converter of its op type whose range holds the model's opset; a node with none is listed in one
// error with every other such node, saying which opsets its op type is imported for.
//
// What a converter may rely on: inputs are visited in topological order, so every input is already
// defined (as a graph value or as a constant); errors it throws are prefixed with the node
// (OnnxNode::where) when they do not name it already.
//
// Thread safety: the registry is filled during static initialisation and read-only afterwards.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/shape.h"
#include "onnx/onnx_pb.h"  // defines ONNX_API, then includes onnx/onnx-ml.pb.h
#include "scheduler/graph/graph.h"
#include "scheduler/onnx/onnx_tensor.h"

namespace mxlite {

// The opsets of the default domain mxlite imports.
constexpr int64_t kMinOnnxOpset = 1;
constexpr int64_t kMaxOnnxOpset = 21;

using AttrText = std::map<std::string, std::string>;

// One NodeProto's attributes, each checked for its type (a mismatch is an error naming the node).
class NodeAttributes {
 public:
  NodeAttributes(const onnx::NodeProto& node, std::string where);
  bool Has(const std::string& name) const { return by_name_.count(name) > 0; }
  int64_t Int(const std::string& name, int64_t fallback) const;
  double Float(const std::string& name, double fallback) const;
  std::string String(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> Ints(const std::string& name, std::vector<int64_t> fallback = {}) const;
  std::vector<float> Floats(const std::string& name) const;
  std::vector<std::string> Strings(const std::string& name) const;
  const onnx::TensorProto* Tensor(const std::string& name) const;
  // A graph attribute (a Loop's body, an If's branches), or nullptr when absent.
  const onnx::GraphProto* Graph(const std::string& name) const;

 private:
  const onnx::AttributeProto* Get(const std::string& name,
                                  onnx::AttributeProto::AttributeType type) const;

  std::string where_;
  std::map<std::string, const onnx::AttributeProto*> by_name_;
};

// The values of the model being imported, as the importer keeps them (implemented by it).
class OnnxValues {
 public:
  virtual ~OnnxValues() = default;
  // The graph value of `name`; a constant becomes a variable of `constant_role` on first use.
  virtual NodeEntry Entry(const std::string& name, const std::string& where,
                          VariableRole constant_role) = 0;
  // The value of `name` when it is known at load, else nullptr.
  virtual const HostTensor* Constant(const std::string& name) = 0;
  // The static shape of `name` (constants and inputs directly, computed values by inference).
  virtual Shape ShapeOf(const std::string& name, const std::string& where) = 0;
  // The dtype of `name`, found the same way.
  virtual DType DTypeOf(const std::string& name, const std::string& where) = 0;
  virtual void Define(const std::string& name, NodeEntry entry) = 0;
  virtual void DefineConstant(const std::string& name, HostTensor tensor) = 0;
  // Marks `name` as a value mxlite does not compute; a node that reads it is an error saying why.
  virtual void MarkUnsupported(const std::string& name, const std::string& why) = 0;
  // A new variable of `role` holding `tensor`, named after `base` (made unique).
  virtual NodeEntry NewConstant(const std::string& base, HostTensor tensor, VariableRole role) = 0;
  // Adds an op node named after `base` (made unique) and returns its first output.
  virtual NodeEntry Emit(const std::string& op, const std::string& base, const AttrText& attrs,
                         const std::vector<NodeEntry>& inputs) = 0;
  // The folder external tensor data is read from.
  virtual const std::string& model_dir() const = 0;

  // ---- Sequences and subgraphs (convert_sequence.cc, convert_control_flow.cc) ----
  // A sequence is known at load as the list of its elements, each an ONNX value of its own (a
  // tensor, computed or known at load); what reads an element reads that value.
  // The element names of sequence `name`, or nullptr when `name` is not a sequence.
  virtual const std::vector<std::string>* Sequence(const std::string& name) = 0;
  virtual void DefineSequence(const std::string& name, std::vector<std::string> elements) = 0;
  // `name` becomes another name of `source`'s value (a tensor, a constant or a sequence).
  virtual void Alias(const std::string& name, const std::string& source) = 0;
  // Converts the nodes of `graph` (a Loop's body, an If's branch) in their order into the model
  // being imported, its inputs bound in order to the values named in `inputs` (as many). Every
  // name the subgraph defines (its inputs and its nodes' outputs, nested subgraphs included) is
  // imported as `prefix` + name, so one body can be converted once per iteration; the names it
  // reads from enclosing graphs stay as they are. Returns the names its outputs have now.
  virtual std::vector<std::string> ConvertSubgraph(const onnx::GraphProto& graph,
                                                   const std::vector<std::string>& inputs,
                                                   const std::string& prefix) = 0;
};

// One ONNX node as its converter sees it.
class OnnxNode {
 public:
  OnnxNode(const onnx::NodeProto& proto, std::string name, std::string where, int64_t opset,
           OnnxValues& values);

  const onnx::NodeProto& proto() const { return proto_; }
  const std::string& op_type() const { return proto_.op_type(); }
  int64_t opset() const { return opset_; }
  // The base of the names of the mxlite nodes it becomes (the ONNX node's name, made safe).
  const std::string& name() const { return name_; }
  // "model.onnx: node 'conv1' (Conv)", for messages.
  const std::string& where() const { return where_; }
  const NodeAttributes& attrs() const { return attrs_; }
  const std::string& model_dir() const { return values_.model_dir(); }

  int num_inputs() const { return proto_.input_size(); }
  int num_outputs() const { return proto_.output_size(); }
  // The name of input `i`; "" when the node leaves it out.
  std::string input_name(int i) const;
  bool has_input(int i) const { return !input_name(i).empty(); }

  // Input `i` as a graph value (an error naming the node when it is missing or undefined).
  NodeEntry Input(int i, VariableRole constant_role = VariableRole::kParameter);
  // Every input, in order, as graph values.
  std::vector<NodeEntry> Inputs();
  // Input `i`'s value when it is known at load, else nullptr.
  const HostTensor* ConstantInput(int i);
  // Input `i`'s value, which must be known at load: an error naming `what` otherwise.
  const HostTensor& RequireConstant(int i, const std::string& what);
  Shape InputShape(int i);
  DType InputDType(int i);

  // Adds the op node `op` named after this node (plus `suffix`) and returns its first output.
  NodeEntry Emit(const std::string& op, const AttrText& attrs, const std::vector<NodeEntry>& inputs,
                 const std::string& suffix = "");
  // A new parameter variable holding `tensor`, named after this node (plus `suffix`).
  NodeEntry NewConstant(const std::string& suffix, HostTensor tensor);
  // A new parameter variable of shape (1) holding `value` in input 0's dtype: the scalar operand
  // of a broadcast op.
  NodeEntry NewScalar(const std::string& suffix, double value);
  // The same in `dtype`.
  NodeEntry NewScalar(const std::string& suffix, double value, DType dtype);
  // A new parameter variable of rank `rank` holding 0, 1, ... extent - 1 along axis `axis` (extent
  // 1 on every other axis) in `dtype`: what an index along that axis is compared with.
  NodeEntry NewPositions(const std::string& suffix, int rank, int axis, int64_t extent,
                         DType dtype);
  // Output `i` is `entry` (an output the node leaves unnamed is ignored).
  void SetOutput(int i, NodeEntry entry);
  // Output 0 is a constant known at load.
  void SetConstantOutput(HostTensor tensor);
  // Outputs from `first` on are values mxlite does not compute (`why` says so to their readers).
  void OutputsUnsupported(int first, const std::string& why);
  // The importer's values, for converters that work on names rather than tensors (sequences,
  // control flow).
  OnnxValues& values() { return values_; }

 private:
  const onnx::NodeProto& proto_;
  std::string name_;
  std::string where_;
  int64_t opset_;
  OnnxValues& values_;
  NodeAttributes attrs_;
};

using OnnxConverter = void (*)(OnnxNode& node);

struct OnnxConverterEntry {
  std::string op_type;
  int64_t first_opset = 1;
  int64_t last_opset = kMaxOnnxOpset;
  OnnxConverter convert = nullptr;
  // The converter imports only the subgraphs it chooses at load (If: the branch its known
  // condition takes): the importer checks those for importable ops when they are converted
  // (OnnxValues::ConvertSubgraph), not with the rest of the model up front, so a subgraph never
  // imported may hold ops mxlite does not import.
  bool chooses_subgraphs = false;
  // "Squeeze (opsets 13-17)".
  std::string ToString() const;
};

class OnnxConverterRegistry {
 public:
  static OnnxConverterRegistry& Global();
  // Aborts with a message when the range overlaps another converter of the same op type.
  void Register(OnnxConverterEntry entry);
  // The converter of `op_type` for `opset`, or nullptr.
  const OnnxConverterEntry* Find(const std::string& op_type, int64_t opset) const;
  // Every converter of `op_type`, by first opset (empty when the op type is not imported).
  std::vector<OnnxConverterEntry> ConvertersOf(const std::string& op_type) const;
  // Every op type with a converter, sorted.
  std::vector<std::string> OpTypes() const;

 private:
  std::map<std::string, std::vector<OnnxConverterEntry>> by_op_type_;
};

// Why `op_type` cannot be imported at `opset`: "not imported", or "imported for opsets 13-17".
std::string WhyNotImported(const std::string& op_type, int64_t opset);

// ---- Helpers converters share ------------------------------------------------------------------

// "(1,2,3)", as attributes take tuples.
std::string Tuple(const std::vector<int64_t>& values);
// A double printed so that it reads back exactly.
std::string Number(double value);
// `axis` of a rank-`rank` value, negative counting from the end; an error naming `where`.
int64_t NormalizeAxis(int64_t axis, int64_t rank, const std::string& where);
HostTensor Reshaped(HostTensor tensor, const Shape& shape);
// The values named `names` (one or more, of one rank) joined along `axis` by a Concat named after
// `node` plus `suffix`; with `new_axis` each first gets an axis of extent 1 there (stacked).
NodeEntry JoinValues(OnnxNode& node, const std::vector<std::string>& names, int64_t axis,
                     bool new_axis, const std::string& suffix = "");
// The offset in a tensor of shape `from` of the element that broadcasts (NumPy's rules) to
// element `index` of shape `to`.
int64_t BroadcastOffset(const Shape& from, const Shape& to, int64_t index);

namespace detail {
struct OnnxConverterRegistrar {
  OnnxConverterRegistrar(const char* op_type, int64_t first_opset, int64_t last_opset,
                         OnnxConverter convert, bool chooses_subgraphs = false);
};
}  // namespace detail

}  // namespace mxlite

// Registers `convert` for the ONNX op type `OpType` at opsets first..last (inclusive).
#define MXLITE_REGISTER_ONNX_CONVERTER(OpType, first, last, convert)                              \
  static const ::mxlite::detail::OnnxConverterRegistrar mxlite_onnx_converter_##OpType##_##first( \
      #OpType, first, last, convert)
// The same for a converter that imports only the subgraphs it chooses at load
// (OnnxConverterEntry::chooses_subgraphs).
#define MXLITE_REGISTER_ONNX_CONVERTER_CHOOSING_SUBGRAPHS(OpType, first, last, convert)           \
  static const ::mxlite::detail::OnnxConverterRegistrar mxlite_onnx_converter_##OpType##_##first( \
      #OpType, first, last, convert, /*chooses_subgraphs=*/true)
