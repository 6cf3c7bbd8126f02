// Inference fusion of clamping activations into the op before them.
//
// A node whose op takes a clamp (OpDef::fusion.takes_clamp: Convolution, BatchNorm) and whose
// output is read only by a relu or a clip takes that activation into its own output store
// (act_min / act_max, ops/output_clamp.h: every kernel clamps as it writes), and the activation
// node goes away; whatever read the activation reads the producer instead. This is ONNX Runtime's
// Conv+Relu / Conv+Clip fusion and oneDNN's eltwise post-op: the separate pass read the whole
// output back and wrote it again (8% of MobileNet-V2's time on the CPU; DenseNet's BatchNorm +
// ReLU before every convolution).
//
//   Activation(act_type=relu)   ->  act_min=0
//   clip(a_min, a_max)          ->  act_min=a_min, act_max=a_max (an absent bound stays absent)
//
// Fused when: the producer's first output is read by exactly that one input of that one node and
// is not a graph output; the activation's output is not a graph output either (so the graph's
// outputs keep their names); the producer has no act_min / act_max yet. The fused node keeps the
// producer's name, so tuning-DB keys and reports do not change; the activation's name is in the
// result.
//
// Inference only: a fused node has no backward (the ops refuse it), so executors bound for
// training never call this. The executor runs it on inference executors of
// either device when MXNET_CONV_FUSE_ACTIVATION is on (the default), before convolution layout
// planning (on the GPU the clamp joins the bias in one kernel after cuDNN's: one engine step
// fewer, which is what batch-1 passes are bound by).
// Pure function: `graph` is not changed.
#pragma once

#include <string>
#include <vector>

#include "scheduler/graph/graph.h"
#include "scheduler/graph/infer_shapes.h"

