// Exp-based functions (and GELU) over float arrays at the CPU's full vector width. The library is built for
// baseline x86-64, so Eigen's element-wise expressions run 4 floats wide (SSE2); these kernels
// carry target attributes and run 16 wide (AVX-512F) or 8 wide (AVX2 + FMA) after the run-time
// check, falling back to Eigen elsewhere. Work is split over the intra-op threads.
//
//   cpu::SigmoidFloats(x, y, n);  // y[i] = 1 / (1 + e^-x[i])
//
// Accuracy: e^x by Cephes' range reduction and degree-6 polynomial, within a few ulp of the float
// result, denormal results included; under the smallest denormal it is 0, over the largest float
// infinity. sigmoid is 1 / (1 + e^-x) in float, as PyTorch computes it: 0 below x = -88.72, where
// e^-x overflows. GELU is x/2 * erfc(-x / sqrt 2) with erfc by a Chebyshev fit (relative error
// under 1.2e-7), so it keeps its relative accuracy where x is very negative; it is -0 below
// x = -13.2 or so, as erfc underflows. NaN stays NaN. x and y may be the same array.
#pragma once

#include <cstdint>

namespace mxlite::cpu {

// ln of the smallest normal float, rounded toward zero (e^x at it is normal): the bound under
// which softmax's exps are 0 on every path (ExpShiftedSumFloats, ops/cpu/softmax.h).
inline constexpr float kLnSmallestNormalFloat = -87.33654022f;

void ExpFloats(const float* x, float* y, int64_t n);      // y = e^x
void SigmoidFloats(const float* x, float* y, int64_t n);  // y = 1 / (1 + e^-x)
void SiluFloats(const float* x, float* y, int64_t n);     // y = x / (1 + e^-x)
void GeluFloats(const float* x, float* y, int64_t n);     // y = x/2 * (1 + erf(x / sqrt 2))

// y[i] = e^(x[i] - shift) where y is not null (it may be x); returns the sum of those values,
// added in a fixed order (the same input, the same bits). On the calling thread alone: softmax's
// rows, which the caller already spreads over the threads. A value under the smallest normal
// float (x - shift below -87.34) is 0, not a denormal: a probability that small says nothing,
// and computing or reading each denormal takes a microcode assist (Swin's shifted windows mask
// with -100: its softmax and the GEMM after it, bench/RESULTS.md).
float ExpShiftedSumFloats(const float* x, float shift, float* y, int64_t n);

// One softmax row: y = e^(x - max x) / sum, probabilities under the smallest normal float 0 (as
// ExpShiftedSumFloats); the same bits as those steps done one after another, in one kernel at the
// vector width (attention's short rows: Swin's are 49 wide). On the calling thread; y may be x.
void SoftmaxRowFloats(const float* x, float* y, int64_t n);

// The vector width the functions above use here (for tests and reports): 16, 8, or 4 (Eigen).
enum class VectorIsa { kEigen, kAvx2, kAvx512 };
VectorIsa BestVectorIsa();

namespace detail {
// The same on one chunk with a chosen instruction set (which the CPU must run): what the tests
// compare across widths.
void ExpFloatsWith(VectorIsa isa, const float* x, float* y, int64_t n);
void SigmoidFloatsWith(VectorIsa isa, const float* x, float* y, int64_t n);
void SiluFloatsWith(VectorIsa isa, const float* x, float* y, int64_t n);
void GeluFloatsWith(VectorIsa isa, const float* x, float* y, int64_t n);
float ExpShiftedSumFloatsWith(VectorIsa isa, const float* x, float shift, float* y, int64_t n);
void SoftmaxRowFloatsWith(VectorIsa isa, const float* x, float* y, int64_t n);
}  // namespace detail

}  // namespace mxlite::cpu
