// topk (ops/topk.h): the OpDef and the CPU kernels. Each line is ranked by std::partial_sort over
// its positions (ops/topk_order.h), lines split over the intra-op threads; backward ranks the
// lines again from the data (so `value` alone needs no positions kept).
#include "ops/topk.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "ops/cpu/elementwise.h"
#include "ops/operator.h"
#include "ops/topk_order.h"

namespace mxlite {

std::string TopkOwner(const std::string& node) { return "topk " + node; }

namespace {

TopkReturn ReturnOf(const Attributes& attrs) {
  const std::string ret = attrs.GetString("ret_typ");
  return ret == "value"  ? TopkReturn::kValue
         : ret == "both" ? TopkReturn::kBoth
         : ret == "mask" ? TopkReturn::kMask
                         : TopkReturn::kIndices;
}

DType PositionDType(const Attributes& attrs) { return ParseDType(attrs.GetString("dtype")); }

}  // namespace

TopkGeometry TopkGeometryOf(const Attributes& attrs, const Shape& data, const std::string& owner) {
  MX_CHECK(data.ndim() >= 1) << owner << ": data is a scalar; it needs an axis to rank along";
  const int64_t axis = attrs.GetInt("axis");
  MX_CHECK(axis >= -data.ndim() && axis < data.ndim())
      << owner << ": axis " << axis << " is outside [" << -data.ndim() << ", " << data.ndim()
      << ") for data " << data;
  const int a = static_cast<int>(axis < 0 ? axis + data.ndim() : axis);
  TopkGeometry g;
  g.outer = data.size(0, a);
  g.extent = data[a];
  g.inner = data.size(a + 1, data.ndim());
  const int64_t k = attrs.GetInt("k");
  MX_CHECK(k <= g.extent) << owner << ": k " << k << " is more than the " << g.extent
                          << " elements along axis " << a << " of data " << data;
  g.k = k < 1 ? g.extent : k;
  g.ret = ReturnOf(attrs);
  g.ascending = attrs.GetBool("is_ascend");
  return g;
}

namespace {

// The shape of the values and positions: data's with the axis cut to k.
Shape PickedShape(const Attributes& attrs, const Shape& data) {
  const int64_t axis = attrs.GetInt("axis");
  Shape picked = data;
  picked[static_cast<int>(axis < 0 ? axis + data.ndim() : axis)] =
      TopkGeometryOf(attrs, data, "topk").k;
  return picked;
}

// fn(o, i, ranked) for every line: ranked[0..k) the positions of its k first-ranked elements, in
// rank order; lines over the intra-op threads.
template <typename T, typename Fn>
void ForEachRankedLine(const TopkGeometry& g, const T* data, Fn&& fn) {
  cpu::ForEachRowRange(g.outer * g.inner, g.extent * 4, [&](int64_t first, int64_t last) {
    std::vector<int64_t> positions(static_cast<size_t>(g.extent));
    for (int64_t line = first; line < last; ++line) {
      const int64_t o = line / g.inner, i = line % g.inner;
      const T* x = data + o * g.extent * g.inner + i;
      std::iota(positions.begin(), positions.end(), int64_t{0});
      std::partial_sort(positions.begin(), positions.begin() + g.k, positions.end(),
                        [&](int64_t a, int64_t b) {
                          return TopkRanksBefore(x[a * g.inner], a, x[b * g.inner], b, g.ascending);
                        });
      fn(o, i, positions.data());
    }
  });
}

void StorePosition(const TensorView& out, int64_t at, int64_t position) {
  switch (out.dtype) {
    case DType::kFloat32:
      out.data_as<float>()[at] = static_cast<float>(position);
      break;
    case DType::kFloat64:
      out.data_as<double>()[at] = static_cast<double>(position);
      break;
    case DType::kInt32:
      out.data_as<int32_t>()[at] = static_cast<int32_t>(position);
      break;
    default:
      out.data_as<int64_t>()[at] = position;
      break;
  }
}

void ForwardCpu(const OpContext& ctx, const Attributes& attrs,
                const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                const std::vector<WriteMode>& req) {
  const std::string owner = TopkOwner(ctx.node_name);
  const TopkGeometry g = TopkGeometryOf(attrs, inputs[0].shape, owner);
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    const T* data = inputs[0].data_as<T>();
    if (g.ret == TopkReturn::kMask) {
      T* mask = outputs[0].data_as<T>();
      std::fill(mask, mask + outputs[0].size(), T(0));
      ForEachRankedLine(g, data, [&](int64_t o, int64_t i, const int64_t* ranked) {
        for (int64_t r = 0; r < g.k; ++r) mask[(o * g.extent + ranked[r]) * g.inner + i] = T(1);
      });
      return;
    }
    const bool values = g.ret == TopkReturn::kValue || g.ret == TopkReturn::kBoth;
    const bool positions = g.ret != TopkReturn::kValue;
    T* value_out = values && req[0] != WriteMode::kNull ? outputs[0].data_as<T>() : nullptr;
    const TensorView* position_out = positions ? &outputs[values ? 1 : 0] : nullptr;
    ForEachRankedLine(g, data, [&](int64_t o, int64_t i, const int64_t* ranked) {
      for (int64_t r = 0; r < g.k; ++r) {
        const int64_t at = (o * g.k + r) * g.inner + i;
        if (value_out != nullptr) value_out[at] = data[(o * g.extent + ranked[r]) * g.inner + i];
        if (position_out != nullptr) StorePosition(*position_out, at, ranked[r]);
      }
    });
  });
}

