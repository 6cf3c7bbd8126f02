// What Convolution, Deconvolution and FullyConnected share: inputs data, weight and — unless the
// `no_bias` attribute is true — bias, the last two parameters; one output; backward reads the data
// (for the weight gradient) and the weight (for the data gradient), never the bias or the output.
#pragma once

#include "ops/operator.h"

namespace mxlite {

// Sets op.input_names, input_roles, output_names and backward_dependencies as above. The op must
// declare a `no_bias` Bool attribute.
void SetWeightedLayerSignature(OpDef& op);

}  // namespace mxlite
