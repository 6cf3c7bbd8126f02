// The geometry of tril / triu (ops/triangle.cc), shared by the CPU and GPU kernels
// (ops/cuda/triangle_gpu.cc): which columns of each row of each matrix stay.
#pragma once

#include <cstdint>
#include <string>

#include "core/shape.h"
#include "ops/attributes.h"

namespace mxlite {

struct TriangleMask {
  int64_t matrices = 1;  // the product of the axes before the last two
  int64_t rows = 0, columns = 0;
  int64_t k = 0;       // the diagonal
  bool upper = false;  // triu; else tril

  // Row `row` keeps columns [KeptBegin, KeptEnd) and zeroes the rest; an empty range when it
  // keeps none.
  int64_t KeptBegin(int64_t row) const;
  int64_t KeptEnd(int64_t row) const;
};

// The mask of a tril (upper = false) or triu node with attributes `attrs` over `data`. Throws
// mxlite::Error naming `owner` when data has fewer than two axes.
TriangleMask TriangleMaskOf(const Attributes& attrs, bool upper, const Shape& data,
                            const std::string& owner);

// "tril NODE" or "triu NODE", for errors.
std::string TriangleOwner(bool upper, const std::string& node);

}  // namespace mxlite
