#include <gtest/gtest.h>

#include <unordered_set>

#include "core/context.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/shape.h"

namespace mxlite {
namespace {

TEST(ShapeTest, SizesAndPrinting) {
  Shape shape{64, 1, 28, 28};
  EXPECT_EQ(shape.ndim(), 4);
  EXPECT_EQ(shape.size(), 64 * 28 * 28);
  EXPECT_EQ(shape.size(1, 4), 28 * 28);
  EXPECT_EQ(shape.dim(-1), 28);
  EXPECT_EQ(shape.ToString(), "(64,1,28,28)");
  EXPECT_EQ(Shape().size(), 1);
  EXPECT_EQ(Shape().ToString(), "()");
  EXPECT_EQ((Shape{3, 0, 2}).size(), 0);
}

TEST(ShapeTest, EqualityAndMutation) {
  Shape a{2, 3};
  Shape b{2, 3};
  EXPECT_EQ(a, b);
  b[1] = 4;
  EXPECT_NE(a, b);
  EXPECT_NE(a, (Shape{2, 3, 1}));
  EXPECT_EQ(a.to_vector(), (std::vector<int64_t>{2, 3}));
}

TEST(ShapeTest, RejectsTooManyDimsAndNegativeExtents) {
  EXPECT_THROW((Shape{1, 2, 3, 4, 5, 6, 7}), Error);
  EXPECT_NO_THROW((Shape{1, 2, 3, 4, 5, 6}));
  try {
    Shape{2, -1};
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("negative"), std::string::npos);
  }
  Shape shape{2, 3};
  EXPECT_THROW(shape[2], Error);
  EXPECT_THROW(shape.size(1, 3), Error);
}

TEST(DTypeTest, SizesNamesAndParsing) {
  EXPECT_EQ(DTypeSize(DType::kFloat32), 4u);
  EXPECT_EQ(DTypeSize(DType::kFloat64), 8u);
  EXPECT_EQ(DTypeSize(DType::kFloat16), 2u);
  EXPECT_EQ(DTypeSize(DType::kBFloat16), 2u);
  EXPECT_EQ(DTypeSize(DType::kInt32), 4u);
  EXPECT_EQ(DTypeSize(DType::kInt64), 8u);
  EXPECT_EQ(DTypeSize(DType::kUInt8), 1u);
  for (DType dtype : kAllDTypes) EXPECT_EQ(ParseDType(DTypeName(dtype)), dtype);
  EXPECT_TRUE(IsFloatingPoint(DType::kBFloat16));
  EXPECT_FALSE(IsFloatingPoint(DType::kInt64));
  EXPECT_EQ(DTypeOf<float>::value, DType::kFloat32);
  try {
    ParseDType("float8");
    FAIL();
  } catch (const Error& error) {
    std::string message = error.what();
    EXPECT_NE(message.find("float8"), std::string::npos);
    EXPECT_NE(message.find("bfloat16"), std::string::npos);  // lists the known names
  }
}

TEST(ContextTest, ParsePrintCompare) {
  EXPECT_EQ(Context::Parse("cpu"), Context::CPU());
  EXPECT_EQ(Context::Parse("gpu(1)"), Context::GPU(1));
  EXPECT_EQ(Context::Parse("gpu"), Context::GPU(0));
  EXPECT_EQ(Context::GPU(3).ToString(), "gpu(3)");
  EXPECT_EQ(Context::CPU().ToString(), "cpu(0)");
  EXPECT_NE(Context::CPU(), Context::GPU(0));
  EXPECT_EQ(Context::Parse("cpu_pinned(0)"), Context::CPUPinned());
  EXPECT_EQ(Context::CPUPinned().ToString(), "cpu_pinned(0)");
  EXPECT_TRUE(Context::CPUPinned().is_host());
  EXPECT_FALSE(Context::GPU(0).is_host());
  for (const char* bad : {"tpu", "gpu(", "gpu(x)", "gpu(-1)", "cpu(1)", "gpu(1)x", "", "cpu_pinned(1)", "cpu_pinne"}) {
    EXPECT_THROW(Context::Parse(bad), Error) << bad;
  }
  std::unordered_set<Context> set{Context::CPU(), Context::GPU(0), Context::GPU(1)};
  EXPECT_EQ(set.size(), 3u);
}

}  // namespace
}  // namespace mxlite
