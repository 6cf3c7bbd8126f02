// `mxlite tune` as a user runs it: the report per layer, --verbose candidates, and a second run (a
// new process over the same tuning DB) that benchmarks nothing and picks the same algorithms; a
// system DB built with --system-db, installed read-only, that answers a fresh user's tuning.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/tools/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using mxlite::cli_test::CliResult;
using mxlite::cli_test::Contains;
using mxlite::cli_test::RunCli;

const std::string kModel =
    "/usr/share/libonnx-testdata/data/node/test_conv_with_strides_padding/model.onnx";

// The lines of `text` that contain `part`.
std::string LinesWith(const std::string& text, const std::string& part) {
  std::string found, line;
  for (char c : text + "\n") {
    if (c != '\n') {
      line += c;
      continue;
    }
    if (Contains(line, part)) found += line + "\n";
    line.clear();
  }
  return found;
}

class TuneCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kModel)) GTEST_SKIP() << "libonnx-testdata is not installed: " << kModel;
    folder_ = fs::temp_directory_path() / ("mxlite_tune_cli_" + std::to_string(getpid()));
    fs::remove_all(folder_);
    fs::create_directories(folder_);
    // The plan check off, as CTest sets it for in-process tests: the tests assert on plans.
    environment_ =
        "MXNET_CONV_PLAN_GUARD=0 MXNET_TUNING_DB_PATH=" + (folder_ / "tuning.sqlite").string();
  }
  void TearDown() override { fs::remove_all(folder_); }

  fs::path folder_;
  std::string environment_;
};

TEST_F(TuneCommandTest, ASecondRunBenchmarksNothingAndPicksTheSame) {
  CliResult first = RunCli(environment_, "tune " + kModel + " --training");
  ASSERT_EQ(first.status, 0) << first.output;
  EXPECT_TRUE(Contains(first.output, "tuned 3 convolution problems of 1 layer: 0 from DB, 3 benchmarked in"))
      << first.output;
  EXPECT_TRUE(Contains(first.output, " forward: ")) << first.output;
  EXPECT_TRUE(Contains(first.output, " backward_filter: ")) << first.output;

  CliResult second = RunCli(environment_, "tune " + kModel + " --training");
  ASSERT_EQ(second.status, 0) << second.output;
  EXPECT_TRUE(Contains(second.output, "tuned 3 convolution problems of 1 layer: 3 from DB, 0 benchmarked"))
      << second.output;
  // Same algorithm per layer and direction: the decision lines agree up to "from ...".
  auto picks = [](const std::string& output) {
    std::string lines = LinesWith(output, "; from ");
    std::string stripped;
    size_t start = 0;
    while (start < lines.size()) {
      size_t end = lines.find('\n', start);
      const std::string line = lines.substr(start, end - start);
      stripped += line.substr(0, line.find(" NCHW")) + "\n";
      start = end + 1;
    }
    return stripped;
  };
  EXPECT_EQ(picks(first.output), picks(second.output));
}

TEST_F(TuneCommandTest, VerboseListsTheCandidatesAndModeFlagsApply) {
  CliResult result = RunCli(environment_, "tune " + kModel + " --verbose --mode fastest");
  ASSERT_EQ(result.status, 0) << result.output;
  EXPECT_TRUE(Contains(result.output, "im2col_gemm")) << result.output;
  EXPECT_TRUE(Contains(result.output, "<- pick")) << result.output;
  EXPECT_TRUE(Contains(result.output, "fastest (from program MXNET_CUDNN_AUTOTUNE_DEFAULT)"))
      << result.output;
  EXPECT_TRUE(Contains(result.output, "skipped: unsupported")) << result.output;

  CliResult off = RunCli(environment_ + " MXNET_CUDNN_AUTOTUNE_DEFAULT=0", "tune " + kModel);
  ASSERT_EQ(off.status, 0) << off.output;
  EXPECT_TRUE(Contains(off.output, "off (from environment MXNET_CUDNN_AUTOTUNE_DEFAULT)"))
      << off.output;
  EXPECT_TRUE(Contains(off.output, "1 by heuristic (off")) << off.output;
  EXPECT_TRUE(Contains(off.output, ", 0 benchmarked")) << off.output;
}

TEST_F(TuneCommandTest, PrintsTheLayoutPlanItWasAskedFor) {
  CliResult global = RunCli(environment_, "tune " + kModel + " --plan global --verbose");
  ASSERT_EQ(global.status, 0) << global.output;
  EXPECT_TRUE(Contains(global.output, "global plan: ")) << global.output;
  EXPECT_TRUE(Contains(global.output, "(Convolution): ")) << global.output;
  CliResult none = RunCli(environment_, "tune " + kModel + " --plan none");
  ASSERT_EQ(none.status, 0) << none.output;
  EXPECT_TRUE(Contains(none.output, "none plan: layouts as written")) << none.output;
  CliResult bad = RunCli(environment_, "tune " + kModel + " --plan fastest");
  EXPECT_NE(bad.status, 0);
  EXPECT_TRUE(Contains(bad.output, "--plan fastest: expected none, local or global")) << bad.output;
}

const std::string kSecondModel =
    "/usr/share/libonnx-testdata/data/node/test_conv_with_strides_no_padding/model.onnx";

