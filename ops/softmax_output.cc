// SoftmaxOutput: softmax in forward, the softmax cross-entropy gradient in backward (MXNet's
// SoftmaxOutput, a loss layer).
//
// Forward: output = softmax over the classes of data, where the classes are
//   - default: every dim but the first: data (N, C) or (N, d1, d2...) flattened to (N, C);
//   - multi_output: dim 1 of (N, C, d1...), one prediction per position (d1...);
//   - preserve_shape: the last dim, one prediction per position of the other dims.
// Backward ignores the incoming gradient (unless out_grad) and writes
//   d data = (output - target) * grad_scale / normaliser
// where target is the one-hot of the label (class indices held in floats), smoothed to
// 1 - smooth_alpha at the label and smooth_alpha / (C - 1) elsewhere when smooth_alpha > 0.
// With use_ignore, positions whose label is ignore_label get a zero gradient. The normaliser, as
// in MXNet: null 1; batch the label's first dim (N, or the position count with preserve_shape);
// valid the number of labels other than ignore_label (at least 1). With multi_output, null and
// batch also divide by the positions per sample (MXNet does so). A label that is not an integer
// in [0, C) (and not ignored) is an error naming the op, the node and the value.
//
// A label with the data's shape holds probabilities (MXNet's soft labels): the gradient is then
// (output - label) * grad_scale, without normalisation or ignoring.
#include "ops/softmax_output.h"

#include <algorithm>
#include <cmath>

#include "ops/cpu/softmax.h"
#include "ops/operator.h"

