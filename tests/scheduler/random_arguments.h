// Reproducible random values for an executor's "data" input and every parameter, uniform in
// [-1, 1) from `seed`, in that order (float32). Two executors of graphs with the same variable
// names and shapes get the same values, whatever else differs (tuning, layouts). And what such an
// executor computes from them, for tests that compare two ways of binding one graph.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "scheduler/graph/executor.h"

namespace mxlite::testing_support {

inline void FillRandomArguments(Executor& exec, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<std::string> names = exec.ParameterNames();
  names.insert(names.begin(), "data");
  for (const std::string& name : names) {
    std::vector<float> values(static_cast<size_t>(exec.Arg(name).size()));
    for (float& v : values) v = uniform(random);
    exec.Arg(name).SyncCopyFromCPU(values.data(), values.size() * sizeof(float));
  }
}

// FillRandomArguments(exec, seed), then `passes` forward passes (a second one at inference reads
// the weights an op keeps prepared), then every output and, in training, the gradient of every
// parameter after a backward pass with all-ones head gradients, in that order.
inline std::vector<std::vector<float>> OutputsAndGradients(Executor& exec, uint64_t seed,
                                                           bool training, int passes = 1) {
  FillRandomArguments(exec, seed);
  for (int pass = 0; pass < passes; ++pass) exec.Forward(training);
  std::vector<std::vector<float>> values;
  for (const NDArray& output : exec.outputs()) values.push_back(output.ToVector<float>());
  if (training) {
    exec.Backward();
    for (const std::string& name : exec.ParameterNames()) {
      values.push_back(exec.Gradient(name).ToVector<float>());
    }
  }
  return values;
}

}  // namespace mxlite::testing_support
