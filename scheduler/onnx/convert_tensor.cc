// ONNX data movement and shape arithmetic: Identity, Dropout (inference), Constant, Cast, CastLike,
// Shape, Size, Gather (of values known at load, or of run-time data at indices known at load),
// Slice, Split, Squeeze, Unsqueeze, Concat, Reshape, Flatten, Transpose, Pad, Tile, DepthToSpace,
// SpaceToDepth, Trilu, GatherElements, GatherND, ScatterElements (and Scatter), CenterCropPad,
// ReverseSequence.
// Values known at load (shapes, the Shape -> Gather -> Unsqueeze -> Concat chains exporters write)
// are folded into constants. Split, Tile and the depth/space moves become slices, concatenations
// and a reshape-transpose-reshape of mxlite's own ops.
#include "scheduler/onnx/onnx_converter.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "ops/slice.h"

namespace mxlite {
namespace {

void ConvertIdentity(OnnxNode& node) {
  if (node.values().Sequence(node.input_name(0)) != nullptr) {  // a sequence: the same list
    node.values().Alias(node.proto().output(0), node.input_name(0));
  } else if (const HostTensor* constant = node.ConstantInput(0)) {
    node.SetConstantOutput(*constant);
  } else {
    node.SetOutput(0, node.Emit("identity", {}, {node.Input(0)}));
  }
}

// Dropout that drops nothing: the data passes through, and the mask (where asked for) is all
// ones, known at load: of the data's dtype before opset 10, BOOL (uint8 1) from 10.
void PassDropoutThrough(OnnxNode& node) {
  node.SetOutput(0, node.Input(0));
  if (node.num_outputs() < 2 || node.proto().output(1).empty()) return;
  const Shape shape = node.InputShape(0);
  const DType dtype = node.opset() < 10 ? node.InputDType(0) : DType::kUInt8;
  node.SetOutput(
      1, node.NewConstant(
             "_mask",
             HostTensorOf(dtype, shape, std::vector<double>(static_cast<size_t>(shape.size()), 1.0),
                          node.where() + " mask")));
}

void ConvertDropout(OnnxNode& node) { PassDropoutThrough(node); }

// From opset 12 ratio and training_mode are inputs; inference (training_mode 0) is imported, and
// training mode with a ratio of 0, which drops nothing (Swin's attention dropout as exported).
void ConvertDropoutWithMode(OnnxNode& node) {
  if (node.has_input(2)) {
    const std::vector<int64_t> training =
        node.RequireConstant(2, "training_mode").ToInt64s(node.where());
    const bool drops_nothing =
        node.has_input(1) && node.ConstantInput(1) != nullptr &&
        node.ConstantInput(1)->AsDoubles(node.where() + " ratio") == std::vector<double>{0.0};
    MX_CHECK(training.empty() || training[0] == 0 || drops_nothing)
        << node.where() << ": training_mode=1 with a nonzero ratio is not supported (inference "
        << "only)";
  }
  PassDropoutThrough(node);
}

void EmitCast(OnnxNode& node, DType to);

// Cast of a value known at load is computed at load (integers stay exact; floating values
// truncate toward zero into integers and round once into floats; to BOOL, nonzero is 1 in uint8,
// as mxlite holds bools); otherwise it is mxlite's Cast op.
void ConvertCast(OnnxNode& node) {
  const int32_t onnx_to = static_cast<int32_t>(node.attrs().Int("to", 0));
  const HostTensor* constant = node.ConstantInput(0);
  const std::string what = node.where() + " (computed at load)";
  if (onnx_to == onnx::TensorProto::BOOL) {
    MX_CHECK(constant != nullptr)
        << node.where() << ": a cast to BOOL of a value computed while the model runs is not "
        << "supported (mxlite has no bool dtype)";
    const std::vector<double> values = constant->AsDoubles(what);
    std::vector<int64_t> truth(values.size());
    for (size_t i = 0; i < values.size(); ++i) truth[i] = values[i] != 0 ? 1 : 0;
    node.SetConstantOutput(HostTensorOf(DType::kUInt8, constant->shape, truth, what));
    return;
  }
  EmitCast(node, DTypeFromOnnx(onnx_to, node.where() + " attribute 'to'"));
}

// CastLike (opset 15): Cast to the dtype of the second input.
void ConvertCastLike(OnnxNode& node) { EmitCast(node, node.InputDType(1)); }

// Size: the element count of a statically shaped input, an int64 scalar known at load.
void ConvertSize(OnnxNode& node) {
  node.SetConstantOutput(HostTensor::From(std::vector<int64_t>{node.InputShape(0).size()}, Shape{}));
}

void EmitCast(OnnxNode& node, DType to) {
  const HostTensor* constant = node.ConstantInput(0);
  const std::string what = node.where() + " (computed at load)";
  if (constant == nullptr || !ComputableAtLoad(constant->dtype) || !ComputableAtLoad(to)) {
    node.SetOutput(0, node.Emit("Cast", {{"dtype", DTypeName(to)}}, {node.Input(0)}));
    return;
  }
  if (IsFloatingPoint(constant->dtype) && !IsFloatingPoint(to)) {
    std::vector<int64_t> truncated;
    for (double value : constant->AsDoubles(what)) truncated.push_back(static_cast<int64_t>(value));
    node.SetConstantOutput(HostTensorOf(to, constant->shape, truncated, what));
  } else if (IsFloatingPoint(constant->dtype) || IsFloatingPoint(to)) {
    node.SetConstantOutput(HostTensorOf(to, constant->shape, constant->AsDoubles(what), what));
  } else {
    node.SetConstantOutput(HostTensorOf(to, constant->shape, constant->ToInt64s(what), what));
  }
}

void ConvertConstant(OnnxNode& node) {
  const NodeAttributes& a = node.attrs();
  if (const onnx::TensorProto* tensor = a.Tensor("value")) {
    node.SetConstantOutput(TensorFromProto(*tensor, node.where() + " value", node.model_dir()));
  } else if (a.Has("value_float")) {
    node.SetConstantOutput(HostTensor::From(
        std::vector<float>{static_cast<float>(a.Float("value_float", 0))}, Shape()));
  } else if (a.Has("value_floats")) {
    const std::vector<float> values = a.Floats("value_floats");
    node.SetConstantOutput(HostTensor::From(values, Shape{static_cast<int64_t>(values.size())}));
  } else if (a.Has("value_int")) {
    node.SetConstantOutput(HostTensor::From(std::vector<int64_t>{a.Int("value_int", 0)}, Shape()));
  } else if (a.Has("value_ints")) {
    const std::vector<int64_t> values = a.Ints("value_ints");
    node.SetConstantOutput(HostTensor::From(values, Shape{static_cast<int64_t>(values.size())}));
  } else {
    MX_THROW() << node.where() << ": only tensor, float(s) and int(s) constants are supported";
  }
}

void ConvertShape(OnnxNode& node) {
  const std::vector<int64_t> dims = node.InputShape(0).to_vector();
  const int64_t rank = static_cast<int64_t>(dims.size());
  auto clamp = [&](int64_t axis) {
    if (axis < 0) axis += rank;
    return std::clamp<int64_t>(axis, 0, rank);
  };
  const int64_t start = clamp(node.attrs().Int("start", 0));
  const int64_t end = std::max(start, clamp(node.attrs().Int("end", rank)));
  const std::vector<int64_t> slice(dims.begin() + start, dims.begin() + end);
  node.SetConstantOutput(HostTensor::From(slice, Shape{end - start}));
}

// Gather of run-time data at indices known at load (x[:, 0] in a transformer's class token): one
// slice per index along the axis, joined by Concat for a list of indices, the axis dropped for a
// single index.
void GatherAtRunTime(OnnxNode& node, const HostTensor& indices_tensor) {
  const std::string& where = node.where();
  const Shape data = node.InputShape(0);
  MX_CHECK(data.ndim() > 0) << where << ": Gather on a scalar";
  MX_CHECK(indices_tensor.shape.ndim() <= 1)
      << where << ": indices of shape " << indices_tensor.shape
      << " on data computed while the model runs; mxlite imports a single index or a list";
  const int64_t axis = NormalizeAxis(node.attrs().Int("axis", 0), data.ndim(), where);
  const int64_t extent = data[static_cast<int>(axis)];
  const std::vector<int64_t> indices = indices_tensor.ToInt64s(where + " indices");
  std::vector<NodeEntry> pieces;
  for (size_t k = 0; k < indices.size(); ++k) {
    int64_t index = indices[k];
    MX_CHECK(index >= -extent && index < extent)
        << where << ": index " << index << " is out of range for extent " << extent;
    if (index < 0) index += extent;
    std::vector<int64_t> begin(static_cast<size_t>(axis) + 1, 0), end(begin.size(), 0);
    for (int64_t d = 0; d < axis; ++d) end[d] = data[static_cast<int>(d)];
    begin[axis] = index;
    end[axis] = index + 1;
    std::string suffix = "_";  // appended: GCC 12 warns falsely on "_" + std::string
    suffix += std::to_string(k);
    pieces.push_back(node.Emit("slice", {{"begin", Tuple(begin)}, {"end", Tuple(end)}},
                               {node.Input(0)}, suffix));
  }
  if (indices_tensor.shape.ndim() == 0) {
    std::vector<int64_t> dims = data.to_vector();
    dims.erase(dims.begin() + axis);
    node.SetOutput(0, node.Emit("Reshape", {{"shape", Tuple(dims)}}, {pieces[0]}));
  } else if (pieces.size() == 1) {
    node.SetOutput(0, pieces[0]);
  } else {
    node.SetOutput(0, node.Emit("Concat",
                                {{"dim", std::to_string(axis)},
                                 {"num_args", std::to_string(pieces.size())}},
                                pieces));
  }
}

void ConvertGather(OnnxNode& node) {
  const HostTensor& indices_tensor = node.RequireConstant(1, "Gather's indices");
  if (node.ConstantInput(0) == nullptr) {
    GatherAtRunTime(node, indices_tensor);
    return;
  }
  const HostTensor& data = *node.ConstantInput(0);
  const std::string& where = node.where();
  const std::vector<int64_t> indices = indices_tensor.ToInt64s(where + " indices");
  const std::vector<int64_t> dims = data.shape.to_vector();
  MX_CHECK(!dims.empty()) << where << ": Gather on a scalar";
  const int64_t axis =
      NormalizeAxis(node.attrs().Int("axis", 0), static_cast<int64_t>(dims.size()), where);
  std::vector<int64_t> out_dims(dims.begin(), dims.begin() + axis);
  for (int64_t d : indices_tensor.shape.to_vector()) out_dims.push_back(d);
  out_dims.insert(out_dims.end(), dims.begin() + axis + 1, dims.end());
  const Shape out_shape = CheckedOnnxShape(out_dims, where + " output");
  const size_t element = DTypeSize(data.dtype);
  const int64_t outer = data.shape.size(0, static_cast<int>(axis));
  const int64_t inner = data.shape.size(static_cast<int>(axis) + 1, data.shape.ndim());
  const int64_t extent = dims[static_cast<size_t>(axis)];
  HostTensor out{data.dtype, out_shape, {}};
  out.bytes.reserve(static_cast<size_t>(out_shape.size()) * element);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t index : indices) {
      MX_CHECK(index >= -extent && index < extent)
          << where << ": index " << index << " is out of range for extent " << extent;
      if (index < 0) index += extent;
      const size_t begin = static_cast<size_t>((o * extent + index) * inner) * element;
      out.bytes.insert(out.bytes.end(), data.bytes.begin() + static_cast<ptrdiff_t>(begin),
                       data.bytes.begin() + static_cast<ptrdiff_t>(begin + inner * element));
    }
  }
  node.SetConstantOutput(std::move(out));
}

