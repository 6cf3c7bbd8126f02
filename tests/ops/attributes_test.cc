#include "ops/attributes.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace mxlite {
namespace {

AttributeSchema ConvLikeSchema() {
  AttributeSchema schema;
  schema.IntTuple("kernel", "window")
      .Int("num_filter", "output channels", Required(), 1)
      .IntTuple("stride", "step", Default("()"))
      .Bool("no_bias", "drop the bias", Default("false"))
      .Float("eps", "epsilon", Default("1e-5"))
      .Enum("cudnn_tune", {"off", "limited_workspace", "fastest"}, "tuning", Optional())
      .String("layout", "layout", Default("NCHW"));
  return schema;
}

std::string ErrorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(AttributesTest, ParsesEveryTypeAndAppliesDefaults) {
  Attributes attrs = ConvLikeSchema().Parse(
      {{"kernel", "(3, 3)"}, {"num_filter", "64"}, {"no_bias", "True"}, {"eps", "0.001"}},
      "Convolution conv0");
  EXPECT_EQ(attrs.GetInts("kernel"), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(attrs.GetInt("num_filter"), 64);
  EXPECT_TRUE(attrs.GetBool("no_bias"));
  EXPECT_DOUBLE_EQ(attrs.GetFloat("eps"), 0.001);
  EXPECT_TRUE(attrs.GetInts("stride").empty());
  EXPECT_EQ(attrs.GetString("layout"), "NCHW");
  EXPECT_FALSE(attrs.Has("cudnn_tune"));
  EXPECT_EQ(attrs.GetOptionalString("cudnn_tune"), std::nullopt);
  EXPECT_EQ(attrs.Text("kernel"), "(3,3)");
  EXPECT_EQ(attrs.ToString(),
            "eps=0.001, kernel=(3,3), layout=NCHW, no_bias=true, num_filter=64, stride=()");
}

TEST(AttributesTest, NoneMeansNotGiven) {
  Attributes attrs = ConvLikeSchema().Parse(
      {{"kernel", "3"}, {"num_filter", "2"}, {"cudnn_tune", "None"}, {"layout", "None"}}, "c");
  EXPECT_FALSE(attrs.Has("cudnn_tune"));
  EXPECT_EQ(attrs.GetString("layout"), "NCHW");
  EXPECT_THROW(ConvLikeSchema().Parse({{"kernel", "None"}, {"num_filter", "2"}}, "c"), Error);
}

TEST(AttributesTest, TupleSpellings) {
  for (const char* text : {"(3,3)", "[3, 3]", "3,3", " ( 3 , 3 ) "}) {
    EXPECT_EQ(ParseIntTuple(text), (std::vector<int64_t>{3, 3})) << text;
  }
  EXPECT_EQ(ParseIntTuple("5"), (std::vector<int64_t>{5}));
  EXPECT_EQ(ParseIntTuple("(5,)"), (std::vector<int64_t>{5}));
  EXPECT_EQ(ParseIntTuple("()"), (std::vector<int64_t>{}));
  for (const char* bad : {"(3,x)", "(3,3", "3;3", "(,)"}) {
    EXPECT_EQ(ParseIntTuple(bad), std::nullopt) << bad;
  }
}

TEST(AttributesTest, ErrorsNameTheOwnerAttributeAndExpectation) {
  AttributeSchema schema = ConvLikeSchema();
  std::string unknown = ErrorOf([&] {
    schema.Parse({{"kernel", "3"}, {"num_filter", "1"}, {"kernal", "3"}}, "Convolution conv0");
  });
  EXPECT_NE(unknown.find("Convolution conv0: unknown attribute 'kernal'"), std::string::npos)
      << unknown;
  EXPECT_NE(unknown.find("known attributes: kernel, num_filter, stride"), std::string::npos);

  std::string missing = ErrorOf([&] { schema.Parse({{"kernel", "3"}}, "Convolution conv0"); });
  EXPECT_NE(missing.find("missing required attribute 'num_filter'"), std::string::npos);

  std::string range = ErrorOf([&] {
    schema.Parse({{"kernel", "3"}, {"num_filter", "0"}}, "Convolution conv0");
  });
  EXPECT_NE(range.find("num_filter='0' is invalid: expected an integer >= 1"), std::string::npos)
      << range;

  std::string choice = ErrorOf([&] {
    schema.Parse({{"kernel", "3"}, {"num_filter", "1"}, {"cudnn_tune", "fast"}}, "conv0");
  });
  EXPECT_NE(choice.find("one of off, limited_workspace, fastest"), std::string::npos) << choice;
  EXPECT_NE(ErrorOf([&] { schema.Parse({{"kernel", "3x3"}, {"num_filter", "1"}}, "c"); })
                .find("a tuple of integers"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { schema.Parse({{"kernel", "3"}, {"num_filter", "2.5"}}, "c"); })
                .find("an integer"),
            std::string::npos);
}

}  // namespace
}  // namespace mxlite
