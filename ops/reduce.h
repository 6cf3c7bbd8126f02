// The reductions sum, mean, max, min and prod (MXNet's names and attributes; ONNX's ReduceSum,
// ReduceMean, ReduceMax, ReduceMin and ReduceProd import to them): what their attributes mean,
// shared by the CPU kernels (ops/reduce.cc) and the GPU kernels (ops/cuda/reduce_gpu.cc).
//
//   axis      the axes reduced; negative counts from the end; () (the default) reduces all
//   keepdims  keep each reduced axis with extent 1 (default false: drop it; every axis
//             dropped leaves a scalar, shape ())
//   exclude   reduce every axis but those in `axis`
//
// A reduction over no element (an extent-0 reduced axis) gives sum 0, mean NaN, prod 1, and is
// an error for max and min. Backward: sum and mean spread dy over each group (mean divided by the
// group's size); max and min give dy to every element equal to the result (ties all get it,
// MXNet's rule); prod gives each element dy times the product of the others in its group (exact
// with zeros).
#pragma once

#include <string>
#include <vector>

#include "core/shape.h"
#include "ops/attributes.h"

namespace mxlite {

enum class Reduction { kSum, kMean, kMax, kMin, kProd };

const char* ReductionName(Reduction reduction);  // "sum", "mean", ...

// One node's reduction of a tensor of shape `data`.
struct ReducedAxes {
  std::vector<bool> reduced;  // per data axis
  Shape kept_dims;            // data's shape with every reduced axis at extent 1
  Shape output;               // the op's output: kept_dims, or without the reduced axes
  int64_t group = 1;          // elements reduced into each output element
};

// The reduction `attrs` ask of `data`; an error naming `owner` ("mean m1") for an axis out of
// range or named twice.
ReducedAxes ReducedAxesOf(const Attributes& attrs, const Shape& data, const std::string& owner);

// What a sum of the group is scaled by: 1 / group for the mean (NaN for an empty group, as
// NumPy's mean of nothing), 1 for the others.
double ReductionScale(Reduction reduction, int64_t group);

}  // namespace mxlite
