// Device-generic fills and copies of tensor views, for the executor's bookkeeping steps (zeroing a
// gradient, seeding head gradients, copying a given array into a planned buffer).
// `stream` is the engine's RunContext::stream (a cudaStream_t for GPU views); GPU work is
// enqueued on it, and the engine synchronises the stream when the op ends.
#pragma once

#include "ops/tensor.h"

namespace mxlite {

// Sets every element of `view` (float32, float64 or float16) to `value`.
void FillTensor(const TensorView& view, double value, void* stream);
// Copies `from` into `to` (same byte size; any devices).
void CopyTensor(const TensorView& from, const TensorView& to, void* stream);

}  // namespace mxlite
