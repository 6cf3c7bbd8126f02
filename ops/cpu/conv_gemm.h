// The CPU convolution as GEMM: im2col + GEMM for channels-first (NCHW, NCW) and im2row + GEMM for
// channels-last (NHWC, NWC), forward, data gradient and weight gradient. Convolution and
// Deconvolution (whose forward is the data gradient here) are both built on these.
//
// Tensors, row-major, for ConvGeometry g (ops/cpu/im2col.h), G = g.groups:
//   channels-first:  data (N, C, H, W)   weight (O, C/G, KH, KW)   output (N, O, OH, OW)
//   channels-last:   data (N, H, W, C)   weight (O, KH, KW, C/G)   output (N, OH, OW, O)
// (1-D is the same with H = KH = OH = 1.) Output channels [g*O/G, (g+1)*O/G) see only input
// channels [g*C/G, (g+1)*C/G).
//
// Per image and group the lowered matrix (KH*KW*C/G x OH*OW, or its transpose for NHWC) is
// multiplied by that group's weight rows with Gemm<T> (ops/cpu/blas.h). The lowered buffers come
// from `scratch` (the pooled allocator), one per lane. With several intra-op threads and a batch of
// at least two, images run in parallel, one per thread (each GEMM single-threaded on its thread);
// a batch of one, and the images left over when the batch is not a multiple of the thread count,
// use every thread inside the GEMM and the lowering instead.
//
// Every function overwrites its destination (the weight gradient is summed over the batch).
// Reentrant: concurrent calls need their own scratch spaces and destinations.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ops/cpu/aligned_vector.h"
#include "ops/cpu/epilogue.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/im2col.h"
#include "ops/tensor.h"

namespace mxlite::cpu {

// A weight in the form a convolution algorithm's forward reads it, made once for the calls that
// reuse one weight, as inference does (ConvAlgorithm::PrepareWeight, ConvTensors::prepared_weight
// in conv_algorithms.h). Immutable. Each algorithm fills its own member:
//   groups: the GEMM paths here. Each group's weight matrix packed into micro-kernel panels
//           (ops/cpu/gemm.h PackedGemmOperand), op(A) = weight (O/G x patch) for channels-first,
//           op(B) = weight^T (patch x O/G) for channels-last, so no call packs it again.
//   by_tap: depthwise_direct NHWC. The weight as (KH*KW, O) (DepthwiseWeightsByTap,
//           ops/cpu/depthwise_rows.h), so no call transposes it again.
//   reordered: the NCHW16c algorithms (conv_nchw16c.cc): the weight in blocks of 16 channels;
//           the AVX2 Winograd forward (conv_winograd_avx2.h): U = G g G^T in the packed panels
//           its products read. 64-byte aligned.
struct PreparedConvWeight {
  std::vector<PackedGemmOperand> groups;
  std::vector<float> by_tap;
  AlignedVector<float> reordered;
  size_t bytes() const;
};

// The float32 weight of `geometry` (laid out as above) packed for the forward GEMMs; null while
// the GEMM in force is not the packed AVX2 one (PackedOperandsReadInPlace()), which alone reads
// packed panels without unpacking them.
std::unique_ptr<PreparedConvWeight> PrepareGemmWeight(const ConvGeometry& geometry,
                                                      const float* weight);

// Group `group`'s packed matrix, checked to be the one `geometry`'s forward multiplies (an error
// naming both shapes otherwise).
const PackedGemmOperand& PreparedGemmGroup(const PreparedConvWeight& prepared,
                                           const ConvGeometry& geometry, int64_t group);

// output = clamp(data * weight (+ bias[o] on output channel o when bias is not null) + residual),
// the bias, the residual and the clamp (`clamp`'s bounds and residual, a tensor of the output's
// shape and layout or null; its biases are ignored) applied in the GEMM's store.
// `prepared` (float only; from PrepareGemmWeight on this geometry) replaces packing `weight`.
template <typename T>
void ConvolutionForwardGemm(const ConvGeometry& geometry, const T* data, const T* weight,
                            const T* bias, T* output, ScratchSpace& scratch,
                            const Epilogue<T>& clamp = {},
                            const PreparedConvWeight* prepared = nullptr);

// data_grad = the adjoint of the forward in `data` applied to output_grad.
template <typename T>
void ConvolutionBackwardDataGemm(const ConvGeometry& geometry, const T* output_grad,
                                 const T* weight, T* data_grad, ScratchSpace& scratch);

// weight_grad = the adjoint of the forward in `weight` applied to output_grad, summed over images.
template <typename T>
void ConvolutionBackwardWeightGemm(const ConvGeometry& geometry, const T* data,
                                   const T* output_grad, T* weight_grad, ScratchSpace& scratch);

// sums[c] = the sum of x over batch and spatial positions for channel c; x is (N, C, S) when
// channels-first, (N, S, C) when channels-last. The bias gradient of either op.
template <typename T>
void SumPerChannel(const T* x, int64_t batch, int64_t channels, int64_t spatial, bool channels_last,
                   T* sums);

// x[.., c, ..] += values[c] for every image and position; x laid out as for SumPerChannel (whose
// adjoint this is). Deconvolution's bias.
template <typename T>
void AddPerChannel(const T* values, int64_t batch, int64_t channels, int64_t spatial,
                   bool channels_last, T* x);

}  // namespace mxlite::cpu
