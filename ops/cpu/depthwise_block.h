// A MobileNet-style block in one pass over its rows: an optional 1x1 expansion, a depthwise
// convolution, an optional 1x1 projection, all NHWC float32, each stage with its bias and clamp.
//
//   data (N, H, W, Cin) -> [expand: 1x1, Cin -> C] -> depthwise KHxKW on C channels
//                       -> [project: 1x1, C -> Cout] -> output (N, OH, OW, Cout)
//
// Run as separate convolutions, the expanded tensor (MobileNet-V2 at 112x112: 4.8 MB) and the
// depthwise output go out of L2 to L3 or memory and come back: these layers are bound by that
// traffic, not by arithmetic. Here each thread takes a run of output rows and walks it in bands of
// a few rows: the expansion computes just the input rows the band's depthwise windows need into a
// small ring of rows (a row shared with the band before is kept, not computed again), the
// depthwise reads that ring, its band of output rows goes straight into the projection. The
// intermediates live in a per-thread workspace of a few hundred KB that stays in L2. Rows at the
// edge between two threads' runs are expanded by both.
//
// Results: the 1x1 stages are Sgemm calls (ops/cpu/gemm.h; a packed weight when given) and the
// depthwise rows DepthwiseRowNhwc (ops/cpu/depthwise_rows.h), so each element is summed in the
// same order as by the separate gemm_1x1 and depthwise_direct NHWC kernels on the AVX2 path; the
// values equal theirs to rounding in the last bits (the GEMM's row blocking may differ) and do not
// depend on the thread count beyond that.
// Thread safety: reentrant; writes only `output` and its scratch.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ops/cpu/epilogue.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/im2col.h"
#include "ops/tensor.h"

namespace mxlite::cpu {

struct DepthwiseBlockGeometry {
  // The depthwise convolution: NHWC (channels_last), groups == in_channels == out_channels; its
  // batch and input extent are the block's.
  ConvGeometry depthwise;
  bool expand = false;       // a 1x1 expansion before it
  bool project = false;      // a 1x1 projection after it
  int64_t in_channels = 0;   // the block's input channels (== depthwise.in_channels without expand)
  int64_t out_channels = 0;  // the block's output (== depthwise.out_channels without project)
};

// A 1x1 stage: out (pixels x n) = epilogue(in (pixels x k) * W^T), W stored (n, k) row-major
// (the OHWI weight of a 1x1 convolution); epilogue = its column bias and clamp.
struct PointwiseStage {
  const float* weight = nullptr;
  const PackedGemmOperand* packed = nullptr;  // W^T packed as Sgemm's B (k x n), or null
  Epilogue<float> epilogue;
};

struct DepthwiseStage {
  const float* by_tap = nullptr;  // the weight as (KH*KW, C): DepthwiseWeightsByTap
  const float* bias = nullptr;    // or null
  Epilogue<float> clamp;          // clamp only
};

struct DepthwiseBlockTensors {
  const float* data = nullptr;  // (N, H, W, in_channels)
  PointwiseStage expand;        // read when geometry.expand
  DepthwiseStage depthwise;
  PointwiseStage project;   // read when geometry.project
  // (N, OH, OW, out_channels) or null: a residual connection added to the projection's output
  // after its bias and before its clamp (project.epilogue's residual is set per band); needs the
  // projection.
  const float* residual = nullptr;
  float* output = nullptr;  // (N, OH, OW, out_channels)
};

// Errors (mxlite::Error naming the problem): a geometry that is not a multiplier-1 NHWC depthwise
// convolution, channel counts that disagree, or neither expand nor project. (The forward also
// refuses a residual without a projection.)
void CheckDepthwiseBlockGeometry(const DepthwiseBlockGeometry& g);

// Scratch the forward takes with `threads` intra-op threads: each thread's ring of expanded rows
// and band of depthwise output rows.
size_t DepthwiseBlockWorkspaceBytes(const DepthwiseBlockGeometry& g, int threads);

// The size of the tensors between the stages from which running a block fused pays when nobody
// measured it (the convolution planner times every block it plans:
// scheduler/planning/conv_planning.h): half a core's L2 (sysconf; 1 MiB where unknown). Well below
// it the separate kernels find their inputs in L2 anyway and the fused one only adds its bands'
// smaller GEMMs and an uneven split of few rows between threads. MobileNet-V2, batch 1, measured by
// the planner (1 MiB L2, 1 / 2 threads): 56x56 and 112x112 blocks (intermediates 1.2-4.8 MB) 6-23%
// faster fused; 28x28 (602 KB) 7% / 12% faster; 14x14 (301-451 KB) -1 to +4%; 7x7 (188 KB) level /
// 12-17% slower.
size_t DepthwiseBlockFusionMinBytes();

// output = the block applied to data, on IntraOpThreads() threads.
void DepthwiseBlockForward(const DepthwiseBlockGeometry& g, const DepthwiseBlockTensors& t,
                           ScratchSpace& scratch);

}  // namespace mxlite::cpu
