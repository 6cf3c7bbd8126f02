// Formulas that exporters write out node by node for an op mxlite has whole, found while importing
// and replaced by that one op (ONNX Runtime's graph fusions, done at import):
//
//   LayerNorm  ReduceMean(x, last axis) -> Sub(x, mean) -> Pow(2) -> ReduceMean -> Add(eps) ->
//              Sqrt -> Div(x - mean, std) [-> Mul(gamma)] [-> Add(beta)]
//              (torch.nn.functional.layer_norm as PyTorch exports it before opset 17)
//   gelu       Div(x, sqrt 2) or Mul(x, 1 / sqrt 2) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5)
//              (the exact GELU as PyTorch and Transformers export it before opset 20)
//   Pooling    Pad(zeros around the spatial axes, the same on both sides) -> AveragePool(no pads
//              of its own, floor rounding): one average pooling whose window counts the padding
//              (avg_pool2d(padding=p) with count_include_pad=True as PyTorch exports it)
//
// A formula is replaced only as a whole: each value inside it is read by the formula alone and is
// no graph output, its constants are the ones the op stands for (gamma and beta known at load, one
// per element of the normalised axis), so the model computes the same function, to rounding. The
// search starts at each node as the importer reaches it (in topological order, so the formula's
// other nodes come later and are skipped); shapes and constants of what came before are known.
//
// MXNET_ONNX_FUSE_FORMULAS=0 (or ImportOptions::fuse_formulas) turns the search off.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"  // defines ONNX_API, then includes onnx/onnx-ml.pb.h
#include "scheduler/onnx/onnx_converter.h"

namespace mxlite {

// Who reads each value of an ONNX graph.
class OnnxGraphIndex {
 public:
  explicit OnnxGraphIndex(const onnx::GraphProto& graph);
  const onnx::GraphProto& graph() const { return graph_; }
  const onnx::NodeProto& node(int index) const { return graph_.node(index); }
  // The one node reading `value` (once), or -1 when none or several do or it is a graph output.
  int SoleConsumer(const std::string& value) const;
  // Every node reading `value`, once per input that reads it.
  const std::vector<int>& Consumers(const std::string& value) const;
  bool IsGraphOutput(const std::string& value) const { return outputs_.count(value) > 0; }

 private:
  const onnx::GraphProto& graph_;
  std::map<std::string, std::vector<int>> consumers_;
  std::set<std::string> outputs_;
};

// If a formula starts at node `index`, adds its op to the graph through `values`, defines the
// value its last node defines, adds the indices of its nodes to `replaced` and returns true.
bool FuseFormulaAt(int index, const OnnxGraphIndex& graph, OnnxValues& values,
                   std::set<int>& replaced);

}  // namespace mxlite
