// scatter_elements (ops/scatter_elements.h): the OpDef and the CPU kernels. The output starts as
// a copy of data; then each line of the index is written in order, lines split over the intra-op
// threads. Backward walks the same lines.
#include "ops/scatter_elements.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "ops/cpu/elementwise.h"
#include "ops/index_values.h"
#include "ops/operator.h"

namespace mxlite {

std::string ScatterElementsOwner(const std::string& node) { return "scatter_elements " + node; }

ScatterReduction ScatterReductionOf(const Attributes& attrs) {
  const std::string reduction = attrs.GetString("reduction");
  return reduction == "add"   ? ScatterReduction::kAdd
         : reduction == "mul" ? ScatterReduction::kMul
         : reduction == "max" ? ScatterReduction::kMax
         : reduction == "min" ? ScatterReduction::kMin
                              : ScatterReduction::kNone;
}

ScatterLines ScatterLinesOf(const Shape& index, int axis) {
  ScatterLines lines;
  lines.steps = index[axis];
  lines.inner = std::max<int64_t>(index.size(axis + 1, index.ndim()), 1);
  lines.lines = lines.steps == 0 ? 0 : index.size() / lines.steps;
  return lines;
}

namespace {

// fn(T{}) with T the C++ type of `dtype`, for the reductions' arithmetic.
template <typename Fn>
void WithArithmeticType(DType dtype, const std::string& owner, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32:
      fn(float{});
      break;
    case DType::kFloat64:
      fn(double{});
      break;
    case DType::kInt32:
      fn(int32_t{});
      break;
    case DType::kInt64:
      fn(int64_t{});
      break;
    default:
      MX_THROW() << owner << ": a reduction needs float32, float64, int32 or int64 data, not "
                 << dtype;
  }
}

// What is there combined with an update (max and min keep NaN).
template <typename T>
T Combine(ScatterReduction reduction, T there, T update) {
  switch (reduction) {
    case ScatterReduction::kAdd:
      return there + update;
    case ScatterReduction::kMul:
      return there * update;
    case ScatterReduction::kMax:
      return there != there || update != update ? (there != there ? there : update)
                                                : std::max(there, update);
    case ScatterReduction::kMin:
      return there != there || update != update ? (there != there ? there : update)
                                                : std::min(there, update);
    default:
      return update;
  }
}

// The node's axis, lines and the data offset of each index element.
struct Scatter {
  ScatterReduction reduction;
  ScatterLines lines;
  std::vector<int64_t> offsets;
};
Scatter ScatterOf(const OpContext& ctx, const Attributes& attrs, const Shape& data,
                  const TensorView& index) {
  const std::string owner = ScatterElementsOwner(ctx.node_name);
  const int axis = ElementIndexAxis(attrs, data, index.shape, owner, "scattered");
  return {ScatterReductionOf(attrs), ScatterLinesOf(index.shape, axis),
          ElementIndexOffsets(index, data, axis, owner)};
}

// fn(j, t) for each index element j of every line in order, t its data offset; lines split over
// the intra-op threads.
template <typename Fn>
void ForEachWrite(const Scatter& s, Fn&& fn) {
  cpu::ForEachRowRange(s.lines.lines, s.lines.steps, [&](int64_t first, int64_t last) {
    for (int64_t line = first; line < last; ++line) {
      for (int64_t k = 0; k < s.lines.steps; ++k) {
        const int64_t j = s.lines.Element(line, k);
        fn(j, s.offsets[static_cast<size_t>(j)]);
      }
    }
  });
}

void ForwardCpu(const OpContext& ctx, const Attributes& attrs,
                const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const TensorView& data = inputs[0];
  const TensorView& updates = inputs[2];
  const Scatter s = ScatterOf(ctx, attrs, data.shape, inputs[1]);
  if (outputs[0].data != data.data) std::memcpy(outputs[0].data, data.data, data.bytes());
  if (s.reduction == ScatterReduction::kNone) {
    const size_t element = DTypeSize(data.dtype);
    auto* out = static_cast<uint8_t*>(outputs[0].data);
    const auto* from = static_cast<const uint8_t*>(updates.data);
    ForEachWrite(s, [&](int64_t j, int64_t t) {
      std::memcpy(out + static_cast<size_t>(t) * element, from + static_cast<size_t>(j) * element,
                  element);
    });
    return;
  }
  WithArithmeticType(data.dtype, ScatterElementsOwner(ctx.node_name), [&](auto zero) {
    using T = decltype(zero);
    T* out = outputs[0].data_as<T>();
    const T* update = updates.data_as<T>();
    ForEachWrite(s,
                 [&](int64_t j, int64_t t) { out[t] = Combine(s.reduction, out[t], update[j]); });
  });
}

// The gradients of one line (its writes in order: element j[k] at data offset t[k]). `there`
// (data's size) is scratch for mul's products and max / min's counts.
template <typename T>
void LineGradients(ScatterReduction reduction, const int64_t* j, const int64_t* t, int64_t steps,
                   const T* data, const T* update, const T* out, const T* dy, T* d_data,
                   T* d_update, T* there) {
  switch (reduction) {
    case ScatterReduction::kNone:
    case ScatterReduction::kAdd:
      for (int64_t k = 0; k < steps; ++k) {
        if (d_update != nullptr) d_update[j[k]] = dy[t[k]];
        if (d_data != nullptr && reduction == ScatterReduction::kNone) d_data[t[k]] = T(0);
      }
      return;
    case ScatterReduction::kMul:
      for (int64_t k = 0; k < steps; ++k) there[t[k]] = T(1);
      for (int64_t k = 0; k < steps; ++k) there[t[k]] *= update[j[k]];
      for (int64_t k = 0; k < steps; ++k) {
        if (d_data != nullptr) d_data[t[k]] = dy[t[k]] * there[t[k]];
        if (d_update == nullptr) continue;
        T others = data[t[k]];  // data times the other updates of the same element
        for (int64_t m = 0; m < steps; ++m) {
          if (m != k && t[m] == t[k]) others *= update[j[m]];
        }
        d_update[j[k]] = dy[t[k]] * others;
      }
      return;
    default:  // max, min: dy split among the values equal to the result
      for (int64_t k = 0; k < steps; ++k) there[t[k]] = T(data[t[k]] == out[t[k]] ? 1 : 0);
      for (int64_t k = 0; k < steps; ++k) there[t[k]] += T(update[j[k]] == out[t[k]] ? 1 : 0);
      for (int64_t k = 0; k < steps; ++k) {
        const T share = dy[t[k]] / there[t[k]];
        if (d_data != nullptr) d_data[t[k]] = data[t[k]] == out[t[k]] ? share : T(0);
        if (d_update != nullptr) d_update[j[k]] = update[j[k]] == out[t[k]] ? share : T(0);
      }
  }
}

void BackwardCpu(const OpContext& ctx, const Attributes& attrs,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>& inputs,
                 const std::vector<TensorView>& outputs, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  const bool want_data = req[0] != WriteMode::kNull, want_update = req[2] != WriteMode::kNull;
  if (!want_data && !want_update) return;
  // dy has data's shape (data itself is there only when the reduction reads it).
  const Scatter s = ScatterOf(ctx, attrs, output_grads[0].shape, inputs[1]);
  const std::string owner = ScatterElementsOwner(ctx.node_name);
  MXLITE_FLOAT_TYPE_SWITCH(output_grads[0].dtype, T, owner, {
    const T* dy = output_grads[0].data_as<T>();
    T* d_data = want_data ? input_grads[0].data_as<T>() : nullptr;
    T* d_update = want_update ? input_grads[2].data_as<T>() : nullptr;
    if (d_data != nullptr) std::copy(dy, dy + output_grads[0].size(), d_data);
    const bool needs_scratch =
        s.reduction != ScatterReduction::kNone && s.reduction != ScatterReduction::kAdd;
    T* there = needs_scratch
                   ? ctx.scratch->GetArray<T>(std::max<int64_t>(output_grads[0].size(), 1))
                   : nullptr;
    const T* data = needs_scratch ? inputs[0].data_as<T>() : nullptr;
    const T* update = needs_scratch ? inputs[2].data_as<T>() : nullptr;
    const T* out = needs_scratch ? outputs[0].data_as<T>() : nullptr;
    cpu::ForEachRowRange(s.lines.lines, s.lines.steps, [&](int64_t first, int64_t last) {
      std::vector<int64_t> j(static_cast<size_t>(s.lines.steps)), t(j.size());
      for (int64_t line = first; line < last; ++line) {
        for (int64_t k = 0; k < s.lines.steps; ++k) {
          j[k] = s.lines.Element(line, k);
          t[k] = s.offsets[static_cast<size_t>(j[k])];
        }
        LineGradients(s.reduction, j.data(), t.data(), s.lines.steps, data, update, out, dy, d_data,
                      d_update, there);
      }
    });
  });
}

}  // namespace

