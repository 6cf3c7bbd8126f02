// DType: the element types mxlite knows, their sizes and names, and the mapping from C++ types.
// Names follow NumPy ("float32", "int64", "bfloat16"); ParseDType accepts them and throws
// mxlite::Error listing the known names otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

namespace mxlite {

enum class DType : uint8_t { kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kUInt8 };

inline constexpr DType kAllDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                       DType::kBFloat16, DType::kInt32,  DType::kInt64,
                                       DType::kUInt8};

size_t DTypeSize(DType dtype);
const char* DTypeName(DType dtype);
DType ParseDType(std::string_view name);
bool IsFloatingPoint(DType dtype);

std::ostream& operator<<(std::ostream& out, DType dtype);

// DTypeOf<T>::value maps a C++ element type to its DType (half types have no C++ type here).
template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kFloat32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::kFloat64;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::kInt32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::kInt64;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::kUInt8;
};

}  // namespace mxlite
