// Integer helpers shared by the CPU kernels' blocking and work splitting.
//
//   const int64_t tiles = CeilDiv(pixels, kTilePixels);   // tiles covering every pixel
//   const int64_t padded = RoundUp(columns, kPanelWidth);  // columns padded to whole panels
//
// Both take a >= 0 and b > 0 (not checked: they sit in inner setup code). FloorDiv takes any a.
#pragma once

#include <cstdint>

namespace mxlite::cpu {

// The smallest q with q * b >= a.
constexpr int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The largest q with q * b <= a, for any a and b > 0 (C++'s / rounds toward zero).
constexpr int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// The smallest multiple of `multiple` that is >= a.
constexpr int64_t RoundUp(int64_t a, int64_t multiple) { return CeilDiv(a, multiple) * multiple; }

}  // namespace mxlite::cpu
