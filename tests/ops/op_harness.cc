#include "tests/ops/op_harness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <sstream>

#include "core/error.h"
#include "core/half.h"

namespace mxlite::testing {

namespace {
constexpr const char* kNode = "node0";

Attributes ParseCase(const OpCase& test_case, const OpDef& op) {
  return ParseOpAttributes(op, test_case.attrs, kNode);
}

ShapeInference InferCaseShapes(const OpCase& test_case, const OpDef& op, const Attributes& attrs) {
  ShapeInference shapes;
  shapes.node = kNode;
  shapes.inputs.resize(InputNames(op, attrs).size());
  for (size_t i = 0; i < test_case.input_shapes.size() && i < shapes.inputs.size(); ++i) {
    shapes.inputs[i] = test_case.input_shapes[i];
  }
  InferShapes(op, attrs, shapes);
  return shapes;
}

std::vector<TensorView> Views(std::vector<HostTensor>& tensors) {
  std::vector<TensorView> views;
  for (HostTensor& tensor : tensors) views.push_back(tensor.View());
  return views;
}

// sum_k w_k * y_k over the visible outputs.
double Projection(const std::vector<HostTensor>& outputs, const std::vector<HostTensor>& weights,
                  int visible) {
  double total = 0;
  for (int o = 0; o < visible; ++o) {
    for (int64_t i = 0; i < outputs[o].size(); ++i) total += outputs[o].Get(i) * weights[o].Get(i);
  }
  return total;
}
}  // namespace

HostTensor::HostTensor(Shape shape, DType dtype)
    : shape_(shape), dtype_(dtype),
      storage_((static_cast<size_t>(shape.size()) * DTypeSize(dtype) + 7) / 8 + 1, 0.0) {}

double HostTensor::Get(int64_t i) const {
  const void* base = storage_.data();
  switch (dtype_) {
    case DType::kFloat32: return static_cast<const float*>(base)[i];
    case DType::kFloat64: return static_cast<const double*>(base)[i];
    case DType::kInt32: return static_cast<const int32_t*>(base)[i];
    case DType::kInt64: return static_cast<double>(static_cast<const int64_t*>(base)[i]);
    case DType::kUInt8: return static_cast<const uint8_t*>(base)[i];
    case DType::kFloat16: return HalfToFloat(static_cast<const uint16_t*>(base)[i]);
    default: MX_THROW() << "HostTensor: dtype " << dtype_ << " not supported";
  }
}

void HostTensor::Set(int64_t i, double value) {
  void* base = storage_.data();
  switch (dtype_) {
    case DType::kFloat32: static_cast<float*>(base)[i] = static_cast<float>(value); break;
    case DType::kFloat64: static_cast<double*>(base)[i] = value; break;
    case DType::kInt32: static_cast<int32_t*>(base)[i] = static_cast<int32_t>(value); break;
    case DType::kInt64: static_cast<int64_t*>(base)[i] = static_cast<int64_t>(value); break;
    case DType::kUInt8: static_cast<uint8_t*>(base)[i] = static_cast<uint8_t>(value); break;
    case DType::kFloat16:
      static_cast<uint16_t*>(base)[i] = FloatToHalf(static_cast<float>(value));
      break;
    default: MX_THROW() << "HostTensor: dtype " << dtype_ << " not supported";
  }
}

TensorView HostTensor::View() { return {storage_.data(), shape_, dtype_, Context::CPU()}; }

HostTensor HostTensor::As(DType dtype) const {
  HostTensor copy(shape_, dtype);
  for (int64_t i = 0; i < size(); ++i) copy.Set(i, Get(i));
  return copy;
}

std::vector<double> HostTensor::Values() const {
  std::vector<double> values(static_cast<size_t>(size()));
  for (int64_t i = 0; i < size(); ++i) values[i] = Get(i);
  return values;
}

std::vector<HostTensor> RandomOutputGradients(const std::vector<HostTensor>& outputs, int visible,
                                              DType dtype, std::mt19937_64& random) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<HostTensor> grads;
  for (size_t o = 0; o < outputs.size(); ++o) {
    HostTensor grad(outputs[o].shape(), dtype);
    for (int64_t i = 0; i < grad.size(); ++i) {
      grad.Set(i, static_cast<int>(o) < visible ? uniform(random) : 0.0);
    }
    grads.push_back(grad);
  }
  return grads;
}

