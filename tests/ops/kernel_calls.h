// Direct calls of an op's CPU kernels for what the shared harness does not cover: running in place
// (output in the memory of an input, as the memory planner arranges for an op's inplace pairs) and
// backward with some input gradients not requested (WriteMode::kNull).
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "tests/ops/op_harness.h"

namespace mxlite::testing {

inline constexpr double kUntouched = 12345.0;

// Forward with output 0 written over input `shared`; returns the output values.
inline std::vector<double> RunForwardInPlace(const OpCase& test_case,
                                             std::vector<HostTensor> inputs, int shared) {
  const OpDef& op = OpRegistry::Global().Get(test_case.op);
  Attributes attrs = ParseOpAttributes(op, test_case.attrs, "node0");
  const Shape output_shape = InferOutputShapes(test_case)[0];
  std::vector<TensorView> views;
  for (HostTensor& input : inputs) views.push_back(input.View());
  std::vector<TensorView> outputs{views[shared].Reshaped(output_shape)};
  ScratchSpace scratch(Context::CPU());
  OpContext ctx{Context::CPU(), true, nullptr, &scratch, nullptr, nullptr, "node0"};
  ForwardKernelFor(op, DeviceType::kCPU)(ctx, attrs, views, outputs, {WriteMode::kWrite});
  return inputs[shared].Values();
}

// Backward of `test_case` at `inputs` for output gradient `output_grad`, with input i's gradient
// requested only where `wanted[i]`; unrequested gradients start as kUntouched.
inline std::vector<HostTensor> RunBackwardRequested(const OpCase& test_case,
                                                    const std::vector<HostTensor>& inputs,
                                                    HostTensor output_grad,
                                                    const std::vector<bool>& wanted) {
  const OpDef& op = OpRegistry::Global().Get(test_case.op);
  Attributes attrs = ParseOpAttributes(op, test_case.attrs, "node0");
  OpRun run = RunForward(test_case, inputs);
  std::vector<TensorView> input_views, output_views, grad_views;
  for (HostTensor& input : run.inputs) input_views.push_back(input.View());
  for (HostTensor& output : run.outputs) output_views.push_back(output.View());
  std::vector<HostTensor> grads;
  std::vector<WriteMode> req;
  for (size_t i = 0; i < inputs.size(); ++i) {
    grads.emplace_back(inputs[i].shape(), inputs[i].dtype());
    for (int64_t k = 0; k < grads[i].size(); ++k) grads[i].Set(k, kUntouched);
    req.push_back(wanted[i] ? WriteMode::kWrite : WriteMode::kNull);
  }
  for (HostTensor& grad : grads) grad_views.push_back(grad.View());
  ScratchSpace scratch(Context::CPU());
  OpContext ctx{Context::CPU(), true, nullptr, &scratch, nullptr, nullptr, "node0"};
  BackwardKernelFor(op, DeviceType::kCPU)(ctx, attrs, {output_grad.View()}, input_views,
                                          output_views, grad_views, req);
  return grads;
}

}  // namespace mxlite::testing
