// Data-parallel training of a small MLP for the KVStore tests (kvstore_test.cc, in one process,
// and kvstore_dist_check.cc, under mpirun): the same network, data and recipe, trained either by
// one executor on the combined batch or by several workers on its shards through a KVStore.
#pragma once

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "scheduler/graph/executor.h"
#include "scheduler/graph/graph_builder.h"
#include "scheduler/kvstore/kvstore.h"
#include "scheduler/train/initializer.h"
#include "scheduler/train/optimizer.h"

namespace mxlite::kvstore_testing {

constexpr int kFeatures = 20;
constexpr int kClasses = 4;
constexpr double kLearningRate = 0.5;
constexpr double kMomentum = 0.9;

// data (batch, 20) -> fc1 16 -> relu -> fc2 4 -> SoftmaxOutput. fc1_weight has 320 elements:
// with a small MXNET_KVSTORE_BIGARRAY_BOUND it is split, the others are fused into buckets.
inline Graph BuildMlp(int batch) {
  GraphBuilder g;
  Symbol x = g.Input("data", {batch, kFeatures});
  x = g.Relu(g.FullyConnected(x, {.num_hidden = 16}, "fc1"));
  x = g.FullyConnected(x, {.num_hidden = kClasses}, "fc2");
  return g.Build({g.SoftmaxOutput(x, g.Input("softmax_label", {batch}))});
}

// One step's combined batch: `rows` samples, features in [-1, 1), labels in [0, 4).
struct Batch {
  std::vector<float> data;
  std::vector<float> label;
};

inline Batch MakeBatch(int rows, int step) {
  std::mt19937 random(1000 + step);
  std::uniform_real_distribution<float> feature(-1.0f, 1.0f);
  Batch batch;
  for (int i = 0; i < rows * kFeatures; ++i) batch.data.push_back(feature(random));
  for (int i = 0; i < rows; ++i) batch.label.push_back(static_cast<float>(random() % kClasses));
  return batch;
}

inline std::unique_ptr<Executor> BindMlp(int batch, Context ctx = Context::CPU()) {
  auto exec = Executor::Bind(BuildMlp(batch), {.ctx = ctx, .training = true});
  InitializeParameters(*exec, Xavier{}, /*seed=*/3);
  return exec;
}

inline void LoadRows(Executor& exec, const Batch& batch, int first_row, int rows) {
  exec.Arg("data").SyncCopyFromCPU(batch.data.data() + first_row * kFeatures,
                                   sizeof(float) * rows * kFeatures);
  exec.Arg("softmax_label").SyncCopyFromCPU(batch.label.data() + first_row, sizeof(float) * rows);
}

inline std::map<std::string, std::vector<float>> Weights(Executor& exec) {
  std::map<std::string, std::vector<float>> weights;
  for (const std::string& name : exec.ParameterNames()) {
    weights[name] = exec.Arg(name).ToVector<float>();
  }
  return weights;
}

// The reference: one executor, the combined batch of `total_rows`, `steps` SGD steps.
inline std::map<std::string, std::vector<float>> TrainSingle(int total_rows, int steps) {
  auto exec = BindMlp(total_rows);
  auto sgd = Optimizer::Sgd(
      {.learning_rate = kLearningRate, .momentum = kMomentum, .rescale_grad = 1.0 / total_rows});
  for (int step = 0; step < steps; ++step) {
    LoadRows(*exec, MakeBatch(total_rows, step), 0, total_rows);
    exec->Forward(true);
    exec->Backward();
    sgd->UpdateAll(*exec);
  }
  return Weights(*exec);
}

// Data parallel: `workers` executors in this process (a local store's devices) whose global
// index starts at `first_worker` of `total_workers` (ranks of a dist store), each on its shard of
// the combined batch and on the store's device (a dist_sync_device rank's GPU); gradients pushed
// last layer first, weights pulled back.
inline std::map<std::string, std::vector<float>> TrainDataParallel(KVStore& kv, int rows_per_worker,
                                                                   int workers, int first_worker,
                                                                   int total_workers, int steps) {
  std::vector<std::unique_ptr<Executor>> execs;
  for (int w = 0; w < workers; ++w) execs.push_back(BindMlp(rows_per_worker, kv.context()));
  std::vector<std::string> names = execs[0]->ParameterNames();
  std::vector<NDArray> initial;
  for (const std::string& name : names) initial.push_back(execs[0]->Arg(name));
  kv.Init(names, initial);
  const int total_rows = rows_per_worker * total_workers;
  kv.SetOptimizer(Optimizer::Sgd(
      {.learning_rate = kLearningRate, .momentum = kMomentum, .rescale_grad = 1.0 / total_rows}));
  const std::vector<std::string> push_order(names.rbegin(), names.rend());
  std::vector<std::vector<NDArray>> weights(names.size()), gradients(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    for (auto& exec : execs) {
      weights[i].push_back(exec->Arg(names[i]));
      gradients[names.size() - 1 - i].push_back(exec->Gradient(names[i]));
    }
  }
  kv.Pull(names, weights);  // every worker starts from the store's (rank 0's) values
  for (int step = 0; step < steps; ++step) {
    const Batch batch = MakeBatch(total_rows, step);
    for (int w = 0; w < workers; ++w) {
      LoadRows(*execs[w], batch, (first_worker + w) * rows_per_worker, rows_per_worker);
      execs[w]->Forward(true);
      execs[w]->Backward();
    }
    kv.Push(push_order, gradients);
    kv.Pull(names, weights);
  }
  return Weights(*execs[0]);
}

// Largest |a - b| / (1 + |b|) over all weights.
inline double MaxRelativeDifference(const std::map<std::string, std::vector<float>>& a,
                                    const std::map<std::string, std::vector<float>>& b) {
  double worst = 0;
  for (const auto& [name, values] : a) {
    const std::vector<float>& other = b.at(name);
    for (size_t i = 0; i < values.size(); ++i) {
      worst = std::max(worst, std::abs(double{values[i]} - other[i]) / (1 + std::abs(other[i])));
    }
  }
  return worst;
}

}  // namespace mxlite::kvstore_testing
