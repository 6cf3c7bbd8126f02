#include "scheduler/train/optimizer.h"

#include <cmath>

#include "core/error.h"
#include "ops/cpu/elementwise.h"
#include "scheduler/graph/executor.h"

#if MXLITE_USE_CUDA
#include "ops/cuda/optimizer_update.h"
#endif

namespace mxlite {

// ---------------------------------------------------------------------------------------------
// Learning-rate schedules

LearningRateSchedule LearningRateSchedule::Constant() { return {}; }

LearningRateSchedule LearningRateSchedule::Factor(int64_t step, double factor,
                                                  double stop_factor_lr) {
  MX_CHECK(step >= 1) << "FactorScheduler step must be >= 1, got " << step;
  MX_CHECK(factor > 0 && factor <= 1) << "FactorScheduler factor must be in (0, 1], got " << factor;
  LearningRateSchedule schedule;
  schedule.step_ = step;
  schedule.factor_ = factor;
  schedule.stop_factor_lr_ = stop_factor_lr;
  return schedule;
}

LearningRateSchedule LearningRateSchedule::MultiFactor(std::vector<int64_t> steps, double factor) {
  for (size_t i = 1; i < steps.size(); ++i) {
    MX_CHECK(steps[i] > steps[i - 1]) << "MultiFactorScheduler steps must increase";
  }
  LearningRateSchedule schedule;
  schedule.steps_ = std::move(steps);
  schedule.factor_ = factor;
  return schedule;
}

double LearningRateSchedule::Rate(double base_rate, int64_t num_update) const {
  if (step_ > 0) {
    const double rate = base_rate * std::pow(factor_, static_cast<double>(num_update / step_));
    return std::max(rate, stop_factor_lr_);
  }
  double rate = base_rate;
  for (int64_t boundary : steps_) {
    if (num_update >= boundary) rate *= factor_;
  }
  return rate;
}

// ---------------------------------------------------------------------------------------------
// Shared update plumbing

void Optimizer::Update(const std::string& name, NDArray& weight, const NDArray& gradient) {
  MX_CHECK(weight.shape() == gradient.shape()) << "optimizer: gradient of " << name << " has shape "
                                               << gradient.shape() << ", weight " << weight.shape();
  std::vector<NDArray>& states = states_[name];
  if (states.empty()) {
    for (size_t i = 0; i < state_names_.size(); ++i) {
      states.push_back(NDArray::Zeros(weight.shape(), weight.ctx(), weight.dtype()));
    }
  }
  PushUpdate(name, weight, gradient, states, learning_rate(), num_update_ + 1);
}

void Optimizer::UpdateAll(Executor& executor) {
  for (const std::string& name : executor.ParameterNames()) {
    Update(name, executor.Arg(name), executor.Gradient(name));
  }
  ++num_update_;
}

std::map<std::string, NDArray> Optimizer::States() const {
  std::map<std::string, NDArray> named;
  for (const auto& [param, arrays] : states_) {
    for (size_t i = 0; i < arrays.size(); ++i) named[param + ":" + state_names_[i]] = arrays[i];
  }
  return named;
}

void Optimizer::LoadStates(const std::map<std::string, NDArray>& states, int64_t num_update) {
  states_.clear();
  for (const auto& [key, array] : states) {
    const size_t colon = key.rfind(':');
    MX_CHECK(colon != std::string::npos) << "optimizer state '" << key << "' is not param:state";
    const std::string param = key.substr(0, colon), state = key.substr(colon + 1);
    auto known = std::find(state_names_.begin(), state_names_.end(), state);
    MX_CHECK(known != state_names_.end()) << "optimizer state '" << key << "' is not one of this "
                                          << "optimizer's";
    std::vector<NDArray>& arrays = states_[param];
    arrays.resize(state_names_.size());
    arrays[static_cast<size_t>(known - state_names_.begin())] = array;
  }
  for (const auto& [param, arrays] : states_) {
    for (const NDArray& array : arrays) {
      MX_CHECK(!array.is_none()) << "optimizer states of " << param << " are incomplete";
    }
  }
  num_update_ = num_update;
}

namespace {

template <typename T>
T ScaledGradient(T grad, T weight, double rescale, double clip, double wd) {
  T g = static_cast<T>(rescale) * grad;
  if (clip > 0) g = std::clamp(g, static_cast<T>(-clip), static_cast<T>(clip));
  return g + static_cast<T>(wd) * weight;
}

#if MXLITE_USE_CUDA
void CheckLaunch(cudaError_t status, const std::string& what) {
  MX_CHECK(status == cudaSuccess) << what << ": " << cudaGetErrorString(status);
}
cuda::GradientOptions GpuGradientOptions(double rescale, double clip, double wd) {
  return {rescale, clip, wd};
}
#else
[[noreturn]] void NoGpuBuild(const std::string& name, const NDArray& weight) {
  MX_THROW() << "optimizer update of " << name << " on " << weight.ctx()
             << ": mxlite was built without CUDA";
}
#endif

// ---------------------------------------------------------------------------------------------
// SGD

class SgdOptimizer : public Optimizer {
 public:
  explicit SgdOptimizer(const SgdOptions& options)
      : Optimizer(options.learning_rate, options.momentum > 0 ? std::vector<std::string>{"momentum"}
                                                              : std::vector<std::string>{}),
        options_(options) {}

