// nll_loss (ops/nll_loss.cc): the weighted negative log-likelihood for every reduction, with and
// without class weights, ignore_index, spatial positions (N, C, d1, d2) as ONNX's node tests feed
// them; gradients to data and weight by finite differences; labels that are no class, and labels
// of the wrong shape, named.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "tests/ops/op_harness.h"
#include "tests/ops/reference.h"

namespace mxlite::testing {
namespace {

struct NllCase {
  std::string reduction;
  bool use_weight;
  std::optional<int64_t> ignore_index;
  Shape data;
  std::vector<double> labels;  // repeated to fill the label's shape
};

OpCase Case(const NllCase& c) {
  OpCase test_case{"nll_loss",
                   {{"reduction", c.reduction}, {"use_weight", c.use_weight ? "true" : "false"}},
                   {c.data}};
  if (c.ignore_index) test_case.attrs["ignore_index"] = std::to_string(*c.ignore_index);
  std::vector<int64_t> label = {c.data[0]};
  for (int i = 2; i < c.data.ndim(); ++i) label.push_back(c.data[i]);
  test_case.input_shapes.push_back(Shape(label));
  test_case.init["label"] = Cycled(c.labels);
  test_case.init["weight"] = Cycled({0.5, 2.0, 1.25, 0.75, 3.0});  // positive, distinct
  return test_case;
}

// PyTorch's definition, position by position.
std::vector<double> Reference(const NllCase& c, const std::vector<std::vector<double>>& in) {
  const std::vector<double>& data = in[0];
  const std::vector<double>& label = in[1];
  const int64_t classes = c.data[1], positions = c.data.size(2, c.data.ndim());
  std::vector<double> losses;
  double sum = 0.0, total = 0.0;
  for (size_t i = 0; i < label.size(); ++i) {
    const auto t = static_cast<int64_t>(label[i]);
    const int64_t n = static_cast<int64_t>(i) / positions, p = static_cast<int64_t>(i) % positions;
    double loss = 0.0;
    if (!(c.ignore_index && t == *c.ignore_index)) {
      const double w = c.use_weight ? in[2][static_cast<size_t>(t)] : 1.0;
      loss = -w * data[static_cast<size_t>((n * classes + t) * positions + p)];
      total += w;
    }
    losses.push_back(loss);
    sum += loss;
  }
  if (c.reduction == "none") return losses;
  return {c.reduction == "sum" ? sum : sum / total};
}

class NllLossTest : public ::testing::TestWithParam<NllCase> {};

TEST_P(NllLossTest, MatchesTheDefinitionAndItsGradients) {
  const NllCase c = GetParam();
  const OpCase test_case = Case(c);
  CheckForwardAgainstReference(
      test_case, [c](const std::vector<std::vector<double>>& in, const std::vector<Shape>&) {
        return std::vector<std::vector<double>>{Reference(c, in)};
      });
  CheckGradients(test_case);
}

INSTANTIATE_TEST_SUITE_P(
    Reductions, NllLossTest,
    ::testing::Values(NllCase{"mean", false, std::nullopt, {4, 5}, {0, 4, 2, 1}},
                      NllCase{"sum", false, std::nullopt, {4, 5}, {3, 1, 1, 0}},
                      NllCase{"none", false, std::nullopt, {4, 5}, {2, 0, 4, 4}},
                      NllCase{"mean", true, std::nullopt, {4, 5}, {0, 4, 2, 1}},
                      NllCase{"sum", true, std::nullopt, {3, 5}, {4, 4, 2}},
                      NllCase{"none", true, std::nullopt, {3, 5}, {1, 3, 0}},
                      // Ignored positions add nothing, to the sum or to the mean's weight; an
                      // ignore_index outside the classes (-1) as PyTorch's default -100 is.
                      NllCase{"mean", true, 2, {5, 4}, {2, 1, 3, 2, 0}},
                      NllCase{"mean", false, -1, {5, 4}, {-1, 1, 3, -1, 0}},
                      NllCase{"none", true, 0, {3, 4}, {0, 1, 3}},
                      // Spatial positions: (N, C, d1, d2) with labels (N, d1, d2).
                      NllCase{"mean", true, 1, {2, 3, 2, 3}, {0, 1, 2, 2, 0, 1, 1}},
                      NllCase{"none", false, std::nullopt, {2, 4, 3}, {3, 0, 1, 2, 2}}));

TEST(NllLossErrorTest, ALabelThatIsNoClassIsNamed) {
  OpCase test_case = Case({"mean", false, std::nullopt, {3, 4}, {0, 4, 1}});
  std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat32);
  try {
    RunForward(test_case, inputs);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("nll_loss"), std::string::npos) << message;
    EXPECT_NE(message.find("label 4"), std::string::npos) << message;
    EXPECT_NE(message.find("[0, 4)"), std::string::npos) << message;
  }
}

TEST(NllLossErrorTest, ALabelOfTheWrongShapeIsNamed) {
  OpCase test_case = Case({"mean", false, std::nullopt, {3, 4}, {0}});
  test_case.input_shapes[1] = Shape({4});
  ExpectShapeError(test_case, {"nll_loss", "label", "(3)"});
}

MXLITE_GPU_CASES(NllLoss) {
  return {Case({"mean", true, 2, {5, 4}, {2, 1, 3, 2, 0}}),
          Case({"none", false, std::nullopt, {2, 4, 3}, {3, 0, 1, 2, 2}}),
          Case({"sum", true, std::nullopt, {2, 3, 2, 3}, {0, 1, 2, 2, 0, 1, 1}})};
}

}  // namespace
}  // namespace mxlite::testing