std::string OpCase::Describe() const {
  std::ostringstream out;
  out << op << "(";
  bool first = true;
  for (const auto& [name, value] : attrs) {
    out << (first ? "" : ", ") << name << "=" << value;
    first = false;
  }
  out << ") on";
  for (const Shape& shape : input_shapes) out << " " << shape;
  return out.str();
}

std::vector<Shape> InferOutputShapes(const OpCase& test_case) {
  const OpDef& op = OpRegistry::Global().Get(test_case.op);
  Attributes attrs = ParseCase(test_case, op);
  ShapeInference shapes = InferCaseShapes(test_case, op, attrs);
  std::vector<Shape> result;
  for (const auto& shape : shapes.outputs) result.push_back(*shape);
  return result;
}

Initializer Cycled(std::vector<double> values) {
  return [values](HostTensor& tensor, std::mt19937_64&) {
    for (int64_t i = 0; i < tensor.size(); ++i) {
      tensor.Set(i, values[static_cast<size_t>(i) % values.size()]);
    }
  };
}

std::vector<HostTensor> MakeInputs(const OpCase& test_case, DType dtype, uint64_t seed) {
  const OpDef& op = OpRegistry::Global().Get(test_case.op);
  Attributes attrs = ParseCase(test_case, op);
  ShapeInference shapes = InferCaseShapes(test_case, op, attrs);
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<HostTensor> inputs;
  for (size_t i = 0; i < shapes.inputs.size(); ++i) {
    MX_CHECK(shapes.inputs[i].has_value())
        << test_case.Describe() << ": the shape of input " << shapes.input_names[i]
        << " is neither given nor inferred";
    HostTensor tensor(*shapes.inputs[i], DType::kFloat64);
    auto init = test_case.init.find(shapes.input_names[i]);
    if (init != test_case.init.end()) {
      init->second(tensor, random);
    } else {
      for (int64_t k = 0; k < tensor.size(); ++k) tensor.Set(k, uniform(random));
    }
    inputs.push_back(tensor.As(dtype));
  }
  return inputs;
}

// The op's per-node state for this call on the CPU (null when it keeps none).
std::unique_ptr<OpState> CreateState(const OpDef& op, const Attributes& attrs, const OpRun& run,
                                     bool training) {
  StateRequest request{attrs, {}, {}, {}, Context::CPU(), kNode, training};
  for (const HostTensor& output : run.outputs) request.output_shapes.push_back(output.shape());
  for (const HostTensor& input : run.inputs) {
    request.input_shapes.push_back(input.shape());
    request.input_dtypes.push_back(input.dtype());
  }
  return CreateOpState(op, request);
}

OpRun RunForward(const OpCase& test_case, const std::vector<HostTensor>& inputs) {
  const OpDef& op = OpRegistry::Global().Get(test_case.op);
  Attributes attrs = ParseCase(test_case, op);
  ShapeInference shapes = InferCaseShapes(test_case, op, attrs);
  // Output dtypes from the op's dtype inference (most follow the data; Cast's does not).
  DTypeInference dtypes;
  dtypes.node = kNode;
  for (const HostTensor& input : inputs) dtypes.inputs.push_back(input.dtype());
  InferDTypes(op, attrs, dtypes);
  OpRun run;
  run.inputs = inputs;
  for (size_t o = 0; o < shapes.outputs.size(); ++o) {
    run.outputs.emplace_back(*shapes.outputs[o], dtypes.outputs[o].value());
  }
  std::unique_ptr<OpState> state = CreateState(op, attrs, run, /*training=*/false);
  ScratchSpace scratch(Context::CPU());
  std::mt19937_64 random(42);  // the same draws on every run, so finite differences see one mask
  OpContext ctx{Context::CPU(), test_case.is_train, nullptr, &scratch, &random, state.get(), kNode};
  std::vector<WriteMode> req(run.outputs.size(), WriteMode::kWrite);
  ForwardKernelFor(op, DeviceType::kCPU)(ctx, attrs, Views(run.inputs), Views(run.outputs), req);
  return run;
}

