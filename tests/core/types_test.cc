#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <unordered_set>

#include "core/context.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/half.h"
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

// Every float16 survives the round trip, and float32 values between two neighbouring float16s go
// to the nearer one (the even one on a tie): checked against a reference that works in doubles.
TEST(HalfTest, RoundTripsEveryHalfAndRoundsToNearestEven) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const uint16_t half = static_cast<uint16_t>(bits);
    const float value = HalfToFloat(half);
    if (std::isnan(value)) {
      EXPECT_EQ((half >> 10) & 0x1f, 0x1f);
      EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(value))));
      continue;
    }
    ASSERT_EQ(FloatToHalf(value), half) << "bits " << bits;
    if ((half & 0x7fff) >= 0x7bff) continue;  // the largest finite value and infinity: no next
    const uint16_t next = static_cast<uint16_t>((half & 0x8000) ? half - 1 : half + 1);
    if ((half & 0x7fff) == 0 && (half & 0x8000)) continue;  // -0: its neighbour is +0's
    const double low = value, high = HalfToFloat(next);
    const double middle = (low + high) / 2;
    const bool low_is_even = (half & 1) == 0;
    EXPECT_EQ(FloatToHalf(static_cast<float>(middle)), low_is_even ? half : next) << bits;
    const float just_below = std::nextafter(static_cast<float>(middle), static_cast<float>(low));
    const float just_above = std::nextafter(static_cast<float>(middle), static_cast<float>(high));
    EXPECT_EQ(FloatToHalf(just_below), half) << bits;
    EXPECT_EQ(FloatToHalf(just_above), next) << bits;
  }
}

TEST(HalfTest, OverflowUnderflowAndSpecials) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7bff);  // below the midpoint to 65536
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);  // the midpoint ties away to infinity (odd 0x3ff)
  EXPECT_EQ(FloatToHalf(1e10f), 0x7c00);
  EXPECT_EQ(FloatToHalf(-inf), 0xfc00);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);  // half the smallest subnormal: even 0
  EXPECT_EQ(FloatToHalf(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(FloatToHalf(-1e-30f), 0x8000);
  EXPECT_EQ(FloatToHalf(0.1f), 0x2e66);
  EXPECT_EQ(HalfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(std::nanf("")))));
}

}  // namespace
}  // namespace mxlite