namespace mxlite {

SoftmaxOutputParams SoftmaxOutputParamsOf(const Attributes& attrs, const std::string& owner) {
  SoftmaxOutputParams p;
  p.grad_scale = attrs.GetFloat("grad_scale");
  p.ignore_label = attrs.GetFloat("ignore_label");
  p.use_ignore = attrs.GetBool("use_ignore");
  p.multi_output = attrs.GetBool("multi_output");
  p.preserve_shape = attrs.GetBool("preserve_shape");
  const std::string& normalization = attrs.GetString("normalization");
  if (normalization == "null") {
    p.normalization = SoftmaxNormalization::kNull;
  } else if (normalization == "batch") {
    p.normalization = SoftmaxNormalization::kBatch;
  } else {
    MX_CHECK(normalization == "valid")
        << owner << ": normalization=" << normalization << " is not null, batch or valid";
    p.normalization = SoftmaxNormalization::kValid;
  }
  p.out_grad = attrs.GetBool("out_grad");
  p.smooth_alpha = attrs.GetFloat("smooth_alpha");
  return p;
}

SoftmaxExtent SoftmaxOutputClasses(const SoftmaxOutputParams& p, const Shape& data,
                                   const std::string& owner) {
  MX_CHECK(data.ndim() >= 2) << owner << ": data must have at least 2 dims (batch, classes); got "
                             << data;
  if (p.multi_output) return {data[0], data[1], data.size(2, data.ndim())};
  if (p.preserve_shape) return {data.size(0, data.ndim() - 1), data[data.ndim() - 1], 1};
  return {data[0], data.size(1, data.ndim()), 1};
}

int64_t SoftmaxOutputClassIndex(const SoftmaxOutputParams& p, double value, int64_t position,
                                int64_t classes, const std::string& owner) {
  if (p.use_ignore && p.IsIgnoreLabel(value)) return -1;
  MX_CHECK(std::floor(value) == value && value >= 0 && value < static_cast<double>(classes))
      << owner << ": label " << value << " at position " << position
      << " is not a class index in [0, " << classes << ")";
  return static_cast<int64_t>(value);
}

double SoftmaxOutputGradientScale(const SoftmaxOutputParams& p, const SoftmaxExtent& classes,
                                  const Shape& label, int64_t valid) {
  if (p.normalization == SoftmaxNormalization::kValid) {
    return p.grad_scale / static_cast<double>(std::max<int64_t>(valid, 1));
  }
  double normaliser = 1;
  if (p.normalization == SoftmaxNormalization::kBatch) {
    normaliser =
        p.preserve_shape ? static_cast<double>(label.size()) : static_cast<double>(classes.outer);
  }
  if (p.multi_output) normaliser *= static_cast<double>(classes.inner);
  return p.grad_scale / normaliser;
}

SoftmaxOutputTarget SoftmaxOutputTargetOf(const SoftmaxOutputParams& p, int64_t classes) {
  SoftmaxOutputTarget target;
  target.on = 1 - p.smooth_alpha;
  target.off = classes > 1 ? p.smooth_alpha / static_cast<double>(classes - 1) : 0.0;
  return target;
}

namespace {

enum Input { kData, kLabel };

std::string Owner(const std::string& node) { return "SoftmaxOutput " + node; }

cpu::SoftmaxLayout ClassLayout(const SoftmaxExtent& e) { return {e.outer, e.length, e.inner}; }

// The label shape of class indices that the op infers, and the others it accepts.
std::vector<Shape> AcceptedLabelShapes(const SoftmaxOutputParams& p, const Shape& data) {
  std::vector<int64_t> dims = data.to_vector();
  if (p.multi_output) {
    std::vector<int64_t> positions(dims.begin() + 2, dims.end());
    std::vector<int64_t> unflattened{dims[0]}, with_class_dim{dims[0], 1};
    unflattened.insert(unflattened.end(), positions.begin(), positions.end());
    with_class_dim.insert(with_class_dim.end(), positions.begin(), positions.end());
    return {Shape{dims[0], data.size(2, data.ndim())}, Shape(unflattened), Shape(with_class_dim)};
  }
  if (p.preserve_shape) {
    return {Shape(std::vector<int64_t>(dims.begin(), dims.end() - 1))};
  }
  return {Shape{dims[0]}};
}

void SoftmaxOutputInferShape(const Attributes& attrs, ShapeInference& shapes) {
  const std::string owner = shapes.op + " " + shapes.node;
  const Shape& data = shapes.Input(kData);
  const SoftmaxOutputParams p = SoftmaxOutputParamsOf(attrs, owner);
  SoftmaxOutputClasses(p, data, owner);
  const std::vector<Shape> accepted = AcceptedLabelShapes(p, data);
  if (!shapes.inputs[kLabel].has_value()) {
    shapes.AssignInput(kLabel, accepted[0]);
  } else if (*shapes.inputs[kLabel] != data) {  // data-shaped labels are probabilities
    const Shape& label = *shapes.inputs[kLabel];
    bool fits = false;
    std::string expected;
    for (const Shape& shape : accepted) {
      fits = fits || shape == label;
      expected += (expected.empty() ? "" : " or ") + shape.ToString();
    }
    MX_CHECK(fits) << owner << ": label has shape " << label << " but " << expected
                   << " (class indices) or " << data << " (probabilities) is expected for data "
                   << data;
  }
  shapes.AssignOutput(0, data);
}

void SoftmaxOutputForwardCpu(const OpContext& ctx, const Attributes& attrs,
                             const std::vector<TensorView>& inputs,
                             const std::vector<TensorView>& outputs,
                             const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  const std::string owner = Owner(ctx.node_name);
  const SoftmaxOutputParams p = SoftmaxOutputParamsOf(attrs, owner);
  const cpu::SoftmaxLayout layout =
      ClassLayout(SoftmaxOutputClasses(p, inputs[kData].shape, owner));
  MXLITE_FLOAT_TYPE_SWITCH(inputs[kData].dtype, T, "SoftmaxOutput", {
    cpu::SoftmaxForward<T>(layout, inputs[kData].data_as<T>(), outputs[0].data_as<T>(), 1.0, false);
  });
}

// Class index per position (-1 for ignored positions), checked; returns MXNet's "valid" count.
template <typename T>
int64_t ReadLabels(const SoftmaxOutputParams& p, const T* label, int64_t count, int64_t classes,
                   const std::string& owner, int64_t* class_index) {
  int64_t valid = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double value = static_cast<double>(label[i]);
    if (!p.IsIgnoreLabel(value)) ++valid;
    class_index[i] = SoftmaxOutputClassIndex(p, value, i, classes, owner);
  }
  return valid;
}

template <typename T>
void HardLabelGradient(const SoftmaxOutputTarget& smoothed, const cpu::SoftmaxLayout& l, const T* y,
                       const int64_t* class_index, double scale, const T* dy, T* dx) {
  const T on = static_cast<T>(smoothed.on);
  const T off = static_cast<T>(smoothed.off);
  const T factor = static_cast<T>(scale);
  cpu::ForEachRowRange(l.outer, l.length * l.inner, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      for (int64_t k = 0; k < l.length; ++k) {
        const int64_t base = (o * l.length + k) * l.inner;
        for (int64_t i = 0; i < l.inner; ++i) {
          const int64_t target = class_index[o * l.inner + i];
          T grad = target < 0 ? T(0) : (y[base + i] - (k == target ? on : off)) * factor;
          if (dy != nullptr) grad *= dy[base + i];
          dx[base + i] = grad;
        }
      }
    }
  });
}

