#include "ops/normalization_signature.h"

#include <string>

namespace mxlite {

void SetNormalizationSignature(OpDef& op) {
  op.attributes.Bool("output_mean_var", "also output the mean and standard deviation of each group",
                     Default("false"));
  op.input_names = [](const Attributes&) {
    return std::vector<std::string>{"data", "gamma", "beta"};
  };
  op.input_roles = [](const Attributes&) {
    return std::vector<InputRole>{InputRole::kData, InputRole::kParameter, InputRole::kParameter};
  };
  op.output_names = [](const Attributes&) {
    return std::vector<std::string>{"output", "mean", "std"};
  };
  op.num_visible_outputs = [](const Attributes& attrs) {
    return attrs.GetBool("output_mean_var") ? 3 : 1;
  };
}

}  // namespace mxlite
