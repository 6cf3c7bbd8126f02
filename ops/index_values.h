// Integer values read from tensors that hold indices or class labels (nll_loss's labels,
// gather_elements' indices): int32 and int64 as they are, and floating ones (MXNet's labels, and
// what the op test harness feeds) when they hold an integer. Host memory only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ops/tensor.h"

namespace mxlite {

// Element `i` of `values` as an integer. Throws mxlite::Error naming `owner`, `what` ("label",
// "index") and the flat position for a floating value that is not an integer, and for a dtype
// that holds none (float16, uint8 are refused too: no index is written in them).
int64_t IntegerValueAt(const TensorView& values, size_t i, const std::string& owner,
                       const char* what);

}  // namespace mxlite
