// What gather_elements' CPU kernels (ops/gather_elements.cc) and GPU kernels
// (ops/cuda/gather_elements_gpu.cc) share besides ops/index_values.h (the axis, and the flat offset
// into data of each output element, computed from the indices on the host, where a bad index is
// an error naming the node on either device).
#pragma once

#include <cstdint>
#include <string>

namespace mxlite {

// "gather_elements NODE", for errors.
std::string GatherElementsOwner(const std::string& node);

}  // namespace mxlite
