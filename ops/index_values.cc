#include "ops/index_values.h"

#include <cmath>

#include "core/error.h"

namespace mxlite {

int64_t IntegerValueAt(const TensorView& values, size_t i, const std::string& owner,
                       const char* what) {
  switch (values.dtype) {
    case DType::kInt64:
      return static_cast<const int64_t*>(values.data)[i];
    case DType::kInt32:
      return static_cast<const int32_t*>(values.data)[i];
    case DType::kFloat32:
    case DType::kFloat64: {
      const double value = values.dtype == DType::kFloat32
                               ? static_cast<double>(static_cast<const float*>(values.data)[i])
                               : static_cast<const double*>(values.data)[i];
      MX_CHECK(std::isfinite(value) && std::nearbyint(value) == value && std::abs(value) < 9.0e15)
          << owner << ": " << what << " " << value << " at flat position " << i
          << " is not an integer";
      return static_cast<int64_t>(value);
    }
    default:
      MX_THROW() << owner << ": the " << what << "s have dtype " << values.dtype
                 << "; expected int32, int64, float32 or float64";
  }
}

}  // namespace mxlite
