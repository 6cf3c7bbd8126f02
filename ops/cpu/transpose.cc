#include "ops/cpu/transpose.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "core/error.h"
#include "ops/cpu/elementwise.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/int_math.h"
#include "ops/cpu/parallel.h"
#include "ops/cpu/row_window.h"
#include "ops/cpu/transpose_avx2.h"

namespace mxlite::cpu {
namespace {

constexpr int kTile = 32;
// Output rows shorter than an 8 x 8 block are interleaved from their few input rows in bands of
// this many elements of each.
constexpr int64_t kInterleaveBand = 1024;

// The permutation after dropping extent-1 axes and merging input axes that stay adjacent.
struct CompressedPermutation {
  int ndim = 0;
  std::array<int64_t, Shape::kMaxDims> extents{};  // input axes
  std::array<int, Shape::kMaxDims> axes{};         // output axis i is input axis axes[i]
};

CompressedPermutation Compress(const Shape& shape, const std::vector<int>& axes) {
  // Input axes that survive, renumbered in input order.
  std::array<int, Shape::kMaxDims> renumbered{};
  int kept = 0;
  for (int axis = 0; axis < shape.ndim(); ++axis) renumbered[axis] = shape[axis] == 1 ? -1 : kept++;
  // Runs of consecutive (renumbered) input axes in output order become one axis.
  std::array<int, Shape::kMaxDims> run_start{};  // per run, its first renumbered input axis
  std::array<int64_t, Shape::kMaxDims> run_extent{};
  int runs = 0, previous = -2;
  for (int axis : axes) {
    const int input = renumbered[axis];
    if (input < 0) continue;
    if (input == previous + 1 && runs > 0) {
      run_extent[runs - 1] *= shape[axis];
    } else {
      run_start[runs] = input;
      run_extent[runs] = shape[axis];
      ++runs;
    }
    previous = input;
  }
  // Runs in input order give the compressed input axes.
  // At most six runs: an insertion sort (std::sort here trips a false -Warray-bounds in GCC 12).
  std::array<int, Shape::kMaxDims> order{};
  for (int i = 0; i < runs; ++i) {
    int j = i;
    for (; j > 0 && run_start[order[j - 1]] > run_start[i]; --j) order[j] = order[j - 1];
    order[j] = i;
  }
  CompressedPermutation result;
  result.ndim = runs;
  for (int input = 0; input < runs; ++input) {
    result.extents[input] = run_extent[order[input]];
    result.axes[order[input]] = input;
  }
  return result;
}

// A permutation that keeps the last axis: whole rows, walked by ops/cpu/row_window.h.
template <typename Element>
void CopyRows(const Element* in, const CompressedPermutation& perm,
              const std::array<int64_t, Shape::kMaxDims>& in_strides, Element* out) {
  RowWindow window;
  window.outer = perm.ndim - 1;
  for (int i = 0; i < window.outer; ++i) {
    window.extents[i] = perm.extents[perm.axes[i]];
    window.steps[i] = in_strides[perm.axes[i]];
  }
  window.row = perm.extents[perm.ndim - 1];
  CopyRowWindow(window, in, out, sizeof(Element), /*scatter=*/false);
}

// out[j * out_stride + i] = in[i * in_stride + j] for one 8 x 8 block: through registers with
// AVX2 for 4-byte elements, else via a local block the compiler vectorises as it can (SSE2).
template <typename Element>
void TransposeBlock8(const Element* in, int64_t in_stride, Element* out, int64_t out_stride) {
  constexpr int kBlock = 8;
#if MXLITE_HAS_AVX2_KERNEL
  if constexpr (sizeof(Element) == 4) {
    static const bool avx2 = CpuSupportsAvx2Fma();
    if (avx2) {
      detail::Transpose8x8Block4Bytes(reinterpret_cast<const uint32_t*>(in), in_stride,
                                      reinterpret_cast<uint32_t*>(out), out_stride);
      return;
    }
  }
#endif
  Element block[kBlock][kBlock];
  for (int i = 0; i < kBlock; ++i) {
    for (int j = 0; j < kBlock; ++j) block[j][i] = in[i * in_stride + j];
  }
  for (int j = 0; j < kBlock; ++j) {
    for (int i = 0; i < kBlock; ++i) out[j * out_stride + i] = block[j][i];
  }
}

// out[b * b_stride + a] = in[a * a_stride + b] for a in [a_begin, a_end), b in [b_begin, b_end):
// in 8 x 8 blocks read as 8 short rows and written as 8 short rows, so only 16 cache lines are live
// at a time (large power-of-two strides would otherwise thrash the cache's associativity).
template <typename Element>
void TransposeTile(const Element* in, int64_t a_stride, Element* out, int64_t b_stride,
                   int64_t a_begin, int64_t a_end, int64_t b_begin, int64_t b_end) {
  constexpr int kBlock = 8;
  int64_t a = a_begin;
  for (; a + kBlock <= a_end; a += kBlock) {
    int64_t b = b_begin;
    for (; b + kBlock <= b_end; b += kBlock) {
      TransposeBlock8(in + a * a_stride + b, a_stride, out + b * b_stride + a, b_stride);
    }
    for (; b < b_end; ++b) {
      for (int i = 0; i < kBlock; ++i) out[b * b_stride + a + i] = in[(a + i) * a_stride + b];
    }
  }
  for (; a < a_end; ++a) {
    for (int64_t b = b_begin; b < b_end; ++b) out[b * b_stride + a] = in[a * a_stride + b];
  }
}

// The tile loop when a_extent < 8 (NCHW -> NHWC of an image with few channels), where it would
// move elements one at a time: out[b * b_stride + a] = in[a * a_stride + b] for b in [b_begin,
// b_end), every a.
template <typename Element>
void InterleaveBand(const Element* in, int64_t a_stride, int64_t a_extent, Element* out,
                    int64_t b_stride, int64_t b_begin, int64_t b_end) {
  int64_t b = b_begin;
#if MXLITE_HAS_AVX2_KERNEL
  if constexpr (sizeof(Element) == 4) {
    static const bool avx2 = CpuSupportsAvx2Fma();
    if (avx2 && b_stride == a_extent && a_extent >= 2) {
      b += detail::InterleaveRows4Bytes(reinterpret_cast<const uint32_t*>(in + b_begin), a_stride,
                                        static_cast<int>(a_extent), b_end - b_begin,
                                        reinterpret_cast<uint32_t*>(out + b_begin * b_stride));
    }
  }
#endif
  for (; b < b_end; ++b) {
    for (int64_t a = 0; a < a_extent; ++a) out[b * b_stride + a] = in[a * a_stride + b];
  }
}

// Output axis `a` (the last) reads input axis axes[a] with stride in_strides[axes[a]]; input axis
// `b` (the last) lands on output axis b_out with stride out_strides[b_out]. The other output axes
// are enumerated outside; each task transposes one band of kTile columns of b (kInterleaveBand
// when the output rows are short).
template <typename Element>
void TransposeTiles(const Element* in, const CompressedPermutation& perm,
                    const std::array<int64_t, Shape::kMaxDims>& in_strides, Element* out) {
  const int last = perm.ndim - 1;
  std::array<int64_t, Shape::kMaxDims> out_strides{};
  int64_t stride = 1;
  for (int i = last; i >= 0; --i) {
    out_strides[i] = stride;
    stride *= perm.extents[perm.axes[i]];
  }
  const int b_out = static_cast<int>(
      std::find(perm.axes.begin(), perm.axes.begin() + perm.ndim, last) - perm.axes.begin());
  const int64_t a_extent = perm.extents[perm.axes[last]], a_stride = in_strides[perm.axes[last]];
  const int64_t b_extent = perm.extents[last], b_stride = out_strides[b_out];
  std::array<int, Shape::kMaxDims> outer{};
  int num_outer = 0;
  int64_t outer_count = 1;
  for (int i = 0; i < last; ++i) {
    if (i == b_out) continue;
    outer[num_outer++] = i;
    outer_count *= perm.extents[perm.axes[i]];
  }
  const bool interleave = a_extent < 8;
  const int64_t band = interleave ? kInterleaveBand : kTile;
  const int64_t bands = CeilDiv(b_extent, band);
  const int64_t tasks = outer_count * bands;
  const int64_t work_per_task = std::max<int64_t>(1, band * a_extent);
  const int64_t tasks_per_block = std::max<int64_t>(1, kElementwiseGrain / work_per_task);
  ParallelFor(CeilDiv(tasks, tasks_per_block), [&](int64_t block) {
    const int64_t end = std::min(tasks, (block + 1) * tasks_per_block);
    for (int64_t task = block * tasks_per_block; task < end; ++task) {
      int64_t rest = task / bands, in_offset = 0, out_offset = 0;
      for (int i = num_outer - 1; i >= 0; --i) {
        const int axis = outer[i];
        const int64_t index = rest % perm.extents[perm.axes[axis]];
        rest /= perm.extents[perm.axes[axis]];
        in_offset += index * in_strides[perm.axes[axis]];
        out_offset += index * out_strides[axis];
      }
      const int64_t b_begin = (task % bands) * band;
      const int64_t b_end = std::min(b_extent, b_begin + band);
      if (interleave) {
        InterleaveBand(in + in_offset, a_stride, a_extent, out + out_offset, b_stride, b_begin,
                       b_end);
        continue;
      }
      for (int64_t a_begin = 0; a_begin < a_extent; a_begin += kTile) {
        const int64_t a_end = std::min(a_extent, a_begin + kTile);
        TransposeTile(in + in_offset, a_stride, out + out_offset, b_stride, a_begin, a_end, b_begin,
                      b_end);
      }
    }
  });
}

template <typename Element>
void TransposeTyped(const Element* in, const Shape& shape, const std::vector<int>& axes,
                    Element* out) {
  const CompressedPermutation perm = Compress(shape, axes);
  if (perm.ndim <= 1) {
    std::memcpy(out, in, static_cast<size_t>(shape.size()) * sizeof(Element));
    return;
  }
  std::array<int64_t, Shape::kMaxDims> in_strides{};
  int64_t stride = 1;
  for (int axis = perm.ndim - 1; axis >= 0; --axis) {
    in_strides[axis] = stride;
    stride *= perm.extents[axis];
  }
  if (perm.axes[perm.ndim - 1] == perm.ndim - 1) {
    CopyRows(in, perm, in_strides, out);
  } else {
    TransposeTiles(in, perm, in_strides, out);
  }
}

}  // namespace

void TransposeAxes(const void* in, const Shape& in_shape, const std::vector<int>& axes, void* out,
                   DType dtype) {
  MX_CHECK(static_cast<int>(axes.size()) == in_shape.ndim())
      << "TransposeAxes: " << axes.size() << " axes for shape " << in_shape;
  if (in_shape.size() == 0) return;
  switch (DTypeSize(dtype)) {
    case 1:
      TransposeTyped(static_cast<const uint8_t*>(in), in_shape, axes, static_cast<uint8_t*>(out));
      break;
    case 2:
      TransposeTyped(static_cast<const uint16_t*>(in), in_shape, axes, static_cast<uint16_t*>(out));
      break;
    case 4:
      TransposeTyped(static_cast<const uint32_t*>(in), in_shape, axes, static_cast<uint32_t*>(out));
      break;
    case 8:
      TransposeTyped(static_cast<const uint64_t*>(in), in_shape, axes, static_cast<uint64_t*>(out));
      break;
    default:
      MX_THROW() << "TransposeAxes: elements of " << DTypeSize(dtype) << " bytes";
  }
}

}  // namespace mxlite::cpu
