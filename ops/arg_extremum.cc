#include "ops/arg_extremum.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "ops/cpu/parallel.h"
#include "ops/operator.h"

namespace mxlite {

ArgSearch ArgSearchOf(const Attributes& attrs, const Shape& data, const std::string& owner) {
  ArgSearch search;
  const bool keepdims = attrs.GetBool("keepdims");
  std::vector<int64_t> output;
  if (!attrs.Has("axis")) {
    search.extent = data.size();
    if (keepdims) output.assign(static_cast<size_t>(data.ndim()), 1);
  } else {
    int64_t axis = attrs.GetInt("axis");
    MX_CHECK(axis >= -data.ndim() && axis < data.ndim())
        << owner << ": axis " << axis << " is out of range for data " << data;
    if (axis < 0) axis += data.ndim();
    const int a = static_cast<int>(axis);
    search.outer = data.size(0, a);
    search.extent = data[a];
    search.inner = data.size(a + 1, data.ndim());
    for (int d = 0; d < data.ndim(); ++d) {
      if (d != a) {
        output.push_back(data[d]);
      } else if (keepdims) {
        output.push_back(1);
      }
    }
  }
  MX_CHECK(search.extent > 0) << owner << ": the searched axis of data " << data << " is empty";
  search.output = Shape(output);
  return search;
}

namespace {

// Whether `x` beats `best` (strictly: the first index wins a tie); NaN beats every number.
template <bool kLargest, typename T>
bool Beats(T x, T best) {
  if (std::isnan(best)) return false;
  if (std::isnan(x)) return true;
  return kLargest ? x > best : x < best;
}

template <bool kLargest, typename T>
void Search(const ArgSearch& s, const T* x, T* y) {
  cpu::ParallelFor(s.outer, [&](int64_t o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      const T* row = x + o * s.extent * s.inner + i;
      int64_t best = 0;
      for (int64_t k = 1; k < s.extent; ++k) {
        if (Beats<kLargest>(row[k * s.inner], row[best * s.inner])) best = k;
      }
      y[o * s.inner + i] = static_cast<T>(best);
    }
  });
}

std::string Owner(const char* op, const std::string& node) { return std::string(op) + " " + node; }

template <bool kLargest>
OpDef MakeArgOp(const char* name) {
  OpDef op;
  op.name = name;
  op.doc = kLargest ? "The index of the largest element along axis, in the data's dtype."
                    : "The index of the smallest element along axis, in the data's dtype.";
  op.attributes
      .Int("axis", "the axis searched; negative counts from the end; absent: the data flattened",
           Optional())
      .Bool("keepdims", "keep the searched axis with extent 1", Default("false"));
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = [name](const Attributes& attrs, ShapeInference& shapes) {
    shapes.AssignOutput(0, ArgSearchOf(attrs, shapes.Input(0), Owner(name, shapes.node)).output);
  };
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{false}, {false}};
  };
  op.forward[DeviceType::kCPU] = [name](const OpContext& ctx, const Attributes& attrs,
                                        const std::vector<TensorView>& inputs,
                                        const std::vector<TensorView>& outputs,
                                        const std::vector<WriteMode>& req) {
    if (req[0] == WriteMode::kNull) return;
    const std::string owner = Owner(name, ctx.node_name);
    const ArgSearch search = ArgSearchOf(attrs, inputs[0].shape, owner);
    MXLITE_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, owner, {
      Search<kLargest>(search, inputs[0].data_as<T>(), outputs[0].data_as<T>());
    });
  };
  op.backward[DeviceType::kCPU] = [name](const OpContext& ctx, const Attributes&,
                                         const std::vector<TensorView>&,
                                         const std::vector<TensorView>&,
                                         const std::vector<TensorView>&,
                                         const std::vector<TensorView>& input_grads,
                                         const std::vector<WriteMode>& req) {
    if (req[0] == WriteMode::kNull) return;
    MXLITE_FLOAT_TYPE_SWITCH(input_grads[0].dtype, T, Owner(name, ctx.node_name), {
      T* grad = input_grads[0].data_as<T>();
      std::fill(grad, grad + input_grads[0].size(), T(0));
    });
  };
  return op;
}

}  // namespace

MXLITE_REGISTER_OP(argmax) { return MakeArgOp<true>("argmax"); }
MXLITE_REGISTER_OP(argmin) { return MakeArgOp<false>("argmin"); }

}  // namespace mxlite
