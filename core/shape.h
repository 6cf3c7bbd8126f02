// Shape: the extents of a tensor, 0 to kMaxDims (6) dimensions, stored inline (no allocation).
// A 0-dim shape is a scalar with one element. Extents are non-negative; a 0 extent means an empty
// tensor. Constructing a shape with too many dims or a negative extent throws mxlite::Error.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

namespace mxlite {

class Shape {
 public:
  static constexpr int kMaxDims = 6;

  Shape() = default;  // scalar
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(const std::vector<int64_t>& dims);

  int ndim() const { return ndim_; }
  int64_t operator[](int axis) const { return dims_[CheckAxis(axis)]; }
  int64_t& operator[](int axis) { return dims_[CheckAxis(axis)]; }
  // Negative axes count from the end, as in NumPy: dim(-1) is the last extent.
  int64_t dim(int axis) const;

  // Number of elements: the product of extents (1 for a scalar).
  int64_t size() const;
  // Product of extents in [begin, end).
  int64_t size(int begin, int end) const;

  std::vector<int64_t> to_vector() const { return {dims_.begin(), dims_.begin() + ndim_}; }
  // "(64,1,28,28)"; a scalar prints as "()".
  std::string ToString() const;

  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }

 private:
  int CheckAxis(int axis) const;

  int ndim_ = 0;
  std::array<int64_t, kMaxDims> dims_{};
};

std::ostream& operator<<(std::ostream& out, const Shape& shape);

}  // namespace mxlite
