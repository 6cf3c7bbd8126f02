// cumsum (NumPy's np.cumsum with ONNX's CumSum options): running sums along `axis`; `exclusive`
// leaves each element out of its own sum (the first sum is 0), `reverse` runs from the end. float32
// and float64 (sums in double) and int32 and int64 (sums in uint64: they wrap as the type does,
// with no undefined overflow).
// Gradient: the cumsum of the output gradient the other way round (reverse flipped, exclusive
// kept).
#include <algorithm>
#include <vector>

#include "ops/cpu/parallel.h"
#include "ops/cumsum.h"
#include "ops/operator.h"

namespace mxlite {

CumsumLines CumsumLinesOf(const Attributes& attrs, const Shape& shape, bool for_gradient,
                          const std::string& owner) {
  MX_CHECK(shape.ndim() >= 1) << owner << ": data is a scalar; cumsum needs an axis";
  const int64_t axis = attrs.GetInt("axis");
  MX_CHECK(axis >= -shape.ndim() && axis < shape.ndim())
      << owner << ": axis " << axis << " is outside [" << -shape.ndim() << ", " << shape.ndim()
      << ") for data " << shape;
  const int a = static_cast<int>(axis < 0 ? axis + shape.ndim() : axis);
  CumsumLines lines;
  lines.outer = shape.size(0, a);
  lines.length = shape[a];
  lines.inner = shape.size(a + 1, shape.ndim());
  lines.exclusive = attrs.GetBool("exclusive");
  lines.reverse = attrs.GetBool("reverse") != for_gradient;
  return lines;
}

namespace {

// out = the running sums of in along the lines, in `Acc`; a block of outer indices per task, the
// inner elements of a step summed side by side (they are contiguous).
template <typename T, typename Acc>
void RunningSums(const CumsumLines& lines, const T* in, T* out) {
  const int64_t tasks = std::clamp<int64_t>(
      std::min(lines.outer, lines.outer * lines.length * lines.inner / 16384), 1, 64);
  cpu::ParallelFor(tasks, [&](int64_t task) {
    std::vector<Acc> sums(static_cast<size_t>(lines.inner));
    for (int64_t o = lines.outer * task / tasks; o < lines.outer * (task + 1) / tasks; ++o) {
      std::fill(sums.begin(), sums.end(), Acc(0));
      for (int64_t step = 0; step < lines.length; ++step) {
        const int64_t k = lines.reverse ? lines.length - 1 - step : step;
        const int64_t base = (o * lines.length + k) * lines.inner;
        for (int64_t i = 0; i < lines.inner; ++i) {
          const Acc value = static_cast<Acc>(in[base + i]);
          if (lines.exclusive) {
            out[base + i] = static_cast<T>(sums[i]);
            sums[i] += value;
          } else {
            sums[i] += value;
            out[base + i] = static_cast<T>(sums[i]);
          }
        }
      }
    }
  });
}

void Sums(const CumsumLines& lines, const TensorView& in, const TensorView& out,
          const std::string& owner) {
  MX_CHECK(in.data != out.data) << owner << ": cumsum does not run in place";
  switch (in.dtype) {
    case DType::kFloat32:
      return RunningSums<float, double>(lines, in.data_as<float>(), out.data_as<float>());
    case DType::kFloat64:
      return RunningSums<double, double>(lines, in.data_as<double>(), out.data_as<double>());
    case DType::kInt32:
      return RunningSums<int32_t, uint64_t>(lines, in.data_as<int32_t>(), out.data_as<int32_t>());
    case DType::kInt64:
      return RunningSums<int64_t, uint64_t>(lines, in.data_as<int64_t>(), out.data_as<int64_t>());
    default:
      MX_THROW() << owner << ": dtype " << in.dtype
                 << " is not supported (float32, float64, int32 and int64 are)";
  }
}

void ForwardCpu(const OpContext& ctx, const Attributes& attrs,
                const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "cumsum " + ctx.node_name;
  Sums(CumsumLinesOf(attrs, inputs[0].shape, false, owner), inputs[0], outputs[0], owner);
}

void BackwardCpu(const OpContext& ctx, const Attributes& attrs,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                 const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = "cumsum " + ctx.node_name;
  Sums(CumsumLinesOf(attrs, output_grads[0].shape, true, owner), output_grads[0], input_grads[0],
       owner);
}

}  // namespace

MXLITE_REGISTER_OP(cumsum) {
  OpDef op;
  op.name = "cumsum";
  op.doc = "Running sums along `axis` (np.cumsum; ONNX's CumSum with exclusive and reverse).";
  op.attributes.Int("axis", "the axis summed along; negative counts from the end", Default("0"))
      .Bool("exclusive", "leave each element out of its own sum", Default("false"))
      .Bool("reverse", "sum from the end of the axis", Default("false"));
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = [](const Attributes& attrs, ShapeInference& shapes) {
    CumsumLinesOf(attrs, shapes.Input(0), false, shapes.op + " " + shapes.node);
    shapes.AssignOutput(0, shapes.Input(0));
  };
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{false}, {false}};
  };
  op.forward[DeviceType::kCPU] = ForwardCpu;
  op.backward[DeviceType::kCPU] = BackwardCpu;
  return op;
}

}  // namespace mxlite
