#include "ops/weighted_layer.h"

namespace mxlite {

void SetWeightedLayerSignature(OpDef& op) {
  op.input_names = [](const Attributes& attrs) {
    if (attrs.GetBool("no_bias")) return std::vector<std::string>{"data", "weight"};
    return std::vector<std::string>{"data", "weight", "bias"};
  };
  op.input_roles = [](const Attributes& attrs) {
    std::vector<InputRole> roles = {InputRole::kData, InputRole::kParameter};
    if (!attrs.GetBool("no_bias")) roles.push_back(InputRole::kParameter);
    return roles;
  };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.backward_dependencies = [](const Attributes& attrs) {
    BackwardDependencies deps;
    deps.inputs = {true, true};
    if (!attrs.GetBool("no_bias")) deps.inputs.push_back(false);
    deps.outputs = {false};
    return deps;
  };
}

}  // namespace mxlite
