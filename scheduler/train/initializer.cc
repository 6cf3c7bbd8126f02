#include "scheduler/train/initializer.h"

#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/half.h"
#include "scheduler/graph/executor.h"

namespace mxlite {

namespace {

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

double XavierScale(const Xavier& xavier, const Shape& shape, const std::string& what) {
  MX_CHECK(shape.ndim() >= 2) << "Xavier needs a weight of at least 2 dims, " << what << " has "
                              << shape;
  const double receptive = static_cast<double>(shape.size(2, shape.ndim()));
  const double fan_in = static_cast<double>(shape[1]) * receptive;
  const double fan_out = static_cast<double>(shape[0]) * receptive;
  double factor = (fan_in + fan_out) / 2;
  if (xavier.factor == Xavier::Factor::kIn) factor = fan_in;
  if (xavier.factor == Xavier::Factor::kOut) factor = fan_out;
  return std::sqrt(xavier.magnitude / factor);
}

std::vector<double> Draw(const Initializer& initializer, const Shape& shape,
                         std::mt19937_64& random) {
  std::vector<double> values(static_cast<size_t>(shape.size()), 0.0);
  struct Visitor {
    std::vector<double>& values;
    const Shape& shape;
    std::mt19937_64& random;
    void operator()(const Zeros&) const {}
    void operator()(const Constant& constant) const {
      std::fill(values.begin(), values.end(), constant.value);
    }
    void operator()(const Uniform& uniform) const {
      std::uniform_real_distribution<double> draw(-uniform.scale, uniform.scale);
      for (double& value : values) value = draw(random);
    }
    void operator()(const Normal& normal) const {
      std::normal_distribution<double> draw(0.0, normal.sigma);
      for (double& value : values) value = draw(random);
    }
    void operator()(const Xavier& xavier) const {
      const double scale = XavierScale(xavier, shape, "the array");
      if (xavier.distribution == Xavier::Distribution::kUniform) {
        (*this)(Uniform{scale});
      } else {
        (*this)(Normal{scale});
      }
    }
  };
  std::visit(Visitor{values, shape, random}, initializer);
  return values;
}

template <typename T>
void CopyIn(NDArray& array, const std::vector<double>& values) {
  std::vector<T> converted(values.begin(), values.end());
  array.SyncCopyFromCPU(converted.data(), converted.size() * sizeof(T));
}

// float16 arrays (GPU networks in float16) get the values rounded to nearest even.
void CopyInHalf(NDArray& array, const std::vector<double>& values) {
  std::vector<uint16_t> converted;
  converted.reserve(values.size());
  for (double value : values) converted.push_back(FloatToHalf(static_cast<float>(value)));
  array.SyncCopyFromCPU(converted.data(), converted.size() * sizeof(uint16_t));
}

}  // namespace

void FillArray(NDArray& array, const Initializer& initializer, std::mt19937_64& random) {
  const std::vector<double> values = Draw(initializer, array.shape(), random);
  switch (array.dtype()) {
    case DType::kFloat32:
      CopyIn<float>(array, values);
      break;
    case DType::kFloat64:
      CopyIn<double>(array, values);
      break;
    case DType::kFloat16:
      CopyInHalf(array, values);
      break;
    default:
      MX_THROW() << "cannot initialise an array of dtype " << array.dtype();
  }
}

void InitializeNamed(const std::string& name, NDArray& array, const Initializer& weights,
                     std::mt19937_64& random) {
  if (EndsWith(name, "_bias") || EndsWith(name, "_beta") || EndsWith(name, "_moving_mean")) {
    FillArray(array, Zeros{}, random);
  } else if (EndsWith(name, "_gamma") || EndsWith(name, "_moving_var")) {
    FillArray(array, Constant{1.0}, random);
  } else {
    MX_CHECK(array.shape().ndim() >= 2 || !std::holds_alternative<Xavier>(weights))
        << "Xavier cannot initialise " << name << " of shape " << array.shape()
        << " (name it ..._bias/_gamma/_beta, or use another initialiser)";
    FillArray(array, weights, random);
  }
}

void InitializeParameters(Executor& executor, const Initializer& weights, uint64_t seed) {
  std::mt19937_64 random(seed);
  for (const std::string& name : executor.ParameterNames()) {
    InitializeNamed(name, executor.Arg(name), weights, random);
  }
  for (const std::string& name : executor.AuxiliaryNames()) {
    InitializeNamed(name, executor.Arg(name), weights, random);
  }
}

}  // namespace mxlite