// Slice: starts and ends (and axes, steps) known at load; the axes it does not name are taken
// whole. Integer data known at load (a slice of a shape) is sliced at load; other data is
// mxlite's slice op. Before opset 10 starts, ends and axes are attributes and there are no steps.
void EmitSlice(OnnxNode& node, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
               std::vector<int64_t> axes, std::vector<int64_t> steps) {
  const std::string& where = node.where();
  const Shape data = node.InputShape(0);
  const int64_t rank = data.ndim();
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  MX_CHECK(starts.size() == ends.size() && axes.size() == starts.size() &&
           steps.size() == starts.size())
      << where << ": starts, ends, axes and steps have " << starts.size() << ", " << ends.size()
      << ", " << axes.size() << " and " << steps.size() << " entries; they must be equal";
  std::vector<int64_t> begin(rank, 0), end(rank, std::numeric_limits<int64_t>::max()),
      step(rank, 1);
  std::vector<bool> named(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = NormalizeAxis(axes[i], rank, where);
    MX_CHECK(!named[axis]) << where << ": axis " << axes[i] << " is named twice";
    named[axis] = true;
    begin[axis] = starts[i];
    end[axis] = ends[i];
    step[axis] = steps[i];
  }
  const HostTensor* constant = node.ConstantInput(0);
  if (constant == nullptr || IsFloatingPoint(constant->dtype)) {
    node.SetOutput(0, node.Emit("slice", {{"begin", Tuple(begin)}, {"end", Tuple(end)},
                                          {"step", Tuple(step)}},
                                {node.Input(0)}));
    return;
  }
  const SliceGeometry g = SliceGeometryOf(begin, end, step, data, where);
  const size_t element = DTypeSize(constant->dtype);
  HostTensor out{constant->dtype, g.output, std::vector<uint8_t>(g.output.size() * element)};
  for (int64_t i = 0; i < g.output.size(); ++i) {
    int64_t rest = i, offset = 0, stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      offset += (g.begin[d] + rest % g.output[d] * g.step[d]) * stride;
      rest /= g.output[d];
      stride *= data[d];
    }
    std::memcpy(out.bytes.data() + i * element, constant->bytes.data() + offset * element, element);
  }
  node.SetConstantOutput(std::move(out));
}

