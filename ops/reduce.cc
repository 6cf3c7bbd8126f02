// sum, mean, max, min, prod: reductions over axes (ops/reduce.h); CPU kernels in ops/cpu/reduce.h,
// GPU kernels in ops/cuda/reduce_gpu.cc.
#include "ops/reduce.h"

#include <algorithm>

#include "core/error.h"
#include "ops/cpu/reduce.h"
#include "ops/operator.h"

namespace mxlite {

const char* ReductionName(Reduction reduction) {
  switch (reduction) {
    case Reduction::kSum:
      return "sum";
    case Reduction::kMean:
      return "mean";
    case Reduction::kMax:
      return "max";
    case Reduction::kMin:
      return "min";
    case Reduction::kProd:
      return "prod";
  }
  return "?";
}

ReducedAxes ReducedAxesOf(const Attributes& attrs, const Shape& data, const std::string& owner) {
  const int ndim = data.ndim();
  const std::vector<int64_t>& axes = attrs.GetInts("axis");
  std::vector<bool> listed(static_cast<size_t>(ndim), false);
  for (int64_t axis : axes) {
    MX_CHECK(axis >= -ndim && axis < ndim)
        << owner << ": axis " << axis << " is out of range for data of shape " << data;
    const size_t a = static_cast<size_t>(axis < 0 ? axis + ndim : axis);
    MX_CHECK(!listed[a]) << owner << ": axis " << axis << " is named twice in "
                         << FormatIntTuple(axes);
    listed[a] = true;
  }
  ReducedAxes result;
  const bool exclude = attrs.GetBool("exclude");
  std::vector<int64_t> kept_dims, output;
  for (int axis = 0; axis < ndim; ++axis) {
    const bool reduced = axes.empty() || listed[static_cast<size_t>(axis)] != exclude;
    result.reduced.push_back(reduced);
    kept_dims.push_back(reduced ? 1 : data[axis]);
    if (reduced) {
      result.group *= data[axis];
      if (attrs.GetBool("keepdims")) output.push_back(1);
    } else {
      output.push_back(data[axis]);
    }
  }
  result.kept_dims = Shape(kept_dims);
  result.output = Shape(output);
  return result;
}

double ReductionScale(Reduction reduction, int64_t group) {
  return reduction == Reduction::kMean ? 1.0 / static_cast<double>(group) : 1.0;
}

namespace {

cpu::ReduceKind KindOf(Reduction reduction) {
  switch (reduction) {
    case Reduction::kSum:
    case Reduction::kMean:
      return cpu::ReduceKind::kSum;
    case Reduction::kMax:
      return cpu::ReduceKind::kMax;
    case Reduction::kMin:
      return cpu::ReduceKind::kMin;
    case Reduction::kProd:
      return cpu::ReduceKind::kProd;
  }
  return cpu::ReduceKind::kSum;
}

std::string Owner(Reduction reduction, const std::string& node) {
  return std::string(ReductionName(reduction)) + " " + node;
}

OpDef MakeReduceOp(Reduction reduction, const char* doc) {
  OpDef op;
  op.name = ReductionName(reduction);
  op.doc = doc;
  op.attributes
      .IntTuple("axis", "the axes reduced; negative counts from the end; () reduces all",
                Default("()"))
      .Bool("keepdims", "keep each reduced axis with extent 1", Default("false"))
      .Bool("exclude", "reduce every axis but those in axis", Default("false"));
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = [reduction](const Attributes& attrs, ShapeInference& shapes) {
    const std::string owner = Owner(reduction, shapes.node);
    const ReducedAxes axes = ReducedAxesOf(attrs, shapes.Input(0), owner);
    MX_CHECK(axes.group > 0 || (reduction != Reduction::kMax && reduction != Reduction::kMin))
        << owner << ": " << ReductionName(reduction) << " of no element (data " << shapes.Input(0)
        << " has an empty reduced axis)";
    shapes.AssignOutput(0, axes.output);
  };
  op.backward_dependencies = [reduction](const Attributes&) -> BackwardDependencies {
    const bool reads = reduction != Reduction::kSum && reduction != Reduction::kMean;
    return {{reads}, {reads}};
  };
  op.cheap_to_recompute = true;
  // With keepdims a 4-D reduction stays 4-D and runs in any layout, its axes moving with it
  // (SE blocks' pools); blocked only when the channels are kept whole.
  op.layout.role = LayoutRole::kAgnostic;
  op.layout.runs_channel_blocked = [](const Attributes& attrs, const std::vector<Shape>& data) {
    return attrs.GetBool("keepdims") && !ReducedAxesOf(attrs, data.at(0), "").reduced.at(1);
  };
  op.layout.retarget = [](const Attributes& attrs, ActivationLayout layout,
                          std::map<std::string, std::string>& text) {
    std::string axes = "(";
    for (int64_t axis : attrs.GetInts("axis")) {
      if (axes.size() > 1) axes += ',';  // appended: GCC 12 warns falsely on "," + std::string
      axes += AxisTextIn(layout, axis);
    }
    text["axis"] = axes + ")";
  };
  op.forward[DeviceType::kCPU] = [reduction](const OpContext& ctx, const Attributes& attrs,
                                             const std::vector<TensorView>& inputs,
                                             const std::vector<TensorView>& outputs,
                                             const std::vector<WriteMode>& req) {
    if (req[0] == WriteMode::kNull) return;
    const std::string owner = Owner(reduction, ctx.node_name);
    const ReducedAxes axes = ReducedAxesOf(attrs, inputs[0].shape, owner);
    const cpu::ReduceRuns runs = cpu::MergeRuns(inputs[0].shape, axes.reduced);
    MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
      cpu::Reduce<T>(KindOf(reduction), runs, inputs[0].data_as<T>(), outputs[0].data_as<T>(),
                     ReductionScale(reduction, axes.group));
    });
  };
  op.backward[DeviceType::kCPU] =
      [reduction](const OpContext& ctx, const Attributes& attrs,
                  const std::vector<TensorView>& output_grads,
                  const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                  const std::vector<TensorView>& input_grads, const std::vector<WriteMode>& req) {
        if (req[0] == WriteMode::kNull) return;
        const std::string owner = Owner(reduction, ctx.node_name);
        const TensorView& dx = input_grads[0];
        const ReducedAxes axes = ReducedAxesOf(attrs, dx.shape, owner);
        const cpu::ReduceRuns runs = cpu::MergeRuns(dx.shape, axes.reduced);
        MXLITE_FLOAT_TYPE_SWITCH(dx.dtype, T, owner, {
          const T* x = inputs[0].data == nullptr ? nullptr : inputs[0].data_as<T>();
          const T* y = outputs[0].data == nullptr ? nullptr : outputs[0].data_as<T>();
          cpu::ReduceBackward<T>(KindOf(reduction), runs, x, y, output_grads[0].data_as<T>(),
                                 dx.data_as<T>(), ReductionScale(reduction, axes.group));
        });
      };
  return op;
}

}  // namespace

MXLITE_REGISTER_OP(sum) {
  return MakeReduceOp(Reduction::kSum, "The sum over `axis` (all axes by default).");
}
MXLITE_REGISTER_OP(mean) {
  return MakeReduceOp(Reduction::kMean, "The mean over `axis` (all axes by default).");
}
MXLITE_REGISTER_OP(max) {
  return MakeReduceOp(Reduction::kMax, "The largest element over `axis` (all axes by default).");
}
MXLITE_REGISTER_OP(min) {
  return MakeReduceOp(Reduction::kMin, "The smallest element over `axis` (all axes by default).");
}
MXLITE_REGISTER_OP(prod) {
  return MakeReduceOp(Reduction::kProd, "The product over `axis` (all axes by default).");
}

}  // namespace mxlite
