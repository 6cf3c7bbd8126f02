// Background tuning (MXNET_TUNING_DB_MODE=background) seen from the command line. A process that
// exits while its convolutions are tuned (a one-pass `mxlite bench`, which binds with the
// heuristic's picks) exits cleanly, its thread stopped mid-tuning, and the DB stays a tuning DB
// that a normal `mxlite tune` uses and fills; after that nothing is tuned again. `mxlite tune`
// itself waits for the background and reports the tuned, planned model.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"  // defines ONNX_API, then includes onnx/onnx-ml.pb.h
#include "ops/conv/tuning_db.h"
#include "tests/tools/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using mxlite::cli_test::CliResult;
using mxlite::cli_test::Contains;
using mxlite::cli_test::RunCli;

// 3x3 convolutions from channels[0] to channels[1], then to channels[2], ..., over
// (1, channels[0], size, size), each with a relu: different problems, enough work that a
// background thread is still tuning them when the command exits.
void WriteConvChainModel(const fs::path& path, const std::vector<int64_t>& channels, int64_t size) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* graph = model.mutable_graph();
  onnx::ValueInfoProto* input = graph->add_input();
  input->set_name("data");
  auto* type = input->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : {int64_t{1}, channels[0], size, size}) {
    type->mutable_shape()->add_dim()->set_dim_value(dim);
  }
  std::string value = "data";
  for (size_t layer = 0; layer + 1 < channels.size(); ++layer) {
    const int64_t in = channels[layer], out = channels[layer + 1];
    const std::string name = "conv" + std::to_string(layer);
    onnx::TensorProto* weight = graph->add_initializer();
    weight->set_name(name + "_weight");
    weight->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t dim : {out, in, int64_t{3}, int64_t{3}}) weight->add_dims(dim);
    for (int64_t i = 0; i < out * in * 9; ++i) {
      weight->add_float_data(static_cast<float>((i * 37 + static_cast<int64_t>(layer)) % 17 - 8) /
                             64.0f);
    }
    onnx::NodeProto* conv = graph->add_node();
    conv->set_op_type("Conv");
    conv->set_name(name);
    conv->add_input(value);
    conv->add_input(name + "_weight");
    conv->add_output(name + "_out");
    onnx::AttributeProto* kernel = conv->add_attribute();
    kernel->set_name("kernel_shape");
    kernel->set_type(onnx::AttributeProto::INTS);
    kernel->add_ints(3);
    kernel->add_ints(3);
    onnx::AttributeProto* pads = conv->add_attribute();
    pads->set_name("pads");
    pads->set_type(onnx::AttributeProto::INTS);
    for (int i = 0; i < 4; ++i) pads->add_ints(1);
    onnx::NodeProto* relu = graph->add_node();
    relu->set_op_type("Relu");
    relu->add_input(name + "_out");
    value = name + "_relu";
    relu->add_output(value);
  }
  graph->add_output()->set_name(value);
  std::ofstream file(path, std::ios::binary);
  ASSERT_TRUE(model.SerializeToOstream(&file));
}

class BackgroundTuneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("mxlite_background_tune_" + std::to_string(getpid()));
    fs::remove_all(folder_);
    fs::create_directories(folder_);
    model_ = (folder_ / "chain.onnx").string();
    WriteConvChainModel(model_, {32, 48, 32, 64, 32}, 28);
    db_ = (folder_ / "tuning.sqlite").string();
    // The plan check off, as CTest sets it for in-process tests: whether a plan survives it
    // hangs on the machine's timing (a loaded machine refused one), and these tests assert on
    // the plans.
    environment_ = "MXNET_CONV_PLAN_GUARD=0 MXNET_TUNING_DB_PATH=" + db_;
  }
  void TearDown() override { fs::remove_all(folder_); }

  fs::path folder_;
  std::string model_, db_, environment_;
};

TEST_F(BackgroundTuneTest, AProcessThatExitsMidTuningLeavesTheDbIntact) {
  // A one-pass bench binds with the heuristic's picks and exits while they are tuned.
  CliResult background = RunCli(environment_ + " MXNET_TUNING_DB_MODE=background",
                                "bench " + model_ + " --warmup 0 --iters 1");
  ASSERT_EQ(background.status, 0) << background.output;
  EXPECT_TRUE(Contains(background.output,
                       "tuned 4 convolutions: 0 from DB, 4 by heuristic (tuning in background), "
                       "0 benchmarked in 0.0 s"))
      << background.output;
  EXPECT_TRUE(Contains(background.output, "planning waits for 4 layers tuning in background"))
      << background.output;
  // Whatever the thread had stored when the process exited, the file is a tuning DB.
  ASSERT_TRUE(fs::exists(db_));
  EXPECT_EQ(mxlite::conv::TuningDbFileProblem(db_), std::nullopt);

  // A normal run uses it and tunes what is missing.
  CliResult update = RunCli(environment_, "tune " + model_);
  ASSERT_EQ(update.status, 0) << update.output;
  EXPECT_TRUE(Contains(update.output, "tuned 4 convolutions: ")) << update.output;
  EXPECT_EQ(mxlite::conv::TuningDbFileProblem(db_), std::nullopt);

  // Everything is in the DB now: background mode finds it all and plans at once.
  CliResult again = RunCli(environment_ + " MXNET_TUNING_DB_MODE=background", "tune " + model_);
  ASSERT_EQ(again.status, 0) << again.output;
  EXPECT_TRUE(Contains(again.output, "tuned 4 convolutions: 4 from DB, 0 benchmarked in 0.0 s"))
      << again.output;
  EXPECT_TRUE(Contains(again.output, "global plan: ")) << again.output;
  EXPECT_FALSE(Contains(again.output, "tuning in background")) << again.output;
}

// `mxlite tune` is asked to tune: in background mode it waits for what its bind queued, then
// binds again and reports every layer tuned and the plan made.
TEST_F(BackgroundTuneTest, TuneWaitsForTheBackgroundAndReportsThePlan) {
  CliResult tuned = RunCli(environment_ + " MXNET_TUNING_DB_MODE=background", "tune " + model_);
  ASSERT_EQ(tuned.status, 0) << tuned.output;
  EXPECT_TRUE(Contains(tuned.output, "convolution problems tuning in background")) << tuned.output;
  // The second bind finds the tunings in this process's cache of the DB.
  EXPECT_TRUE(
      Contains(tuned.output, "tuned 4 convolutions: 0 from DB, 4 from cache, 0 benchmarked"))
      << tuned.output;
  EXPECT_TRUE(Contains(tuned.output, "global plan: ")) << tuned.output;
  EXPECT_FALSE(Contains(tuned.output, "planning waits")) << tuned.output;
  // Nothing is left to tune.
  CliResult again = RunCli(environment_ + " MXNET_TUNING_DB_MODE=background", "tune " + model_);
  ASSERT_EQ(again.status, 0) << again.output;
  EXPECT_FALSE(Contains(again.output, "tuning in background")) << again.output;
}

}  // namespace
