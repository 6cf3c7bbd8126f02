#include "ops/output_clamp.h"

#include <cmath>

#include "core/error.h"

namespace mxlite {

void AddFusedActivationAttributes(AttributeSchema& schema, const std::string& prefix) {
  schema
      .Float(prefix + "act_min",
             "fused activation: clamp the output (after any bias) to at least this; 0 = a fused "
             "relu. Inference only",
             Optional())
      .Float(prefix + "act_max",
             "fused activation: clamp the output to at most this (6 with act_min=0: ReLU6)",
             Optional());
}

bool OutputClamp::active() const {
  return low != -std::numeric_limits<double>::infinity() ||
         high != std::numeric_limits<double>::infinity();
}

OutputClamp ReadOutputClamp(const Attributes& attrs, const std::string& owner,
                            const std::string& prefix) {
  const std::string low = prefix + "act_min", high = prefix + "act_max";
  OutputClamp clamp;
  if (attrs.Has(low)) clamp.low = attrs.GetFloat(low);
  if (attrs.Has(high)) clamp.high = attrs.GetFloat(high);
  MX_CHECK(!std::isnan(clamp.low) && !std::isnan(clamp.high))
      << owner << ": " << low << " / " << high << " must be numbers, got " << low << "="
      << clamp.low << " " << high << "=" << clamp.high;
  MX_CHECK(clamp.low <= clamp.high)
      << owner << ": " << low << "=" << clamp.low << " is above " << high << "=" << clamp.high;
  return clamp;
}

void CheckNoFusedActivation(const Attributes& attrs, const std::string& owner) {
  MX_CHECK(!attrs.Has("act_min") && !attrs.Has("act_max"))
      << owner << ": has a fused activation (act_min / act_max), which is inference-only: its "
      << "gradient needs the unclamped output. Bind for training without fusion "
      << "(MXNET_CONV_FUSE_ACTIVATION applies to inference executors only) or remove the "
      << "attributes";
}

}  // namespace mxlite
