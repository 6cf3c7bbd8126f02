#include "ops/cpu/broadcast.h"

#include "core/error.h"

namespace mxlite::cpu {

int64_t BroadcastLayout::size() const {
  int64_t product = 1;
  for (int axis = 0; axis < ndim; ++axis) product *= extents[axis];
  return product;
}

BroadcastLayout MakeBroadcastLayout(const Shape& out, std::initializer_list<Shape> operands) {
  MX_CHECK(operands.size() <= BroadcastLayout::kMaxOperands)
      << "a broadcast layout takes at most " << BroadcastLayout::kMaxOperands << " operands";
  BroadcastLayout layout;
  layout.num_operands = static_cast<int>(operands.size());
  // spans[op][axis]: the operand has the output's extent along the axis (else it is broadcast).
  std::array<std::array<bool, Shape::kMaxDims>, BroadcastLayout::kMaxOperands> spans{};
  int op = 0;
  for (const Shape& operand : operands) {
    MX_CHECK(operand.ndim() <= out.ndim())
        << "shape " << operand << " does not broadcast to " << out;
    for (int axis = 0; axis < out.ndim(); ++axis) {
      const int from_end = out.ndim() - axis;
      const int64_t extent = from_end <= operand.ndim() ? operand[operand.ndim() - from_end] : 1;
      MX_CHECK(extent == out[axis] || extent == 1)
          << "shape " << operand << " does not broadcast to " << out;
      spans[op][axis] = extent == out[axis];
    }
    ++op;
  }
  // Merge runs of axes with the same span pattern; output axes of extent 1 vanish.
  std::array<std::array<bool, Shape::kMaxDims>, BroadcastLayout::kMaxOperands> merged_spans{};
  for (int axis = 0; axis < out.ndim(); ++axis) {
    if (out[axis] == 1) continue;
    bool same = layout.ndim > 0;
    for (int i = 0; same && i < layout.num_operands; ++i) {
      same = merged_spans[i][layout.ndim - 1] == spans[i][axis];
    }
    if (same) {
      layout.extents[layout.ndim - 1] *= out[axis];
      continue;
    }
    for (int i = 0; i < layout.num_operands; ++i) merged_spans[i][layout.ndim] = spans[i][axis];
    layout.extents[layout.ndim++] = out[axis];
  }
  if (layout.ndim == 0) {  // one element
    layout.ndim = 1;
    layout.extents[0] = 1;
    for (int i = 0; i < layout.num_operands; ++i) merged_spans[i][0] = true;
  }
  for (int i = 0; i < layout.num_operands; ++i) {
    int64_t stride = 1;
    for (int axis = layout.ndim - 1; axis >= 0; --axis) {
      layout.strides[i][axis] = merged_spans[i][axis] ? stride : 0;
      if (merged_spans[i][axis]) stride *= layout.extents[axis];
    }
  }
  return layout;
}

namespace detail {

ReducePlan MakeReducePlan(const Shape& src_shape, const Shape& dst_shape) {
  ReducePlan plan;
  plan.layout = MakeBroadcastLayout(src_shape, {dst_shape});
  const BroadcastLayout& layout = plan.layout;
  const int last = layout.ndim - 1;
  int64_t stride = 1;
  for (int axis = last; axis >= 0; --axis) {
    plan.src_strides[axis] = stride;
    stride *= layout.extents[axis];
  }
  for (int axis = 0; axis < last; ++axis) {
    if (layout.strides[0][axis] != 0) {
      plan.kept[plan.num_kept++] = axis;
      plan.units *= layout.extents[axis];
    } else {
      plan.reduced[plan.num_reduced++] = axis;
      plan.terms *= layout.extents[axis];
    }
  }
  plan.inner_kept = layout.inner_stride(0) != 0;
  plan.unit_length = plan.inner_kept ? layout.inner() : 1;
  // Too few units to keep the threads busy: split each unit's terms into partial sums. The split
  // depends on the sizes only, so the summation order does not change with the thread count.
  const int64_t total = layout.size();
  constexpr int64_t kMaxSlices = 32;
  if (plan.units < 8 && total >= 4 * kElementwiseGrain) {
    plan.slices = std::min({plan.terms, total / (2 * kElementwiseGrain), kMaxSlices});
    plan.slices = std::max<int64_t>(plan.slices, 1);
  }
  return plan;
}

}  // namespace detail
}  // namespace mxlite::cpu
