// The shared operator test harness (docs/design.md, Operators): every op gets, from here,
//   - a finite-difference gradient check in float64 (CheckGradients),
//   - forward results against a plain reference implementation, in float32 and float64
//     (CheckForwardAgainstReference),
//   - shape inference checks, including the error for mismatched shapes (ExpectShapeError),
//   - (on a GPU machine) the GPU kernels against the CPU ones.
//
//   OpCase conv{"Convolution", {{"kernel", "(3,3)"}, {"num_filter", "4"}}, {{2, 3, 5, 5}}};
//   CheckGradients(conv);
//
// Inputs the case does not give shapes for (parameters) get them from the op's shape inference.
// Values are uniform in [-1, 1] unless the case supplies an initialiser for that input.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "ops/operator.h"

namespace mxlite::testing {

// A host tensor that owns its memory (values kept as the dtype's C++ type).
class HostTensor {
 public:
  HostTensor() = default;
  HostTensor(Shape shape, DType dtype);

  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  int64_t size() const { return shape_.size(); }
  double Get(int64_t i) const;
  void Set(int64_t i, double value);
  TensorView View();
  HostTensor As(DType dtype) const;  // converted copy
  std::vector<double> Values() const;

 private:
  Shape shape_;
  DType dtype_ = DType::kFloat32;
  std::vector<double> storage_;  // raw bytes, 8-byte aligned
};

using Initializer = std::function<void(HostTensor&, std::mt19937_64&)>;

// The given values, cycled over the tensor: labels, class or element indices.
Initializer Cycled(std::vector<double> values);

struct OpCase {
  std::string op;
  std::map<std::string, std::string> attrs;
  // Shapes of the leading inputs; the rest (parameters) are inferred.
  std::vector<Shape> input_shapes;
  // Per input name, a custom initialiser (e.g. labels, a positive variance).
  std::map<std::string, Initializer> init;
  bool is_train = true;
  // Finite-difference step and tolerance (relative to max(1, |gradient|)).
  double step = 1e-6;
  double tolerance = 1e-5;
  // Check at most this many elements per input (chosen at random) to keep big cases fast.
  int max_checked_elements = 150;
  std::string Describe() const;
};

struct OpRun {
  std::vector<HostTensor> inputs;
  std::vector<HostTensor> outputs;
};

// Fills the case's inputs (dtype `dtype`) with reproducible random values.
std::vector<HostTensor> MakeInputs(const OpCase& test_case, DType dtype, uint64_t seed = 1);

// Runs forward on the CPU. `inputs` are copied, so auxiliary states updated by the op do not leak
// between runs; the returned run holds the updated copies.
OpRun RunForward(const OpCase& test_case, const std::vector<HostTensor>& inputs);

// Runs backward on the CPU for the given output gradients; returns the input gradients (empty
// tensors for inputs without a gradient).
std::vector<HostTensor> RunBackward(const OpCase& test_case, const OpRun& forward,
                                    const std::vector<HostTensor>& output_grads);

// Output gradients for a backward run: uniform in [-1, 1] from `random`, shaped like `outputs`, of
// dtype `dtype`; zero for hidden outputs (index >= `visible`), which no loss reads.
std::vector<HostTensor> RandomOutputGradients(const std::vector<HostTensor>& outputs, int visible,
                                              DType dtype, std::mt19937_64& random);

// Analytic gradients (backward of a random projection of the visible outputs) against central
// differences, in float64. Reports every mismatch through GoogleTest.
void CheckGradients(const OpCase& test_case);

using ReferenceFn = std::function<std::vector<std::vector<double>>(
    const std::vector<std::vector<double>>& inputs, const std::vector<Shape>& input_shapes)>;

// Forward of the op in float64 and float32 against `reference` (float64 values of the visible
// outputs): float64 to 1e-10 and float32 to `float32_tolerance`, both relative to max(1, |ref|).
void CheckForwardAgainstReference(const OpCase& test_case, const ReferenceFn& reference,
                                  double float32_tolerance = 1e-4);

// Shapes the op infers for the case's outputs.
std::vector<Shape> InferOutputShapes(const OpCase& test_case);

// Shape inference of the case must fail with a message that names the op, the node and contains
// every string in `fragments` (e.g. both shapes).
void ExpectShapeError(const OpCase& test_case, const std::vector<std::string>& fragments);

// GPU-against-CPU cases, declared in the op's own test file; tests/ops/gpu_vs_cpu_test.cc runs
// each (float32 and float16, forward and backward) on a GPU machine, and on the CPU everywhere:
//
//   MXLITE_GPU_CASES(Reductions) { return {{"mean", {{"axis", "(2,3)"}}, {{2, 3, 4, 5}}}}; }
std::vector<OpCase> RegisteredGpuCases();

namespace detail {
struct GpuCaseRegistrar {
  explicit GpuCaseRegistrar(std::vector<OpCase> (*make)());
};
}  // namespace detail

}  // namespace mxlite::testing

#define MXLITE_GPU_CASES(Name)                                                      \
  static std::vector<::mxlite::testing::OpCase> MxliteGpuCases_##Name();            \
  static const ::mxlite::testing::detail::GpuCaseRegistrar mxlite_gpu_cases_##Name( \
      &MxliteGpuCases_##Name);                                                      \
  static std::vector<::mxlite::testing::OpCase> MxliteGpuCases_##Name()