MXLITE_REGISTER_OP(scatter_elements) {
  OpDef op;
  op.name = "scatter_elements";
  op.doc =
      "data with `updates` written (or added, multiplied, maxed, minned) along `axis` where the "
      "index names (ONNX's ScatterElements, torch.scatter / scatter_reduce).";
  op.attributes
      .Int("axis", "the axis the index writes along; negative counts from the end", Default("0"))
      .Enum("reduction", {"none", "add", "mul", "max", "min"},
            "how an update combines with the element it lands on", Default("none"));
  op.input_names = [](const Attributes&) {
    return std::vector<std::string>{"data", "index", "updates"};
  };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = [](const Attributes& attrs, ShapeInference& shapes) {
    const std::string owner = shapes.op + " " + shapes.node;
    ElementIndexAxis(attrs, shapes.Input(0), shapes.Input(1), owner, "scattered");
    MX_CHECK(shapes.Input(2) == shapes.Input(1))
        << owner << ": updates have shape " << shapes.Input(2) << " but index " << shapes.Input(1)
        << "; they need the same shape";
    shapes.AssignOutput(0, shapes.Input(0));
  };
  op.infer_dtype = [](const Attributes&, DTypeInference& dtypes) {
    // Undeclared variables are float32, as everywhere else; the updates take the data's dtype.
    if (!dtypes.inputs[0])
      dtypes.inputs[0] = dtypes.inputs[2] ? *dtypes.inputs[2] : DType::kFloat32;
    if (!dtypes.inputs[1]) dtypes.inputs[1] = DType::kFloat32;
    if (!dtypes.inputs[2]) dtypes.inputs[2] = dtypes.inputs[0];
    MX_CHECK(*dtypes.inputs[2] == *dtypes.inputs[0])
        << dtypes.op << " " << dtypes.node << ": updates are " << *dtypes.inputs[2] << " but data "
        << *dtypes.inputs[0] << "; they need the same dtype";
    dtypes.outputs[0] = dtypes.inputs[0];
  };
  op.input_has_gradient = [](const Attributes&) { return std::vector<bool>{true, false, true}; };
  op.backward_dependencies = [](const Attributes& attrs) -> BackwardDependencies {
    const bool values = ScatterReductionOf(attrs) != ScatterReduction::kNone &&
                        ScatterReductionOf(attrs) != ScatterReduction::kAdd;
    return {{values, true, values}, {values}};
  };
  op.forward[DeviceType::kCPU] = ForwardCpu;
  op.backward[DeviceType::kCPU] = BackwardCpu;
  return op;
}

}  // namespace mxlite