 protected:
  void PushUpdate(const std::string& name, NDArray& weight, const NDArray& gradient,
                  std::vector<NDArray>& states, double lr, int64_t) override {
    std::vector<VarHandle> writes = {weight.var()};
    for (const NDArray& state : states) writes.push_back(state.var());
    NDArray momentum = states.empty() ? NDArray() : states[0];
    if (!weight.ctx().is_host()) {
      PushGpuUpdate(name, weight, gradient, momentum, lr, writes);
      return;
    }
    weight.engine().PushSync(
        [weight, gradient, momentum, lr, options = options_](RunContext) {
          MXLITE_FLOAT_TYPE_SWITCH(weight.dtype(), T, "SGD update", {
            Apply<T>(weight.data<T>(), gradient.data<T>(),
                     momentum.is_none() ? nullptr : momentum.data<T>(), weight.size(), lr, options);
          });
        },
        weight.ctx(), {gradient.var()}, writes, 0, "sgd_update " + name);
  }

 private:
  void PushGpuUpdate(const std::string& name, const NDArray& weight, const NDArray& gradient,
                     const NDArray& momentum, double lr, const std::vector<VarHandle>& writes) {
#if MXLITE_USE_CUDA
    weight.engine().PushSync(
        [weight, gradient, momentum, lr, name, o = options_](RunContext run) {
          auto stream = static_cast<cudaStream_t>(run.stream);
          MXLITE_FLOAT_TYPE_SWITCH(weight.dtype(), T, "SGD update", {
            CheckLaunch(
                cuda::SgdUpdate(weight.data<T>(), gradient.data<T>(),
                                momentum.is_none() ? nullptr : momentum.data<T>(), weight.size(),
                                lr, o.momentum,
                                GpuGradientOptions(o.rescale_grad, o.clip_gradient, o.wd), stream),
                "sgd_update " + name);
          });
        },
        weight.ctx(), {gradient.var()}, writes, 0, "sgd_update " + name);
#else
    (void)gradient, (void)momentum, (void)lr, (void)writes;
    NoGpuBuild(name, weight);
#endif
  }

  template <typename T>
  static void Apply(T* w, const T* grad, T* mom, int64_t n, double lr, const SgdOptions& o) {
    cpu::ForEachChunk(n, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const T g = ScaledGradient(grad[i], w[i], o.rescale_grad, o.clip_gradient, o.wd);
        if (mom == nullptr) {
          w[i] -= static_cast<T>(lr) * g;
        } else {
          mom[i] = static_cast<T>(o.momentum) * mom[i] - static_cast<T>(lr) * g;
          w[i] += mom[i];
        }
      }
    });
  }

