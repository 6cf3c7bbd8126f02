// What Concat (ops/concat.cc) reads from its attributes, shared by its CPU and GPU kernels
// (ops/cuda/concat_gpu.cc).
#pragma once

#include <string>
#include <vector>

#include "ops/attributes.h"
#include "ops/operator.h"

namespace mxlite {

// The axis `dim` names in tensors of `ndim` dims (a negative dim counts from the end). Shape
// inference checks that it is in range.
int ConcatAxisOf(const Attributes& attrs, int ndim);

// The names of the joined inputs: arg0 .. arg<num_args - 1>.
std::vector<std::string> ConcatArgNames(const Attributes& attrs);

// The joined shape from inputs 0 .. num_args - 1 into output 0 (other inputs and outputs
// untouched); errors name the op, the node and the input that does not fit.
void ConcatInferShape(const Attributes& attrs, ShapeInference& shapes);

}  // namespace mxlite