std::vector<int64_t> OptionalInts(OnnxNode& node, int input, const std::string& what) {
  if (!node.has_input(input)) return {};
  return node.RequireConstant(input, what).ToInt64s(node.where() + " " + what);
}

void ConvertSliceAttributes(OnnxNode& node) {
  const NodeAttributes& a = node.attrs();
  EmitSlice(node, a.Ints("starts"), a.Ints("ends"), a.Ints("axes"), {});
}

void ConvertSlice(OnnxNode& node) {
  EmitSlice(node, OptionalInts(node, 1, "starts"), OptionalInts(node, 2, "ends"),
            OptionalInts(node, 3, "axes"), OptionalInts(node, 4, "steps"));
}

// Output 0 := input 0 with `shape` (folded when the input is a constant).
void ReshapeTo(OnnxNode& node, const Shape& shape) {
  if (const HostTensor* constant = node.ConstantInput(0)) {
    node.SetConstantOutput(Reshaped(*constant, shape));
    return;
  }
  node.SetOutput(0, node.Emit("Reshape", {{"shape", Tuple(shape.to_vector())}}, {node.Input(0)}));
}

std::vector<int64_t> UnsqueezedDims(const std::vector<int64_t>& dims,
                                    const std::vector<int64_t>& axes, const std::string& where) {
  const int64_t rank = static_cast<int64_t>(dims.size() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(rank), false);
  for (int64_t axis : axes) inserted[static_cast<size_t>(NormalizeAxis(axis, rank, where))] = true;
  std::vector<int64_t> out;
  size_t next = 0;
  for (int64_t axis = 0; axis < rank; ++axis) {
    out.push_back(inserted[static_cast<size_t>(axis)] ? 1 : dims.at(next++));
  }
  return out;
}

// No axes: every extent-1 axis goes.
std::vector<int64_t> SqueezedDims(const std::vector<int64_t>& dims,
                                  const std::vector<int64_t>& axes, const std::string& where) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<bool> removed(static_cast<size_t>(rank), axes.empty());
  for (int64_t axis : axes) removed[static_cast<size_t>(NormalizeAxis(axis, rank, where))] = true;
  std::vector<int64_t> out;
  for (int64_t axis = 0; axis < rank; ++axis) {
    const size_t a = static_cast<size_t>(axis);
    const bool drop = removed[a] && dims[a] == 1;
    MX_CHECK(!(removed[a] && !axes.empty() && !drop))
        << where << ": cannot squeeze axis " << axis << " of extent " << dims[a];
    if (!drop) out.push_back(dims[a]);
  }
  return out;
}

void SqueezeOrUnsqueeze(OnnxNode& node, bool unsqueeze, const std::vector<int64_t>& axes) {
  const std::vector<int64_t> dims = node.InputShape(0).to_vector();
  const std::vector<int64_t> out =
      unsqueeze ? UnsqueezedDims(dims, axes, node.where()) : SqueezedDims(dims, axes, node.where());
  ReshapeTo(node, CheckedOnnxShape(out, node.where() + " output"));
}

// Before opset 13 the axes are an attribute, from 13 an optional input known at load.
std::vector<int64_t> AxesAttribute(OnnxNode& node) { return node.attrs().Ints("axes"); }
std::vector<int64_t> AxesInput(OnnxNode& node) {
  return node.has_input(1) ? node.RequireConstant(1, "axes").ToInt64s(node.where() + " axes")
                           : std::vector<int64_t>{};
}

void ConvertSqueeze(OnnxNode& node) { SqueezeOrUnsqueeze(node, false, AxesAttribute(node)); }
void ConvertSqueezeAxesInput(OnnxNode& node) { SqueezeOrUnsqueeze(node, false, AxesInput(node)); }
void ConvertUnsqueeze(OnnxNode& node) { SqueezeOrUnsqueeze(node, true, AxesAttribute(node)); }
void ConvertUnsqueezeAxesInput(OnnxNode& node) { SqueezeOrUnsqueeze(node, true, AxesInput(node)); }

