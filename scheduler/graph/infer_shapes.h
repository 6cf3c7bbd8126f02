// Shape and dtype inference over a whole graph.
//
// Input variables carry their declared shapes (or the overrides given, e.g. a new batch size);
// each op node's inference then fixes its outputs and any parameter shapes it determines
// ("conv0_weight" from the data's channels, num_filter and kernel). One pass in topological
// order suffices because every node's inputs come before it. A mismatch is an mxlite::Error that
// names the node, the op and both shapes; an input without a shape is an error naming it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "scheduler/graph/graph.h"

namespace mxlite {

struct GraphShapes {
  std::vector<std::vector<Shape>> shapes;  // [node][output]
  std::vector<std::vector<DType>> dtypes;  // [node][output]

  const Shape& of(NodeEntry entry) const { return shapes.at(entry.node).at(entry.index); }
  DType dtype_of(NodeEntry entry) const { return dtypes.at(entry.node).at(entry.index); }
};

GraphShapes InferGraphShapes(const Graph& graph,
                             const std::map<std::string, Shape>& input_shapes = {});

}  // namespace mxlite