namespace mxlite {

struct FusedActivation {
  std::string producer;     // the node that now clamps its output (a Convolution, a BatchNorm)
  std::string activation;   // the node folded into it
  std::string clamp;        // "relu", "clip [0, 6]", "clip [-inf, 1]"
};

struct FusionResult {
  Graph graph;
  std::vector<FusedActivation> fused;  // in graph order
};

FusionResult FuseClampActivations(const Graph& graph);

// "fused 35 activations into the ops before them (MXNET_CONV_FUSE_ACTIVATION)" and, with
// `per_layer`, one line per pair: "  conv1 <- relu1 (relu)".
std::string FormatFusions(const std::vector<FusedActivation>& fused, bool per_layer);

// ---- Depthwise blocks --------------------------------------------------------------------------
//
// A depthwise Convolution (NHWC, num_group == num_filter == its input channels, 2-D, float32)
// takes in the 1x1 Convolution that alone feeds it (the expansion) and the 1x1 Convolution that
// alone reads it (the projection), NHWC with stride 1, no padding and one group each, when at
// least one of them is there and the rule (DepthwiseFusionRule) says the block pays: one
// _fused_depthwise_block node (ops/depthwise_block.cc) that walks
// the rows so the tensors between them stay in cache (MobileNet-V2's blocks; ops/cpu/
// depthwise_block.h). Each stage keeps its bias and fused clamp (run FuseClampActivations
// first). The fused node keeps the depthwise convolution's name; whatever read the last stage
// reads it. A convolution whose output is also read elsewhere or is a graph output is not taken
// in. Runs after layout planning (the layouts decide what is NHWC); the executor calls it on CPU
// inference executors when MXNET_CONV_FUSE_DEPTHWISE is on (the default).
// Pure function: `graph` is not changed.

struct FusedDepthwiseBlock {
  std::string expand;     // the 1x1 convolution before, or empty
  std::string depthwise;  // the fused node's name
  std::string project;    // the 1x1 convolution after, or empty
  bool operator==(const FusedDepthwiseBlock&) const = default;
  // The stages in order, an absent expansion or projection left out.
  std::vector<std::string> Stages() const {
    std::vector<std::string> stages;
    for (const std::string* name : {&expand, &depthwise, &project}) {
      if (!name->empty()) stages.push_back(*name);
    }
    return stages;
  }
};

struct DepthwiseFusionResult {
  Graph graph;
  std::vector<FusedDepthwiseBlock> blocks;  // in graph order
};

// Which blocks fuse. A block the convolution planner measured (the same three stages) follows
// the measurement; any other fuses when the larger tensor between the stages it takes in holds at
// least `min_intermediate_bytes` (ops/cpu/depthwise_block.h says from where fusing pays unmeasured;
// 0: every block, as the planner lists the blocks it measures).
struct DepthwiseFusionRule {
  size_t min_intermediate_bytes = 0;
  std::vector<FusedDepthwiseBlock> measured_faster_fused;
  std::vector<FusedDepthwiseBlock> measured_slower_fused;  // kept apart
};

DepthwiseFusionResult FuseDepthwiseBlocks(const Graph& graph, const GraphShapes& shapes,
                                          const DepthwiseFusionRule& rule);

// "fused 17 depthwise blocks (MXNET_CONV_FUSE_DEPTHWISE)" and, with `per_layer`, one line per
// block: "  conv2_1x1 -> conv2_dw -> conv2_project".
std::string FormatDepthwiseBlocks(const std::vector<FusedDepthwiseBlock>& blocks, bool per_layer);

// ---- Residual additions -------------------------------------------------------------------------
//
// An addition (elemwise_add, or broadcast_add of two equal shapes) of a Convolution's output and
// another value x of the same shape and element type becomes the convolution's own: the
// convolution gains the input `residual` = x (attribute residual=true, ops/convolution.cc) and adds
// it as it stores its output, then clamps; the addition node goes away and its readers read the
// convolution. This is oneDNN's sum post-op and ONNX Runtime's Conv+Add fusion: the separate
// addition read both tensors back and wrote a third (ResNet's and MobileNet-V2's shortcuts). A
// depthwise block with a projection (_fused_depthwise_block, above) takes an addition to its
// output the same way: its projection adds it (MobileNet-V2's shortcuts at 56x56 follow blocks).
//
// Fused when: the convolution's output is read by that addition alone and is not a graph output,
// the addition's output is not a graph output, and the convolution has no fused activation yet
// (clamp(conv) + x is not clamp(conv + x)) nor a residual (a block: no project_act_min / _max).
// Either operand may be the convolution; with two, the first. The fused node keeps the
// convolution's name and goes where the addition was (x is defined by then). Run the activation
// fusion again afterwards: a relu after the addition (ResNet) then joins the same store. The values
// are the bits of the separate addition.
//
// Inference only (the fused convolution has no backward): the executor runs it after layout
// planning and the depthwise-block fusion (the addition's operands are in one layout by then) on
// inference executors of either device when MXNET_CONV_FUSE_RESIDUAL is on (the default). Pure
// function: `graph` is not changed.

struct FusedResidual {
  std::string convolution;  // the node that now adds the residual (a Convolution or a block)
  std::string addition;     // the node folded into it
};

struct ResidualFusionResult {
  Graph graph;
  std::vector<FusedResidual> fused;  // in graph order
};

ResidualFusionResult FuseResidualAdditions(const Graph& graph, const GraphShapes& shapes);

// "fused 8 residual additions into convolutions (MXNET_CONV_FUSE_RESIDUAL)" and, with `per_layer`,
// one line per pair: "  conv2b <- add2".
std::string FormatResidualFusions(const std::vector<FusedResidual>& fused, bool per_layer);

// ---- Bias additions ---------------------------------------------------------------------------
//
// An addition (an op with FusionTraits::adds) of a node's output and a vector along that output's
// last axis — shape (N) or (1, ..., 1, N), of at most the output's rank, the same element type —
// becomes the node's own, where the node's op says it can take one (FusionTraits::takes_bias:
// MatMul with B of two or more axes): the node gains the input `bias` (attribute bias=true) and
// adds it as it stores its output; the addition node goes away and its readers read the node. This
// is how exporters write a Linear layer on a 3-D or 4-D activation (PyTorch: MatMul then Add;
// ViT, Swin, ConvNeXt), and ONNX Runtime's MatMul+Add fusion: the separate addition read the
// product back and wrote it again. The values are the bits of the separate addition.
//
// Fused when: the node's output is read by that addition alone and is not a graph output, and the
// addition's output is not a graph output. Either operand may be the product; with two, the first.
// The fused node keeps its own name and goes where the addition was (the vector is defined by
// then). Training too (MatMul's bias has a gradient: dY summed over the rows). The executor runs
// it on executors of either device when MXNET_FUSE_BIAS is on (the default), once the graph's
// shapes are known. Pure function: `graph` is not changed.

struct FusedBias {
  std::string product;   // the node that now adds the bias
  std::string addition;  // the node folded into it
};

struct BiasFusionResult {
  Graph graph;
  std::vector<FusedBias> fused;  // in graph order
};

BiasFusionResult FuseBiasAdditions(const Graph& graph, const GraphShapes& shapes);

// "fused 48 bias additions into their products (MXNET_FUSE_BIAS)" and, with `per_layer`, one line
// per pair: "  /blocks.0/mlp/fc1/MatMul <- /blocks.0/mlp/fc1/Add".
std::string FormatBiasFusions(const std::vector<FusedBias>& fused, bool per_layer);

// ---- Concat + BatchNorm
// --------------------------------------------------------------------------
//
// A BatchNorm whose data is a Concat's output, joined along the normalised axis, becomes one
// _concat_batch_norm node (ops/concat_batch_norm.cc; ops say so with LayoutTraits::
// joins_along_axis and FusionTraits::with_join): each input is normalised as it is copied
// into the join, one pass over the tensor instead of two (DenseNet's dense layers join every
// earlier feature map and normalise the join, a tensor growing through each block). The fused
// node keeps the BatchNorm's name and place; whatever read the BatchNorm reads it. The values are
// the bits of the two ops.
//
// Fused when: the Concat's output is read by that BatchNorm alone and is not a graph output; the
// BatchNorm's mean and var outputs are read by nothing; the Concat joins the BatchNorm's channel
// axis (dim == axis, in whatever layout planning gave them: NCHW16c joins channel blocks); the
// data is float32 or float64. Inference only (the fused op has no backward, and training
// normalises with batch statistics): the executor runs it after layout planning and the residual
// fusion on CPU inference executors when MXNET_FUSE_CONCAT_NORM is on (the default). Pure
// function: `graph` is not changed.

struct FusedConcatNorm {
  std::string concat;      // the node folded in
  std::string batch_norm;  // the fused node's name
};

struct ConcatNormFusionResult {
  Graph graph;
  std::vector<FusedConcatNorm> fused;  // in graph order
};

ConcatNormFusionResult FuseConcatBatchNorms(const Graph& graph, const GraphShapes& shapes);

// "fused 58 joins into the normalisations after them (MXNET_FUSE_CONCAT_NORM)" and, with
// `per_layer`, one line per pair: "  /features/denseblock1/denselayer2/norm1/BatchNormalization
// <- /features/denseblock1/denselayer2/Concat".
std::string FormatConcatNormFusions(const std::vector<FusedConcatNorm>& fused, bool per_layer);

// ---- Sigmoid gates ---------------------------------------------------------------------------
//
// x * gate(x) written as two ops becomes one node (ops/unary_math.h): x * sigmoid(x) (how
// exporters write SiLU / swish: EfficientNet, RegNet-Y) one silu, x * hard_sigmoid(x) (hard swish
// as PyTorch exports it before opset 14: MobileNet-V3 and the models built on it) one hard_swish;
// one pass over x instead of two or three. Which op a gate becomes is its op's trait
// (FusionTraits::self_gate). The product (an element-wise multiplication of a value and a gate of
// that same value, either operand order) keeps its name; the gate node goes.
//
// Fused when the sigmoid's output is read by that product alone and is not a graph output. The
// values are the bits of the two ops (silu computes sigmoid(x) and multiplies, rounding as they
// do). silu has a backward, so training executors fuse too. The executor runs it first, before
// shape inference, when MXNET_FUSE_SILU is on (the default). Pure function: `graph` is not
// changed.

struct FusedGate {
  std::string product;  // the node that is now a silu or hard_swish
  std::string gate;     // the node folded into it
};

struct GateFusionResult {
  Graph graph;
  std::vector<FusedGate> fused;  // in graph order
};

GateFusionResult FuseSigmoidGates(const Graph& graph);

// "fused 49 gates x * gate(x) into silu / hard_swish (MXNET_FUSE_SILU)" and, with `per_layer`, one
// line per pair:
// "  mul3 <- sigmoid3".
std::string FormatGateFusions(const std::vector<FusedGate>& fused, bool per_layer);

}  // namespace mxlite
