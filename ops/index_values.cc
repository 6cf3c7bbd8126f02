#include "ops/index_values.h"

#include <cmath>
#include <vector>

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

int ElementIndexAxis(const Attributes& attrs, const Shape& data, const Shape& index,
                     const std::string& owner, const char* verb) {
  MX_CHECK(data.ndim() >= 1) << owner << ": data is a scalar; it needs at least one axis";
  MX_CHECK(index.ndim() == data.ndim()) << owner << ": index has shape " << index << " but data "
                                        << data << "; both need the same rank";
  const int64_t axis = attrs.GetInt("axis");
  MX_CHECK(axis >= -data.ndim() && axis < data.ndim())
      << owner << ": axis " << axis << " is outside [" << -data.ndim() << ", " << data.ndim()
      << ") for data " << data;
  const int normalized = static_cast<int>(axis < 0 ? axis + data.ndim() : axis);
  for (int d = 0; d < data.ndim(); ++d) {
    MX_CHECK(d == normalized || index[d] <= data[d])
        << owner << ": index has shape " << index << " but data " << data << ": on axis " << d
        << " (not the " << verb << " one) index may not pass data's extent";
  }
  return normalized;
}

std::vector<int64_t> ElementIndexOffsets(const TensorView& index, const Shape& data, int axis,
                                         const std::string& owner) {
  const int rank = data.ndim();
  std::vector<int64_t> data_strides(static_cast<size_t>(rank), 1);
  for (int d = rank - 2; d >= 0; --d) data_strides[d] = data_strides[d + 1] * data[d + 1];
  const int64_t extent = data[axis];
  std::vector<int64_t> offsets(static_cast<size_t>(index.size()));
  std::vector<int64_t> coordinate(static_cast<size_t>(rank), 0);  // of the current element
  for (size_t i = 0; i < offsets.size(); ++i) {
    int64_t value = IntegerValueAt(index, i, owner, "index");
    MX_CHECK(value >= -extent && value < extent)
        << owner << ": index " << value << " at flat position " << i << " is outside [" << -extent
        << ", " << extent << ") (axis " << axis << " of data " << data << ")";
    if (value < 0) value += extent;
    int64_t offset = 0;
    for (int d = 0; d < rank; ++d) offset += (d == axis ? value : coordinate[d]) * data_strides[d];
    offsets[i] = offset;
    for (int d = rank - 1; d >= 0; --d) {  // the next element of index, row-major
      if (++coordinate[d] < index.shape[d]) break;
      coordinate[d] = 0;
    }
  }
  return offsets;
}

}  // namespace mxlite
