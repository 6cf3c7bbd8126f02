// ONNX sequence ops. A sequence is imported as the list of its elements, known at load (each
// element a tensor value of its own, computed or constant): SequenceEmpty, SequenceConstruct,
// SequenceInsert and SequenceErase build lists, SequenceAt and SequenceLength read them, and
// ConcatFromSequence joins the elements with Concat (stacked along a new axis with new_axis=1).
// Positions must be known at load; a position out of range is an error naming the node.
#include "core/error.h"
#include "scheduler/onnx/onnx_converter.h"

namespace mxlite {
namespace {

const std::vector<std::string>& SequenceInput(OnnxNode& node, int i) {
  const std::vector<std::string>* elements = node.values().Sequence(node.input_name(i));
  MX_CHECK(elements != nullptr) << node.where() << ": input " << i << " ('" << node.input_name(i)
                                << "') is not a sequence";
  return *elements;
}

// Position input `i` known at load, in [-size, size] when `may_end`, else [-size, size), made
// non-negative.
int64_t PositionInput(OnnxNode& node, int i, int64_t size, bool may_end) {
  const std::vector<int64_t> values =
      node.RequireConstant(i, "the position").ToInt64s(node.where() + " position");
  MX_CHECK(values.size() == 1) << node.where() << ": the position must be a scalar";
  const int64_t position = values[0] < 0 ? values[0] + size : values[0];
  MX_CHECK(position >= 0 && (may_end ? position <= size : position < size))
      << node.where() << ": position " << values[0] << " is outside the sequence of " << size
      << " elements";
  return position;
}

void ConvertSequenceEmpty(OnnxNode& node) {
  node.values().DefineSequence(node.proto().output(0), {});
}

void ConvertSequenceConstruct(OnnxNode& node) {
  std::vector<std::string> elements;
  for (int i = 0; i < node.num_inputs(); ++i) elements.push_back(node.input_name(i));
  node.values().DefineSequence(node.proto().output(0), std::move(elements));
}

void ConvertSequenceInsert(OnnxNode& node) {
  std::vector<std::string> elements = SequenceInput(node, 0);
  const int64_t size = static_cast<int64_t>(elements.size());
  const int64_t position = node.has_input(2) ? PositionInput(node, 2, size, true) : size;
  elements.insert(elements.begin() + position, node.input_name(1));
  node.values().DefineSequence(node.proto().output(0), std::move(elements));
}

void ConvertSequenceErase(OnnxNode& node) {
  std::vector<std::string> elements = SequenceInput(node, 0);
  const int64_t size = static_cast<int64_t>(elements.size());
  const int64_t position = node.has_input(1) ? PositionInput(node, 1, size, false) : size - 1;
  MX_CHECK(position >= 0) << node.where() << ": erases from an empty sequence";
  elements.erase(elements.begin() + position);
  node.values().DefineSequence(node.proto().output(0), std::move(elements));
}

void ConvertSequenceAt(OnnxNode& node) {
  const std::vector<std::string>& elements = SequenceInput(node, 0);
  const int64_t position =
      PositionInput(node, 1, static_cast<int64_t>(elements.size()), /*may_end=*/false);
  node.values().Alias(node.proto().output(0), elements[static_cast<size_t>(position)]);
}

void ConvertSequenceLength(OnnxNode& node) {
  const int64_t size = static_cast<int64_t>(SequenceInput(node, 0).size());
  node.SetConstantOutput(HostTensor::From(std::vector<int64_t>{size}, Shape{}));
}

void ConvertConcatFromSequence(OnnxNode& node) {
  const std::vector<std::string> elements = SequenceInput(node, 0);
  MX_CHECK(!elements.empty()) << node.where() << ": the sequence is empty";
  const bool new_axis = node.attrs().Int("new_axis", 0) != 0;
  MX_CHECK(node.attrs().Has("axis")) << node.where() << ": attribute 'axis' is required";
  const int64_t rank = node.values().ShapeOf(elements[0], node.where()).ndim();
  const int64_t axis =
      NormalizeAxis(node.attrs().Int("axis", 0), rank + (new_axis ? 1 : 0), node.where());
  node.SetOutput(0, JoinValues(node, elements, axis, new_axis));
}

}  // namespace

MXLITE_REGISTER_ONNX_CONVERTER(SequenceEmpty, 11, kMaxOnnxOpset, ConvertSequenceEmpty);
MXLITE_REGISTER_ONNX_CONVERTER(SequenceConstruct, 11, kMaxOnnxOpset, ConvertSequenceConstruct);
MXLITE_REGISTER_ONNX_CONVERTER(SequenceInsert, 11, kMaxOnnxOpset, ConvertSequenceInsert);
MXLITE_REGISTER_ONNX_CONVERTER(SequenceErase, 11, kMaxOnnxOpset, ConvertSequenceErase);
MXLITE_REGISTER_ONNX_CONVERTER(SequenceAt, 11, kMaxOnnxOpset, ConvertSequenceAt);
MXLITE_REGISTER_ONNX_CONVERTER(SequenceLength, 11, kMaxOnnxOpset, ConvertSequenceLength);
MXLITE_REGISTER_ONNX_CONVERTER(ConcatFromSequence, 11, kMaxOnnxOpset, ConvertConcatFromSequence);

}  // namespace mxlite
