// Parameter initialisers, as in MXNet: a rule per kind of parameter chosen by its name's suffix.
//
//   InitializeParameters(*executor, Xavier{});   // weights Xavier, biases 0, gamma 1, beta 0,
//                                                 // moving_mean 0, moving_var 1
//
// Weight-like arrays ("..._weight") get the initialiser's distribution; "_bias" and "_beta" get
// zeros, "_gamma" ones, "_moving_mean" zeros, "_moving_var" ones. Values are drawn on the host
// from a seeded generator (reproducible) and copied into the array on any device.
//
// Xavier follows MXNet: scale = sqrt(magnitude / factor) with factor = fan_in, fan_out or their
// average, fan_in = shape[1] * receptive field, fan_out = shape[0] * receptive field; uniform in
// [-scale, scale] or normal with that standard deviation.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <variant>

#include "engine/ndarray.h"

namespace mxlite {

class Executor;

struct Zeros {};
struct Constant {
  double value = 0;
};
struct Uniform {
  double scale = 0.07;  // U(-scale, scale), MXNet's default
};
struct Normal {
  double sigma = 0.01;  // N(0, sigma^2), MXNet's default
};
struct Xavier {
  enum class Distribution { kUniform, kGaussian };
  enum class Factor { kAverage, kIn, kOut };
  Distribution distribution = Distribution::kUniform;
  Factor factor = Factor::kAverage;
  double magnitude = 3;
};

using Initializer = std::variant<Zeros, Constant, Uniform, Normal, Xavier>;

// Fills `array` with values drawn from `initializer` (ignores the name rules).
void FillArray(NDArray& array, const Initializer& initializer, std::mt19937_64& random);

// Initialises one named array by the name rules above.
void InitializeNamed(const std::string& name, NDArray& array, const Initializer& weights,
                     std::mt19937_64& random);

// Every parameter and auxiliary state of the executor, by the name rules above.
void InitializeParameters(Executor& executor, const Initializer& weights, uint64_t seed = 0);

}  // namespace mxlite
