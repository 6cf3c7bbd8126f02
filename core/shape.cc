#include "core/shape.h"

#include <sstream>

#include "core/error.h"

namespace mxlite {

Shape::Shape(std::initializer_list<int64_t> dims) : Shape(std::vector<int64_t>(dims)) {}

Shape::Shape(const std::vector<int64_t>& dims) {
  MX_CHECK(dims.size() <= static_cast<size_t>(kMaxDims))
      << "a shape has at most " << kMaxDims << " dimensions, got " << dims.size();
  for (size_t i = 0; i < dims.size(); ++i) {
    MX_CHECK(dims[i] >= 0) << "extent " << i << " of a shape is negative (" << dims[i] << ")";
    dims_[i] = dims[i];
  }
  ndim_ = static_cast<int>(dims.size());
}

int Shape::CheckAxis(int axis) const {
  MX_CHECK(axis >= 0 && axis < ndim_)
      << "axis " << axis << " out of range for shape " << ToString() << " (" << ndim_ << " dims)";
  return axis;
}

int64_t Shape::dim(int axis) const { return (*this)[axis < 0 ? axis + ndim_ : axis]; }

int64_t Shape::size() const { return size(0, ndim_); }

int64_t Shape::size(int begin, int end) const {
  MX_CHECK(0 <= begin && begin <= end && end <= ndim_)
      << "dimension range [" << begin << ", " << end << ") out of range for shape " << ToString();
  int64_t product = 1;
  for (int i = begin; i < end; ++i) product *= dims_[i];
  return product;
}

std::string Shape::ToString() const {
  std::ostringstream out;
  out << "(";
  for (int i = 0; i < ndim_; ++i) out << (i ? "," : "") << dims_[i];
  out << ")";
  return out.str();
}

bool Shape::operator==(const Shape& other) const {
  if (ndim_ != other.ndim_) return false;
  for (int i = 0; i < ndim_; ++i) {
    if (dims_[i] != other.dims_[i]) return false;
  }
  return true;
}

std::ostream& operator<<(std::ostream& out, const Shape& shape) { return out << shape.ToString(); }

}  // namespace mxlite
