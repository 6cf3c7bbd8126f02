// The sampling arithmetic of grid_sample (ops/grid_sample.h): the taps of one point on one axis,
// shared by the CPU kernels (ops/grid_sample.cc) and the GPU kernels
// (ops/cuda/grid_sample_kernels.cu), so both devices compute the same formulas. Like
// kernel_types.h this header is included by nvcc (C++17) and g++ (C++20) (ops/host_device.h).
#pragma once

#include <cmath>
#include <cstdint>

#include "ops/host_device.h"

namespace mxlite {

constexpr int kGridSampleMaxAxes = 3;

enum class GridSampleMode { kNearest, kLinear, kCubic };
enum class GridSamplePadding { kZeros, kBorder, kReflection };

// One node's sizes, in a plain struct that kernels take by value.
struct GridSampleGeometry {
  int axes = 0;  // r, the spatial axes
  int64_t batch = 0, channels = 0;
  int64_t extent[kGridSampleMaxAxes] = {};  // the data's spatial extents, in the data's order
  int64_t points = 0;                       // O1 * ... * Or
  GridSampleMode mode = GridSampleMode::kLinear;
  GridSamplePadding padding = GridSamplePadding::kZeros;
  bool align_corners = false;
  // The elements of one (n, c) plane of the data, and the stride of each spatial axis there.
  MXLITE_HOST_DEVICE int64_t plane() const {
    int64_t size = 1;
    for (int a = 0; a < axes; ++a) size *= extent[a];
    return size;
  }
  MXLITE_HOST_DEVICE int64_t stride(int axis) const {
    int64_t size = 1;
    for (int a = axis + 1; a < axes; ++a) size *= extent[a];
    return size;
  }
  MXLITE_HOST_DEVICE int taps() const {
    return mode == GridSampleMode::kCubic ? 4 : mode == GridSampleMode::kLinear ? 2 : 1;
  }
};

// The taps of one point on one axis: index[k] into the axis (-1: reads 0), weight[k] and its
// derivative in c, and dc/dg.
template <typename C>
struct GridAxisTaps {
  int64_t index[4];
  C weight[4];
  C weight_slope[4];
  C coordinate_slope;
};

namespace grid_sample_detail {

template <typename C>
MXLITE_HOST_DEVICE C Floor(C x) {
#ifdef __CUDA_ARCH__
  return floor(x);
#else
  return std::floor(x);
#endif
}
template <typename C>
MXLITE_HOST_DEVICE C RoundHalfToEven(C x) {  // in the default rounding mode
#ifdef __CUDA_ARCH__
  return rint(x);
#else
  return std::rint(x);
#endif
}

// Reflects c into [low, high] by mirroring at the nearer border until it lies within; `slope`
// is multiplied by -1 per mirroring (ONNX's _gs_reflect).
template <typename C>
MXLITE_HOST_DEVICE C Reflect(C c, C low, C high, C* slope) {
  const C span = high - low;
  if (span <= C(0)) {
    *slope = C(0);
    return low;
  }
  if (c >= low && c <= high) return c;
  const bool below = c < low;
  const C distance = below ? low - c : c - high;
  const int64_t flips = static_cast<int64_t>(distance / span);
  const C rest = distance - static_cast<C>(flips) * span;
  const bool even = flips % 2 == 0;
  *slope = even ? -*slope : *slope;
  if (below) return even ? low + rest : high - rest;
  return even ? high - rest : low + rest;
}

// The index a tap at integer position i reads under the padding (-1: zero).
template <typename C>
MXLITE_HOST_DEVICE int64_t PaddedIndex(int64_t i, int64_t n, GridSamplePadding padding, C low,
                                       C high) {
  if (i >= 0 && i < n) return i;
  if (padding == GridSamplePadding::kZeros) return -1;
  if (padding == GridSamplePadding::kBorder) return i < 0 ? 0 : n - 1;
  C unused = C(1);
  const int64_t reflected = static_cast<int64_t>(Reflect(static_cast<C>(i), low, high, &unused));
  return reflected < 0 ? 0 : reflected >= n ? n - 1 : reflected;
}

// Keys' cubic weights (a = -0.75) of the taps floor(c) - 1 .. floor(c) + 2 at t = c - floor(c),
// ONNX's expressions, and their derivatives in t.
template <typename C>
MXLITE_HOST_DEVICE void CubicWeights(C t, C* w, C* slope) {
  const C a = C(-0.75);
  const C u = t + C(1), s = C(1) - t, v = C(2) - t;
  w[0] = ((a * u - C(5) * a) * u + C(8) * a) * u - C(4) * a;
  w[1] = ((a + C(2)) * t - (a + C(3))) * t * t + C(1);
  w[2] = ((a + C(2)) * s - (a + C(3))) * s * s + C(1);
  w[3] = ((a * v - C(5) * a) * v + C(8) * a) * v - C(4) * a;
  slope[0] = (C(3) * a * u - C(10) * a) * u + C(8) * a;
  slope[1] = (C(3) * (a + C(2)) * t - C(2) * (a + C(3))) * t;
  slope[2] = -(C(3) * (a + C(2)) * s - C(2) * (a + C(3))) * s;
  slope[3] = -((C(3) * a * v - C(10) * a) * v + C(8) * a);
}

}  // namespace grid_sample_detail

// The taps of normalised coordinate g on spatial axis `axis` of g's geometry.
template <typename C>
MXLITE_HOST_DEVICE GridAxisTaps<C> GridAxisTapsOf(const GridSampleGeometry& geometry, int axis,
                                                  C g) {
  namespace detail = grid_sample_detail;
  const int64_t n = geometry.extent[axis];
  const C extent = static_cast<C>(n);
  GridAxisTaps<C> taps;
  C c, slope;
  if (geometry.align_corners) {
    c = (g + C(1)) / C(2) * (extent - C(1));
    slope = (extent - C(1)) / C(2);
  } else {
    c = ((g + C(1)) * extent - C(1)) / C(2);
    slope = extent / C(2);
  }
  if (geometry.mode == GridSampleMode::kNearest) {
    c = detail::RoundHalfToEven(c);
    slope = C(0);
  }
  const C low = geometry.align_corners ? C(0) : C(-0.5);
  const C high = geometry.align_corners ? extent - C(1) : extent - C(0.5);
  if (c < low || c > high) {
    if (geometry.padding == GridSamplePadding::kBorder) {
      c = c < C(0) ? C(0) : c > extent - C(1) ? extent - C(1) : c;
      slope = C(0);
    } else if (geometry.padding == GridSamplePadding::kReflection) {
      c = detail::Reflect(c, low, high, &slope);
    }
  }
  taps.coordinate_slope = slope;
  if (geometry.mode == GridSampleMode::kNearest) {
    taps.index[0] = detail::PaddedIndex(static_cast<int64_t>(c), n, geometry.padding, low, high);
    taps.weight[0] = C(1);
    taps.weight_slope[0] = C(0);
    return taps;
  }
  const C below = detail::Floor(c);
  const C t = c - below;
  const int64_t first = static_cast<int64_t>(below) - (geometry.mode == GridSampleMode::kCubic);
  if (geometry.mode == GridSampleMode::kLinear) {
    taps.weight[0] = C(1) - t;
    taps.weight[1] = t;
    taps.weight_slope[0] = C(-1);
    taps.weight_slope[1] = C(1);
  } else {
    detail::CubicWeights(t, taps.weight, taps.weight_slope);
  }
  for (int k = 0; k < geometry.taps(); ++k) {
    taps.index[k] = detail::PaddedIndex(first + k, n, geometry.padding, low, high);
  }
  return taps;
}

// The taps of one point on every axis: grid holds the point's r normalised coordinates (x
// first).
template <typename C, typename G>
MXLITE_HOST_DEVICE void GridPointTaps(const GridSampleGeometry& geometry, const G* grid,
                                      GridAxisTaps<C>* taps) {
  for (int a = 0; a < geometry.axes; ++a) {
    taps[a] = GridAxisTapsOf<C>(geometry, a, static_cast<C>(grid[geometry.axes - 1 - a]));
  }
}

// The number of tap combinations of a point (taps per axis to the power r), and combination
// `combo`'s tap on each axis (the last axis varying fastest) and its offset into a data plane (-1
// when a tap reads zero).
MXLITE_HOST_DEVICE inline int GridCombinations(const GridSampleGeometry& geometry) {
  int total = 1;
  for (int a = 0; a < geometry.axes; ++a) total *= geometry.taps();
  return total;
}
template <typename C>
MXLITE_HOST_DEVICE int64_t GridCombination(const GridSampleGeometry& geometry,
                                           const GridAxisTaps<C>* taps, int combo, int* tap) {
  int64_t offset = 0;
  bool zero = false;
  for (int a = geometry.axes - 1; a >= 0; --a) {
    tap[a] = combo % geometry.taps();
    combo /= geometry.taps();
    const int64_t index = taps[a].index[tap[a]];
    zero = zero || index < 0;
    offset += index * geometry.stride(a);
  }
  return zero ? -1 : offset;
}

// The weight of a combination (its tap on each axis, from GridCombination): the product of the
// axes' tap weights; and its derivative in the coordinate of axis `axis`, that axis' weight slope
// in place of its weight.
template <typename C>
MXLITE_HOST_DEVICE C GridCombinationWeight(const GridSampleGeometry& geometry,
                                           const GridAxisTaps<C>* taps, const int* tap) {
  C weight = C(1);
  for (int a = 0; a < geometry.axes; ++a) weight *= taps[a].weight[tap[a]];
  return weight;
}
template <typename C>
MXLITE_HOST_DEVICE C GridCombinationSlope(const GridSampleGeometry& geometry,
                                          const GridAxisTaps<C>* taps, const int* tap, int axis) {
  C slope = taps[axis].weight_slope[tap[axis]];
  for (int a = 0; a < geometry.axes; ++a) {
    if (a != axis) slope *= taps[a].weight[tap[a]];
  }
  return slope;
}

}  // namespace mxlite
