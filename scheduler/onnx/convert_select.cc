// ONNX's tensor construction and selection around shape arithmetic: ConstantOfShape, Equal,
// Where and Expand of values known at load, computed then (a transformer's class token is
// Expand(token, Where(Equal(shape, -1), 1, shape)) with the shape known once the input's is).
// Booleans are held as uint8 0 / 1. A node that would have to run on computed data is an error
// naming it.
#include <optional>

#include "core/error.h"
#include "ops/broadcast.h"
#include "scheduler/onnx/onnx_converter.h"

namespace mxlite {
namespace {

// The offset in a tensor of shape `from` of the element that broadcasts to `index` of `to`.
int64_t SourceOffset(const Shape& from, const Shape& to, int64_t index) {
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

// `tensor` broadcast to `shape`, element bytes copied.
HostTensor BroadcastTo(const HostTensor& tensor, const Shape& shape) {
  const size_t element = DTypeSize(tensor.dtype);
  HostTensor out{tensor.dtype, shape, std::vector<uint8_t>(static_cast<size_t>(shape.size()) * element)};
  for (int64_t i = 0; i < shape.size(); ++i) {
    const int64_t from = SourceOffset(tensor.shape, shape, i);
    std::copy_n(tensor.bytes.begin() + static_cast<ptrdiff_t>(from * element), element,
                out.bytes.begin() + static_cast<ptrdiff_t>(i * element));
  }
  return out;
}

const HostTensor& KnownAtLoad(OnnxNode& node, int input, const char* what) {
  const HostTensor* tensor = node.ConstantInput(input);
  MX_CHECK(tensor != nullptr) << node.where() << ": " << what << " ('" << node.input_name(input)
                              << "') is computed while the model runs; mxlite imports "
                              << node.op_type() << " of values known at load";
  return *tensor;
}

Shape BroadcastOrThrow(OnnxNode& node, const Shape& a, const Shape& b) {
  const std::optional<Shape> out = BroadcastShapes(a, b);
  MX_CHECK(out.has_value()) << node.where() << ": shapes " << a << " and " << b
                            << " do not broadcast";
  return CheckedOnnxShape(out->to_vector(), node.where() + " output");
}

void ConvertConstantOfShape(OnnxNode& node) {
  const HostTensor& shape_tensor = KnownAtLoad(node, 0, "the shape");
  const Shape shape = CheckedOnnxShape(shape_tensor.ToInt64s(node.where() + " shape"),
                                       node.where() + " output");
  HostTensor value = HostTensor::From(std::vector<float>{0.0f}, Shape{1});
  if (const onnx::TensorProto* given = node.attrs().Tensor("value")) {
    value = TensorFromProto(*given, node.where() + " value", node.model_dir());
    MX_CHECK(value.shape.size() == 1)
        << node.where() << ": value holds " << value.shape.size() << " elements, not one";
  }
  node.SetConstantOutput(BroadcastTo(Reshaped(value, Shape()), shape));
}

void ConvertEqual(OnnxNode& node) {
  const HostTensor& a = KnownAtLoad(node, 0, "A");
  const HostTensor& b = KnownAtLoad(node, 1, "B");
  const Shape out = BroadcastOrThrow(node, a.shape, b.shape);
  const std::vector<double> x = a.AsDoubles(node.where() + " A");
  const std::vector<double> y = b.AsDoubles(node.where() + " B");
  std::vector<int64_t> equal(static_cast<size_t>(out.size()));
  for (int64_t i = 0; i < out.size(); ++i) {
    equal[i] = x[SourceOffset(a.shape, out, i)] == y[SourceOffset(b.shape, out, i)] ? 1 : 0;
  }
  node.SetConstantOutput(HostTensorOf(DType::kUInt8, out, equal, node.where()));
}

void ConvertWhere(OnnxNode& node) {
  const HostTensor& condition = KnownAtLoad(node, 0, "the condition");
  const HostTensor& x = KnownAtLoad(node, 1, "X");
  const HostTensor& y = KnownAtLoad(node, 2, "Y");
  MX_CHECK(x.dtype == y.dtype) << node.where() << ": X and Y have dtypes " << DTypeName(x.dtype)
                               << " and " << DTypeName(y.dtype);
  const Shape out =
      BroadcastOrThrow(node, BroadcastOrThrow(node, condition.shape, x.shape), y.shape);
  const std::vector<double> pick = condition.AsDoubles(node.where() + " condition");
  const HostTensor xs = BroadcastTo(x, out), ys = BroadcastTo(y, out);
  const size_t element = DTypeSize(x.dtype);
  HostTensor result{x.dtype, out, std::vector<uint8_t>(static_cast<size_t>(out.size()) * element)};
  for (int64_t i = 0; i < out.size(); ++i) {
    const HostTensor& from = pick[SourceOffset(condition.shape, out, i)] != 0 ? xs : ys;
    std::copy_n(from.bytes.begin() + static_cast<ptrdiff_t>(i * element), element,
                result.bytes.begin() + static_cast<ptrdiff_t>(i * element));
  }
  node.SetConstantOutput(std::move(result));
}

// Expand broadcasts both ways: the output is the broadcast of the input's shape and `shape`.
void ConvertExpand(OnnxNode& node) {
  const HostTensor& data = KnownAtLoad(node, 0, "the input");
  const HostTensor& shape_tensor = KnownAtLoad(node, 1, "the shape");
  const Shape target = CheckedOnnxShape(shape_tensor.ToInt64s(node.where() + " shape"),
                                        node.where() + " shape");
  node.SetConstantOutput(BroadcastTo(data, BroadcastOrThrow(node, data.shape, target)));
}

}  // namespace

MXLITE_REGISTER_ONNX_CONVERTER(ConstantOfShape, 9, kMaxOnnxOpset, ConvertConstantOfShape);
MXLITE_REGISTER_ONNX_CONVERTER(Equal, 7, kMaxOnnxOpset, ConvertEqual);
MXLITE_REGISTER_ONNX_CONVERTER(Where, 9, kMaxOnnxOpset, ConvertWhere);
MXLITE_REGISTER_ONNX_CONVERTER(Expand, 8, kMaxOnnxOpset, ConvertExpand);

}  // namespace mxlite
