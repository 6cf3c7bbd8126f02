// Clip: output = min(max(data, a_min), a_max), element-wise (MXNet's clip; ONNX's Clip with its
// min / max inputs imported as attributes). Either bound may be left out (as ONNX allows): an
// absent a_min is -inf, an absent a_max +inf. Gradient: passed through where a_min <= data <=
// a_max, bounds included (as MXNet and PyTorch do, so x exactly at a bound, e.g. 0 under ReLU6,
// keeps its gradient), zero outside. Deciding that at the bounds needs the input, so backward reads
// data, and the op does not run in place.
#include <limits>

#include "ops/clip.h"
#include "ops/cpu/elementwise.h"
#include "ops/operator.h"

namespace mxlite {

ClipBounds ClipBoundsOf(const Attributes& attrs) {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  return {attrs.Has("a_min") ? attrs.GetFloat("a_min") : -kInfinity,
          attrs.Has("a_max") ? attrs.GetFloat("a_max") : kInfinity};
}

namespace {

using cpu::EigenArray;
using cpu::ForEachChunk;

void ClipForwardCpu(const OpContext&, const Attributes& attrs,
                    const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                    const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  MXLITE_FLOAT_TYPE_SWITCH(outputs[0].dtype, T, "clip", {
    const ClipBounds bounds = ClipBoundsOf(attrs);
    const T low = static_cast<T>(bounds.low);
    const T high = static_cast<T>(bounds.high);
    const T* x = inputs[0].data_as<T>();
    T* y = outputs[0].data_as<T>();
    ForEachChunk(outputs[0].size(), [&](int64_t begin, int64_t end) {
      EigenArray<T>(y + begin, end - begin) =
          EigenArray<const T>(x + begin, end - begin).max(low).min(high);
    });
  });
}

void ClipBackwardCpu(const OpContext&, const Attributes& attrs,
                     const std::vector<TensorView>& output_grads,
                     const std::vector<TensorView>& inputs, const std::vector<TensorView>&,
                     const std::vector<TensorView>& input_grads,
                     const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  MXLITE_FLOAT_TYPE_SWITCH(input_grads[0].dtype, T, "clip", {
    const ClipBounds bounds = ClipBoundsOf(attrs);
    const T low = static_cast<T>(bounds.low);
    const T high = static_cast<T>(bounds.high);
    const T* x = inputs[0].data_as<T>();
    const T* dy = output_grads[0].data_as<T>();
    T* dx = input_grads[0].data_as<T>();
    ForEachChunk(input_grads[0].size(), [&](int64_t begin, int64_t end) {
      auto data = EigenArray<const T>(x + begin, end - begin);
      EigenArray<T>(dx + begin, end - begin) =
          (data >= low && data <= high).select(EigenArray<const T>(dy + begin, end - begin), T(0));
    });
  });
}

}  // namespace

MXLITE_REGISTER_OP(clip) {
  OpDef op;
  op.name = "clip";
  op.cheap_to_recompute = true;
  op.doc = "Limits each element to [a_min, a_max].";
  op.attributes.Float("a_min", "the lower bound; none when absent", Optional())
      .Float("a_max", "the upper bound; none when absent", Optional());
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = [](const Attributes&, ShapeInference& shapes) {
    shapes.AssignOutput(0, shapes.Input(0));
  };
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{true}, {false}};
  };
  op.layout.role = LayoutRole::kAgnostic;
  op.fusion.clamp = [](const Attributes&, const std::map<std::string, std::string>& text) {
    auto bound = [&](const char* name) -> std::optional<std::string> {
      auto found = text.find(name);
      return found == text.end() ? std::nullopt : std::optional<std::string>(found->second);
    };
    ClampBounds clamp{bound("a_min"), bound("a_max"), ""};
    clamp.description =
        "clip [" + clamp.low.value_or("-inf") + ", " + clamp.high.value_or("inf") + "]";
    return std::optional<ClampBounds>(clamp);
  };
  op.forward[DeviceType::kCPU] = ClipForwardCpu;
  op.backward[DeviceType::kCPU] = ClipBackwardCpu;
  return op;
}

}  // namespace mxlite