  SgdOptions options_;
};

// ---------------------------------------------------------------------------------------------
// Adam

class AdamOptimizer : public Optimizer {
 public:
  explicit AdamOptimizer(const AdamOptions& options)
      : Optimizer(options.learning_rate, {"mean", "variance"}), options_(options) {}

 protected:
  void PushUpdate(const std::string& name, NDArray& weight, const NDArray& gradient,
                  std::vector<NDArray>& states, double lr, int64_t step) override {
    const double t = static_cast<double>(step);
    const double corrected_lr =
        lr * std::sqrt(1 - std::pow(options_.beta2, t)) / (1 - std::pow(options_.beta1, t));
    NDArray mean = states[0], variance = states[1];
    if (!weight.ctx().is_host()) {
#if MXLITE_USE_CUDA
      weight.engine().PushSync(
          [weight, gradient, mean, variance, corrected_lr, name, o = options_](RunContext run) {
            MXLITE_FLOAT_TYPE_SWITCH(weight.dtype(), T, "Adam update", {
              CheckLaunch(cuda::AdamUpdate(
                              weight.data<T>(), gradient.data<T>(), mean.data<T>(),
                              variance.data<T>(), weight.size(), corrected_lr, o.beta1, o.beta2,
                              o.epsilon, GpuGradientOptions(o.rescale_grad, o.clip_gradient, o.wd),
                              static_cast<cudaStream_t>(run.stream)),
                          "adam_update " + name);
            });
          },
          weight.ctx(), {gradient.var()}, {weight.var(), mean.var(), variance.var()}, 0,
          "adam_update " + name);
      return;
#else
      NoGpuBuild(name, weight);
#endif
    }
    weight.engine().PushSync(
        [weight, gradient, mean, variance, corrected_lr, options = options_](RunContext) {
          MXLITE_FLOAT_TYPE_SWITCH(weight.dtype(), T, "Adam update", {
            Apply<T>(weight.data<T>(), gradient.data<T>(), mean.data<T>(), variance.data<T>(),
                     weight.size(), corrected_lr, options);
          });
        },
        weight.ctx(), {gradient.var()}, {weight.var(), mean.var(), variance.var()}, 0,
        "adam_update " + name);
  }

 private:
  template <typename T>
  static void Apply(T* w, const T* grad, T* m, T* v, int64_t n, double lr, const AdamOptions& o) {
    const T b1 = static_cast<T>(o.beta1), b2 = static_cast<T>(o.beta2);
    cpu::ForEachChunk(n, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const T g = ScaledGradient(grad[i], w[i], o.rescale_grad, o.clip_gradient, o.wd);
        m[i] = b1 * m[i] + (1 - b1) * g;
        v[i] = b2 * v[i] + (1 - b2) * g * g;
        w[i] -= static_cast<T>(lr) * m[i] / (std::sqrt(v[i]) + static_cast<T>(o.epsilon));
      }
    });
  }

  AdamOptions options_;
};

}  // namespace

std::unique_ptr<Optimizer> Optimizer::Sgd(const SgdOptions& options) {
  MX_CHECK(options.learning_rate >= 0) << "SGD learning_rate must be >= 0";
  MX_CHECK(options.momentum >= 0 && options.momentum < 1) << "SGD momentum must be in [0, 1)";
  return std::make_unique<SgdOptimizer>(options);
}

std::unique_ptr<Optimizer> Optimizer::Adam(const AdamOptions& options) {
  MX_CHECK(options.learning_rate >= 0) << "Adam learning_rate must be >= 0";
  MX_CHECK(options.beta1 >= 0 && options.beta1 < 1 && options.beta2 >= 0 && options.beta2 < 1)
      << "Adam beta1 and beta2 must be in [0, 1)";
  return std::make_unique<AdamOptimizer>(options);
}

}  // namespace mxlite
