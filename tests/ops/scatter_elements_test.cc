// scatter_elements (ops/scatter_elements.h): every reduction along each axis of 1-D to 4-D data
// against the definition (negative indices, an index smaller than the data on the other axes,
// indices that repeat: the last write wins for none, the rest combine in order), gradients by
// finite differences, int32 and int64 data, errors naming the node, and GPU cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/ops/op_harness.h"
#include "tests/ops/reference.h"

namespace mxlite::testing {
namespace {

struct ScatterCase {
  int64_t axis;
  Shape data, index;
  std::vector<double> indices;  // repeated to fill index
};

OpCase Case(const ScatterCase& c, const std::string& reduction) {
  OpCase test_case{"scatter_elements",
                   {{"axis", std::to_string(c.axis)}, {"reduction", reduction}},
                   {c.data, c.index, c.index}};
  test_case.init["index"] = Cycled(c.indices);
  return test_case;
}

double Combine(const std::string& reduction, double there, double update) {
  if (reduction == "add") return there + update;
  if (reduction == "mul") return there * update;
  if (reduction == "max") return std::max(there, update);
  if (reduction == "min") return std::min(there, update);
  return update;
}

// The definition, index elements in row-major order (within a line, that is the order along the
// axis; lines never meet).
std::vector<double> Reference(const ScatterCase& c, const std::string& reduction,
                              const std::vector<double>& data, const std::vector<double>& index,
                              const std::vector<double>& updates) {
  const int rank = c.data.ndim();
  const int axis = static_cast<int>(c.axis < 0 ? c.axis + rank : c.axis);
  std::vector<double> out = data;
  for (int64_t flat = 0; flat < c.index.size(); ++flat) {
    std::vector<int64_t> coordinate(static_cast<size_t>(rank));
    for (int d = 0; d < rank; ++d) coordinate[d] = (flat / c.index.size(d + 1, rank)) % c.index[d];
    auto target = static_cast<int64_t>(index[static_cast<size_t>(flat)]);
    coordinate[axis] = target < 0 ? target + c.data[axis] : target;
    int64_t offset = 0;
    for (int d = 0; d < rank; ++d) offset = offset * c.data[d] + coordinate[d];
    out[offset] = Combine(reduction, out[offset], updates[static_cast<size_t>(flat)]);
  }
  return out;
}

const std::vector<ScatterCase>& Cases() {
  // No index repeats within a line (the elements along the axis at one coordinate elsewhere).
  static const std::vector<ScatterCase> cases = {
      {0, {6}, {4}, {4, 0, -1, 2}},
      {0, {3, 4}, {2, 4}, {2, 0, 1, 1, 0, 2, -3, 2}},
      {1, {3, 4}, {3, 2}, {3, -2, 0, 2, -4, 1}},
      {-1, {4, 5}, {2, 3}, {0, 4, 2, 1, 3, -5}},  // index smaller on the other axis
      {1, {2, 3, 4}, {2, 2, 3}, {2, 0, 1, -3, -1, 2}},
      {2, {2, 3, 4, 3}, {1, 3, 2, 2}, {3, 0, 1, 2, -2, -3}}};
  return cases;
}

// Indices that repeat within a line: for the reductions (every update counts) and for none (the
// last write along the axis wins).
const std::vector<ScatterCase>& RepeatingCases() {
  static const std::vector<ScatterCase> cases = {
      {0, {5}, {6}, {1, 3, 1, -4, 0, 1}},
      {1, {2, 4}, {2, 5}, {2, 2, 0, -2, 3}},
      {0, {3, 2, 2}, {4, 2, 2}, {1, 1, 2, 0, 1, 2, 2, 0}}};
  return cases;
}

TEST(ScatterElementsTest, EveryReductionMatchesTheDefinition) {
  for (const std::string reduction : {"none", "add", "mul", "max", "min"}) {
    std::vector<ScatterCase> all = Cases();
    all.insert(all.end(), RepeatingCases().begin(), RepeatingCases().end());
    for (const ScatterCase& c : all) {
      SCOPED_TRACE(reduction + " axis " + std::to_string(c.axis));
      const OpCase test_case = Case(c, reduction);
      EXPECT_EQ(InferOutputShapes(test_case)[0], c.data);
      CheckForwardAgainstReference(
          test_case,
          [c, reduction](const std::vector<std::vector<double>>& in, const std::vector<Shape>&) {
            return std::vector<std::vector<double>>{Reference(c, reduction, in[0], in[1], in[2])};
          });
    }
  }
}

TEST(ScatterElementsTest, Gradients) {
  for (const std::string reduction : {"none", "add", "mul", "max", "min"}) {
    for (const ScatterCase& c : Cases()) {
      SCOPED_TRACE(reduction + " axis " + std::to_string(c.axis));
      CheckGradients(Case(c, reduction));
    }
    if (reduction == "none") continue;  // an overwritten update has no effect to measure
    for (const ScatterCase& c : RepeatingCases()) {
      SCOPED_TRACE(reduction + " repeating, axis " + std::to_string(c.axis));
      CheckGradients(Case(c, reduction));
    }
  }
}

// max / min split the gradient evenly among the values equal to the result (PyTorch's
// scatter_reduce with amax / amin).
TEST(ScatterElementsTest, TiesShareTheGradientOfMaxAndMin) {
  const ScatterCase c{0, {2}, {3}, {0, 0, 1}};
  for (const std::string reduction : {"max", "min"}) {
    const OpCase test_case = Case(c, reduction);
    std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat64);
    const double data[] = {5, 1}, updates[] = {5, 5, 1};  // element 0: three 5s; element 1: 1s
    for (int i = 0; i < 2; ++i) inputs[0].Set(i, data[i]);
    for (int i = 0; i < 3; ++i) inputs[2].Set(i, updates[i]);
    const OpRun forward = RunForward(test_case, inputs);
    HostTensor dy(Shape{2}, DType::kFloat64);
    dy.Set(0, 6.0);
    dy.Set(1, 4.0);
    const std::vector<HostTensor> grads = RunBackward(test_case, forward, {dy});
    EXPECT_EQ(grads[0].Values(), (std::vector<double>{2.0, 2.0})) << reduction;
    EXPECT_EQ(grads[2].Values(), (std::vector<double>{2.0, 2.0, 2.0})) << reduction;
  }
}

TEST(ScatterElementsTest, IntegerDataCombinesExactly) {
  const ScatterCase c{1, {2, 3}, {2, 4}, {2, 0, 2, 1}};
  for (DType dtype : {DType::kInt32, DType::kInt64}) {
    for (const std::string reduction : {"none", "add", "mul", "max", "min"}) {
      const OpCase test_case = Case(c, reduction);
      std::vector<HostTensor> inputs = MakeInputs(test_case, dtype);
      for (int64_t i = 0; i < inputs[0].size(); ++i) inputs[0].Set(i, 1000 * (i + 1));
      for (int64_t i = 0; i < inputs[2].size(); ++i) inputs[2].Set(i, 7 - 3 * i);
      const OpRun run = RunForward(test_case, inputs);
      ASSERT_EQ(run.outputs[0].dtype(), dtype);
      EXPECT_EQ(run.outputs[0].Values(),
                Reference(c, reduction, inputs[0].Values(), inputs[1].Values(), inputs[2].Values()))
          << reduction;
    }
  }
}

TEST(ScatterElementsTest, ErrorsNameTheNode) {
  OpCase mismatched{"scatter_elements", {}, {{3, 4}, {2, 4}, {2, 3}}};
  ExpectShapeError(mismatched, {"updates have shape (2,3) but index (2,4)"});
  OpCase too_wide{"scatter_elements", {{"axis", "0"}}, {{3, 4}, {2, 5}, {2, 5}}};
  ExpectShapeError(too_wide, {"not the scattered one"});
  const OpCase outside = Case({1, {2, 3}, {2, 2}, {0, 3}}, "none");
  try {
    RunForward(outside, MakeInputs(outside, DType::kFloat32));
    FAIL() << "expected an error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("scatter_elements"), std::string::npos) << message;
    EXPECT_NE(message.find("index 3 at flat position 1 is outside [-3, 3)"), std::string::npos)
        << message;
  }
}

MXLITE_GPU_CASES(ScatterElements) {
  std::vector<OpCase> cases;
  for (const std::string reduction : {"none", "add", "mul", "max", "min"}) {
    cases.push_back(Case(Cases()[3], reduction));
    cases.push_back(Case(Cases()[5], reduction));
    if (reduction != "none") cases.push_back(Case(RepeatingCases()[2], reduction));
  }
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
