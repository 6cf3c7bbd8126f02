// Reproducible random values for an executor's "data" input and every parameter, uniform in
// [-1, 1) from `seed`, in that order (float32). Two executors of graphs with the same variable
// names and shapes get the same values, whatever else differs (tuning, layouts).
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

}  // namespace mxlite::testing_support