TEST_F(TuneCommandTest, ASystemDbAnswersAFreshUsersTuningReadOnly) {
  const std::string system_db = (folder_ / "system.sqlite").string();
  CliResult built = RunCli(environment_, "tune --system-db " + system_db + " " + kModel);
  ASSERT_EQ(built.status, 0) << built.output;
  EXPECT_TRUE(Contains(built.output, kModel + ": tuned 1 convolution")) << built.output;
  EXPECT_TRUE(Contains(built.output, "wrote the system DB " + system_db)) << built.output;
  EXPECT_FALSE(fs::exists(folder_ / "tuning.sqlite")) << "the user DB was opened";
  // A second run adds the other model to what the file holds, installed read-only as it may be.
  fs::permissions(system_db, fs::perms::owner_read);
  built = RunCli(environment_, "tune --system-db " + system_db + " " + kSecondModel + " " + kModel);
  ASSERT_EQ(built.status, 0) << built.output;
  EXPECT_TRUE(Contains(built.output, kSecondModel + ": tuned 1 convolution")) << built.output;
  EXPECT_TRUE(Contains(built.output, kModel + ": tuned 1 convolution: 1 from DB, 0 benchmarked"))
      << built.output;
  for (const auto& entry : fs::directory_iterator(folder_)) {
    EXPECT_EQ(entry.path().filename(), "system.sqlite") << "left behind: " << entry.path();
  }

  // Installed read-only (file and folder), it answers both models for a user with an empty DB.
  const fs::path installed = folder_ / "installed";
  fs::create_directories(installed);
  fs::copy_file(system_db, installed / "system.sqlite");
  fs::permissions(installed / "system.sqlite", fs::perms::owner_read);
  fs::permissions(installed, fs::perms::owner_read | fs::perms::owner_exec);
  const std::string user = "MXNET_TUNING_DB_PATH=" + (folder_ / "user.sqlite").string() +
                           " MXNET_TUNING_SYSTEM_DB_PATH=" + (installed / "system.sqlite").string();
  for (const std::string& model : {kModel, kSecondModel}) {
    CliResult tuned = RunCli(user, "tune " + model);
    fs::permissions(installed, fs::perms::owner_all);
    ASSERT_EQ(tuned.status, 0) << tuned.output;
    EXPECT_TRUE(Contains(tuned.output, "1 from DB, 0 benchmarked")) << tuned.output;
    EXPECT_TRUE(Contains(tuned.output, "from system DB")) << tuned.output;
    fs::permissions(installed, fs::perms::owner_read | fs::perms::owner_exec);
  }
  fs::permissions(installed, fs::perms::owner_all);
}

TEST_F(TuneCommandTest, ASystemDbIntoAMissingFolderOrFromAForeignFileIsAClearError) {
  CliResult missing = RunCli(environment_, "tune --system-db /nonexistent/dir/s.sqlite " + kModel);
  EXPECT_NE(missing.status, 0);
  EXPECT_TRUE(Contains(missing.output, "/nonexistent/dir")) << missing.output;
  const fs::path foreign = folder_ / "notes.sqlite";
  std::ofstream(foreign) << "not a database";
  CliResult refused = RunCli(environment_, "tune --system-db " + foreign.string() + " " + kModel);
  EXPECT_NE(refused.status, 0) << refused.output;
  EXPECT_TRUE(Contains(refused.output, foreign.string())) << refused.output;
  std::ifstream kept(foreign);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "not a database");
  CliResult none = RunCli(environment_, "tune --system-db " + (folder_ / "s.sqlite").string());
  EXPECT_EQ(none.status, 2);
  EXPECT_TRUE(Contains(none.output, "at least one model file")) << none.output;
}

TEST_F(TuneCommandTest, ExplainPrintsEachNodesPredictionBesideItsMeasurement) {
  CliResult result = RunCli(environment_, "tune " + kModel + " --plan global --explain --passes 3");
  ASSERT_EQ(result.status, 0) << result.output;
  EXPECT_TRUE(Contains(result.output, "explain: 3 profiled passes, medians per pass"))
      << result.output;
  // The one convolution: a prediction and a measurement.
  EXPECT_TRUE(Contains(LinesWith(result.output, "  Convolution "), "predicted ")) << result.output;
  EXPECT_TRUE(Contains(LinesWith(result.output, "  Convolution "), ", measured ")) << result.output;
  EXPECT_TRUE(Contains(result.output, "costed nodes: predicted ")) << result.output;
  EXPECT_TRUE(Contains(result.output, "a whole pass: ")) << result.output;
  CliResult training = RunCli(environment_, "tune " + kModel + " --explain --training");
  EXPECT_NE(training.status, 0);
  EXPECT_TRUE(Contains(training.output, "--explain runs inference passes")) << training.output;
}

TEST_F(TuneCommandTest, BadInputIsAClearError) {
  CliResult missing = RunCli(environment_, "tune /nonexistent/model.onnx");
  EXPECT_NE(missing.status, 0);
  EXPECT_TRUE(Contains(missing.output, "/nonexistent/model.onnx")) << missing.output;
  CliResult mode = RunCli(environment_, "tune " + kModel + " --mode quickest");
  EXPECT_NE(mode.status, 0);
  EXPECT_TRUE(Contains(mode.output, "quickest")) << mode.output;
  CliResult none = RunCli(environment_, "tune");
  EXPECT_EQ(none.status, 2);
  EXPECT_TRUE(Contains(none.output, "usage: mxlite tune")) << none.output;
}

}  // namespace
