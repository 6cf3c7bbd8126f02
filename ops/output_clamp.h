// A fused clamping activation: the optional attributes act_min / act_max with which an op clamps
// every element of its output as it stores it, so a following relu (act_min=0), ReLU6 (0, 6) or
// clip costs no pass of its own. Convolution (after its bias and residual), the depthwise block's
// stages and BatchNorm (after its affine map) take them; the inference fusion pass
// (scheduler/graph/fusion.h) sets them, or a user by hand. Forward only: the gradient of a clamped
// output would need the pre-clamp values, which the fused op does not keep.
#pragma once

#include <limits>
#include <string>

#include "ops/attributes.h"

namespace mxlite {

// Declares prefix + act_min / act_max; `prefix` names the clamp of another stage of a fused op
// ("expand_": expand_act_min / _max).
void AddFusedActivationAttributes(AttributeSchema& schema, const std::string& prefix = "");

struct OutputClamp {
  double low = -std::numeric_limits<double>::infinity();
  double high = std::numeric_limits<double>::infinity();
  bool active() const;
};

// The clamp of `attrs` (prefix + act_min / act_max); an error naming `owner` when the minimum is
// above the maximum or a bound is NaN.
OutputClamp ReadOutputClamp(const Attributes& attrs, const std::string& owner,
                            const std::string& prefix = "");

// Backward's check: an error naming `owner` when the node has a fused activation.
void CheckNoFusedActivation(const Attributes& attrs, const std::string& owner);

}  // namespace mxlite
