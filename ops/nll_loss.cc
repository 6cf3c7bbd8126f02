// nll_loss: the negative log-likelihood loss (PyTorch's nll_loss, ONNX's NegativeLogLikelihoodLoss;
// with log_softmax before it, ONNX's SoftmaxCrossEntropyLoss). data (N, C, d1, ..., dk) holds
// log-probabilities over C classes, label (N, d1, ..., dk) a class index per sample and position
// (int32 or int64; floating labels holding integers too, as MXNet's), the optional weight (C) a
// weight per class (use_weight). Per position
//
//   loss = -weight[label] * data[n, label, d1, ..., dk]     (weight 1 without use_weight)
//
// and 0 where label == ignore_index (when given). reduction: none (the losses, label's shape),
// sum, or mean (the sum over the total weight of the positions not ignored: their count without
// weights; 0 / 0 is NaN, as in PyTorch and ONNX). A label outside [0, C) that is not ignored is an
// error naming the node, the position and the label. Gradient: to data (-weight * the output
// gradient, scaled as the reduction, at each position's label; 0 elsewhere) and to weight; the
// label has none. CPU, float32 and float64 (sums in double).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "ops/index_values.h"
#include "ops/nll_loss.h"
#include "ops/operator.h"

namespace mxlite {

std::string NllLossOwner(const std::string& node) { return "nll_loss " + node; }

NllGeometry NllGeometryOf(const Attributes& attrs, const Shape& data, const Shape& label,
                          const std::string& owner) {
  MX_CHECK(data.ndim() >= 2) << owner << ": data has shape " << data
                             << "; expected (N, C) or (N, C, d1, ..., dk)";
  std::vector<int64_t> expected = {data[0]};
  for (int i = 2; i < data.ndim(); ++i) expected.push_back(data[i]);
  MX_CHECK(label == Shape(expected))
      << owner << ": label has shape " << label << "; data " << data << " expects "
      << Shape(expected) << " (data's shape without the class axis)";
  NllGeometry g;
  g.batch = data[0];
  g.classes = data[1];
  g.positions = data.size(2, data.ndim());
  g.use_weight = attrs.GetBool("use_weight");
  if (attrs.Has("ignore_index")) g.ignore_index = attrs.GetInt("ignore_index");
  const std::string reduction = attrs.GetString("reduction");
  g.reduction = reduction == "none"  ? NllReduction::kNone
                : reduction == "sum" ? NllReduction::kSum
                                     : NllReduction::kMean;
  return g;
}

std::vector<int64_t> ReadNllLabels(const TensorView& label, const NllGeometry& g,
                                   const std::string& owner) {
  std::vector<int64_t> labels(static_cast<size_t>(label.size()));
  for (size_t i = 0; i < labels.size(); ++i) {
    labels[i] = IntegerValueAt(label, i, owner, "label");
    if (g.ignore_index && labels[i] == *g.ignore_index) continue;
    MX_CHECK(labels[i] >= 0 && labels[i] < g.classes)
        << owner << ": label " << labels[i] << " at flat position " << i
        << " is not a class in [0, " << g.classes << ")"
        << (g.ignore_index ? "" : " (no ignore_index is set)");
  }
  return labels;
}

namespace {

// Offset of data[n, c, position].
int64_t DataOffset(const NllGeometry& g, int64_t n, int64_t c, int64_t position) {
  return (n * g.classes + c) * g.positions + position;
}

template <typename T>
double ClassWeight(const NllGeometry& g, const T* weight, int64_t label) {
  return g.use_weight ? static_cast<double>(weight[label]) : 1.0;
}

// The denominator of `mean`: the total weight of the positions not ignored.
template <typename T>
double TotalWeight(const NllGeometry& g, const std::vector<int64_t>& labels, const T* weight) {
  double total = 0.0;
  for (int64_t label : labels) {
    if (!g.Ignored(label)) total += ClassWeight(g, weight, label);
  }
  return total;
}

void ForwardCpu(const OpContext& ctx, const Attributes& attrs,
                const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = NllLossOwner(ctx.node_name);
  const NllGeometry g = NllGeometryOf(attrs, inputs[0].shape, inputs[1].shape, owner);
  const std::vector<int64_t> labels = ReadNllLabels(inputs[1], g, owner);
  MXLITE_FLOAT_TYPE_SWITCH(inputs[0].dtype, T, owner, {
    const T* data = inputs[0].data_as<T>();
    const T* weight = g.use_weight ? inputs[2].data_as<T>() : nullptr;
    T* out = outputs[0].data_as<T>();
    double sum = 0.0;
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t p = 0; p < g.positions; ++p) {
        const int64_t label = labels[static_cast<size_t>(n * g.positions + p)];
        double loss = 0.0;
        if (!g.Ignored(label)) {
          loss = -ClassWeight(g, weight, label) *
                 static_cast<double>(data[DataOffset(g, n, label, p)]);
        }
        if (!g.Reduced()) {
          out[n * g.positions + p] = static_cast<T>(loss);
        } else {
          sum += loss;
        }
      }
    }
    if (g.reduction == NllReduction::kSum) out[0] = static_cast<T>(sum);
    if (g.Mean()) out[0] = static_cast<T>(sum / TotalWeight(g, labels, weight));
  });
}