// The values' gradient goes back to the picked positions; positions and masks pass none.
void BackwardCpu(const OpContext& ctx, const Attributes& attrs,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>& inputs,
                 const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = TopkOwner(ctx.node_name);
  const TopkGeometry g = TopkGeometryOf(attrs, inputs[0].shape, owner);
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    T* dx = input_grads[0].data_as<T>();
    std::fill(dx, dx + input_grads[0].size(), T(0));
    if (g.ret != TopkReturn::kValue && g.ret != TopkReturn::kBoth) return;
    const T* dy = output_grads[0].data_as<T>();
    ForEachRankedLine(g, inputs[0].data_as<T>(), [&](int64_t o, int64_t i, const int64_t* ranked) {
      for (int64_t r = 0; r < g.k; ++r) {
        dx[(o * g.extent + ranked[r]) * g.inner + i] = dy[(o * g.k + r) * g.inner + i];
      }
    });
  });
}

}  // namespace

MXLITE_REGISTER_OP(topk) {
  OpDef op;
  op.name = "topk";
  op.doc =
      "The k largest (or smallest) elements along `axis` in rank order: their values, positions, "
      "both, or a mask (MXNet's topk, ONNX's TopK, torch.topk).";
  op.attributes.Int("axis", "the axis to rank along; negative counts from the end", Default("-1"))
      .Int("k", "how many to keep; k < 1 keeps the whole axis", Default("1"))
      .Enum("ret_typ", {"value", "indices", "both", "mask"}, "what to return", Default("indices"))
      .Bool("is_ascend", "the smallest instead of the largest", Default("false"))
      .Enum("dtype", {"float32", "float64", "int32", "int64"}, "the positions' dtype",
            Default("float32"));
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data"}; };
  op.output_names = [](const Attributes& attrs) {
    return ReturnOf(attrs) == TopkReturn::kBoth ? std::vector<std::string>{"value", "indices"}
                                                : std::vector<std::string>{"output"};
  };
  op.infer_shape = [](const Attributes& attrs, ShapeInference& shapes) {
    const Shape& data = shapes.Input(0);
    TopkGeometryOf(attrs, data, shapes.op + " " + shapes.node);
    const TopkReturn ret = ReturnOf(attrs);
    shapes.AssignOutput(0, ret == TopkReturn::kMask ? data : PickedShape(attrs, data));
    if (ret == TopkReturn::kBoth) shapes.AssignOutput(1, PickedShape(attrs, data));
  };
  op.infer_dtype = [](const Attributes& attrs, DTypeInference& dtypes) {
    if (!dtypes.inputs[0]) dtypes.inputs[0] = DType::kFloat32;
    const TopkReturn ret = ReturnOf(attrs);
    const bool positions_first = ret == TopkReturn::kIndices;
    dtypes.outputs[0] = positions_first ? PositionDType(attrs) : *dtypes.inputs[0];
    if (ret == TopkReturn::kBoth) dtypes.outputs[1] = PositionDType(attrs);
  };
  op.backward_dependencies = [](const Attributes& attrs) -> BackwardDependencies {
    return {{true}, std::vector<bool>(ReturnOf(attrs) == TopkReturn::kBoth ? 2 : 1, false)};
  };
  op.forward[DeviceType::kCPU] = ForwardCpu;
  op.backward[DeviceType::kCPU] = BackwardCpu;
  return op;
}

}  // namespace mxlite
