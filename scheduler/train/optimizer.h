// Optimisers: SGD with momentum and weight decay, and Adam — MXNet's update rules — plus
// learning-rate schedules.
//
//   auto sgd = Optimizer::Sgd({.learning_rate = 0.01, .momentum = 0.9, .wd = 1e-4});
//   for (batch ...) { exec->Forward(true); exec->Backward(); sgd->UpdateAll(*exec); }
//
// Update() pushes one engine op per parameter that reads the gradient and writes the weight and
// the optimiser's state for it (momentum; Adam's mean and variance), so updates overlap with other
// work and are ordered with the next forward by the engine. State arrays are created on the
// weight's device the first time a parameter is updated; States()/LoadStates() expose them for
// checkpoints ("<param>:momentum", "<param>:mean", "<param>:variance").
//
// SGD:  g = rescale * grad (clipped to ±clip_gradient when > 0) + wd * w
//       momentum == 0: w -= lr * g;   else: m = momentum * m - lr * g; w += m
// Adam: g as above; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
//       w -= lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps)
//
// Parameters may live on the CPU or a GPU (CUDA kernels in ops/cuda/optimizer_update.h).
//
// Thread safety: one thread drives an optimiser.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/ndarray.h"

namespace mxlite {

class Executor;

struct SgdOptions {
  double learning_rate = 0.01;
  double momentum = 0.0;
  double wd = 0.0;
  double rescale_grad = 1.0;
  double clip_gradient = -1.0;  // <= 0: no clipping
};

struct AdamOptions {
  double learning_rate = 0.001;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double wd = 0.0;
  double rescale_grad = 1.0;
  double clip_gradient = -1.0;
};

// Learning rate as a function of the number of updates done: constant, or MXNet's
// FactorScheduler (multiply by `factor` every `step` updates, never below `stop_factor_lr`) and
// MultiFactorScheduler (multiply by `factor` at each of `steps`).
class LearningRateSchedule {
 public:
  static LearningRateSchedule Constant();
  static LearningRateSchedule Factor(int64_t step, double factor, double stop_factor_lr = 1e-8);
  static LearningRateSchedule MultiFactor(std::vector<int64_t> steps, double factor);
  double Rate(double base_rate, int64_t num_update) const;

 private:
  int64_t step_ = 0;
  std::vector<int64_t> steps_;
  double factor_ = 1.0;
  double stop_factor_lr_ = 0.0;
};

class Optimizer {
 public:
  static std::unique_ptr<Optimizer> Sgd(const SgdOptions& options);
  static std::unique_ptr<Optimizer> Adam(const AdamOptions& options);
  virtual ~Optimizer() = default;

  // Pushes the update of one parameter.
  void Update(const std::string& name, NDArray& weight, const NDArray& gradient);
  // Updates every parameter of a training executor, then counts one step (for the schedule).
  void UpdateAll(Executor& executor);

  void set_schedule(const LearningRateSchedule& schedule) { schedule_ = schedule; }
  double base_learning_rate() const { return base_learning_rate_; }
  void set_base_learning_rate(double rate) { base_learning_rate_ = rate; }
  // The rate the next update uses.
  double learning_rate() const { return schedule_.Rate(base_learning_rate_, num_update_); }
  int64_t num_update() const { return num_update_; }
  // Sets the update count (a KVStore counts updates per key, as MXNet's updater does).
  void set_num_update(int64_t num_update) { num_update_ = num_update; }

  std::map<std::string, NDArray> States() const;
  // Restores states saved by States() (names must match parameters updated by this optimiser).
  void LoadStates(const std::map<std::string, NDArray>& states, int64_t num_update);

 protected:
  Optimizer(double learning_rate, std::vector<std::string> state_names)
      : base_learning_rate_(learning_rate), state_names_(std::move(state_names)) {}
  // Pushes the update of `weight` with the given state arrays (state_names_ order).
  virtual void PushUpdate(const std::string& name, NDArray& weight, const NDArray& gradient,
                          std::vector<NDArray>& states, double learning_rate, int64_t step) = 0;

 private:
  double base_learning_rate_;
  std::vector<std::string> state_names_;
  LearningRateSchedule schedule_ = LearningRateSchedule::Constant();
  int64_t num_update_ = 0;
  std::map<std::string, std::vector<NDArray>> states_;
};

}  // namespace mxlite