void BackwardCpu(const OpContext& ctx, const Attributes& attrs,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>& inputs,
                 const std::vector<TensorView>& outputs, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  const std::string owner = NllLossOwner(ctx.node_name);
  const bool use_weight = attrs.GetBool("use_weight");
  // Without weights backward keeps no data (NllBackwardDependencies): its shape is dx's.
  if (!use_weight && req[0] == WriteMode::kNull) return;
  const Shape& data_shape = use_weight ? inputs[0].shape : input_grads[0].shape;
  const NllGeometry g = NllGeometryOf(attrs, data_shape, inputs[1].shape, owner);
  const std::vector<int64_t> labels = ReadNllLabels(inputs[1], g, owner);
  MXLITE_FLOAT_TYPE_SWITCH(output_grads[0].dtype, T, owner, {
    const T* data = g.use_weight ? inputs[0].data_as<T>() : nullptr;
    const T* weight = g.use_weight ? inputs[2].data_as<T>() : nullptr;
    const T* dy = output_grads[0].data_as<T>();
    const double total = g.Mean() ? TotalWeight(g, labels, weight) : 1.0;
    // d loss / d (the position's term -w * x): the output gradient, over the total for a mean.
    auto term_grad = [&](int64_t n, int64_t p) {
      return !g.Reduced() ? static_cast<double>(dy[n * g.positions + p])
                          : static_cast<double>(dy[0]) / total;
    };
    if (req[0] != WriteMode::kNull) {
      T* dx = input_grads[0].data_as<T>();
      std::fill(dx, dx + input_grads[0].size(), T(0));
      for (int64_t n = 0; n < g.batch; ++n) {
        for (int64_t p = 0; p < g.positions; ++p) {
          const int64_t label = labels[static_cast<size_t>(n * g.positions + p)];
          if (g.Ignored(label)) continue;
          dx[DataOffset(g, n, label, p)] +=
              static_cast<T>(-ClassWeight(g, weight, label) * term_grad(n, p));
        }
      }
    }
    if (g.use_weight && req[2] != WriteMode::kNull) {
      // d/dw[c] of the sum: -x at the positions labelled c; a mean also moves with its
      // denominator: - mean * (count of c) / total.
      std::vector<double> dw(static_cast<size_t>(g.classes), 0.0);
      const double mean = g.Mean() ? static_cast<double>(outputs[0].data_as<T>()[0]) : 0.0;
      for (int64_t n = 0; n < g.batch; ++n) {
        for (int64_t p = 0; p < g.positions; ++p) {
          const int64_t label = labels[static_cast<size_t>(n * g.positions + p)];
          if (g.Ignored(label)) continue;
          dw[static_cast<size_t>(label)] +=
              -static_cast<double>(data[DataOffset(g, n, label, p)]) * term_grad(n, p) -
              (g.Mean() ? mean * static_cast<double>(dy[0]) / total : 0.0);
        }
      }
      T* dweight = input_grads[2].data_as<T>();
      for (int64_t c = 0; c < g.classes; ++c)
        dweight[c] = static_cast<T>(dw[static_cast<size_t>(c)]);
    }
  });
}

}  // namespace

MXLITE_REGISTER_OP(nll_loss) {
  OpDef op;
  op.name = "nll_loss";
  op.doc =
      "Negative log-likelihood of each label under log-probabilities over axis 1, weighted "
      "per class, reduced by none, sum or mean (ONNX's NegativeLogLikelihoodLoss).";
  op.attributes
      .Enum("reduction", {"none", "sum", "mean"}, "how the losses are reduced", Default("mean"))
      .Int("ignore_index", "a label whose positions add nothing (and no weight to a mean)",
           Optional())
      .Bool("use_weight", "a third input holds a weight per class", Default("false"));
  op.input_names = [](const Attributes& attrs) {
    std::vector<std::string> names = {"data", "label"};
    if (attrs.GetBool("use_weight")) names.push_back("weight");
    return names;
  };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = [](const Attributes& attrs, ShapeInference& shapes) {
    const NllGeometry g =
        NllGeometryOf(attrs, shapes.Input(0), shapes.Input(1), shapes.op + " " + shapes.node);
    if (g.use_weight) shapes.AssignInput(2, Shape({g.classes}));
    shapes.AssignOutput(0, !g.Reduced() ? shapes.Input(1) : Shape());
  };
  op.infer_dtype = [](const Attributes& attrs, DTypeInference& dtypes) {
    // Data of unknown dtype (an undeclared variable) is float32, as everywhere else.
    if (!dtypes.inputs[0]) dtypes.inputs[0] = DType::kFloat32;
    const std::optional<DType> data = dtypes.inputs[0];
    if (!dtypes.inputs[1]) dtypes.inputs[1] = DType::kFloat32;
    if (attrs.GetBool("use_weight") && !dtypes.inputs[2]) dtypes.inputs[2] = data;
    dtypes.outputs[0] = data;
  };
  op.input_has_gradient = [](const Attributes& attrs) {
    std::vector<bool> has = {true, false};  // the label has none
    if (attrs.GetBool("use_weight")) has.push_back(true);
    return has;
  };
  op.backward_dependencies = [](const Attributes& attrs) -> BackwardDependencies {
    // The data and the loss only for the weight's gradient.
    if (attrs.GetBool("use_weight")) return {{true, true, true}, {true}};
    return {{false, true}, {false}};
  };
  op.forward[DeviceType::kCPU] = ForwardCpu;
  op.backward[DeviceType::kCPU] = BackwardCpu;
  return op;
}

}  // namespace mxlite
