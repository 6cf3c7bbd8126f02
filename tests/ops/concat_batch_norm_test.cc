// _concat_batch_norm against Concat then BatchNorm (inference, moving statistics): the same bits
// in every layout the planner gives the two (NCHW, NHWC, NCHW16c) and on plain 2-D data, with and
// without a fused clamp and a learned gamma, in float32 and float64; its shape errors.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

using Attrs = std::map<std::string, std::string>;

void PositiveVariance(HostTensor& tensor, std::mt19937_64& random) {
  std::uniform_real_distribution<double> uniform(0.1, 2.0);
  for (int64_t i = 0; i < tensor.size(); ++i) tensor.Set(i, uniform(random));
}

// The joined inputs' shapes: `parts` extents along `axis` of `shape`.
std::vector<Shape> PartShapes(Shape shape, int axis, const std::vector<int64_t>& parts) {
  std::vector<Shape> shapes;
  for (int64_t extent : parts) {
    shape[axis] = extent;
    shapes.push_back(shape);
  }
  return shapes;
}

// Runs Concat then BatchNorm, and the fused op, on the same values; expects the same bits.
void CheckAgainstTheTwoOps(const Shape& shape, int axis, const std::vector<int64_t>& parts,
                           Attrs norm, DType dtype) {
  const std::vector<Shape> part_shapes = PartShapes(shape, axis, parts);
  const std::string args = std::to_string(parts.size());
  norm["axis"] = std::to_string(axis);
  Attrs fused_attrs = norm;
  fused_attrs["num_args"] = args;
  fused_attrs["dim"] = std::to_string(axis);
  OpCase fused{"_concat_batch_norm", fused_attrs, part_shapes};
  fused.init["moving_var"] = PositiveVariance;
  fused.is_train = false;
  const std::vector<HostTensor> inputs = MakeInputs(fused, dtype);

  OpCase concat{"Concat", {{"num_args", args}, {"dim", std::to_string(axis)}}, part_shapes};
  concat.is_train = false;
  const std::vector<HostTensor> joined_inputs(inputs.begin(), inputs.begin() + parts.size());
  const HostTensor joined = RunForward(concat, joined_inputs).outputs[0];
  OpCase batch_norm{"BatchNorm", norm, {joined.shape()}};
  batch_norm.is_train = false;
  std::vector<HostTensor> norm_inputs = {joined};
  norm_inputs.insert(norm_inputs.end(), inputs.begin() + parts.size(), inputs.end());
  const std::vector<double> expected = RunForward(batch_norm, norm_inputs).outputs[0].Values();

  const OpRun run = RunForward(fused, inputs);
  ASSERT_EQ(run.outputs.size(), 1u);
  EXPECT_EQ(run.outputs[0].shape(), joined.shape());
  EXPECT_EQ(run.outputs[0].Values(), expected) << "not the bits of Concat then BatchNorm";
}

TEST(ConcatBatchNormTest, GivesTheBitsOfConcatThenBatchNorm) {
  const Attrs learned = {{"fix_gamma", "false"}, {"eps", "1e-5"}};
  const Attrs relu = {{"fix_gamma", "false"}, {"act_min", "0"}};
  const Attrs clip = {{"act_min", "-0.5"}, {"act_max", "0.5"}};  // fix_gamma: MXNet's default
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (const Attrs& norm : {learned, relu, clip}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + (norm.count("act_min") ? " clamped" : ""));
      CheckAgainstTheTwoOps({2, 1, 5, 6}, 1, {3, 8, 1}, norm, dtype);  // NCHW
      CheckAgainstTheTwoOps({2, 5, 6, 1}, 3, {3, 8, 1}, norm, dtype);  // NHWC
      Attrs blocked = norm;
      blocked["channel_block"] = "16";
      CheckAgainstTheTwoOps({2, 1, 5, 6, 16}, 1, {1, 3, 2}, blocked, dtype);  // NCHW16c
      CheckAgainstTheTwoOps({3, 1}, 1, {4, 7}, norm, dtype);                  // (N, C)
    }
  }
}

TEST(ConcatBatchNormTest, ShapeErrorsNameTheNodeAndTheAxes) {
  OpCase across{"_concat_batch_norm",
                {{"num_args", "2"}, {"dim", "2"}, {"axis", "1"}},
                {{1, 4, 3, 3}, {1, 4, 2, 3}}};
  ExpectShapeError(across, {"_concat_batch_norm", "dim=2", "axis=1", "(1,4,5,3)"});
  OpCase mismatched{"_concat_batch_norm", {{"num_args", "2"}}, {{1, 4, 3, 3}, {1, 4, 2, 3}}};
  ExpectShapeError(mismatched, {"'arg1'", "(1,4,2,3)"});
  OpCase blocked{"_concat_batch_norm",
                 {{"num_args", "2"}, {"channel_block", "16"}},
                 {{1, 1, 3, 3, 8}, {1, 2, 3, 3, 8}}};
  ExpectShapeError(blocked, {"channel_block=16", "(1,3,3,3,8)"});
}

}  // namespace
}  // namespace mxlite::testing
