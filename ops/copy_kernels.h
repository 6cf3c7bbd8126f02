// CPU kernels shared by the ops whose output is their input's elements unchanged (Flatten,
// Reshape, identity): forward copies data to output, backward copies the output gradient to the
// input gradient; each copy is skipped when the two share memory (the op ran in place). Neither
// reads a forward tensor, so these ops declare no backward dependencies. Any dtype.
#pragma once

#include <vector>

#include "ops/cpu/copy.h"
#include "ops/operator.h"

namespace mxlite {

inline void CopyForwardCpu(const OpContext&, const Attributes&,
                           const std::vector<TensorView>& inputs,
                           const std::vector<TensorView>& outputs,
                           const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  cpu::CopyElements(inputs[0].data, outputs[0].data, outputs[0].size(),
                    DTypeSize(outputs[0].dtype));
}

inline void CopyBackwardCpu(const OpContext&, const Attributes&,
                            const std::vector<TensorView>& output_grads,
                            const std::vector<TensorView>&, const std::vector<TensorView>&,
                            const std::vector<TensorView>& input_grads,
                            const std::vector<WriteMode>& req) {
  if (req[0] == WriteMode::kNull) return;
  cpu::CopyElements(output_grads[0].data, input_grads[0].data, input_grads[0].size(),
                    DTypeSize(input_grads[0].dtype));
}

inline BackwardDependencies NoBackwardDependencies(const Attributes&) { return {{false}, {false}}; }

}  // namespace mxlite
