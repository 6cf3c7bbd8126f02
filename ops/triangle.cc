// tril and triu (NumPy's and MXNet's np.tril / np.triu; ONNX's Trilu): the lower or upper
// triangle of each matrix in the last two axes, the rest zero. Element (i, j) of a matrix stays
// when j - i <= k (tril) or j - i >= k (triu); k shifts the diagonal (0: the main one, positive:
// above it, negative: below). data has at least two axes, any dtype (zero bits are zero in every
// one). Gradient: the output gradient under the same mask.
#include <algorithm>
#include <cstring>

#include "ops/cpu/parallel.h"
#include "ops/operator.h"
#include "ops/triangle.h"

namespace mxlite {

TriangleMask TriangleMaskOf(const Attributes& attrs, bool upper, const Shape& data,
                            const std::string& owner) {
  MX_CHECK(data.ndim() >= 2) << owner << ": data has shape " << data
                             << " but a triangle needs at least two axes (rows, columns)";
  TriangleMask mask;
  mask.matrices = data.size(0, data.ndim() - 2);
  mask.rows = data.dim(-2);
  mask.columns = data.dim(-1);
  // Beyond [-rows, columns] every k keeps all or nothing, as the bounds do: clamped, row + k
  // cannot overflow.
  mask.k = std::clamp<int64_t>(attrs.GetInt("k"), -mask.rows, mask.columns);
  mask.upper = upper;
  return mask;
}

int64_t TriangleMask::KeptBegin(int64_t row) const {
  if (!upper) return 0;
  return std::clamp<int64_t>(row + k, 0, columns);  // j >= i + k
}

int64_t TriangleMask::KeptEnd(int64_t row) const {
  if (upper) return columns;
  return std::clamp<int64_t>(row + k + 1, 0, columns);  // j <= i + k
}

namespace {

// out = in where the mask keeps, zero elsewhere, row by row; `element` bytes per value. In place
// when out == in.
void ApplyMask(const TriangleMask& mask, size_t element, const void* in, void* out) {
  const auto* source = static_cast<const uint8_t*>(in);
  auto* target = static_cast<uint8_t*>(out);
  const int64_t total_rows = mask.matrices * mask.rows;
  const size_t row_bytes = static_cast<size_t>(mask.columns) * element;
  // Tasks of at least 16 KiB: smaller ones cost more to hand out than to copy.
  const int64_t bytes = total_rows * static_cast<int64_t>(row_bytes);
  const int64_t tasks = std::clamp<int64_t>(std::min(total_rows, bytes / 16384), 1, 64);
  cpu::ParallelFor(tasks, [&](int64_t task) {
    const int64_t first = total_rows * task / tasks, last = total_rows * (task + 1) / tasks;
    for (int64_t r = first; r < last; ++r) {
      const int64_t row = r % mask.rows;
      const size_t end = static_cast<size_t>(mask.KeptEnd(row));
      const size_t begin = std::min(static_cast<size_t>(mask.KeptBegin(row)), end);
      const uint8_t* from = source + static_cast<size_t>(r) * row_bytes;
      uint8_t* to = target + static_cast<size_t>(r) * row_bytes;
      std::memset(to, 0, begin * element);
      if (to != from) {
        std::memcpy(to + begin * element, from + begin * element, (end - begin) * element);
      }
      std::memset(to + end * element, 0, row_bytes - end * element);
    }
  });
}

template <bool kUpper>
void ForwardCpu(const OpContext& ctx, const Attributes& attrs,
                const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const TriangleMask mask =
      TriangleMaskOf(attrs, kUpper, inputs[0].shape, TriangleOwner(kUpper, ctx.node_name));
  ApplyMask(mask, DTypeSize(inputs[0].dtype), inputs[0].data, outputs[0].data);
}

template <bool kUpper>
void BackwardCpu(const OpContext& ctx, const Attributes& attrs,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                 const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const TriangleMask mask =
      TriangleMaskOf(attrs, kUpper, output_grads[0].shape, TriangleOwner(kUpper, ctx.node_name));
  ApplyMask(mask, DTypeSize(output_grads[0].dtype), output_grads[0].data, input_grads[0].data);
}

template <bool kUpper>
OpDef MakeTriangleOp() {
  OpDef op;
  op.name = kUpper ? "triu" : "tril";
  op.cheap_to_recompute = true;
  op.doc = kUpper ? "The upper triangle of each matrix in the last two axes (j - i >= k), the "
                    "rest zero."
                  : "The lower triangle of each matrix in the last two axes (j - i <= k), the "
                    "rest zero.";
  op.attributes.Int("k", "the diagonal: 0 the main one, positive above it, negative below",
                    Default("0"));
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = [](const Attributes& attrs, ShapeInference& shapes) {
    TriangleMaskOf(attrs, kUpper, shapes.Input(0), shapes.op + " " + shapes.node);
    shapes.AssignOutput(0, shapes.Input(0));
  };
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{false}, {false}};
  };
  op.inplace = {{0, 0}};
  op.forward[DeviceType::kCPU] = ForwardCpu<kUpper>;
  op.backward[DeviceType::kCPU] = BackwardCpu<kUpper>;
  return op;
}

}  // namespace

std::string TriangleOwner(bool upper, const std::string& node) {
  return std::string(upper ? "triu " : "tril ") + node;
}

MXLITE_REGISTER_OP(tril) { return MakeTriangleOp<false>(); }
MXLITE_REGISTER_OP(triu) { return MakeTriangleOp<true>(); }

}  // namespace mxlite
