#include "core/dtype.h"

#include "core/error.h"

namespace mxlite {

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return 4;
    case DType::kFloat64: return 8;
    case DType::kFloat16: return 2;
    case DType::kBFloat16: return 2;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kUInt8: return 1;
  }
  MX_THROW() << "invalid DType value " << static_cast<int>(dtype);
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kUInt8: return "uint8";
  }
  MX_THROW() << "invalid DType value " << static_cast<int>(dtype);
}

DType ParseDType(std::string_view name) {
  std::string known;
  for (DType dtype : kAllDTypes) {
    if (name == DTypeName(dtype)) return dtype;
    known += known.empty() ? "" : ", ";
    known += DTypeName(dtype);
  }
  MX_THROW() << "unknown dtype '" << name << "'; known dtypes: " << known;
}

bool IsFloatingPoint(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kFloat16 ||
         dtype == DType::kBFloat16;
}

std::ostream& operator<<(std::ostream& out, DType dtype) { return out << DTypeName(dtype); }

}  // namespace mxlite
