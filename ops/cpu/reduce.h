// CPU kernels of the reductions (ops/reduce.h): a tensor is seen as runs of consecutive axes that
// are all reduced or all kept, merged (NCHW over (2,3) is 2 runs: N*C kept, H*W reduced), so the
// common cases are one pass over (outer, reduced, inner): a contiguous row per output (inner 1,
// the global pools, LayerNorm's statistics) or rows of `inner` accumulated element-wise (a
// reduction over the channels). More reduced runs take one pass each, innermost first. Work runs
// on the intra-op threads; a few long rows (a global reduction) are split along the rows.
#pragma once

#include <cstdint>
#include <vector>

#include "core/shape.h"

namespace mxlite::cpu {

enum class ReduceKind { kSum, kMax, kMin, kProd };

struct ReduceRuns {
  std::vector<int64_t> extents;  // outermost first
  std::vector<bool> reduced;
  int64_t group = 1;  // elements per output (the reduced runs' product)
};

// `shape`'s axes merged into runs (axes of extent 1 join either neighbour).
ReduceRuns MergeRuns(const Shape& shape, const std::vector<bool>& reduced);

// y = scale * reduce(x) over the reduced runs (scale applies to kSum only: the mean).
template <typename T>
void Reduce(ReduceKind kind, const ReduceRuns& runs, const T* x, T* y, double scale);

// dx from dy (one per output): kSum: scale * dy; kMax / kMin: dy where x equals the output y,
// else 0; kProd: dy times the product of the other elements of the group (exact with zeros).
template <typename T>
void ReduceBackward(ReduceKind kind, const ReduceRuns& runs, const T* x, const T* y, const T* dy,
                    T* dx, double scale);

}  // namespace mxlite::cpu
