// End-to-end checks of the `mxlite` binary: exit codes and messages as a user sees them.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

struct CliResult {
  int status = -1;
  std::string output;  // stdout and stderr together
};

// Runs `env -i PATH=... HOME=... <environment> mxlite <args>` so the test's own environment
// (e.g. a developer's MXNET_* variables) cannot leak in.
CliResult RunCli(const std::string& environment, const std::string& args) {
  std::string command = "env -i PATH=/usr/bin:/bin HOME=/tmp " + environment + " " +
                        MXLITE_CLI_PATH + " " + args + " 2>&1";
  CliResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(CliTest, InfoListsEverySettingWithSource) {
  CliResult result = RunCli("MXNET_ENGINE_TYPE=NaiveEngine", "info");
  ASSERT_EQ(result.status, 0) << result.output;
  EXPECT_TRUE(Contains(result.output, "MXNET_CUDNN_AUTOTUNE_DEFAULT")) << result.output;
  EXPECT_TRUE(Contains(result.output, "NaiveEngine")) << result.output;
  EXPECT_TRUE(Contains(result.output, "environment")) << result.output;
  EXPECT_TRUE(Contains(result.output, "default")) << result.output;
  EXPECT_TRUE(Contains(result.output, "CUDA:")) << result.output;
  EXPECT_TRUE(Contains(result.output, "CPU:")) << result.output;
}

TEST(CliTest, InvalidAutotuneValueExitsNonZeroNamingVariableAndValues) {
  CliResult result = RunCli("MXNET_CUDNN_AUTOTUNE_DEFAULT=3", "info");
  EXPECT_NE(result.status, 0) << result.output;
  EXPECT_TRUE(Contains(result.output, "MXNET_CUDNN_AUTOTUNE_DEFAULT")) << result.output;
  EXPECT_TRUE(Contains(result.output, "0, 1, 2")) << result.output;
}

TEST(CliTest, TypoInVariableNameWarnsWithSuggestion) {
  CliResult result = RunCli("MXNET_ENGNE_TYPE=NaiveEngine", "info");
  EXPECT_EQ(result.status, 0) << result.output;
  EXPECT_TRUE(Contains(result.output, "MXNET_ENGNE_TYPE")) << result.output;
  EXPECT_TRUE(Contains(result.output, "did you mean MXNET_ENGINE_TYPE?")) << result.output;
}

TEST(CliTest, HelpAndUsageErrors) {
  EXPECT_EQ(RunCli("", "--help").status, 0);
  CliResult info_help = RunCli("", "info --help");
  EXPECT_EQ(info_help.status, 0);
  EXPECT_TRUE(Contains(info_help.output, "--markdown"));
  CliResult unknown = RunCli("", "frobnicate");
  EXPECT_NE(unknown.status, 0);
  EXPECT_TRUE(Contains(unknown.output, "unknown command 'frobnicate'")) << unknown.output;
  CliResult bad_flag = RunCli("", "info --verbos");
  EXPECT_NE(bad_flag.status, 0);
  EXPECT_TRUE(Contains(bad_flag.output, "unknown flag --verbos")) << bad_flag.output;
  EXPECT_TRUE(Contains(bad_flag.output, "--markdown")) << bad_flag.output;
  EXPECT_NE(RunCli("", "").status, 0);
}

}  // namespace