std::vector<HostTensor> RunBackward(const OpCase& test_case, const OpRun& forward,
                                    const std::vector<HostTensor>& output_grads) {
  const OpDef& op = OpRegistry::Global().Get(test_case.op);
  Attributes attrs = ParseCase(test_case, op);
  OpRun run = forward;  // kernels get mutable views
  std::vector<HostTensor> grads_out = output_grads;
  std::vector<bool> has_gradient = InputHasGradient(op, attrs);
  std::vector<HostTensor> input_grads;
  std::vector<WriteMode> req;
  for (size_t i = 0; i < run.inputs.size(); ++i) {
    input_grads.emplace_back(has_gradient[i] ? run.inputs[i].shape() : Shape{0},
                             run.inputs[i].dtype());
    req.push_back(has_gradient[i] ? WriteMode::kWrite : WriteMode::kNull);
  }
  // Only what backward declared it needs is passed; the rest are empty views, so a kernel that
  // reads more than it declared fails here instead of in the memory planner.
  BackwardDependencies deps = BackwardDependenciesOf(op, attrs);
  std::vector<TensorView> inputs = Views(run.inputs), outputs = Views(run.outputs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!deps.inputs[i]) inputs[i] = TensorView{};
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!deps.outputs[i]) outputs[i] = TensorView{};
  }
  std::unique_ptr<OpState> state = CreateState(op, attrs, run, /*training=*/true);
  ScratchSpace scratch(Context::CPU());
  std::mt19937_64 random(42);
  OpContext ctx{Context::CPU(), test_case.is_train, nullptr, &scratch, &random, state.get(), kNode};
  // Hidden outputs (saved for backward) have no gradient: their views are empty.
  std::vector<TensorView> output_grad_views = Views(grads_out);
  for (size_t o = static_cast<size_t>(NumVisibleOutputs(op, attrs)); o < output_grad_views.size();
       ++o) {
    output_grad_views[o] = TensorView{};
  }
  BackwardKernelFor(op, DeviceType::kCPU)(ctx, attrs, output_grad_views, inputs, outputs,
                                          Views(input_grads), req);
  return input_grads;
}

void CheckGradients(const OpCase& test_case) {
  SCOPED_TRACE(test_case.Describe());
  const OpDef& op = OpRegistry::Global().Get(test_case.op);
  Attributes attrs = ParseCase(test_case, op);
  const int visible = NumVisibleOutputs(op, attrs);
  std::vector<bool> has_gradient = InputHasGradient(op, attrs);
  std::vector<std::string> names = InputNames(op, attrs);

  std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat64);
  OpRun forward = RunForward(test_case, inputs);
  std::mt19937_64 random(7);
  const std::vector<HostTensor> weights =
      RandomOutputGradients(forward.outputs, visible, DType::kFloat64, random);
  std::vector<HostTensor> analytic = RunBackward(test_case, forward, weights);

  for (size_t input = 0; input < inputs.size(); ++input) {
    if (!has_gradient[input]) continue;
    std::vector<int64_t> positions(static_cast<size_t>(inputs[input].size()));
    std::iota(positions.begin(), positions.end(), 0);
    std::shuffle(positions.begin(), positions.end(), random);
    if (static_cast<int>(positions.size()) > test_case.max_checked_elements) {
      positions.resize(test_case.max_checked_elements);
    }
    int mismatches = 0;
    for (int64_t position : positions) {
      std::vector<HostTensor> shifted = inputs;
      const double original = inputs[input].Get(position);
      shifted[input].Set(position, original + test_case.step);
      const double plus = Projection(RunForward(test_case, shifted).outputs, weights, visible);
      shifted[input].Set(position, original - test_case.step);
      const double minus = Projection(RunForward(test_case, shifted).outputs, weights, visible);
      const double numeric = (plus - minus) / (2 * test_case.step);
      const double computed = analytic[input].Get(position);
      const double scale = std::max(1.0, std::abs(numeric));
      if (std::abs(numeric - computed) > test_case.tolerance * scale && ++mismatches <= 5) {
        ADD_FAILURE() << "gradient of input '" << names[input] << "' at element " << position
                      << ": backward gives " << computed << ", finite differences " << numeric;
      }
    }
    EXPECT_EQ(mismatches, 0) << "input '" << names[input] << "': " << mismatches << " of "
                             << positions.size() << " checked elements disagree";
  }
}

