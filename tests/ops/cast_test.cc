#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/ops/kernel_calls.h"
#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

HostTensor Values(DType dtype, const std::vector<double>& values) {
  HostTensor tensor(Shape{static_cast<int64_t>(values.size())}, dtype);
  for (size_t i = 0; i < values.size(); ++i) tensor.Set(static_cast<int64_t>(i), values[i]);
  return tensor;
}

std::vector<double> Cast(const HostTensor& data, const char* dtype) {
  const OpCase test_case{"Cast", {{"dtype", dtype}}, {data.shape()}};
  const OpRun run = RunForward(test_case, {data});
  EXPECT_EQ(run.outputs[0].dtype(), ParseDType(dtype));
  return run.outputs[0].Values();
}

TEST(CastTest, GradientAndIdentityInFloat64) {
  CheckGradients({"Cast", {{"dtype", "float64"}}, {{3, 4}}});
  CheckGradients({"Cast", {{"dtype", "float64"}}, {{40000}}});  // parallel chunks
}

TEST(CastTest, ToFloat16RoundsToNearestEven) {
  const HostTensor data = Values(DType::kFloat32, {0.1, 1.0 + 1.0 / 2048, 1.0 + 3.0 / 2048, 65504,
                                                   65520, -70000, 1e-8});
  EXPECT_EQ(Cast(data, "float16"),
            (std::vector<double>{0.0999755859375, 1.0, 1.0 + 4.0 / 2048, 65504,
                                 std::numeric_limits<double>::infinity(),
                                 -std::numeric_limits<double>::infinity(), 0.0}));
  // float16 back to float32 and float64 is exact.
  const HostTensor half = Values(DType::kFloat16, {0.0999755859375, -2.5, 65504});
  EXPECT_EQ(Cast(half, "float32"), (std::vector<double>{0.0999755859375, -2.5, 65504}));
  EXPECT_EQ(Cast(half, "float64"), (std::vector<double>{0.0999755859375, -2.5, 65504}));
}

TEST(CastTest, FloatingToIntegerTruncatesAndSaturates) {
  const double nan = std::nan("");
  const HostTensor data = Values(DType::kFloat32, {2.7, -2.7, 3e9, -3e9, nan, 255.9, 300, -1});
  EXPECT_EQ(Cast(data, "int32"),
            (std::vector<double>{2, -2, 2147483647, -2147483648.0, 0, 255, 300, -1}));
  EXPECT_EQ(Cast(data, "uint8"), (std::vector<double>{2, 0, 255, 0, 0, 255, 255, 0}));
  EXPECT_EQ(Cast(Values(DType::kFloat64, {1e19, -1e19, 5e15 + 1}), "int64"),
            (std::vector<double>{9223372036854775807.0, -9223372036854775808.0, 5e15 + 1}));
  EXPECT_EQ(Cast(Values(DType::kFloat16, {-7.5, 1000}), "int32"), (std::vector<double>{-7, 1000}));
}

TEST(CastTest, IntegerToFloatingAndBetweenIntegers) {
  const HostTensor data = Values(DType::kInt64, {-3, 0, 70000, 1 << 24});
  EXPECT_EQ(Cast(data, "float32"), (std::vector<double>{-3, 0, 70000, 1 << 24}));
  EXPECT_EQ(Cast(data, "float16"),
            (std::vector<double>{-3, 0, std::numeric_limits<double>::infinity(),
                                 std::numeric_limits<double>::infinity()}));
  EXPECT_EQ(Cast(Values(DType::kUInt8, {0, 200, 255}), "int32"), (std::vector<double>{0, 200, 255}));
  EXPECT_EQ(Cast(Values(DType::kInt32, {-5, 7}), "int32"), (std::vector<double>{-5, 7}));
}

TEST(CastTest, BackwardCastsTheGradientBackToTheDataDtype) {
  const OpCase test_case{"Cast", {{"dtype", "float16"}}, {{3}}};
  const HostTensor data = Values(DType::kFloat32, {1, 2, 3});
  const HostTensor grad = Values(DType::kFloat16, {0.5, -0.25, 1000});
  const std::vector<HostTensor> grads = RunBackwardRequested(test_case, {data}, grad, {true});
  EXPECT_EQ(grads[0].dtype(), DType::kFloat32);
  EXPECT_EQ(grads[0].Values(), (std::vector<double>{0.5, -0.25, 1000}));
}

TEST(CastTest, DtypeInferenceAndErrors) {
  const OpDef& op = OpRegistry::Global().Get("Cast");
  auto infer = [&](const char* target, std::optional<DType> data) {
    DTypeInference dtypes;
    dtypes.node = "cast0";
    dtypes.inputs = {data};
    InferDTypes(op, ParseOpAttributes(op, {{"dtype", target}}, "cast0"), dtypes);
    return dtypes;
  };
  EXPECT_EQ(infer("float16", DType::kFloat32).outputs[0], DType::kFloat16);
  EXPECT_EQ(infer("int64", std::nullopt).inputs[0], DType::kFloat32);  // undeclared: float32
  try {
    infer("float32", DType::kBFloat16);
    FAIL() << "bfloat16 data accepted";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("cast0"), std::string::npos) << message;
    EXPECT_NE(message.find("bfloat16"), std::string::npos) << message;
  }
  try {  // the target is an enum: an unknown one lists the known ones
    ParseOpAttributes(op, {{"dtype", "float8"}}, "cast0");
    FAIL() << "float8 accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("float16"), std::string::npos) << error.what();
  }
}

MXLITE_GPU_CASES(Cast) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  // Cast: to float16 and back, widening, to integers (truncation on both devices).
  for (const char* dtype : {"float16", "float32", "float64", "int32"}) {
    add({"Cast", {{"dtype", dtype}}, {{3, 5}}});
  }
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
