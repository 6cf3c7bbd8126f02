// Broadcasting element-wise kernels for the CPU, written once for every op that broadcasts:
//
//   BroadcastBinary(AddFunctor{}, lhs, lhs_shape, rhs, rhs_shape, out, out_shape);
//   ReduceToShape(grad, out_shape, lhs_grad, lhs_shape, T(1), scratch);  // sum over broadcast axes
//   BroadcastTo(bias, bias_shape, out, out_shape, T(1));                    // repeat along them
//
// Both first build a BroadcastLayout: the output's axes with extent-1 axes dropped and adjacent
// axes merged wherever every operand either spans both or is broadcast along both. The common cases
// therefore become short loops over contiguous rows: same shapes are one flat row; a scalar is a
// row against a stride-0 operand; a bias (C) on (N, C) is rows of C; a (1, C, 1, 1) bias on
// (N, C, H, W) is (N, C, H*W) with the bias constant along each row of H*W.
// Kernels run on the intra-op pool (ops/cpu/parallel.h); results do not depend on the thread count.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>

#include "core/shape.h"
#include "ops/cpu/elementwise.h"
#include "ops/tensor.h"

namespace mxlite::cpu {

struct BroadcastLayout {
  static constexpr int kMaxOperands = 3;
  using Offsets = std::array<int64_t, kMaxOperands>;

  int ndim = 0;  // >= 1 after MakeBroadcastLayout
  int num_operands = 0;
  std::array<int64_t, Shape::kMaxDims> extents{};
  // Element strides of each operand along each merged axis; 0 where the operand is broadcast.
  // Along the last axis every stride is 0 or 1.
  std::array<std::array<int64_t, Shape::kMaxDims>, kMaxOperands> strides{};