HostTensor ConcatConstants(OnnxNode& node, int64_t axis_attr) {
  const std::string& where = node.where();
  const HostTensor& first = *node.ConstantInput(0);
  const int rank = first.shape.ndim();
  const int axis = static_cast<int>(NormalizeAxis(axis_attr, rank, where));
  std::vector<int64_t> out_dims = first.shape.to_vector();
  out_dims[static_cast<size_t>(axis)] = 0;
  for (int i = 0; i < node.num_inputs(); ++i) {
    const HostTensor& part = *node.ConstantInput(i);
    MX_CHECK(part.dtype == first.dtype && part.shape.ndim() == rank)
        << where << ": inputs differ in dtype or rank";
    for (int a = 0; a < rank; ++a) {
      MX_CHECK(a == axis || part.shape[a] == first.shape[a])
          << where << ": shapes " << first.shape << " and " << part.shape << " do not concat";
    }
    out_dims[static_cast<size_t>(axis)] += part.shape[axis];
  }
  HostTensor out{first.dtype, CheckedOnnxShape(out_dims, where + " output"), {}};
  const size_t element = DTypeSize(first.dtype);
  const int64_t outer = first.shape.size(0, axis);
  for (int64_t o = 0; o < outer; ++o) {
    for (int i = 0; i < node.num_inputs(); ++i) {
      const HostTensor& part = *node.ConstantInput(i);
      const size_t chunk = static_cast<size_t>(part.shape.size(axis, rank)) * element;
      const auto begin = part.bytes.begin() + static_cast<ptrdiff_t>(o * chunk);
      out.bytes.insert(out.bytes.end(), begin, begin + static_cast<ptrdiff_t>(chunk));
    }
  }
  return out;
}

void ConvertConcat(OnnxNode& node) {
  MX_CHECK(node.num_inputs() >= 1) << node.where() << ": no inputs";
  const int64_t axis = node.attrs().Int("axis", 1);
  bool all_constant = true;
  for (int i = 0; i < node.num_inputs(); ++i) {
    all_constant = all_constant && node.ConstantInput(i) != nullptr;
  }
  if (all_constant) {
    node.SetConstantOutput(ConcatConstants(node, axis));
    return;
  }
  const std::vector<NodeEntry> inputs = node.Inputs();
  node.SetOutput(
      0, node.Emit("Concat",
                   {{"dim", std::to_string(axis)}, {"num_args", std::to_string(inputs.size())}},
                   inputs));
}

// ONNX's shape spec: 0 copies the input's extent (unless allowzero), -1 is inferred once.
void ReshapeBySpec(OnnxNode& node, const std::vector<int64_t>& spec) {
  const std::string& where = node.where();
  const bool allow_zero = node.attrs().Int("allowzero", 0) != 0;
  const Shape in = node.InputShape(0);
  std::vector<int64_t> dims;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t dim = spec[i];
    if (dim == 0 && !allow_zero) {
      MX_CHECK(static_cast<int>(i) < in.ndim())
          << where << ": 0 at axis " << i << " but the input " << in << " has no such axis";
      dim = in[static_cast<int>(i)];
    }
    if (dim == -1) {
      MX_CHECK(infer < 0) << where << ": more than one -1 in the shape " << Tuple(spec);
      infer = static_cast<int>(i);
      dims.push_back(1);
      continue;
    }
    MX_CHECK(dim >= 0) << where << ": invalid dim " << dim << " in the shape " << Tuple(spec);
    dims.push_back(dim);
    known = dims.back() == 0 ? 0 : known * dims.back();
    MX_CHECK(known <= kMaxOnnxTensorElements)
        << where << ": the shape " << Tuple(spec) << " is too large";
  }
  if (infer >= 0) {
    MX_CHECK(known > 0 && in.size() % known == 0)
        << where << ": cannot reshape " << in << " to " << Tuple(spec);
    dims[static_cast<size_t>(infer)] = in.size() / known;
  }
  const Shape out = CheckedOnnxShape(dims, where + " output");
  MX_CHECK_EQ(out.size(), in.size()) << where << ": cannot reshape " << in << " to " << out;
  ReshapeTo(node, out);
}

// The shape is an input known at load (an attribute before opset 5, older than mxlite imports).
void ConvertReshape(OnnxNode& node) {
  ReshapeBySpec(node,
                node.RequireConstant(1, "the target shape").ToInt64s(node.where() + " shape"));
}

void ConvertFlatten(OnnxNode& node) {
  node.SetOutput(0, node.Emit("Flatten", {{"axis", std::to_string(node.attrs().Int("axis", 1))}},
                              {node.Input(0)}));
}

// `tensor` with its axes permuted (output axis d is input axis perm[d]).
HostTensor TransposedAtLoad(const HostTensor& tensor, const std::vector<int64_t>& perm,
                            const std::string& where) {
  const int rank = tensor.shape.ndim();
  std::vector<int64_t> out_dims, in_strides(static_cast<size_t>(rank), 1);
  for (int d = rank - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * tensor.shape[d + 1];
  for (int64_t axis : perm) out_dims.push_back(tensor.shape[static_cast<int>(axis)]);
  const Shape out_shape = CheckedOnnxShape(out_dims, where + " output");
  const size_t element = DTypeSize(tensor.dtype);
  HostTensor out{tensor.dtype, out_shape,
                 std::vector<uint8_t>(static_cast<size_t>(out_shape.size()) * element)};
  for (int64_t i = 0; i < out_shape.size(); ++i) {
    int64_t rest = i, offset = 0;
    for (int d = rank - 1; d >= 0; --d) {
      offset += rest % out_shape[d] * in_strides[static_cast<size_t>(perm[d])];
      rest /= out_shape[d];
    }
    std::memcpy(out.bytes.data() + i * element, tensor.bytes.data() + offset * element, element);
  }
  return out;
}

// Data known at load is transposed at load (a move: exact); other data is mxlite's transpose
// op. No perm reverses the axes.
void ConvertTranspose(OnnxNode& node) {
  std::vector<int64_t> perm = node.attrs().Ints("perm");
  const HostTensor* constant = node.ConstantInput(0);
  if (constant != nullptr) {
    const int rank = constant->shape.ndim();
    if (perm.empty()) {
      for (int d = rank - 1; d >= 0; --d) perm.push_back(d);
    }
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    MX_CHECK(static_cast<int>(perm.size()) == rank)
        << node.where() << ": perm " << Tuple(perm) << " for data of rank " << rank;
    for (int64_t& axis : perm) {
      axis = NormalizeAxis(axis, rank, node.where());
      MX_CHECK(!seen[static_cast<size_t>(axis)])
          << node.where() << ": perm " << Tuple(perm) << " names an axis twice";
      seen[static_cast<size_t>(axis)] = true;
    }
    node.SetConstantOutput(TransposedAtLoad(*constant, perm, node.where()));
    return;
  }
  node.SetOutput(0, node.Emit("transpose", {{"axes", Tuple(perm)}}, {node.Input(0)}));
}

// Pads given for the axes of Pad's axes input (opset 18), spread over every axis of the data.
std::vector<int64_t> PadsOfEveryAxis(OnnxNode& node, const std::vector<int64_t>& pads) {
  const int rank = node.InputShape(0).ndim();
  const std::vector<int64_t> axes =
      node.RequireConstant(3, "axes").ToInt64s(node.where() + " axes");
  MX_CHECK(pads.size() == 2 * axes.size())
      << node.where() << ": " << pads.size() << " pads for " << axes.size() << " axes "
      << Tuple(axes) << " (expected two per axis)";
  std::vector<int64_t> every(2 * static_cast<size_t>(rank), 0);
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = NormalizeAxis(axes[i], rank, node.where());
    MX_CHECK(!seen[static_cast<size_t>(axis)])
        << node.where() << ": axes " << Tuple(axes) << " name axis " << axis << " twice";
    seen[static_cast<size_t>(axis)] = true;
    every[static_cast<size_t>(axis)] = pads[i];
    every[static_cast<size_t>(axis + rank)] = pads[i + axes.size()];
  }
  return every;
}

