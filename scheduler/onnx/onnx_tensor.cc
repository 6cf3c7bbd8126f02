#include "scheduler/onnx/onnx_tensor.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "core/error.h"
#include "core/half.h"
#include "onnx/onnx_pb.h"  // defines ONNX_API, then includes onnx/onnx-ml.pb.h
#include "ops/attributes.h"

namespace mxlite {
namespace {

namespace fs = std::filesystem;

template <typename T>
std::vector<T> Elements(const HostTensor& tensor) {
  std::vector<T> values(static_cast<size_t>(tensor.num_elements()));
  if (!values.empty()) std::memcpy(values.data(), tensor.bytes.data(), tensor.bytes.size());
  return values;
}

template <typename To, typename From>
std::vector<To> Converted(const std::vector<From>& values) {
  return std::vector<To>(values.begin(), values.end());
}

// Copies a typed repeated field into `tensor.bytes`, narrowing each element to `T`.
template <typename T, typename Field>
void FillFromField(const Field& field, HostTensor& tensor) {
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    const T value = static_cast<T>(field.Get(static_cast<int>(i)));
    std::memcpy(tensor.bytes.data() + i * sizeof(T), &value, sizeof(T));
  }
}

int TypedFieldSize(const onnx::TensorProto& proto, DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return proto.float_data_size();
    case DType::kFloat64:
      return proto.double_data_size();
    case DType::kInt64:
      return proto.int64_data_size();
    default:
      return proto.int32_data_size();  // int32, uint8, float16, bfloat16
  }
}

void FillFromTypedField(const onnx::TensorProto& proto, HostTensor& tensor) {
  switch (tensor.dtype) {
    case DType::kFloat32:
      FillFromField<float>(proto.float_data(), tensor);
      break;
    case DType::kFloat64:
      FillFromField<double>(proto.double_data(), tensor);
      break;
    case DType::kInt64:
      FillFromField<int64_t>(proto.int64_data(), tensor);
      break;
    case DType::kInt32:
      FillFromField<int32_t>(proto.int32_data(), tensor);
      break;
    case DType::kUInt8:
      FillFromField<uint8_t>(proto.int32_data(), tensor);
      break;
    case DType::kFloat16:
    case DType::kBFloat16:
      FillFromField<uint16_t>(proto.int32_data(), tensor);
      break;
  }
}

// Resolves an external-data location against the model folder, refusing paths that leave it.
fs::path ExternalPath(const std::string& location, const std::string& model_dir,
                      const std::string& where) {
  MX_CHECK(!model_dir.empty()) << where << ": external data ('" << location
                               << "') is not supported here (no model folder)";
  const fs::path relative(location);
  MX_CHECK(!location.empty() && relative.is_relative())
      << where << ": external data location '" << location
      << "' must be a relative path inside the model's folder";
  for (const fs::path& part : relative) {
    MX_CHECK(part != "..") << where << ": external data location '" << location
                           << "' leaves the model's folder";
  }
  std::error_code error;
  const fs::path base = fs::weakly_canonical(fs::path(model_dir), error);
  const fs::path full = fs::weakly_canonical(base / relative, error);
  MX_CHECK(!error) << where << ": cannot resolve external data '" << location
                   << "': " << error.message();
  const auto [base_end, full_it] =
      std::mismatch(base.begin(), base.end(), full.begin(), full.end());
  MX_CHECK(base_end == base.end())
      << where << ": external data location '" << location << "' leads outside the model's folder ("
      << full.string() << ")";
  return full;
}

uint64_t ParseExternalNumber(const std::string& text, const std::string& key,
                             const std::string& where) {
  MX_CHECK(!text.empty() && text.size() <= 19 &&
           text.find_first_not_of("0123456789") == std::string::npos)
      << where << ": external data " << key << " '" << text << "' is not a non-negative integer";
  return std::stoull(text);
}

void ReadExternalData(const onnx::TensorProto& proto, const std::string& where,
                      const std::string& model_dir, HostTensor& tensor) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset") {
      offset = ParseExternalNumber(entry.value(), "offset", where);
    } else if (entry.key() == "length") {
      length = ParseExternalNumber(entry.value(), "length", where);
    }
  }
  const fs::path path = ExternalPath(location, model_dir, where);
  std::error_code error;
  const uint64_t file_size = fs::file_size(path, error);
  MX_CHECK(!error) << where << ": cannot open external data file " << path.string() << ": "
                   << error.message();
  const uint64_t needed = tensor.bytes.size();
  MX_CHECK(!length || *length == needed)
      << where << ": external data length " << *length << " does not match the " << needed
      << " bytes of its shape " << tensor.shape.ToString();
  MX_CHECK(offset <= file_size && file_size - offset >= needed)
      << where << ": external data file " << path.string() << " (" << file_size << " bytes) has no "
      << needed << " bytes at offset " << offset;
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(reinterpret_cast<char*>(tensor.bytes.data()), static_cast<std::streamsize>(needed));
  MX_CHECK(in.good() || needed == 0)
      << where << ": reading external data " << path.string() << " failed";
}

}  // namespace

