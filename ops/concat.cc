// Concat: joins num_args inputs (arg0 .. argN-1) along axis `dim` (default 1, negative counts from
// the end). Every other extent must agree. Seen as (outer, extent_i * inner) blocks, the output row
// of each outer index is the inputs' rows one after another, so forward and backward are block
// copies (any dtype); backward splits the gradient and needs no forward tensor.
#include <algorithm>
#include <cstring>

#include "ops/concat.h"
#include "ops/cpu/copy.h"
#include "ops/cpu/parallel.h"
#include "ops/operator.h"

namespace mxlite {

int ConcatAxisOf(const Attributes& attrs, int ndim) {
  const int64_t dim = attrs.GetInt("dim");
  return static_cast<int>(dim < 0 ? dim + ndim : dim);
}

namespace {

constexpr int64_t kBytesPerBlock = 256 << 10;  // less is not worth waking a thread for

int NumArgs(const Attributes& attrs) { return static_cast<int>(attrs.GetInt("num_args")); }

}  // namespace

std::vector<std::string> ConcatArgNames(const Attributes& attrs) {
  std::vector<std::string> names;
  for (int i = 0; i < NumArgs(attrs); ++i) names.push_back("arg" + std::to_string(i));
  return names;
}

void ConcatInferShape(const Attributes& attrs, ShapeInference& shapes) {
  const Shape& first = shapes.Input(0);
  const int64_t dim = attrs.GetInt("dim");
  const int axis = ConcatAxisOf(attrs, first.ndim());
  MX_CHECK(axis >= 0 && axis < first.ndim())
      << shapes.op << " " << shapes.node << ": dim=" << dim << " is out of range for input 'arg0' "
      << first << " (" << first.ndim() << " dims)";
  Shape output = first;
  for (int i = 1; i < NumArgs(attrs); ++i) {
    const Shape& input = shapes.Input(i);
    bool matches = input.ndim() == first.ndim();
    for (int d = 0; matches && d < first.ndim(); ++d) matches = d == axis || input[d] == first[d];
    MX_CHECK(matches) << shapes.op << " " << shapes.node << ": cannot concatenate 'arg0' " << first
                      << " and '" << shapes.input_names[i] << "' " << input << " along dim " << dim
                      << ": the other extents differ";
    output[axis] += input[axis];
  }
  shapes.AssignOutput(0, output);
}

namespace {

// Copies between the output (outer, total_row) and the inputs (outer, row_i); `to_output` says
// which way. Each (outer index, input) block is one task.
void CopyBlocks(const TensorView& whole, const std::vector<TensorView>& parts, int axis,
                const std::vector<WriteMode>* part_req, bool to_output) {
  const int64_t outer = whole.shape.size(0, axis);
  const int64_t element = static_cast<int64_t>(DTypeSize(whole.dtype));
  const int64_t whole_row = whole.shape.size(axis, whole.shape.ndim()) * element;
  std::vector<int64_t> row(parts.size()), start(parts.size());
  int64_t position = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    row[i] = parts[i].shape.size(axis, parts[i].shape.ndim()) * element;
    start[i] = position;
    position += row[i];
  }
  const int64_t count = static_cast<int64_t>(parts.size());
  const int64_t tasks = outer * count;
  const int64_t bytes_per_task = std::max<int64_t>(1, whole_row / count);
  const int64_t tasks_per_block = std::max<int64_t>(1, kBytesPerBlock / bytes_per_task);
  cpu::ParallelFor((tasks + tasks_per_block - 1) / tasks_per_block, [&](int64_t block) {
    const int64_t end = std::min(tasks, (block + 1) * tasks_per_block);
    for (int64_t task = block * tasks_per_block; task < end; ++task) {
      const int64_t o = task / count, i = task % count;
      if (part_req != nullptr && (*part_req)[i] == WriteMode::kNull) continue;
      char* whole_bytes = static_cast<char*>(whole.data) + o * whole_row + start[i];
      char* part_bytes = static_cast<char*>(parts[i].data) + o * row[i];
      if (to_output) {
        std::memcpy(whole_bytes, part_bytes, static_cast<size_t>(row[i]));
      } else {
        std::memcpy(part_bytes, whole_bytes, static_cast<size_t>(row[i]));
      }
    }
  });
}

void ConcatForwardCpu(const OpContext&, const Attributes& attrs,
                      const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                      const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const int axis = ConcatAxisOf(attrs, outputs[0].shape.ndim());
  if (inputs.size() == 1) {
    cpu::CopyElements(inputs[0].data, outputs[0].data, outputs[0].size(),
                      DTypeSize(outputs[0].dtype));
    return;
  }
  CopyBlocks(outputs[0], inputs, axis, nullptr, /*to_output=*/true);
}

void ConcatBackwardCpu(const OpContext&, const Attributes& attrs,
                       const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                       const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                       const std::vector<WriteMode>& req) {
  const int axis = ConcatAxisOf(attrs, output_grads[0].shape.ndim());
  CopyBlocks(output_grads[0], input_grads, axis, &req, /*to_output=*/false);
}

}  // namespace

MXLITE_REGISTER_OP(Concat) {
  OpDef op;
  op.name = "Concat";
  op.doc = "Joins num_args inputs along axis `dim`; the other extents must agree.";
  op.attributes.Int("num_args", "number of inputs", Required(), 1)
      .Int("dim", "the axis to join along; negative counts from the end", Default("1"));
  op.input_names = ConcatArgNames;
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = ConcatInferShape;
  op.backward_dependencies = [](const Attributes& attrs) -> BackwardDependencies {
    return {std::vector<bool>(NumArgs(attrs), false), {false}};
  };
  op.layout.role = LayoutRole::kAgnostic;
  op.layout.joins_along_axis = true;
  op.layout.retarget = [](const Attributes& attrs, ActivationLayout layout,
                          std::map<std::string, std::string>& text) {
    text["dim"] = AxisTextIn(layout, attrs.GetInt("dim"));
  };
  op.forward[DeviceType::kCPU] = ConcatForwardCpu;
  op.backward[DeviceType::kCPU] = ConcatBackwardCpu;
  return op;
}

}  // namespace mxlite
