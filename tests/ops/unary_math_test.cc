// The element-wise math functions (ops/unary_math.h): each against its C library function in
// double and by finite differences, on inputs inside its domain (the inverse trigonometric and
// hyperbolic ones away from its edges, where the slope runs away); _power_scalar with integer and
// fractional exponents and negative bases; hard_sigmoid's and hard_swish's attributes and
// saturation. The GPU
// cases run on a GPU machine (tests/ops/gpu_vs_cpu_test.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

using Attrs = std::map<std::string, std::string>;

// Fills a test input with values inside a function's (well-conditioned) domain.
using Fill = void (*)(HostTensor&, std::mt19937_64&);
void FillPositive(HostTensor& tensor, std::mt19937_64& random);
void FillAwayFromIntegers(HostTensor& tensor, std::mt19937_64& random);

void FillAwayFromHalves(HostTensor& tensor, std::mt19937_64& random);

// Values in [lo, hi).
template <int kLoTenths, int kHiTenths>
void FillBetween(HostTensor& tensor, std::mt19937_64& random) {
  std::uniform_real_distribution<double> uniform(kLoTenths / 10.0, kHiTenths / 10.0);
  for (int64_t i = 0; i < tensor.size(); ++i) tensor.Set(i, uniform(random));
}

struct Function {
  const char* op;
  std::function<double(double)> f;
  Fill fill;  // its domain, or a well-conditioned part of it
};

const std::vector<Function>& Functions() {
  static const std::vector<Function> functions = {
      {"sqrt", [](double x) { return std::sqrt(x); }, FillPositive},
      {"rsqrt", [](double x) { return 1 / std::sqrt(x); }, FillPositive},
      {"square", [](double x) { return x * x; }, FillAwayFromIntegers},
      {"exp", [](double x) { return std::exp(x); }, FillAwayFromIntegers},
      {"log", [](double x) { return std::log(x); }, FillPositive},
      {"abs", [](double x) { return std::abs(x); }, FillAwayFromIntegers},
      {"negative", [](double x) { return -x; }, FillAwayFromIntegers},
      {"reciprocal", [](double x) { return 1 / x; }, FillPositive},
      {"erf", [](double x) { return std::erf(x); }, FillAwayFromIntegers},
      {"sin", [](double x) { return std::sin(x); }, FillAwayFromIntegers},
      {"cos", [](double x) { return std::cos(x); }, FillAwayFromIntegers},
      {"tan", [](double x) { return std::tan(x); }, FillBetween<-12, 12>},  // short of pi/2
      {"arcsin", [](double x) { return std::asin(x); }, FillBetween<-9, 9>},
      {"arccos", [](double x) { return std::acos(x); }, FillBetween<-9, 9>},
      {"arctan", [](double x) { return std::atan(x); }, FillAwayFromIntegers},
      {"sinh", [](double x) { return std::sinh(x); }, FillAwayFromIntegers},
      {"cosh", [](double x) { return std::cosh(x); }, FillAwayFromIntegers},
      {"arcsinh", [](double x) { return std::asinh(x); }, FillAwayFromIntegers},
      {"arccosh", [](double x) { return std::acosh(x); }, FillBetween<12, 32>},
      {"arctanh", [](double x) { return std::atanh(x); }, FillBetween<-9, 9>},
      {"floor", [](double x) { return std::floor(x); }, FillAwayFromIntegers},
      {"ceil", [](double x) { return std::ceil(x); }, FillAwayFromIntegers},
      {"round", [](double x) { return std::nearbyint(x); }, FillAwayFromHalves},
      {"silu", [](double x) { return x / (1 + std::exp(-x)); }, FillAwayFromIntegers},
      {"gelu", [](double x) { return x / 2 * std::erfc(-x / std::sqrt(2.0)); },
       FillAwayFromIntegers},
  };
  return functions;
}

// Values in [0.2, 2.2): away from 0 where sqrt, log and 1/x are steep.
void FillPositive(HostTensor& tensor, std::mt19937_64& random) {
  std::uniform_real_distribution<double> uniform(0.2, 2.2);
  for (int64_t i = 0; i < tensor.size(); ++i) tensor.Set(i, uniform(random));
}

