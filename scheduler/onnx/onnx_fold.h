// Folding at import: an ONNX node whose every input is known at load is computed then, by the
// mxlite nodes its converter emitted for it, with mxlite's own CPU kernels, and its outputs become
// constants; so shape arithmetic and transforms of initialisers that exporters write need no
// converter of its own to fold (onnx_import.h). Folded values are what mxlite's CPU kernels
// compute (the heuristic's algorithm where an op has several, e.g. a convolution).
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "scheduler/graph/graph.h"
#include "scheduler/onnx/onnx_tensor.h"

namespace mxlite {

// The values of `outputs`, computed by running the op nodes of `graph` from id `first` on in
// order, each variable they read taken from `known` (null: not known at load). nullopt, leaving
// the nodes to run with the model, when a value they read is not known, an output would hold more
// than `max_elements`, an op has no CPU kernel, or shape inference or a kernel refuses (then the
// error is the model's to raise at bind or run, naming the node, not the importer's).
std::optional<std::vector<HostTensor>> EvaluateAtLoad(
    const Graph& graph, int first, const std::vector<NodeEntry>& outputs,
    const std::function<const HostTensor*(int variable)>& known, int64_t max_elements);

}  // namespace mxlite
