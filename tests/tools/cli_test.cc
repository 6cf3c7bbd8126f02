// End-to-end checks of the `mxlite` binary: exit codes and messages as a user sees them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "tests/tools/cli_runner.h"

namespace {

using mxlite::cli_test::CliResult;
using mxlite::cli_test::Contains;
using mxlite::cli_test::RunCli;

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

TEST(CliTest, GemmKernelSettingNamesTheKernelInUse) {
  CliResult eigen = RunCli("MXNET_CPU_GEMM_KERNEL=eigen", "info");
  ASSERT_EQ(eigen.status, 0) << eigen.output;
  EXPECT_TRUE(Contains(eigen.output, "GEMM:    Eigen")) << eigen.output;
  EXPECT_TRUE(Contains(eigen.output, "MXNET_CPU_GEMM_KERNEL=eigen")) << eigen.output;
  CliResult typo = RunCli("MXNET_CPU_GEMM_KERNEL=avx1024", "info");
  EXPECT_NE(typo.status, 0) << typo.output;
  EXPECT_TRUE(Contains(typo.output, "auto, avx512, avx2, eigen")) << typo.output;
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

// A bad model reads as `mxlite: error: <file>: <what is wrong>`, with no source location or
// "Check failed" text, unless MXNET_LOG_LEVEL=debug asks for them.
TEST(CliTest, UserErrorsReadAsUserErrors) {
  char path[] = "/tmp/mxlite_cli_bad_model_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "not a model", 11), 11);
  close(fd);
  const CliResult bad = RunCli("", std::string("run ") + path + " --output-dir /tmp");
  EXPECT_NE(bad.status, 0);
  EXPECT_TRUE(Contains(bad.output, std::string("mxlite: error: ") + path + ": ")) << bad.output;
  EXPECT_FALSE(Contains(bad.output, ".cc:")) << bad.output;
  EXPECT_FALSE(Contains(bad.output, "Check failed")) << bad.output;
  const CliResult debug =
      RunCli("MXNET_LOG_LEVEL=debug", std::string("run ") + path + " --output-dir /tmp");
  EXPECT_TRUE(Contains(debug.output, ".cc:")) << debug.output;
  unlink(path);
}

// The binary end to end: an ONNX node test through `mxlite run` on the engine the flag picks, and
// the exit status of a usage error. (tests/tools/run_bench_test.cc covers the commands in depth.)
TEST(CliTest, RunWritesOutputsAndPicksTheEngine) {
  const std::string test = "/usr/share/libonnx-testdata/data/node/test_conv_with_strides_padding";
  if (access(test.c_str(), R_OK) != 0) GTEST_SKIP() << "libonnx-testdata is not installed";
  const std::string out = "/tmp/mxlite_cli_run_" + std::to_string(getpid());
  CliResult result = RunCli("", "run " + test + "/model.onnx --input x=" + test +
                                    "/test_data_set_0/input_0.pb --input W=" + test +
                                    "/test_data_set_0/input_1.pb --engine NaiveEngine" +
                                    " --output-dir " + out);
  EXPECT_EQ(result.status, 0) << result.output;
  EXPECT_TRUE(Contains(result.output, out + "/output_0.pb: 'y' float32 (1,1,4,3)")) << result.output;
  std::remove((out + "/output_0.pb").c_str());
  rmdir(out.c_str());

  CliResult bad_engine =
      RunCli("", "run " + test + "/model.onnx --engine Turbo --output-dir " + out);
  EXPECT_EQ(bad_engine.status, 2) << bad_engine.output;
  EXPECT_TRUE(Contains(bad_engine.output, "NaiveEngine")) << bad_engine.output;
  CliResult missing = RunCli("", "run " + test + "/model.onnx --output-dir " + out);
  EXPECT_EQ(missing.status, 2) << missing.output;
  EXPECT_TRUE(Contains(missing.output, "missing input")) << missing.output;
  EXPECT_TRUE(Contains(RunCli("", "--help").output, "bench")) << "bench is listed";
}

}  // namespace
