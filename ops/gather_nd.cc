// gather_nd (ops/gather_nd.h): the OpDef and the CPU kernels: a memcpy per picked slice over the
// intra-op threads; backward adds the slices back in order (repeats add up the same way on every
// thread count).
#include "ops/gather_nd.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "ops/cpu/parallel.h"
#include "ops/index_values.h"
#include "ops/operator.h"

namespace mxlite {

std::string GatherNdOwner(const std::string& node) { return "gather_nd " + node; }

Shape GatherNdShape(const Shape& data, const Shape& indices, const std::string& owner) {
  MX_CHECK(indices.ndim() >= 1) << owner << ": indices are a scalar; they need the tuples' axis "
                                << "first, (M, ...)";
  const int m = static_cast<int>(indices[0]);
  MX_CHECK(m >= 1 && m <= data.ndim())
      << owner << ": indices " << indices << " hold tuples of " << indices[0]
      << " indices, for data " << data << " of rank " << data.ndim();
  const std::vector<int64_t> index_dims = indices.to_vector();
  std::vector<int64_t> dims(index_dims.begin() + 1, index_dims.end());
  for (int d = m; d < data.ndim(); ++d) dims.push_back(data[d]);
  return Shape(dims);
}

GatherNdSlices GatherNdSlicesOf(const TensorView& indices, const Shape& data,
                                const std::string& owner) {
  GatherNdShape(data, indices.shape, owner);
  const int m = static_cast<int>(indices.shape[0]);
  const int64_t tuples = indices.shape.size(1, indices.shape.ndim());
  GatherNdSlices slices;
  slices.size = data.size(m, data.ndim());
  slices.offsets.resize(static_cast<size_t>(tuples));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = 0;
    for (int a = 0; a < m; ++a) {
      int64_t value = IntegerValueAt(indices, static_cast<size_t>(a * tuples + t), owner, "index");
      MX_CHECK(value >= -data[a] && value < data[a])
          << owner << ": index " << value << " of tuple " << t << " is outside [" << -data[a]
          << ", " << data[a] << ") (axis " << a << " of data " << data << ")";
      if (value < 0) value += data[a];
      offset = offset * data[a] + value;
    }
    slices.offsets[static_cast<size_t>(t)] = offset * slices.size;
  }
  return slices;
}

namespace {

void ForwardCpu(const OpContext& ctx, const Attributes&, const std::vector<TensorView>& inputs,
                const std::vector<TensorView>& outputs, const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const GatherNdSlices s =
      GatherNdSlicesOf(inputs[1], inputs[0].shape, GatherNdOwner(ctx.node_name));
  const size_t bytes = static_cast<size_t>(s.size) * DTypeSize(inputs[0].dtype);
  const auto* data = static_cast<const uint8_t*>(inputs[0].data);
  auto* out = static_cast<uint8_t*>(outputs[0].data);
  const int64_t count = static_cast<int64_t>(s.offsets.size());
  const int64_t tasks = std::clamp<int64_t>(count * s.size / 16384, 1, 64);
  cpu::ParallelFor(tasks, [&](int64_t task) {
    for (int64_t t = count * task / tasks; t < count * (task + 1) / tasks; ++t) {
      std::memcpy(out + static_cast<size_t>(t) * bytes,
                  data + static_cast<size_t>(s.offsets[static_cast<size_t>(t)]) *
                             DTypeSize(inputs[0].dtype),
                  bytes);
    }
  });
}

void BackwardCpu(const OpContext& ctx, const Attributes&,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>& inputs,
                 const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = GatherNdOwner(ctx.node_name);
  const GatherNdSlices s = GatherNdSlicesOf(inputs[1], input_grads[0].shape, owner);
  MXLITE_FLOAT_TYPE_SWITCH(output_grads[0].dtype, T, owner, {
    const T* dy = output_grads[0].data_as<T>();
    T* dx = input_grads[0].data_as<T>();
    std::fill(dx, dx + input_grads[0].size(), T(0));
    for (size_t t = 0; t < s.offsets.size(); ++t) {
      const T* from = dy + static_cast<int64_t>(t) * s.size;
      T* to = dx + s.offsets[t];
      for (int64_t e = 0; e < s.size; ++e) to[e] += from[e];
    }
  });
}

}  // namespace

MXLITE_REGISTER_OP(gather_nd) {
  OpDef op;
  op.name = "gather_nd";
  op.doc =
      "The slices of data that the index tuples along indices' first axis pick (MXNet's "
      "gather_nd; ONNX's GatherND).";
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data", "indices"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = [](const Attributes&, ShapeInference& shapes) {
    shapes.AssignOutput(
        0, GatherNdShape(shapes.Input(0), shapes.Input(1), shapes.op + " " + shapes.node));
  };
  op.infer_dtype = [](const Attributes&, DTypeInference& dtypes) {
    // Undeclared variables are float32, as everywhere else (floating indices holding integers are
    // read as such).
    if (!dtypes.inputs[0]) dtypes.inputs[0] = DType::kFloat32;
    if (!dtypes.inputs[1]) dtypes.inputs[1] = DType::kFloat32;
    dtypes.outputs[0] = dtypes.inputs[0];
  };
  op.input_has_gradient = [](const Attributes&) { return std::vector<bool>{true, false}; };
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{false, true}, {false}};
  };
  op.forward[DeviceType::kCPU] = ForwardCpu;
  op.backward[DeviceType::kCPU] = BackwardCpu;
  return op;
}

}  // namespace mxlite
