// Internal to ops/cpu/conv_winograd.cc: the float32 Winograd forward F(M x M, 3x3) for CPUs with
// AVX2+FMA, fused per block of tiles so a block's transformed input and products stay in cache.
//
//   1. U = G g G^T for every (k, c), written straight into the packed A-panel layout of the GEMM
//      micro-kernel (ops/cpu/gemm_kernel_avx2.h: 6 output channels per panel), once per call.
//   2. For each work item (16 tiles, one group, a range of output-channel panels), on the intra-op
//      pool: V = B^T d B for the block's 16 tiles (one packed B panel per Winograd position xi),
//      alpha^2 products U[xi] * V[xi] with the micro-kernel, then Y = A^T M A into the output.
// The transforms run on 8 tiles (or 8 input channels for U) per AVX2 vector. Tiles are numbered
// over the whole batch, so small images fill the 16-tile blocks from several images. When there are
// fewer blocks than threads, the output channels are split so every thread has work.
//
// Results are bitwise identical for any thread count (each output value is computed the same way,
// whichever thread and split computes it). Geometry: as WinogradAlgorithm::Supports, forward.
// Thread safety: reentrant; uses only the caller's buffers and ScratchSpace.
#pragma once

#include <cstddef>

#include "ops/cpu/epilogue.h"
#include "ops/cpu/im2col.h"
#include "ops/tensor.h"

namespace mxlite::cpu::detail {

// True when this build and this CPU can run the functions below (x86-64 with avx2 and fma).
bool WinogradAvx2Available();

// Bytes WinogradForwardAvx2<M>(g, ...) takes from its ScratchSpace on the calling thread's
// IntraOpThreads() (64-byte rounded, as WorkspaceTally counts; less with a transformed weight).
// M is 2 or 4.
template <int M>
size_t WinogradAvx2WorkspaceBytes(const ConvGeometry& g);

// How the weight argument is laid out.
enum class WinogradWeights {
  kAsGiven,  // (K, C/G, 3, 3) of g
  // g is the data-gradient problem of a convolution (BackwardDataGeometry in conv_winograd.cc) and
  // weight is that convolution's (C, K/G, 3, 3) filter in g's channel names; it is rotated by 180
  // degrees and channel-transposed as it is read (no flipped copy).
  kFlippedTransposed,
};

// The floats of U, the transformed weight (G g G^T for every output and input channel, in the
// packed panels the products read), of WinogradForwardAvx2<M> on g.
template <int M>
int64_t WinogradAvx2TransformedWeightSize(const ConvGeometry& g);

// U of `weight` (laid out as `weights` says) for g into `u` (TransformedWeightSize floats), on the
// intra-op pool: what WinogradForwardAvx2 computes first on every call, made once for the calls
// that reuse one weight (inference: ConvAlgorithm::PrepareWeight). Requires
// WinogradAvx2Available().
template <int M>
void WinogradAvx2TransformWeight(const ConvGeometry& g, const float* weight,
                                 WinogradWeights weights, float* u);

// output (N, K, OH, OW) = clamp(conv(data (N, C, H, W), weight) + bias (K; may be null)), the
// clamp being `clamp`'s bounds (its biases are ignored). `transformed` (optional): U as
// WinogradAvx2TransformWeight made it for g; then `weight` is not read and the workspace's U part
// is not touched. The same bits either way. Requires WinogradAvx2Available().
template <int M>
void WinogradForwardAvx2(const ConvGeometry& g, const float* data, const float* weight,
                         const float* bias, float* output, ScratchSpace& scratch,
                         WinogradWeights weights, const Epilogue<float>& clamp = {},
                         const float* transformed = nullptr);

}  // namespace mxlite::cpu::detail