void CheckForwardAgainstReference(const OpCase& test_case, const ReferenceFn& reference,
                                  double float32_tolerance) {
  SCOPED_TRACE(test_case.Describe());
  const OpDef& op = OpRegistry::Global().Get(test_case.op);
  const int visible = NumVisibleOutputs(op, ParseCase(test_case, op));
  std::vector<HostTensor> inputs64 = MakeInputs(test_case, DType::kFloat64);
  std::vector<std::vector<double>> values;
  std::vector<Shape> shapes;
  for (const HostTensor& input : inputs64) {
    values.push_back(input.Values());
    shapes.push_back(input.shape());
  }
  std::vector<std::vector<double>> expected = reference(values, shapes);
  ASSERT_EQ(static_cast<int>(expected.size()), visible) << "reference output count";
  for (DType dtype : {DType::kFloat64, DType::kFloat32}) {
    std::vector<HostTensor> inputs;
    for (const HostTensor& input : inputs64) {
      inputs.push_back(IsFloatingPoint(input.dtype()) ? input.As(dtype) : input);
    }
    OpRun run = RunForward(test_case, inputs);
    const double tolerance = dtype == DType::kFloat64 ? 1e-10 : float32_tolerance;
    for (int o = 0; o < visible; ++o) {
      ASSERT_EQ(run.outputs[o].size(), static_cast<int64_t>(expected[o].size()))
          << "output " << o << " size";
      int mismatches = 0;
      for (int64_t i = 0; i < run.outputs[o].size(); ++i) {
        const double want = expected[o][i];
        const double got = run.outputs[o].Get(i);
        if (std::abs(got - want) > tolerance * std::max(1.0, std::abs(want)) && ++mismatches <= 5) {
          ADD_FAILURE() << DTypeName(dtype) << " output " << o << " element " << i << ": got "
                        << got << ", reference " << want;
        }
      }
      EXPECT_EQ(mismatches, 0) << DTypeName(dtype) << " output " << o;
    }
  }
}

void ExpectShapeError(const OpCase& test_case, const std::vector<std::string>& fragments) {
  SCOPED_TRACE(test_case.Describe());
  try {
    InferOutputShapes(test_case);
    ADD_FAILURE() << "shape inference accepted the shapes";
  } catch (const Error& error) {
    std::string message = error.what();
    EXPECT_NE(message.find(test_case.op), std::string::npos) << message;
    EXPECT_NE(message.find(kNode), std::string::npos) << message;
    for (const std::string& fragment : fragments) {
      EXPECT_NE(message.find(fragment), std::string::npos) << "missing '" << fragment << "' in: "
                                                           << message;
    }
  }
}

namespace {
std::vector<std::vector<OpCase> (*)()>& GpuCaseMakers() {
  static std::vector<std::vector<OpCase> (*)()> makers;
  return makers;
}
}  // namespace

std::vector<OpCase> RegisteredGpuCases() {
  std::vector<OpCase> cases;
  for (auto make : GpuCaseMakers()) {
    for (OpCase& test_case : make()) cases.push_back(std::move(test_case));
  }
  return cases;
}

namespace detail {
GpuCaseRegistrar::GpuCaseRegistrar(std::vector<OpCase> (*make)()) {
  GpuCaseMakers().push_back(make);
}
}  // namespace detail

}  // namespace mxlite::testing