// Values in [-3, 3) that stay 1e-3 away from integers (floor and ceil jump there) and from 0
// (abs's kink).
void FillAwayFromIntegers(HostTensor& tensor, std::mt19937_64& random) {
  std::uniform_real_distribution<double> uniform(-3.0, 3.0);
  for (int64_t i = 0; i < tensor.size(); ++i) {
    double x = uniform(random);
    if (std::abs(x - std::round(x)) < 1e-3) x += 2e-3;
    tensor.Set(i, x);
  }
}

// Values in [-3, 3) that stay 1e-3 away from the halves (round jumps there).
void FillAwayFromHalves(HostTensor& tensor, std::mt19937_64& random) {
  std::uniform_real_distribution<double> uniform(-3.0, 3.0);
  for (int64_t i = 0; i < tensor.size(); ++i) {
    double x = uniform(random);
    if (std::abs(x - std::floor(x) - 0.5) < 1e-3) x += 2e-3;
    tensor.Set(i, x);
  }
}

OpCase CaseOf(const std::string& op, const Shape& shape, Fill fill, Attrs attrs = {}) {
  OpCase test_case{op, std::move(attrs), {shape}};
  test_case.init["data"] = fill;
  return test_case;
}

OpCase CaseOf(const std::string& op, const Shape& shape, bool positive_only, Attrs attrs = {}) {
  return CaseOf(op, shape, positive_only ? FillPositive : FillAwayFromIntegers, std::move(attrs));
}

ReferenceFn ElementWise(std::function<double(double)> f) {
  return [f](const auto& inputs, const auto&) {
    std::vector<double> y(inputs[0].size());
    for (size_t i = 0; i < y.size(); ++i) y[i] = f(inputs[0][i]);
    return std::vector<std::vector<double>>{y};
  };
}

TEST(UnaryMathTest, EachFunctionMatchesTheCLibraryAndItsGradient) {
  for (const Function& function : Functions()) {
    SCOPED_TRACE(function.op);
    // 50,000 elements: more than one chunk of the intra-op split.
    CheckForwardAgainstReference(CaseOf(function.op, {5, 100, 100}, function.fill),
                                 ElementWise(function.f));
    CheckGradients(CaseOf(function.op, {3, 7}, function.fill));
  }
}

// ONNX's Round and NumPy's take halves to the even neighbour.
TEST(UnaryMathTest, RoundTakesHalvesToEven) {
  OpCase halves = CaseOf("round", {6}, false);
  halves.init["data"] = [](HostTensor& tensor, std::mt19937_64&) {
    const double values[] = {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5};
    for (int64_t i = 0; i < 6; ++i) tensor.Set(i, values[i]);
  };
  const OpRun run = RunForward(halves, MakeInputs(halves, DType::kFloat32));
  const double expected[] = {-2, -2, 0, 0, 2, 2};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(run.outputs[0].Get(i), expected[i]) << i;
}

TEST(UnaryMathTest, PowerScalarWithIntegerAndFractionalExponents) {
  for (double exponent : {2.0, 3.0, -1.0, 0.0}) {  // any base
    const Attrs attrs{{"scalar", std::to_string(exponent)}};
    SCOPED_TRACE(exponent);
    CheckForwardAgainstReference(CaseOf("_power_scalar", {4, 9}, false, attrs),
                                 ElementWise([=](double x) { return std::pow(x, exponent); }));
    CheckGradients(CaseOf("_power_scalar", {4, 9}, false, attrs));
  }
  for (double exponent : {0.5, 1.7, -2.5}) {  // positive bases
    const Attrs attrs{{"scalar", std::to_string(exponent)}};
    SCOPED_TRACE(exponent);
    CheckForwardAgainstReference(CaseOf("_power_scalar", {4, 9}, true, attrs),
                                 ElementWise([=](double x) { return std::pow(x, exponent); }));
    CheckGradients(CaseOf("_power_scalar", {4, 9}, true, attrs));
  }
  // A negative base to a fractional power is NaN, as in C and NumPy.
  OpCase fractional = CaseOf("_power_scalar", {3}, false, {{"scalar", "0.5"}});
  fractional.init["data"] = [](HostTensor& tensor, std::mt19937_64&) {
    for (int64_t i = 0; i < tensor.size(); ++i) tensor.Set(i, -1.0 - static_cast<double>(i));
  };
  const OpRun run = RunForward(fractional, MakeInputs(fractional, DType::kFloat32));
  for (int64_t i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(run.outputs[0].Get(i)));
}

