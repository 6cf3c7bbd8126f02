// What Gemm (ops/gemm_op.cc) reads from its attributes, shared by its CPU and GPU kernels
// (ops/cuda/gemm_op_gpu.cc).
#pragma once

#include <cstdint>

#include "core/shape.h"
#include "ops/attributes.h"

namespace mxlite {

// Y (M, N) = op(A) (M, K) * op(B) (K, N), op transposing A under transA and B under transB.
struct GemmSizes {
  int64_t m, n, k;
};
// The sizes of matrices `a` and `b` (2-D, as shape inference checks).
GemmSizes GemmSizesOf(const Attributes& attrs, const Shape& a, const Shape& b);

}  // namespace mxlite
