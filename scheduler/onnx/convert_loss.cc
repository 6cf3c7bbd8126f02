// ONNX losses: NegativeLogLikelihoodLoss (mxlite's nll_loss) and SoftmaxCrossEntropyLoss
// (log_softmax over the class axis, then nll_loss; its optional second output is the
// log-probabilities). Both take reduction (none, sum, mean; default mean), an optional
// ignore_index and optional per-class weights (a third input).
#include "scheduler/onnx/onnx_converter.h"

#include <string>
#include <vector>

#include "core/error.h"

namespace mxlite {
namespace {

// The nll_loss node of `node` over `log_probabilities`, its labels and weights read from inputs 1
// and 2.
NodeEntry EmitNllLoss(OnnxNode& node, NodeEntry log_probabilities) {
  const std::string reduction = node.attrs().String("reduction", "mean");
  MX_CHECK(reduction == "none" || reduction == "sum" || reduction == "mean")
      << node.where() << ": reduction '" << reduction << "'; expected none, sum or mean";
  const bool use_weight = node.has_input(2);
  AttrText attrs = {{"reduction", reduction}, {"use_weight", use_weight ? "true" : "false"}};
  if (node.attrs().Has("ignore_index")) {
    attrs["ignore_index"] = std::to_string(node.attrs().Int("ignore_index", 0));
  }
  std::vector<NodeEntry> inputs = {log_probabilities, node.Input(1)};
  if (use_weight) inputs.push_back(node.Input(2));
  return node.Emit("nll_loss", attrs, inputs);
}

void ConvertNegativeLogLikelihoodLoss(OnnxNode& node) {
  node.SetOutput(0, EmitNllLoss(node, node.Input(0)));
}

void ConvertSoftmaxCrossEntropyLoss(OnnxNode& node) {
  const NodeEntry log_probabilities =
      node.Emit("log_softmax", {{"axis", "1"}}, {node.Input(0)}, "_log_prob");
  node.SetOutput(0, EmitNllLoss(node, log_probabilities));
  if (node.num_outputs() > 1) node.SetOutput(1, log_probabilities);
}

}  // namespace

MXLITE_REGISTER_ONNX_CONVERTER(NegativeLogLikelihoodLoss, 12, kMaxOnnxOpset,
                               ConvertNegativeLogLikelihoodLoss);
MXLITE_REGISTER_ONNX_CONVERTER(SoftmaxCrossEntropyLoss, 12, kMaxOnnxOpset,
                               ConvertSoftmaxCrossEntropyLoss);

}  // namespace mxlite