TEST(UnaryMathTest, HardSigmoidSaturatesAndPassesGradientOnlyOnTheRamp) {
  for (const Attrs& attrs : {Attrs{}, Attrs{{"alpha", "0.1666666667"}, {"beta", "0.5"}}}) {
    const double alpha = attrs.count("alpha") ? 1 / 6.0 : 0.2, beta = 0.5;
    OpCase test_case = CaseOf("hard_sigmoid", {6, 50}, false, attrs);
    test_case.init["data"] = [](HostTensor& tensor, std::mt19937_64& random) {
      std::uniform_real_distribution<double> uniform(-6.0, 6.0);  // both flat parts and the ramp
      for (int64_t i = 0; i < tensor.size(); ++i) {
        double x = uniform(random);
        if (std::abs(std::abs(x) - 2.5) < 1e-3 || std::abs(std::abs(x) - 3) < 1e-3) x += 0.01;
        tensor.Set(i, x);
      }
    };
    CheckForwardAgainstReference(test_case, ElementWise([=](double x) {
                                   return std::max(0.0, std::min(1.0, alpha * x + beta));
                                 }),
                                 1e-6);
    CheckGradients(test_case);
  }
}

TEST(UnaryMathTest, HardSwishIsXTimesTheHardSigmoidWithItsBits) {
  OpCase swish = CaseOf("hard_swish", {6, 50}, false);
  swish.init["data"] = [](HostTensor& tensor, std::mt19937_64& random) {
    std::uniform_real_distribution<double> uniform(-6.0, 6.0);  // both flat parts and the ramp
    for (int64_t i = 0; i < tensor.size(); ++i) {
      double x = uniform(random);
      if (std::abs(std::abs(x) - 3) < 1e-3) x += 0.01;  // the kinks
      tensor.Set(i, x);
    }
  };
  CheckForwardAgainstReference(
      swish, ElementWise([](double x) { return x * std::max(0.0, std::min(1.0, x / 6 + 0.5)); }),
      1e-6);
  CheckGradients(swish);
  // The same bits as hard_sigmoid then a product, the two ops it replaces.
  OpCase gate = swish;
  gate.op = "hard_sigmoid";
  gate.attrs = {{"alpha", "0.1666666666666667"}, {"beta", "0.5"}};
  const HostTensor x = MakeInputs(swish, DType::kFloat32)[0];
  const OpRun fused = RunForward(swish, {x});
  const OpRun gated = RunForward(gate, {x});
  for (int64_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(fused.outputs[0].Get(i),
              static_cast<double>(static_cast<float>(x.Get(i)) *
                                  static_cast<float>(gated.outputs[0].Get(i))))
        << i;
  }
}

// sqrt is correctly rounded in float32, as std::sqrt, PyTorch and NumPy give it: the roots of
// perfect squares are exact, and every other root is the float nearest the true one.
TEST(UnaryMathTest, SqrtIsCorrectlyRounded) {
  OpCase root = CaseOf("sqrt", {1, 100}, false);
  HostTensor x(Shape{1, 100}, DType::kFloat32);
  for (int64_t i = 0; i < x.size(); ++i) x.Set(i, i < 50 ? double(i * i) : 0.37 * double(i));
  const OpRun run = RunForward(root, {x});
  for (int64_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(run.outputs[0].Get(i), static_cast<double>(std::sqrt(static_cast<float>(x.Get(i)))))
        << "sqrt(" << x.Get(i) << ")";
  }
}

TEST(UnaryMathTest, OutputHasTheDataShape) {
  EXPECT_EQ(InferOutputShapes(CaseOf("erf", {2, 3, 4}, false))[0], (Shape{2, 3, 4}));
  EXPECT_EQ(InferOutputShapes(CaseOf("sqrt", Shape(), true))[0], Shape());
}

MXLITE_GPU_CASES(UnaryMath) {
  std::vector<OpCase> cases;
  for (const Function& function : Functions()) {
    cases.push_back(CaseOf(function.op, {3, 40, 7}, function.fill));
  }
  cases.push_back(CaseOf("_power_scalar", {3, 40, 7}, false, {{"scalar", "2"}}));
  cases.push_back(CaseOf("_power_scalar", {3, 40, 7}, true, {{"scalar", "1.5"}}));
  cases.push_back(CaseOf("hard_sigmoid", {3, 40, 7}, false, {{"alpha", "0.25"}, {"beta", "0.4"}}));
  cases.push_back(CaseOf("hard_swish", {3, 40, 7}, false));
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