void EmitPad(OnnxNode& node, const std::vector<int64_t>& pads, double value) {
  const std::string& where = node.where();
  const Shape in = node.InputShape(0);
  MX_CHECK(pads.size() == 2 * static_cast<size_t>(in.ndim()))
      << where << ": " << pads.size() << " pads for an input of rank " << in.ndim();
  const size_t rank = pads.size() / 2;
  std::vector<int64_t> width;
  for (size_t i = 0; i < rank; ++i) {
    MX_CHECK(pads[i] >= 0 && pads[i + rank] >= 0)
        << where << ": negative pads (cropping) " << Tuple(pads) << " are not supported";
    width.push_back(pads[i]);
    width.push_back(pads[i + rank]);
  }
  const std::string mode = node.attrs().String("mode", "constant");
  MX_CHECK(mode == "constant" || mode == "reflect" || mode == "edge" || mode == "wrap")
      << where << ": unknown mode '" << mode << "' (constant, reflect, edge and wrap are known)";
  node.SetOutput(
      0, node.Emit("Pad",
                   {{"mode", mode}, {"pad_width", Tuple(width)}, {"constant_value", Number(value)}},
                   {node.Input(0)}));
}

// Before opset 11 pads and value are attributes.
void ConvertPadAttributes(OnnxNode& node) {
  EmitPad(node, node.attrs().Ints("pads"), node.attrs().Float("value", 0));
}

// From opset 11 they are inputs known at load. From opset 18 the optional axes input names the
// axes the pads apply to (begins for each, then ends); the other axes are not padded.
void ConvertPad(OnnxNode& node) {
  std::vector<int64_t> pads = node.RequireConstant(1, "pads").ToInt64s(node.where() + " pads");
  double value = 0;
  if (node.has_input(2)) {
    const std::vector<double> fill =
        node.RequireConstant(2, "constant_value").AsDoubles(node.where());
    MX_CHECK(fill.size() == 1) << node.where() << ": constant_value must be one value";
    value = fill[0];
  }
  if (node.has_input(3)) pads = PadsOfEveryAxis(node, pads);
  EmitPad(node, pads, value);
}

// ---- Split ----------------------------------------------------------------------------------

// Output i is the slice [offset_i, offset_i + sizes[i]) along `axis`; no sizes: equal parts, one
// per output.
void EmitSplit(OnnxNode& node, std::vector<int64_t> sizes) {
  const Shape in = node.InputShape(0);
  const int64_t axis = NormalizeAxis(node.attrs().Int("axis", 0), in.ndim(), node.where());
  const int64_t extent = in[static_cast<int>(axis)];
  const int64_t outputs = node.num_outputs();
  if (sizes.empty()) {
    MX_CHECK(extent % outputs == 0)
        << node.where() << ": axis " << axis << " of extent " << extent << " does not split into "
        << outputs << " equal parts (give 'split')";
    sizes.assign(static_cast<size_t>(outputs), extent / outputs);
  }
  MX_CHECK(static_cast<int64_t>(sizes.size()) == outputs)
      << node.where() << ": 'split' " << Tuple(sizes) << " has " << sizes.size() << " parts for "
      << outputs << " outputs";
  int64_t total = 0;
  for (int64_t size : sizes) {
    MX_CHECK(size > 0) << node.where() << ": 'split' " << Tuple(sizes)
                       << " has an empty part (mxlite has no empty tensors)";
    total += size;
  }
  MX_CHECK(total == extent) << node.where() << ": 'split' " << Tuple(sizes) << " sums to "
                            << total << ", not the extent " << extent << " of axis " << axis;
  std::vector<int64_t> begin(static_cast<size_t>(axis) + 1, 0), end(begin.size(), 0);
  for (int64_t d = 0; d < axis; ++d) end[d] = in[static_cast<int>(d)];
  for (int64_t i = 0, offset = 0; i < outputs; offset += sizes[i], ++i) {
    begin[axis] = offset;
    end[axis] = offset + sizes[i];
    std::string suffix = "_";  // appended: GCC 12 warns falsely on "_" + std::string
    suffix += std::to_string(i);
    node.SetOutput(static_cast<int>(i),
                   node.Emit("slice", {{"begin", Tuple(begin)}, {"end", Tuple(end)}},
                             {node.Input(0)}, suffix));
  }
}

// Opsets 2-12: the parts in the 'split' attribute.
void ConvertSplitAttribute(OnnxNode& node) { EmitSplit(node, node.attrs().Ints("split")); }

// Opsets 13-17: the parts in the optional second input, known at load.
void ConvertSplit(OnnxNode& node) {
  std::vector<int64_t> sizes;
  if (node.has_input(1)) sizes = node.RequireConstant(1, "Split's 'split'").ToInt64s(node.where());
  EmitSplit(node, sizes);
}

