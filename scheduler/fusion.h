// Inference fusion of clamping activations into the convolution before them.
//
// A Convolution whose output is read only by a relu or a clip takes that activation into its own
// output store (act_min / act_max, ops/conv_attributes.h: every kernel clamps as it writes), and
// the activation node goes away; whatever read the activation reads the convolution instead.
// This is ONNX Runtime's Conv+Relu / Conv+Clip fusion and oneDNN's eltwise post-op: the separate
// pass read the whole output back and wrote it again (8% of MobileNet-V2's time on the CPU).
//
//   Activation(act_type=relu)   ->  act_min=0
//   clip(a_min, a_max)          ->  act_min=a_min, act_max=a_max (an absent bound stays absent)
//
// Fused when: the convolution's output is read by exactly that one input of that one node and is
// not a graph output; the activation's output is not a graph output either (so the graph's
// outputs keep their names); the convolution has no act_min / act_max yet. The fused node keeps
// the convolution's name, so tuning-DB keys and reports do not change; the activation's name is
// in the result.
//
// Inference only: a fused convolution has no backward (ops/convolution.cc refuses it), so
// executors bound for training never call this. The executor runs it on CPU executors when
// MXNET_CONV_FUSE_ACTIVATION is on (the default), before convolution layout planning.
// Pure function: `graph` is not changed.
#pragma once

#include <string>
#include <vector>

#include "scheduler/graph.h"

namespace mxlite {

struct FusedActivation {
  std::string convolution;  // the node that now clamps its output
  std::string activation;   // the node folded into it
  std::string clamp;        // "relu", "clip [0, 6]", "clip [-inf, 1]"
};

struct FusionResult {
  Graph graph;
  std::vector<FusedActivation> fused;  // in graph order
};

FusionResult FuseConvolutionActivations(const Graph& graph);

// "fused 35 activations into convolutions (MXNET_CONV_FUSE_ACTIVATION)" and, with `per_layer`,
// one line per pair: "  conv1 <- relu1 (relu)".
std::string FormatFusions(const std::vector<FusedActivation>& fused, bool per_layer);

}  // namespace mxlite
