// What transpose (ops/transpose.cc) reads from its attributes, shared by its CPU and GPU kernels
// (ops/cuda/transpose_gpu.cc).
#pragma once

#include <string>
#include <vector>

#include "ops/attributes.h"

namespace mxlite {

// The permutation `axes` asks of an input of `ndim` dims: output axis i is input axis result[i];
// empty `axes` reverses them; negative axes count from the end. An error naming `owner` when it
// is not a permutation of ndim axes.
std::vector<int> TransposePermutation(const Attributes& attrs, int ndim, const std::string& owner);

}  // namespace mxlite
