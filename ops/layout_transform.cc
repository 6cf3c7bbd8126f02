// layout_transform: an activation moved from one layout to another (ops/activation_layout.h:
// NCHW, NHWC, NCHW16c), as TVM's layout_transform and oneDNN's reorders. The convolution planner
// (scheduler/planning/conv_planning.h) inserts it wherever a value changes to or from the blocked
// layout; between NCHW and NHWC it inserts transposes. Backward is the inverse transform of the
// gradient.
//
//   src_layout=NCHW, dst_layout=NCHW16c:  (N, C, H, W) -> (N, C/16, H, W, 16)
//
// Shape errors name the node, the shape and the layout: a rank that does not fit src_layout, or
// channels a blocked layout cannot hold (a multiple of 16). The blocked layout runs on the CPU
// only, so the op has no GPU kernel (cpu_only).
#include "ops/cpu/layout_transform.h"
#include "ops/activation_layout.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

const std::vector<std::string> kLayoutNames = {"NCHW", "NHWC", "NCHW16c"};

ActivationLayout LayoutAttribute(const Attributes& attrs, const std::string& name) {
  return *ParseActivationLayout(attrs.GetString(name));  // the schema allows names only
}

// The NCHW shape of `data`, checked against src_layout; errors name `owner`.
Shape NchwOf(const Attributes& attrs, const Shape& data, const std::string& owner) {
  const ActivationLayout from = LayoutAttribute(attrs, "src_layout");
  const bool blocked = from == ActivationLayout::kNCHW16c;
  MX_CHECK(blocked ? data.ndim() == 5 && data[4] == kChannelBlock : data.ndim() == 4)
      << owner << ": input " << data << " does not fit src_layout=" << ActivationLayoutName(from)
      << " (expected " << (blocked ? "(N, C/16, H, W, 16)" : "a 4-D tensor") << ")";
  return NchwShape(data, from);
}

void InferShape(const Attributes& attrs, ShapeInference& shapes) {
  const std::string owner = shapes.op + " " + shapes.node;
  const Shape nchw = NchwOf(attrs, shapes.Input(0), owner);
  const ActivationLayout to = LayoutAttribute(attrs, "dst_layout");
  MX_CHECK(LayoutHoldsChannels(to, nchw[1]))
      << owner << ": dst_layout=" << ActivationLayoutName(to) << " holds channels in blocks of "
      << kChannelBlock << "; input " << shapes.Input(0) << " has " << nchw[1] << " channels";
  shapes.AssignOutput(0, LayoutShape(nchw, to));
}

void Transform(const Attributes& attrs, const TensorView& in, const std::string& from_attribute,
               const std::string& to_attribute, const TensorView& out, const std::string& owner) {
  const ActivationLayout from = LayoutAttribute(attrs, from_attribute);
  const Shape nchw = NchwOf(attrs, from_attribute == "src_layout" ? in.shape : out.shape, owner);
  cpu::TransformLayout(in.data, nchw, from, LayoutAttribute(attrs, to_attribute), out.data,
                       in.dtype);
}

void ForwardCpu(const OpContext& ctx, const Attributes& attrs,
                const std::vector<TensorView>& inputs, const std::vector<TensorView>& outputs,
                const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  Transform(attrs, inputs[0], "src_layout", "dst_layout", outputs[0],
            "layout_transform " + ctx.node_name);
}

void BackwardCpu(const OpContext& ctx, const Attributes& attrs,
                 const std::vector<TensorView>& output_grads, const std::vector<TensorView>&,
                 const std::vector<TensorView>&, const std::vector<TensorView>& input_grads,
                 const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  Transform(attrs, output_grads[0], "dst_layout", "src_layout", input_grads[0],
            "layout_transform " + ctx.node_name);
}

}  // namespace

MXLITE_REGISTER_OP(layout_transform) {
  OpDef op;
  op.name = "layout_transform";
  op.doc =
      "Moves a 4-D activation between layouts NCHW, NHWC and NCHW16c (channels in blocks "
      "of 16: (N, C/16, H, W, 16)).";
  op.attributes.Enum("src_layout", kLayoutNames, "the input's layout", Required())
      .Enum("dst_layout", kLayoutNames, "the output's layout", Required());
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = InferShape;
  op.backward_dependencies = [](const Attributes&) -> BackwardDependencies {
    return {{false}, {false}};
  };
  op.cheap_to_recompute = true;
  op.cpu_only = true;
  op.forward[DeviceType::kCPU] = ForwardCpu;
  op.backward[DeviceType::kCPU] = BackwardCpu;
  return op;
}

}  // namespace mxlite
