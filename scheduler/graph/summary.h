// A readable summary of a graph, like Keras' model.summary(): one line per op node with its
// output shape and parameter count, then the totals.
//
//   Layer (type)                 Output shape          Params
//   conv0 (Convolution)          (64,32,28,28)         832
//   ...
//   Total parameters: 3,274,634
#pragma once

#include <string>

#include "scheduler/graph/graph.h"
#include "scheduler/graph/infer_shapes.h"

namespace mxlite {

std::string GraphSummary(const Graph& graph, const GraphShapes& shapes);
// Number of learned parameter values (parameter variables only, not auxiliary states).
int64_t CountParameters(const Graph& graph, const GraphShapes& shapes);

}  // namespace mxlite