  int64_t size() const;
  int64_t inner() const { return extents[ndim - 1]; }
  int64_t inner_stride(int operand) const { return strides[operand][ndim - 1]; }
};

// The layout of an element-wise pass over `out` reading `operands` (at most kMaxOperands). Throws
// mxlite::Error when an operand does not broadcast to `out`.
BroadcastLayout MakeBroadcastLayout(const Shape& out, std::initializer_list<Shape> operands);

// Calls row(out_offset, operand_offsets, length) for each maximal run of output elements in
// [begin, end) that lies within one row of the last merged axis; operand i's elements of the run
// are at operand_offsets[i] + j * layout.inner_stride(i).
template <typename RowFn>
void ForEachRow(const BroadcastLayout& layout, int64_t begin, int64_t end, RowFn&& row) {
  const int last = layout.ndim - 1;
  const int64_t inner = layout.inner();
  std::array<int64_t, Shape::kMaxDims> index{};
  BroadcastLayout::Offsets offsets{};
  int64_t rest = begin / inner;
  for (int axis = last - 1; axis >= 0; --axis) {
    index[axis] = rest % layout.extents[axis];
    rest /= layout.extents[axis];
    for (int op = 0; op < layout.num_operands; ++op) {
      offsets[op] += index[axis] * layout.strides[op][axis];
    }
  }
  int64_t column = begin % inner;
  for (int64_t position = begin; position < end;) {
    const int64_t length = std::min(inner - column, end - position);
    BroadcastLayout::Offsets at{};
    for (int op = 0; op < layout.num_operands; ++op) {
      at[op] = offsets[op] + column * layout.strides[op][last];
    }
    row(position, at, length);
    position += length;
    column = 0;
    for (int axis = last - 1; axis >= 0; --axis) {  // the odometer over the outer axes
      for (int op = 0; op < layout.num_operands; ++op) offsets[op] += layout.strides[op][axis];
      if (++index[axis] < layout.extents[axis]) break;
      for (int op = 0; op < layout.num_operands; ++op) {
        offsets[op] -= layout.strides[op][axis] * layout.extents[axis];
      }
      index[axis] = 0;
    }
  }
}

// out = op(lhs, rhs) with both operands broadcast to out_shape. `op` is called on Eigen arrays
// and scalars alike (a generic lambda such as [](auto x, auto y) { return x + y; }); out may be
// the same memory as an operand of the same shape.
template <typename T, typename Op>
void BroadcastBinary(Op op, const T* lhs, const Shape& lhs_shape, const T* rhs,
                     const Shape& rhs_shape, T* out, const Shape& out_shape) {
  const BroadcastLayout layout = MakeBroadcastLayout(out_shape, {lhs_shape, rhs_shape});
  const bool lhs_runs = layout.inner_stride(0) == 1, rhs_runs = layout.inner_stride(1) == 1;
  ForEachChunk(layout.size(), [&](int64_t begin, int64_t end) {
    ForEachRow(layout, begin, end,
               [&](int64_t position, const BroadcastLayout::Offsets& at, int64_t length) {
                 EigenArray<T> result(out + position, length);
                 EigenArray<const T> x(lhs + at[0], length), y(rhs + at[1], length);
                 if (lhs_runs && rhs_runs) {
                   result = op(x, y);
                 } else if (lhs_runs) {
                   result = op(x, rhs[at[1]]);
                 } else if (rhs_runs) {
                   result = op(lhs[at[0]], y);
                 } else {  // a one-element output
                   result.setConstant(op(lhs[at[0]], rhs[at[1]]));
                 }
               });
  });
}

// dst = scale * src broadcast to dst_shape (e.g. Gemm's C to (M, N)).
template <typename T>
void BroadcastTo(const T* src, const Shape& src_shape, T* dst, const Shape& dst_shape, T scale) {
  const BroadcastLayout layout = MakeBroadcastLayout(dst_shape, {src_shape});
  const bool runs = layout.inner_stride(0) == 1;
  ForEachChunk(layout.size(), [&](int64_t begin, int64_t end) {
    ForEachRow(layout, begin, end,
               [&](int64_t position, const BroadcastLayout::Offsets& at, int64_t length) {
                 EigenArray<T> result(dst + position, length);
                 if (runs) {
                   result = scale * EigenArray<const T>(src + at[0], length);
                 } else {
                   result.setConstant(scale * src[at[0]]);
                 }
               });
  });
}

namespace detail {
// The reduction plan of ReduceToShape; see there.
struct ReducePlan {
  BroadcastLayout layout;                              // over the source; operand 0 is dst
  std::array<int64_t, Shape::kMaxDims> src_strides{};  // contiguous source strides
  int kept[Shape::kMaxDims] = {}, num_kept = 0;        // outer axes kept in dst
  int reduced[Shape::kMaxDims] = {}, num_reduced = 0;  // outer axes summed over
  bool inner_kept = false;
  int64_t unit_length = 1;  // dst elements per unit: the last axis when kept, else 1
  int64_t units = 1, terms = 1, slices = 1;
};
ReducePlan MakeReducePlan(const Shape& src_shape, const Shape& dst_shape);
// Source offset of the `index`-th combination of `axes` (row-major over them).
inline int64_t OffsetOf(const ReducePlan& plan, const int* axes, int count, int64_t index) {
  int64_t offset = 0;
  for (int i = count - 1; i >= 0; --i) {
    const int axis = axes[i];
    offset += (index % plan.layout.extents[axis]) * plan.src_strides[axis];
    index /= plan.layout.extents[axis];
  }
  return offset;
}
}  // namespace detail

// dst = scale * (src summed over the axes along which dst_shape broadcasts to src_shape): the
// gradient of a broadcast operand. dst_shape must broadcast to src_shape. The split of large
// reductions into partial sums (in `scratch`) depends on the shapes only, never on the thread
// count, so results are reproducible.
template <typename T>
void ReduceToShape(const T* src, const Shape& src_shape, T* dst, const Shape& dst_shape, T scale,
                   ScratchSpace* scratch) {
  const int64_t dst_size = dst_shape.size();
  if (src_shape.size() == 0) {
    std::fill(dst, dst + dst_size, T(0));
    return;
  }
  if (dst_size == src_shape.size()) {  // nothing to reduce
    ForEachChunk(dst_size, [&](int64_t begin, int64_t end) {
      EigenArray<T>(dst + begin, end - begin) =
          scale * EigenArray<const T>(src + begin, end - begin);
    });
    return;
  }
  const detail::ReducePlan plan = detail::MakeReducePlan(src_shape, dst_shape);
  const int64_t inner = plan.layout.inner();
  T* partial = plan.slices == 1 ? dst : scratch->GetArray<T>(plan.slices * dst_size);
  const int64_t tasks = plan.slices * plan.units;
  const int64_t work_per_task = std::max<int64_t>(1, src_shape.size() / tasks);
  const int64_t tasks_per_block = std::max<int64_t>(1, kElementwiseGrain / work_per_task);
  const T unit_scale = plan.slices == 1 ? scale : T(1);
  auto run_task = [&](int64_t task) {
    const int64_t slice = task / plan.units, unit = task % plan.units;
    const int64_t base = detail::OffsetOf(plan, plan.kept, plan.num_kept, unit);
    const int64_t first = plan.terms * slice / plan.slices;
    const int64_t last = plan.terms * (slice + 1) / plan.slices;
    T* target = partial + slice * dst_size + unit * plan.unit_length;
    if (plan.inner_kept) {
      EigenArray<T> sum(target, inner);
      sum.setZero();
      for (int64_t term = first; term < last; ++term) {
        const int64_t offset = base + detail::OffsetOf(plan, plan.reduced, plan.num_reduced, term);
        sum += EigenArray<const T>(src + offset, inner);
      }
      if (unit_scale != T(1)) sum *= unit_scale;
    } else {
      T sum = 0;
      for (int64_t term = first; term < last; ++term) {
        const int64_t offset = base + detail::OffsetOf(plan, plan.reduced, plan.num_reduced, term);
        sum += EigenArray<const T>(src + offset, inner).sum();
      }
      *target = unit_scale * sum;
    }
  };
  const int64_t blocks = (tasks + tasks_per_block - 1) / tasks_per_block;
  ParallelFor(blocks, [&](int64_t block) {
    const int64_t end = std::min(tasks, (block + 1) * tasks_per_block);
    for (int64_t task = block * tasks_per_block; task < end; ++task) run_task(task);
  });
  if (plan.slices == 1) return;
  ForEachChunk(dst_size, [&](int64_t begin, int64_t end) {
    EigenArray<T> result(dst + begin, end - begin);
    result = EigenArray<const T>(partial + begin, end - begin);
    for (int64_t slice = 1; slice < plan.slices; ++slice) {
      result += EigenArray<const T>(partial + slice * dst_size + begin, end - begin);
    }
    result *= scale;
  });
}

}  // namespace mxlite::cpu