// From opset 18 without the second input, num_outputs (required then) parts of ceil(extent /
// num_outputs), the last one smaller when the extent does not divide.
void ConvertSplitNumOutputs(OnnxNode& node) {
  if (node.has_input(1)) {
    MX_CHECK(!node.attrs().Has("num_outputs"))
        << node.where() << ": both 'split' and num_outputs are given (one of them is expected)";
    ConvertSplit(node);
    return;
  }
  MX_CHECK(node.attrs().Has("num_outputs"))
      << node.where() << ": neither the 'split' input nor num_outputs is given";
  const int64_t parts = node.attrs().Int("num_outputs", 0);
  MX_CHECK(parts == node.num_outputs())
      << node.where() << ": num_outputs " << parts << " but the node has " << node.num_outputs()
      << " outputs";
  const Shape in = node.InputShape(0);
  const int64_t axis = NormalizeAxis(node.attrs().Int("axis", 0), in.ndim(), node.where());
  const int64_t extent = in[static_cast<int>(axis)];
  const int64_t chunk = (extent + parts - 1) / parts;
  std::vector<int64_t> sizes;
  for (int64_t offset = 0; offset < extent; offset += chunk) {
    sizes.push_back(std::min(chunk, extent - offset));
  }
  MX_CHECK(static_cast<int64_t>(sizes.size()) == parts)
      << node.where() << ": axis " << axis << " of extent " << extent << " does not split into "
      << parts << " parts of " << chunk << " (the last one smaller)";
  EmitSplit(node, sizes);
}

// ---- Tile ---------------------------------------------------------------------------------------

// repeats (known at load): each axis repeated by concatenating copies along it.
void ConvertTile(OnnxNode& node) {
  const Shape in = node.InputShape(0);
  const std::vector<int64_t> repeats =
      node.RequireConstant(1, "Tile's repeats").ToInt64s(node.where());
  MX_CHECK(static_cast<int>(repeats.size()) == in.ndim())
      << node.where() << ": repeats " << Tuple(repeats) << " has " << repeats.size()
      << " entries for an input of " << in.ndim() << " dims";
  NodeEntry tiled = node.Input(0);
  for (size_t axis = 0; axis < repeats.size(); ++axis) {
    MX_CHECK(repeats[axis] >= 1) << node.where() << ": repeats " << Tuple(repeats)
                                 << " has an entry under 1 (mxlite has no empty tensors)";
    if (repeats[axis] == 1) continue;
    std::string suffix = "_axis";  // appended: GCC 12 warns falsely on "_" + std::string
    suffix += std::to_string(axis);
    tiled = node.Emit("Concat",
                      {{"dim", std::to_string(axis)}, {"num_args", std::to_string(repeats[axis])}},
                      std::vector<NodeEntry>(static_cast<size_t>(repeats[axis]), tiled), suffix);
  }
  node.SetOutput(0, tiled);
}

// ---- DepthToSpace, SpaceToDepth -------------------------------------------------------------

// reshape(split) -> transpose(axes) -> reshape(out): the depth/space moves on (N, C, H, W).
void EmitBlockMove(OnnxNode& node, const std::vector<int64_t>& split,
                   const std::vector<int64_t>& axes, const std::vector<int64_t>& out) {
  const NodeEntry blocks =
      node.Emit("Reshape", {{"shape", Tuple(split)}}, {node.Input(0)}, "_blocks");
  const NodeEntry moved = node.Emit("transpose", {{"axes", Tuple(axes)}}, {blocks}, "_moved");
  node.SetOutput(0, node.Emit("Reshape", {{"shape", Tuple(out)}}, {moved}));
}

// The input's (N, C, H, W) and the block size, checked.
std::vector<int64_t> BlockMoveInput(OnnxNode& node, int64_t* block) {
  const Shape in = node.InputShape(0);
  MX_CHECK(in.ndim() == 4) << node.where() << ": the input has shape " << in
                           << "; " << node.op_type() << " takes (N, C, H, W)";
  *block = node.attrs().Int("blocksize", 0);
  MX_CHECK(*block >= 1) << node.where() << ": blocksize " << *block << " must be at least 1";
  return in.to_vector();
}

// DCR (depth, column, row; the only mode before opset 11): channel (i * b + j) * C' + c goes to
// channel c at (h * b + i, w * b + j); CRD: channel c * b * b + i * b + j.
void ConvertDepthToSpace(OnnxNode& node) {
  int64_t b = 0;
  const std::vector<int64_t> d = BlockMoveInput(node, &b);
  const int64_t n = d[0], c = d[1], h = d[2], w = d[3];
  MX_CHECK(c % (b * b) == 0) << node.where() << ": " << c << " channels do not split into blocks "
                             << "of blocksize^2 = " << b * b;
  const int64_t depth = c / (b * b);
  const std::string mode = node.opset() >= 11 ? node.attrs().String("mode", "DCR") : "DCR";
  MX_CHECK(mode == "DCR" || mode == "CRD")
      << node.where() << ": mode '" << mode << "' is not DCR or CRD";
  if (mode == "DCR") {
    EmitBlockMove(node, {n, b, b, depth, h, w}, {0, 3, 4, 1, 5, 2}, {n, depth, h * b, w * b});
  } else {
    EmitBlockMove(node, {n, depth, b, b, h, w}, {0, 1, 4, 2, 5, 3}, {n, depth, h * b, w * b});
  }
}

// The inverse of DCR: pixel (h * b + i, w * b + j) of channel c goes to channel (i * b + j) * C + c.
void ConvertSpaceToDepth(OnnxNode& node) {
  int64_t b = 0;
  const std::vector<int64_t> d = BlockMoveInput(node, &b);
  const int64_t n = d[0], c = d[1], h = d[2], w = d[3];
  MX_CHECK(h % b == 0 && w % b == 0) << node.where() << ": height " << h << " and width " << w
                                     << " must be multiples of blocksize " << b;
  EmitBlockMove(node, {n, c, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4}, {n, c * b * b, h / b, w / b});
}

// GatherElements (opsets 11, 13): mxlite's gather_elements on run-time data and indices.
void ConvertGatherElements(OnnxNode& node) {
  const int64_t axis =
      NormalizeAxis(node.attrs().Int("axis", 0), node.InputShape(0).ndim(), node.where());
  node.SetOutput(0, node.Emit("gather_elements", {{"axis", std::to_string(axis)}},
                              {node.Input(0), node.Input(1)}));
}

