// What softmax, log_softmax (ops/softmax.cc) and SoftmaxOutput (ops/softmax_output.cc) read from
// their attributes, shared by their CPU and GPU kernels (ops/cuda/softmax_gpu.cc,
// ops/cuda/softmax_output_gpu.cc): the data seen as (outer, length, inner) around the axis
// normalised over, and the temperature.
#pragma once

#include <cstdint>
#include <string>

#include "core/shape.h"
#include "ops/attributes.h"

namespace mxlite {

// Element (o, l, i) of the data is at (o * length + l) * inner + i; the softmax runs over l.
struct SoftmaxExtent {
  int64_t outer = 1, length = 1, inner = 1;
};

// softmax / log_softmax: around `axis` (negative counts from the end); an error naming `owner`
// when it is out of range for `data`.
SoftmaxExtent SoftmaxAroundAxis(const Attributes& attrs, const Shape& data,
                                const std::string& owner);
// The `temperature` (1 when absent); 0 is an error naming `owner`.
double SoftmaxTemperature(const Attributes& attrs, const std::string& owner);

// SoftmaxOutput: the classes are every dim but the first, dim 1 with multi_output, the last with
// preserve_shape; data of fewer than 2 dims is an error naming `owner`.
SoftmaxExtent SoftmaxOutputClasses(const Attributes& attrs, const Shape& data,
                                   const std::string& owner);

}  // namespace mxlite
