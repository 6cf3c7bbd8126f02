// IEEE 754 binary16 (float16) on the host, stored as its 16 bits: conversions to and from float.
// Host code has no half arithmetic (the CPU kernels run float32 / float64); these let it read and
// write float16 tensors (printing, ONNX tensors, Cast, the GPU tests' inputs).
//
//   uint16_t bits = FloatToHalf(0.1f);   // nearest float16, ties to even: 0x2e66
//   float back = HalfToFloat(bits);      // 0.0999755859375 (every float16 is exact in float)
//
// FloatToHalf rounds to nearest even as the hardware does (CUDA's __float2half_rn): values past
// the largest float16 (65504) round to infinity, tiny ones to subnormals or signed zero, NaN
// stays a (quiet) NaN.
#pragma once

#include <cstdint>

namespace mxlite {

float HalfToFloat(uint16_t half);
uint16_t FloatToHalf(float value);

}  // namespace mxlite