// ScatterElements (opsets 11-21; reduction from 16, max and min from 18) and Scatter (9-10):
// mxlite's scatter_elements on run-time data, indices and updates.
void ConvertScatterElements(OnnxNode& node) {
  const int64_t axis =
      NormalizeAxis(node.attrs().Int("axis", 0), node.InputShape(0).ndim(), node.where());
  const std::string reduction = node.attrs().String("reduction", "none");
  MX_CHECK(reduction == "none" || reduction == "add" || reduction == "mul" || reduction == "max" ||
           reduction == "min")
      << node.where() << ": reduction '" << reduction
      << "' is not one of none, add, mul, max and min";
  node.SetOutput(
      0, node.Emit("scatter_elements", {{"axis", std::to_string(axis)}, {"reduction", reduction}},
                   {node.Input(0), node.Input(1), node.Input(2)}));
}

// CenterCropPad (opset 18): each named axis (`axes`, default all) cut or zero-padded to the
// extent `shape` gives (known at load), centred: a slice from (in - out) / 2, or (out - in) / 2
// zeros in front and the rest behind (the odd one behind, as ONNX's reference).
void ConvertCenterCropPad(OnnxNode& node) {
  const std::string& where = node.where();
  const Shape in = node.InputShape(0);
  const int rank = in.ndim();
  const std::vector<int64_t> extents = node.RequireConstant(1, "shape").ToInt64s(where + " shape");
  std::vector<int64_t> axes = node.attrs().Ints("axes");
  if (axes.empty()) {
    for (int axis = 0; axis < rank; ++axis) axes.push_back(axis);
  }
  MX_CHECK(extents.size() == axes.size())
      << where << ": shape " << Tuple(extents) << " gives " << extents.size() << " extents for "
      << axes.size() << " axes";
  std::vector<int64_t> begin(rank, 0), end = in.to_vector(), width(2 * rank, 0);
  bool crops = false, pads = false;
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t axis = NormalizeAxis(axes[k], rank, where);
    const int64_t have = in[static_cast<int>(axis)], want = extents[k];
    MX_CHECK(want > 0) << where << ": shape " << Tuple(extents) << " holds " << want << " for axis "
                       << axis << " (mxlite has no empty tensors)";
    if (want < have) {
      begin[axis] = (have - want) / 2;
      end[axis] = begin[axis] + want;
      crops = true;
    } else if (want > have) {
      width[2 * axis] = (want - have) / 2;
      width[2 * axis + 1] = want - have - width[2 * axis];
      pads = true;
    }
  }
  NodeEntry out = node.Input(0);
  if (crops) {
    out = node.Emit("slice", {{"begin", Tuple(begin)}, {"end", Tuple(end)}}, {out},
                    pads ? "_crop" : "");
  }
  if (pads) {
    out = node.Emit("Pad", {{"mode", "constant"}, {"pad_width", Tuple(width)}}, {out});
  }
  node.SetOutput(0, out);
}

// GatherND (opsets 11-21; batch_dims from 12): mxlite's gather_nd takes the index tuples along
// the first axis, ONNX's along the last, so the indices are transposed; with batch_dims b each
// tuple first gets its b batch coordinates (constants at load) in front.
void ConvertGatherND(OnnxNode& node) {
  const std::string& where = node.where();
  const Shape data = node.InputShape(0), indices = node.InputShape(1);
  const int64_t b = node.attrs().Int("batch_dims", 0);
  const int q = indices.ndim();
  MX_CHECK(q >= 1) << where << ": indices are a scalar";
  MX_CHECK(b >= 0 && b < q && b < data.ndim())
      << where << ": batch_dims " << b << " must be below the ranks of indices " << indices
      << " and data " << data;
  for (int axis = 0; axis < b; ++axis) {
    MX_CHECK(indices[axis] == data[axis]) << where << ": batch axis " << axis << " of indices "
                                          << indices << " and data " << data << " differ";
  }
  NodeEntry tuples = node.Input(1);
  if (b > 0) {  // each tuple's batch coordinates in front of it
    const DType dtype = node.InputDType(1);
    std::vector<int64_t> one_dims = indices.to_vector();
    one_dims.back() = 1;
    const Shape one(one_dims);
    std::vector<NodeEntry> parts;
    for (int64_t axis = 0; axis < b; ++axis) {
      std::vector<double> coordinate(static_cast<size_t>(one.size()));
      for (int64_t flat = 0; flat < one.size(); ++flat) {
        coordinate[flat] = static_cast<double>(flat / one.size(axis + 1, one.ndim()) % one[axis]);
      }
      parts.push_back(node.NewConstant("_batch" + std::to_string(axis),
                                       HostTensorOf(dtype, one, coordinate, where)));
    }
    parts.push_back(tuples);
    tuples = node.Emit("Concat",
                       {{"dim", std::to_string(q - 1)}, {"num_args", std::to_string(parts.size())}},
                       parts, "_tuples");
  }
  std::vector<int64_t> axes = {q - 1};
  for (int axis = 0; axis < q - 1; ++axis) axes.push_back(axis);
  if (q > 1) tuples = node.Emit("transpose", {{"axes", Tuple(axes)}}, {tuples}, "_first");
  node.SetOutput(0, node.Emit("gather_nd", {}, {node.Input(0), tuples}));
}

// ReverseSequence (opset 10): each batch element's first sequence_lens[b] steps along time_axis
// reversed, the rest as they are: gather_elements with the positions (a constant at load, with the
// lengths known there).
void ConvertReverseSequence(OnnxNode& node) {
  const std::string& where = node.where();
  const Shape shape = node.InputShape(0);
  MX_CHECK(shape.ndim() >= 2) << where << ": input " << shape << " needs at least 2 axes";
  const int64_t time = NormalizeAxis(node.attrs().Int("time_axis", 0), shape.ndim(), where);
  const int64_t batch = NormalizeAxis(node.attrs().Int("batch_axis", 1), shape.ndim(), where);
  MX_CHECK(time != batch && time <= 1 && batch <= 1)
      << where << ": time_axis and batch_axis must be 0 and 1 (either way round)";
  const std::vector<int64_t> lengths =
      node.RequireConstant(1, "sequence_lens").ToInt64s(where + " sequence_lens");
  MX_CHECK(static_cast<int64_t>(lengths.size()) == shape[static_cast<int>(batch)])
      << where << ": sequence_lens holds " << lengths.size() << " lengths for a batch of "
      << shape[static_cast<int>(batch)];
  const int64_t steps = shape[static_cast<int>(time)];
  for (int64_t length : lengths) {
    MX_CHECK(length >= 0 && length <= steps)
        << where << ": sequence length " << length << " is outside [0, " << steps << "]";
  }
  const int64_t inner = shape.size(2, shape.ndim());
  std::vector<int64_t> positions(static_cast<size_t>(shape.size()));
  for (int64_t flat = 0; flat < shape.size(); ++flat) {
    const int64_t first = flat / (shape[1] * inner), second = flat / inner % shape[1];
    const int64_t t = time == 0 ? first : second, b = time == 0 ? second : first;
    positions[flat] = t < lengths[b] ? lengths[b] - 1 - t : t;
  }
  const NodeEntry index = node.NewConstant(
      "_positions", HostTensorOf(DType::kInt64, shape,
                                 std::vector<double>(positions.begin(), positions.end()), where));
  node.SetOutput(
      0, node.Emit("gather_elements", {{"axis", std::to_string(time)}}, {node.Input(0), index}));
}