std::vector<int64_t> HostTensor::ToInt64s(const std::string& what) const {
  switch (dtype) {
    case DType::kInt64:
      return Elements<int64_t>(*this);
    case DType::kInt32:
      return Converted<int64_t>(Elements<int32_t>(*this));
    case DType::kUInt8:
      return Converted<int64_t>(Elements<uint8_t>(*this));
    default:
      MX_THROW() << what << ": expected integers, got " << DTypeName(dtype);
  }
}

std::vector<double> HostTensor::AsDoubles(const std::string& what) const {
  switch (dtype) {
    case DType::kFloat32:
      return Converted<double>(Elements<float>(*this));
    case DType::kFloat64:
      return Elements<double>(*this);
    case DType::kFloat16: {
      std::vector<double> values;
      for (uint16_t half : Elements<uint16_t>(*this)) values.push_back(HalfToFloat(half));
      return values;
    }
    case DType::kInt64:
    case DType::kInt32:
    case DType::kUInt8:
      return Converted<double>(ToInt64s(what));
    default:
      MX_THROW() << what << ": cannot read " << DTypeName(dtype) << " values";
  }
}

namespace {

template <typename Value>
HostTensor TensorOfValues(DType dtype, const Shape& shape, const std::vector<Value>& values,
                          const std::string& what) {
  MX_CHECK(static_cast<int64_t>(values.size()) == shape.size())
      << what << ": " << values.size() << " values for shape " << shape;
  switch (dtype) {
    case DType::kFloat32:
      return HostTensor::From(Converted<float>(values), shape);
    case DType::kFloat64:
      return HostTensor::From(Converted<double>(values), shape);
    case DType::kInt32:
      return HostTensor::From(Converted<int32_t>(values), shape);
    case DType::kInt64:
      return HostTensor::From(Converted<int64_t>(values), shape);
    case DType::kUInt8:
      return HostTensor::From(Converted<uint8_t>(values), shape);
    case DType::kFloat16: {  // each value rounded to the nearest half
      HostTensor tensor{dtype, shape, std::vector<uint8_t>(values.size() * sizeof(uint16_t))};
      for (size_t i = 0; i < values.size(); ++i) {
        const uint16_t half = FloatToHalf(static_cast<float>(values[i]));
        std::memcpy(tensor.bytes.data() + i * sizeof(uint16_t), &half, sizeof(half));
      }
      return tensor;
    }
    default:
      MX_THROW() << what << ": values of dtype " << DTypeName(dtype)
                 << " cannot be written at load (float32, float64, float16, int32, int64 and "
                 << "uint8 can)";
  }
}

}  // namespace

bool ComputableAtLoad(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kInt32 ||
         dtype == DType::kInt64 || dtype == DType::kUInt8;
}

HostTensor HostTensorOf(DType dtype, const Shape& shape, const std::vector<double>& values,
                        const std::string& what) {
  return TensorOfValues(dtype, shape, values, what);
}

HostTensor HostTensorOf(DType dtype, const Shape& shape, const std::vector<int64_t>& values,
                        const std::string& what) {
  return TensorOfValues(dtype, shape, values, what);
}

Shape CheckedOnnxShape(const std::vector<int64_t>& dims, const std::string& where) {
  MX_CHECK(dims.size() <= static_cast<size_t>(Shape::kMaxDims))
      << where << ": rank " << dims.size() << " exceeds mxlite's maximum of " << Shape::kMaxDims;
  int64_t count = 1;
  for (int64_t dim : dims) {
    MX_CHECK(dim >= 0) << where << ": negative dimension " << dim;
    MX_CHECK(dim == 0 || count <= kMaxOnnxTensorElements / dim)
        << where << ": " << FormatIntTuple(dims) << " has more than " << kMaxOnnxTensorElements
        << " elements";
    count *= dim;
  }
  return Shape(dims);
}

const Shape& CheckedGeneratedShape(const Shape& shape, const std::string& where) {
  MX_CHECK(shape.size() <= kMaxGeneratedConstantElements)
      << where << ": a constant of shape " << shape << " (" << shape.size()
      << " elements) is more than mxlite computes at load (" << kMaxGeneratedConstantElements
      << " elements)";
  return shape;
}

