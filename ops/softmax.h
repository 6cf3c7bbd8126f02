// What softmax and log_softmax (ops/softmax.cc) read from their attributes, shared by their CPU
// and GPU kernels (ops/cuda/softmax_gpu.cc): the data seen as (outer, length, inner) around the
// axis normalised over, and the temperature. SoftmaxOutput's are in ops/softmax_output.h.
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

}  // namespace mxlite
