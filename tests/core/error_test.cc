#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"
#include "core/logging.h"

namespace mxlite {
namespace {

std::string MessageOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

// Sets the log level for a test's scope.
class ScopedLogLevel {
 public:
  explicit ScopedLogLevel(LogLevel level) : saved_(CurrentLogLevel()) { SetLogLevel(level); }
  ~ScopedLogLevel() { SetLogLevel(saved_); }

 private:
  LogLevel saved_;
};

TEST(ErrorTest, ACheckThatExplainsItselfReadsAsItsExplanation) {
  ScopedLogLevel info(LogLevel::kInfo);
  int layers = 3;
  EXPECT_EQ(MessageOf([&] { MX_CHECK(layers == 4) << "net: " << layers << " layers, not 4"; }),
            "net: 3 layers, not 4");
  EXPECT_EQ(MessageOf([] { MX_CHECK_EQ(2 + 2, 5) << "arithmetic"; }), "arithmetic (4 vs 5)");
  EXPECT_EQ(MessageOf([] { MX_THROW() << "unknown op 'Foo'"; }), "unknown op 'Foo'");
  EXPECT_EQ(MessageOf([] { MX_CHECK_LT(1, 2); }), "(no error)");
}

TEST(ErrorTest, AnUnexplainedCheckSaysWhereItFailed) {
  ScopedLogLevel info(LogLevel::kInfo);
  int layers = 3;
  const std::string message = MessageOf([&] { MX_CHECK_EQ(layers, 4); });
  EXPECT_NE(message.find("tests/core/error_test.cc:"), std::string::npos) << message;
  EXPECT_NE(message.find("Check failed: layers == 4 (3 vs 4)"), std::string::npos) << message;
}

TEST(ErrorTest, AtDebugLevelEveryErrorSaysWhereItFailed) {
  ScopedLogLevel debug(LogLevel::kDebug);
  int layers = 3;
  std::string message = MessageOf([&] { MX_CHECK(layers == 4) << "layer count of " << "net"; });
  EXPECT_NE(message.find("tests/core/error_test.cc:"), std::string::npos) << message;
  EXPECT_NE(message.find("Check failed: layers == 4: layer count of net"), std::string::npos)
      << message;
  message = MessageOf([] { MX_CHECK_EQ(2 + 2, 5) << "arithmetic"; });
  EXPECT_NE(message.find("2 + 2 == 5 (4 vs 5): arithmetic"), std::string::npos) << message;
  EXPECT_NE(MessageOf([] { MX_THROW() << "unknown op 'Foo'"; }).find("Error: unknown op 'Foo'"),
            std::string::npos);
}

TEST(ErrorTest, ContextIsNotEvaluatedWhenTheCheckPasses) {
  int evaluations = 0;
  auto expensive = [&] { return ++evaluations; };
  MX_CHECK(true) << expensive();
  EXPECT_EQ(evaluations, 0);
}

TEST(ErrorTest, OutOfMemoryIsAnError) { EXPECT_THROW(throw OutOfMemoryError("x"), Error); }

TEST(LoggingTest, LevelsFilterAndSinkCaptures) {
  std::vector<std::pair<LogLevel, std::string>> lines;
  SetLogSink([&](LogLevel level, const std::string& text) { lines.emplace_back(level, text); });
  LogLevel saved = CurrentLogLevel();
  SetLogLevel(LogLevel::kWarning);
  int evaluations = 0;
  MX_LOG(INFO) << "hidden " << ++evaluations;
  MX_LOG(WARNING) << "shown";
  for (int i = 0; i < 3; ++i) MX_LOG_ONCE(ERROR) << "once";
  SetLogLevel(saved);
  SetLogSink(nullptr);
  EXPECT_EQ(evaluations, 0);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].first, LogLevel::kWarning);
  EXPECT_NE(lines[0].second.find("shown"), std::string::npos);
  EXPECT_NE(lines[1].second.find("once"), std::string::npos);
}

TEST(LoggingTest, SourceLocationShowsOnlyWhenDebugging) {
  std::vector<std::string> lines;
  SetLogSink([&](LogLevel, const std::string& text) { lines.push_back(text); });
  LogLevel saved = CurrentLogLevel();
  SetLogLevel(LogLevel::kInfo);
  MX_LOG(WARNING) << "for the user";
  SetLogLevel(LogLevel::kDebug);
  MX_LOG(WARNING) << "for the developer";
  SetLogLevel(saved);
  SetLogSink(nullptr);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "[mxlite warning] for the user");
  EXPECT_NE(lines[1].find("error_test.cc:"), std::string::npos) << lines[1];
}

}  // namespace
}  // namespace mxlite