template <typename T>
void SoftLabelGradient(int64_t n, const T* y, const T* label, double scale, const T* dy, T* dx) {
  const T factor = static_cast<T>(scale);
  cpu::ForEachChunk(n, [&](int64_t begin, int64_t end) {
    auto result = cpu::EigenArray<T>(dx + begin, end - begin);
    result = (cpu::EigenArray<const T>(y + begin, end - begin) -
              cpu::EigenArray<const T>(label + begin, end - begin)) *
             factor;
    if (dy != nullptr) result *= cpu::EigenArray<const T>(dy + begin, end - begin);
  });
}

void SoftmaxOutputBackwardCpu(const OpContext& ctx, const Attributes& attrs,
                              const std::vector<TensorView>& output_grads,
                              const std::vector<TensorView>& inputs,
                              const std::vector<TensorView>& outputs,
                              const std::vector<TensorView>& input_grads,
                              const std::vector<WriteMode>& req) {
  if (req[kData] == WriteMode::kNull) return;
  const std::string owner = Owner(ctx.node_name);
  const Shape& data_shape = outputs[0].shape;
  const SoftmaxOutputParams p = SoftmaxOutputParamsOf(attrs, owner);
  const SoftmaxExtent classes = SoftmaxOutputClasses(p, data_shape, owner);
  const cpu::SoftmaxLayout layout = ClassLayout(classes);
  const TensorView& label = inputs[kLabel];
  MXLITE_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, "SoftmaxOutput", {
    const T* y = outputs[0].data_as<T>();
    const T* dy = p.out_grad ? output_grads[0].data_as<T>() : nullptr;
    T* dx = input_grads[kData].data_as<T>();
    if (label.shape == data_shape) {
      SoftLabelGradient(data_shape.size(), y, label.data_as<T>(), p.grad_scale, dy, dx);
    } else {
      const int64_t positions = layout.outer * layout.inner;
      MX_CHECK(label.size() == positions)
          << owner << ": label has shape " << label.shape << " but data " << data_shape << " needs "
          << positions << " class indices";
      int64_t* class_index = ctx.scratch->GetArray<int64_t>(positions);
      const int64_t valid =
          ReadLabels(p, label.data_as<T>(), positions, layout.length, owner, class_index);
      const double scale = SoftmaxOutputGradientScale(p, classes, label.shape, valid);
      HardLabelGradient(SoftmaxOutputTargetOf(p, layout.length), layout, y, class_index, scale, dy,
                        dx);
    }
  });
}

}  // namespace

MXLITE_REGISTER_OP(SoftmaxOutput) {
  OpDef op;
  op.name = "SoftmaxOutput";
  op.name_prefix = FixedNamePrefix("softmax");
  op.doc = "Softmax forward; softmax cross-entropy gradient (output - one_hot(label)) backward.";
  op.attributes.Float("grad_scale", "scales the gradient", Default("1"))
      .Float("ignore_label", "the label ignored when use_ignore is true", Default("-1"))
      .Bool("multi_output", "softmax along axis 1, one label per position of dims 2...",
            Default("false"))
      .Bool("use_ignore", "give positions labelled ignore_label a zero gradient", Default("false"))
      .Bool("preserve_shape", "softmax along the last axis", Default("false"))
      .Enum("normalization", {"null", "batch", "valid"}, "how the gradient is normalised",
            Default("null"))
      .Bool("out_grad", "multiply the gradient by the incoming output gradient", Default("false"))
      .Float("smooth_alpha", "label smoothing: the probability mass moved off the label",
             Default("0"));
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data", "label"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = SoftmaxOutputInferShape;
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{false, true}, {true}};
  };
  op.input_has_gradient = [](const Attributes&) { return std::vector<bool>{true, false}; };
  op.inplace = {{kData, 0}};
  op.forward[DeviceType::kCPU] = SoftmaxOutputForwardCpu;
  op.backward[DeviceType::kCPU] = SoftmaxOutputBackwardCpu;
  return op;
}

}  // namespace mxlite
