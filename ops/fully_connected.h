// What FullyConnected (ops/fully_connected.cc) reads from its attributes, shared by its CPU and GPU
// kernels (ops/cuda/fully_connected_gpu.cc).
#pragma once

#include <cstdint>
#include <string>

#include "core/shape.h"
#include "ops/attributes.h"

namespace mxlite {

// The data as a (rows x inner) matrix: with flatten (N, d1 * ... * dk), without it
// (d0 * ... * d(k-1), dk).
struct FullyConnectedMatrix {
  int64_t rows, inner;
};
// An error naming `owner` ("FullyConnected fc1") when data has no axis.
FullyConnectedMatrix FullyConnectedMatrixOf(const Attributes& attrs, const Shape& data,
                                            const std::string& owner);

}  // namespace mxlite