DType DTypeFromOnnx(int32_t onnx_type, const std::string& where) {
  switch (onnx_type) {
    case onnx::TensorProto::FLOAT:
      return DType::kFloat32;
    case onnx::TensorProto::DOUBLE:
      return DType::kFloat64;
    case onnx::TensorProto::FLOAT16:
      return DType::kFloat16;
    case onnx::TensorProto::BFLOAT16:
      return DType::kBFloat16;
    case onnx::TensorProto::INT32:
      return DType::kInt32;
    case onnx::TensorProto::INT64:
      return DType::kInt64;
    case onnx::TensorProto::UINT8:
      return DType::kUInt8;
    default:
      break;
  }
  const std::string name = onnx::TensorProto::DataType_IsValid(onnx_type)
                               ? onnx::TensorProto::DataType_Name(onnx_type)
                               : "unknown type " + std::to_string(onnx_type);
  MX_THROW() << where << ": data type " << name
             << " is not supported (float, double, float16, bfloat16, int32, int64, uint8)";
}

DType ValueDTypeFromOnnx(int32_t onnx_type, const std::string& where) {
  return onnx_type == onnx::TensorProto::BOOL ? DType::kUInt8 : DTypeFromOnnx(onnx_type, where);
}

int32_t DTypeToOnnx(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return onnx::TensorProto::FLOAT;
    case DType::kFloat64:
      return onnx::TensorProto::DOUBLE;
    case DType::kFloat16:
      return onnx::TensorProto::FLOAT16;
    case DType::kBFloat16:
      return onnx::TensorProto::BFLOAT16;
    case DType::kInt32:
      return onnx::TensorProto::INT32;
    case DType::kInt64:
      return onnx::TensorProto::INT64;
    case DType::kUInt8:
      return onnx::TensorProto::UINT8;
  }
  return onnx::TensorProto::UNDEFINED;
}

HostTensor TensorFromProto(const onnx::TensorProto& proto, const std::string& where,
                           const std::string& model_dir) {
  MX_CHECK(!proto.has_segment()) << where << ": segmented tensors are not supported";
  HostTensor tensor;
  // A bool tensor (a mask, a condition) is read as uint8 0 / 1: mxlite has no bool dtype.
  tensor.dtype = ValueDTypeFromOnnx(proto.data_type(), where);
  tensor.shape = CheckedOnnxShape({proto.dims().begin(), proto.dims().end()}, where);
  const uint64_t bytes = static_cast<uint64_t>(tensor.num_elements()) * DTypeSize(tensor.dtype);
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    tensor.bytes.resize(bytes);
    ReadExternalData(proto, where, model_dir, tensor);
    return tensor;
  }
  if (proto.has_raw_data()) {
    MX_CHECK_EQ(proto.raw_data().size(), bytes)
        << where << ": raw_data has " << proto.raw_data().size() << " bytes but shape "
        << tensor.shape.ToString() << " of " << DTypeName(tensor.dtype) << " needs " << bytes;
    tensor.bytes.assign(proto.raw_data().begin(), proto.raw_data().end());
    return tensor;
  }
  const int stored = TypedFieldSize(proto, tensor.dtype);
  MX_CHECK_EQ(static_cast<int64_t>(stored), tensor.num_elements())
      << where << ": holds " << stored << " values but its shape " << tensor.shape.ToString()
      << " has " << tensor.num_elements() << " elements";
  tensor.bytes.resize(bytes);
  FillFromTypedField(proto, tensor);
  return tensor;
}

std::string ReadFileBytes(const std::string& path, uint64_t max_bytes) {
  std::error_code error;
  const uint64_t size = std::filesystem::file_size(path, error);
  MX_CHECK(!error) << "cannot open " << path << ": " << error.message();
  MX_CHECK(size <= max_bytes) << path << ": " << size << " bytes exceeds the limit of "
                              << max_bytes;
  std::string bytes(size, '\0');
  std::ifstream in(path, std::ios::binary);
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  MX_CHECK(in.good() || size == 0) << "reading " << path << " failed";
  return bytes;
}

HostTensor ReadTensorFile(const std::string& path, std::string* name) {
  const std::string bytes = ReadFileBytes(path, uint64_t{1} << 34);
  onnx::TensorProto proto;
  MX_CHECK(proto.ParseFromString(bytes))
      << path << ": not a valid ONNX TensorProto (truncated or malformed protobuf)";
  if (name != nullptr) *name = proto.name();
  return TensorFromProto(proto, path + ": tensor '" + proto.name() + "'",
                         std::filesystem::path(path).parent_path().string());
}

void WriteTensorFile(const std::string& path, const HostTensor& tensor, const std::string& name) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(DTypeToOnnx(tensor.dtype));
  for (int64_t dim : tensor.shape.to_vector()) proto.add_dims(dim);
  proto.set_raw_data(tensor.bytes.data(), tensor.bytes.size());
  std::ofstream out(path, std::ios::binary);
  MX_CHECK(out && proto.SerializeToOstream(&out)) << "cannot write " << path;
}

}  // namespace mxlite
