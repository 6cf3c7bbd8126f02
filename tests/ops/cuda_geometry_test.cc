// The geometries the GPU kernels index by (ops/cuda/cuda_util.h's MakeBroadcastGeometry and
// MakeTransposeGeometry, ops/cuda/strided_copy.h's Simplified), checked on the host without a GPU:
// each kernel's indexing, replayed here over the geometry, must reach the element a plain
// multi-index walk reaches. The kernels themselves are checked against the CPU's on a GPU machine
// (gpu_vs_cpu_test.cc); these tests catch a wrong merge of axes wherever the suite runs.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "core/shape.h"

#if MXLITE_USE_CUDA
#include "ops/cuda/cuda_util.h"
#include "ops/cuda/strided_copy.h"
#endif

namespace mxlite::testing {
namespace {

#if MXLITE_USE_CUDA

// Row-major strides of `shape`.
std::vector<int64_t> StridesOf(const Shape& shape) {
  std::vector<int64_t> strides(static_cast<size_t>(shape.ndim()), 1);
  for (int d = shape.ndim() - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

// The offset in `operand` (right-aligned, broadcast) of output element i of `out`.
int64_t BroadcastReference(const Shape& out, const Shape& operand, int64_t i) {
  const std::vector<int64_t> strides = StridesOf(operand);
  int64_t offset = 0;
  for (int d = out.ndim() - 1; d >= 0; --d) {
    const int64_t index = i % out[d];
    i /= out[d];
    const int from_end = out.ndim() - d;
    if (from_end > operand.ndim()) continue;
    const int axis = operand.ndim() - from_end;
    if (operand[axis] != 1) offset += index * strides[axis];
  }
  return offset;
}

// grid.cuh's BroadcastOffsets, replayed.
void KernelOffsets(const cuda::BroadcastGeometry& g, int64_t i, int64_t* a, int64_t* b) {
  *a = *b = 0;
  for (int d = g.ndim - 1; d >= 0; --d) {
    const int64_t index = i % g.extents[d];
    i /= g.extents[d];
    *a += index * g.strides[0][d];
    *b += index * g.strides[1][d];
  }
}

TEST(CudaGeometry, BroadcastMergesAxesAndReachesTheSameElements) {
  struct Case {
    Shape out, a, b;
  };
  const Case cases[] = {
      {{16, 7, 7, 24}, {16, 7, 7, 24}, {24}},  // a Linear's bias over (N, H, W, C)
      {{2, 3, 4, 5}, {2, 3, 4, 5}, {2, 3, 4, 5}},
      {{2, 3, 4, 5}, {2, 1, 4, 5}, {3, 1, 1}},
      {{2, 3, 4, 5}, {1}, {2, 3, 1, 1}},  // a per-channel scale
      {{4, 1, 6}, {4, 1, 1}, {1, 6}},
      {{3, 1, 1}, {3, 1, 1}, {1}},
      {{}, {}, {}},
      {{5, 6}, {5, 1}, {1, 6}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.out.ToString() + " from " + c.a.ToString() + ", " + c.b.ToString());
    const cuda::BroadcastGeometry g = cuda::MakeBroadcastGeometry(c.out, c.a, c.b);
    int64_t extent = 1;
    for (int d = 0; d < g.ndim; ++d) extent *= g.extents[d];
    ASSERT_EQ(extent, c.out.size());
    for (int64_t i = 0; i < c.out.size(); ++i) {
      int64_t a = 0, b = 0;
      KernelOffsets(g, i, &a, &b);
      ASSERT_EQ(a, BroadcastReference(c.out, c.a, i)) << "element " << i;
      ASSERT_EQ(b, BroadcastReference(c.out, c.b, i)) << "element " << i;
    }
  }
  // The bias over the last axis needs one division per element, not four.
  EXPECT_EQ(cuda::MakeBroadcastGeometry(Shape{16, 7, 7, 24}, Shape{16, 7, 7, 24}, Shape{24}).ndim,
            2);
}

// out = in permuted by `axes`, by a plain multi-index walk.
std::vector<int> TransposeReference(const Shape& shape, const std::vector<int>& axes,
                                    const std::vector<int>& in) {
  const std::vector<int64_t> strides = StridesOf(shape);
  std::vector<int64_t> out_extents;
  for (int axis : axes) out_extents.push_back(shape[axis]);
  std::vector<int> out(in.size());
  for (int64_t i = 0; i < static_cast<int64_t>(in.size()); ++i) {
    int64_t rest = i, offset = 0;
    for (int d = static_cast<int>(axes.size()) - 1; d >= 0; --d) {
      offset += (rest % out_extents[d]) * strides[axes[d]];
      rest /= out_extents[d];
    }
    out[i] = in[offset];
  }
  return out;
}

// transpose_kernels.cu's two kernels, replayed: the tiled batch of 2-D transposes, or a thread
// per output element.
std::vector<int> TransposeByKernel(const cuda::TransposeGeometry& g, const std::vector<int>& in) {
  std::vector<int> out(in.size(), -1);
  const int64_t n = static_cast<int64_t>(in.size());
  if (g.batch > 0) {
    EXPECT_EQ(g.batch * g.rows * g.cols, n);
    for (int64_t b = 0; b < g.batch; ++b) {
      for (int64_t r = 0; r < g.rows; ++r) {
        for (int64_t c = 0; c < g.cols; ++c) {
          out[b * g.rows * g.cols + c * g.rows + r] = in[b * g.rows * g.cols + r * g.cols + c];
        }
      }
    }
    return out;
  }
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, offset = 0;
    for (int d = g.ndim - 1; d >= 0; --d) {
      offset += (rest % g.out_extents[d]) * g.in_strides_permuted[d];
      rest /= g.out_extents[d];
    }
    out[i] = in[offset];
  }
  return out;
}

TEST(CudaGeometry, TransposeMergesAxesAndMovesEveryElement) {
  struct Case {
    Shape shape;
    std::vector<int> axes;
    bool tiled;  // a batch of 2-D transposes once merged
  };
  const Case cases[] = {
      {{2, 3, 4, 5}, {0, 2, 3, 1}, true},  // NCHW -> NHWC
      {{2, 4, 5, 3}, {0, 3, 1, 2}, true},  // NHWC -> NCHW
      {{6, 7}, {1, 0}, true},
      {{2, 3, 4, 5}, {0, 2, 1, 3}, false},  // attention's head split: the inner axis stays
      {{2, 3, 4, 5}, {0, 1, 3, 2}, true},   // a key's transpose
      {{2, 3, 4}, {2, 0, 1}, true},         // (2*3, 4) -> (4, 2*3)
      {{2, 3, 4, 5}, {3, 2, 1, 0}, false},
      {{1, 3, 1, 5}, {0, 3, 2, 1}, true},  // extent-1 axes dropped
      {{2, 3, 4}, {0, 1, 2}, false},       // the identity: one axis, a copy
      {{1, 1}, {1, 0}, false},
      {{2, 3, 4, 5, 6}, {1, 0, 2, 4, 3}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.shape.ToString());
    std::vector<int> in(static_cast<size_t>(c.shape.size()));
    std::iota(in.begin(), in.end(), 0);
    const cuda::TransposeGeometry g = cuda::MakeTransposeGeometry(c.shape, c.axes);
    EXPECT_EQ(g.batch > 0, c.tiled);
    EXPECT_EQ(TransposeByKernel(g, in), TransposeReference(c.shape, c.axes, in));
  }
}

// strided_copy.cu's kernel (and its one-memcpy case), replayed byte for byte: every dense
// element moves element_size bytes to or from its window offset.
void StridedCopyByKernel(const cuda::StridedCopy& c, const std::vector<uint8_t>& from,
                         std::vector<uint8_t>* to) {
  for (int64_t i = 0; i < c.count; ++i) {
    int64_t rest = i, offset = c.base;
    for (int d = c.ndim - 1; d >= 0; --d) {
      offset += (rest % c.extents[d]) * c.steps[d];
      rest /= c.extents[d];
    }
    const int64_t source = c.scatter ? i : offset, target = c.scatter ? offset : i;
    std::memcpy(to->data() + target * c.element_size, from.data() + source * c.element_size,
                static_cast<size_t>(c.element_size));
  }
}

// A copy of `dense` extents (row-major) from a window of a tensor of `window_elements`.
cuda::StridedCopy CopyOf(const Shape& dense, const std::vector<int64_t>& steps, int64_t base,
                         int element_size, bool scatter = false) {
  cuda::StridedCopy c;
  c.ndim = dense.ndim();
  for (int d = 0; d < dense.ndim(); ++d) {
    c.extents[d] = dense[d];
    c.steps[d] = steps[static_cast<size_t>(d)];
  }
  c.base = base;
  c.count = dense.size();
  c.element_size = element_size;
  c.scatter = scatter;
  return c;
}

TEST(CudaGeometry, SimplifiedStridedCopiesMoveTheSameBytes) {
  struct Case {
    const char* what;
    cuda::StridedCopy copy;
    int64_t window_elements;
    uintptr_t dense_address, window_address;
    int ndim, element_size;  // expected once simplified
  };
  const uintptr_t aligned = 0x10000, off_by_4 = 0x10004;
  const Case cases[] = {
      // (N*heads, L, 64) -> (L, N*heads, 64) of float: 16-byte elements, the three axes kept.
      {"head split", CopyOf({6, 5, 64}, {64, 5 * 64, 1}, 0, 4), 5 * 6 * 64, aligned, aligned, 3,
       16},
      {"head split, input off by 4 bytes", CopyOf({6, 5, 64}, {64, 5 * 64, 1}, 0, 4), 5 * 6 * 64,
       aligned, off_by_4, 3, 4},
      // q = packed[1] of (3, L, N, E): one contiguous run (a memcpy).
      {"a whole slab", CopyOf({1, 7, 2, 12}, {7 * 2 * 12, 2 * 12, 12, 1}, 7 * 2 * 12, 4),
       3 * 7 * 2 * 12, aligned, aligned, 1, 16},
      // x[:, 2:4] of (4, 6) int8: rows of 2 bytes; x[:, 1:3] stays bytewise.
      {"columns of int8", CopyOf({4, 2}, {6, 1}, 2, 1), 24, aligned, aligned, 2, 2},
      {"odd columns of int8", CopyOf({4, 2}, {6, 1}, 1, 1), 24, aligned, aligned, 2, 1},
      // x[::-1] of (5, 8) float: rows backwards, each row contiguous.
      {"rows reversed", CopyOf({5, 8}, {-8, 1}, 32, 4), 40, aligned, aligned, 2, 16},
      // x[:, ::-1]: nothing contiguous.
      {"columns reversed", CopyOf({5, 8}, {8, -1}, 7, 4), 40, aligned, aligned, 2, 4},
      // slice's backward: the dense gradient scattered into rows 2..4 of (6, 3, 4) half, one
      // run of 36 halves: 8-byte elements (36 is no multiple of 8).
      {"scatter", CopyOf({3, 3, 4}, {12, 4, 1}, 24, 2, true), 72, aligned, aligned, 1, 8},
      {"one element", CopyOf({1, 1}, {5, 1}, 3, 8), 10, aligned, aligned, 1, 8},
      {"odd inner extent", CopyOf({4, 3}, {6, 1}, 0, 4), 24, aligned, aligned, 2, 4},
  };
  std::mt19937 random(7);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const int size = c.copy.element_size;
    const int64_t dense_bytes = c.copy.count * size, window_bytes = c.window_elements * size;
    std::vector<uint8_t> dense(static_cast<size_t>(dense_bytes)),
        window(static_cast<size_t>(window_bytes));
    for (uint8_t& b : dense) b = static_cast<uint8_t>(random());
    for (uint8_t& b : window) b = static_cast<uint8_t>(random());
    const std::vector<uint8_t>& from = c.copy.scatter ? dense : window;
    std::vector<uint8_t> expected = c.copy.scatter ? window : dense, got = expected;
    StridedCopyByKernel(c.copy, from, &expected);
    const cuda::StridedCopy simplified =
        cuda::Simplified(c.copy, c.window_elements, reinterpret_cast<const void*>(c.dense_address),
                         reinterpret_cast<const void*>(c.window_address));
    StridedCopyByKernel(simplified, from, &got);
    EXPECT_EQ(got, expected);
    EXPECT_EQ(simplified.ndim, c.ndim);
    EXPECT_EQ(simplified.element_size, c.element_size);
    EXPECT_TRUE(simplified.narrow_index);
  }
  // Past 2^30 elements the offsets stay 64-bit.
  const cuda::StridedCopy huge = cuda::Simplified(
      CopyOf({2, int64_t{1} << 30}, {int64_t{1} << 31, 1}, 0, 1), int64_t{1} << 32,
      reinterpret_cast<const void*>(aligned), reinterpret_cast<const void*>(aligned + 1));
  EXPECT_FALSE(huge.narrow_index);
}

#else

TEST(CudaGeometry, SkippedWithoutCuda) { GTEST_SKIP() << "built without CUDA: no GPU kernels"; }

#endif

}  // namespace
}  // namespace mxlite::testing