// Trilu (opset 14): mxlite's triu (upper = 1, the default) or tril, with k from input 1 (a scalar
// known at load; 0 when absent).
void ConvertTrilu(OnnxNode& node) {
  int64_t k = 0;
  if (node.has_input(1)) {
    const std::vector<int64_t> values =
        node.RequireConstant(1, "k (the diagonal)").ToInt64s(node.where() + " k");
    MX_CHECK(values.size() == 1) << node.where() << ": k has " << values.size()
                                 << " values; expected one (a scalar)";
    k = values[0];
  }
  const bool upper = node.attrs().Int("upper", 1) != 0;
  node.SetOutput(0,
                 node.Emit(upper ? "triu" : "tril", {{"k", std::to_string(k)}}, {node.Input(0)}));
}

}  // namespace

MXLITE_REGISTER_ONNX_CONVERTER(Split, 2, 12, ConvertSplitAttribute);
MXLITE_REGISTER_ONNX_CONVERTER(Split, 13, 17, ConvertSplit);
MXLITE_REGISTER_ONNX_CONVERTER(Split, 18, kMaxOnnxOpset, ConvertSplitNumOutputs);
MXLITE_REGISTER_ONNX_CONVERTER(Tile, 6, kMaxOnnxOpset, ConvertTile);
MXLITE_REGISTER_ONNX_CONVERTER(DepthToSpace, 1, kMaxOnnxOpset, ConvertDepthToSpace);
MXLITE_REGISTER_ONNX_CONVERTER(SpaceToDepth, 1, kMaxOnnxOpset, ConvertSpaceToDepth);
MXLITE_REGISTER_ONNX_CONVERTER(Identity, 1, kMaxOnnxOpset, ConvertIdentity);
MXLITE_REGISTER_ONNX_CONVERTER(Dropout, 1, 11, ConvertDropout);
MXLITE_REGISTER_ONNX_CONVERTER(Dropout, 12, kMaxOnnxOpset, ConvertDropoutWithMode);
MXLITE_REGISTER_ONNX_CONVERTER(Constant, 1, kMaxOnnxOpset, ConvertConstant);
MXLITE_REGISTER_ONNX_CONVERTER(Cast, 6, kMaxOnnxOpset, ConvertCast);
MXLITE_REGISTER_ONNX_CONVERTER(CastLike, 15, kMaxOnnxOpset, ConvertCastLike);
MXLITE_REGISTER_ONNX_CONVERTER(Size, 1, kMaxOnnxOpset, ConvertSize);
MXLITE_REGISTER_ONNX_CONVERTER(Shape, 1, kMaxOnnxOpset, ConvertShape);
MXLITE_REGISTER_ONNX_CONVERTER(Gather, 1, kMaxOnnxOpset, ConvertGather);
MXLITE_REGISTER_ONNX_CONVERTER(Squeeze, 1, 12, ConvertSqueeze);
MXLITE_REGISTER_ONNX_CONVERTER(Squeeze, 13, kMaxOnnxOpset, ConvertSqueezeAxesInput);
MXLITE_REGISTER_ONNX_CONVERTER(Unsqueeze, 1, 12, ConvertUnsqueeze);
MXLITE_REGISTER_ONNX_CONVERTER(Unsqueeze, 13, kMaxOnnxOpset, ConvertUnsqueezeAxesInput);
MXLITE_REGISTER_ONNX_CONVERTER(Concat, 1, kMaxOnnxOpset, ConvertConcat);
MXLITE_REGISTER_ONNX_CONVERTER(Reshape, 5, kMaxOnnxOpset, ConvertReshape);
MXLITE_REGISTER_ONNX_CONVERTER(Flatten, 1, kMaxOnnxOpset, ConvertFlatten);
MXLITE_REGISTER_ONNX_CONVERTER(Slice, 1, 9, ConvertSliceAttributes);
MXLITE_REGISTER_ONNX_CONVERTER(Slice, 10, kMaxOnnxOpset, ConvertSlice);
MXLITE_REGISTER_ONNX_CONVERTER(Transpose, 1, kMaxOnnxOpset, ConvertTranspose);
MXLITE_REGISTER_ONNX_CONVERTER(Trilu, 14, kMaxOnnxOpset, ConvertTrilu);
MXLITE_REGISTER_ONNX_CONVERTER(GatherElements, 11, kMaxOnnxOpset, ConvertGatherElements);
MXLITE_REGISTER_ONNX_CONVERTER(CenterCropPad, 18, kMaxOnnxOpset, ConvertCenterCropPad);
MXLITE_REGISTER_ONNX_CONVERTER(ReverseSequence, 10, kMaxOnnxOpset, ConvertReverseSequence);
MXLITE_REGISTER_ONNX_CONVERTER(GatherND, 11, kMaxOnnxOpset, ConvertGatherND);
MXLITE_REGISTER_ONNX_CONVERTER(Scatter, 9, 10, ConvertScatterElements);
MXLITE_REGISTER_ONNX_CONVERTER(ScatterElements, 11, kMaxOnnxOpset, ConvertScatterElements);
// Pad-1 called its pads `paddings`.
MXLITE_REGISTER_ONNX_CONVERTER(Pad, 2, 10, ConvertPadAttributes);
MXLITE_REGISTER_ONNX_CONVERTER(Pad, 11, kMaxOnnxOpset, ConvertPad);

}  // namespace mxlite
