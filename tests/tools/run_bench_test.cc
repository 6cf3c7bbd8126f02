// `mxlite run` and `mxlite bench`, called in-process through their command functions: outputs
// against the ONNX test data's expected ones, and the errors a user gets for missing, mismatched
// or unknown inputs and bad flags. Bench output is checked for its lines, never for time values.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "onnx/onnx_pb.h"  // defines ONNX_API, then includes onnx/onnx-ml.pb.h
#include "scheduler/onnx/onnx_tensor.h"
#include "tools/mxlite/commands.h"

namespace mxlite::cli {
namespace {

namespace fs = std::filesystem;

// A Conv node test of libonnx-testdata: inputs x (1,1,7,5) and W (1,1,3,3), output y (1,1,4,3).
const fs::path kConvTest = "/usr/share/libonnx-testdata/data/node/test_conv_with_strides_padding";

std::string ErrorOf(int (*command)(const std::vector<std::string>&),
                    const std::vector<std::string>& args) {
  try {
    command(args);
  } catch (const Error& error) {
    return error.what();
  }
  ADD_FAILURE() << "no mxlite::Error thrown";
  return "";
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Largest |a - e| relative to the largest |e| (0 for equal tensors).
double RelativeError(const HostTensor& actual, const HostTensor& expected) {
  const std::vector<double> a = actual.AsDoubles("actual"), e = expected.AsDoubles("expected");
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - e[i]));
    scale = std::max(scale, std::abs(e[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

// relu(x + b) with x of shape (batch, 2, 3) where the batch dim is dynamic ("N").
void WriteDynamicBatchModel(const fs::path& path) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* graph = model.mutable_graph();
  onnx::ValueInfoProto* input = graph->add_input();
  input->set_name("data");
  auto* type = input->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  type->mutable_shape()->add_dim()->set_dim_param("N");
  type->mutable_shape()->add_dim()->set_dim_value(2);
  type->mutable_shape()->add_dim()->set_dim_value(3);
  onnx::TensorProto* bias = graph->add_initializer();
  bias->set_name("b");
  bias->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : {2, 3}) bias->add_dims(dim);
  for (float value : {0.5f, -1.0f, 2.0f, -3.0f, 0.0f, 1.0f}) bias->add_float_data(value);
  onnx::NodeProto* add = graph->add_node();
  add->set_op_type("Add");
  add->add_input("data");
  add->add_input("b");
  add->add_output("sum");
  onnx::NodeProto* relu = graph->add_node();
  relu->set_op_type("Relu");
  relu->add_input("sum");
  relu->add_output("out");
  graph->add_output()->set_name("out");
  std::ofstream file(path, std::ios::binary);
  ASSERT_TRUE(model.SerializeToOstream(&file));
}

class RunBenchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kConvTest)) GTEST_SKIP() << "libonnx-testdata is not installed";
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    folder_ = fs::temp_directory_path() /
              ("mxlite_cli_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(folder_);
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }

  std::string Model() const { return (kConvTest / "model.onnx").string(); }
  std::string Data(const std::string& file) const {
    return (kConvTest / "test_data_set_0" / file).string();
  }
  std::string Out() const { return (folder_ / "out").string(); }

  fs::path folder_;
};

TEST_F(RunBenchTest, RunWritesTheExpectedOutputAsATensorProtoFile) {
  std::string x_name, w_name;
  ReadTensorFile(Data("input_0.pb"), &x_name);
  ReadTensorFile(Data("input_1.pb"), &w_name);
  ASSERT_EQ(RunRunCommand({Model(), "--input", x_name + "=" + Data("input_0.pb"),
                           "--input=" + w_name + "=" + Data("input_1.pb"), "--output-dir", Out()}),
            0);
  std::string name, expected_name;
  const HostTensor actual = ReadTensorFile(Out() + "/output_0.pb", &name);
  const HostTensor expected = ReadTensorFile(Data("output_0.pb"), &expected_name);
  EXPECT_EQ(name, expected_name);
  EXPECT_EQ(actual.dtype, expected.dtype);
  EXPECT_EQ(actual.shape, expected.shape);
  EXPECT_LE(RelativeError(actual, expected), 1e-6);
  // Only the output: the temporary file was renamed.
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(Out())) {
    files.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(files, std::vector<std::string>{"output_0.pb"});
}

TEST_F(RunBenchTest, RunAcceptsAnyBatchForADynamicDim) {
  const fs::path model = folder_ / "dynamic.onnx";
  WriteDynamicBatchModel(model);
  const std::vector<float> data = {1, 1, 1, 1, 1, 1, -1, 0, -2, 4, 0.5, -2};
  WriteTensorFile((folder_ / "data.pb").string(), HostTensor::From(data, Shape{2, 2, 3}), "data");
  ASSERT_EQ(RunRunCommand({model.string(), "--input", "data=" + (folder_ / "data.pb").string(),
                           "--output-dir", Out()}),
            0);
  const HostTensor out = ReadTensorFile(Out() + "/output_0.pb");
  EXPECT_EQ(out.shape, (Shape{2, 2, 3}));
  EXPECT_EQ(out.AsDoubles("out"), (std::vector<double>{1.5, 0, 3, 0, 1, 2, 0, 0, 0, 1, 0.5, 0}));
}

TEST_F(RunBenchTest, RunNamesAMissingInputAndItsExpectedShape) {
  const std::string error = ErrorOf(
      RunRunCommand, {Model(), "--input", "x=" + Data("input_0.pb"), "--output-dir", Out()});
  EXPECT_TRUE(Contains(error, "missing input 'W'")) << error;
  EXPECT_TRUE(Contains(error, "float32 (1,1,3,3)")) << error;
  EXPECT_TRUE(Contains(error, "--input W=FILE.pb")) << error;
  EXPECT_FALSE(fs::exists(Out()));
}

TEST_F(RunBenchTest, RunNamesAWrongShapeWithExpectedAndGiven) {
  const std::string error =
      ErrorOf(RunRunCommand, {Model(), "--input", "x=" + Data("input_0.pb"), "--input",
                              "W=" + Data("input_0.pb"), "--output-dir", Out()});
  EXPECT_TRUE(Contains(error, "input 'W'")) << error;
  EXPECT_TRUE(Contains(error, "expects float32 (1,1,3,3)")) << error;
  EXPECT_TRUE(Contains(error, "got float32 (1,1,7,5)")) << error;
  EXPECT_TRUE(Contains(error, "input_0.pb")) << error;
}

TEST_F(RunBenchTest, RunListsTheModelsInputsForAnUnknownName) {
  const std::string error =
      ErrorOf(RunRunCommand, {Model(), "--input", "x=" + Data("input_0.pb"), "--input",
                              "weights=" + Data("input_1.pb"), "--output-dir", Out()});
  EXPECT_TRUE(Contains(error, "unknown input 'weights'")) << error;
  EXPECT_TRUE(Contains(error, "'x' float32 (1,1,7,5)")) << error;
  EXPECT_TRUE(Contains(error, "'W' float32 (1,1,3,3)")) << error;
}

TEST_F(RunBenchTest, RunRejectsBadFlagsAndArguments) {
  std::string error = ErrorOf(RunRunCommand, {Model(), "--outdir", Out()});
  EXPECT_TRUE(Contains(error, "unknown flag --outdir")) << error;
  EXPECT_TRUE(Contains(error, "--output-dir")) << error;
  error = ErrorOf(RunRunCommand, {Model(), "--input", Data("input_0.pb"), "--output-dir", Out()});
  EXPECT_TRUE(Contains(error, "should be NAME=FILE.pb")) << error;
  error = ErrorOf(RunRunCommand, {Model(), "--input", "x=" + Data("input_0.pb")});
  EXPECT_TRUE(Contains(error, "needs --output-dir")) << error;
  error = ErrorOf(RunRunCommand, {(folder_ / "absent.onnx").string(), "--output-dir", Out()});
  EXPECT_TRUE(Contains(error, "absent.onnx' does not exist")) << error;
  error = ErrorOf(RunRunCommand, {Model(), "--device", "tpu", "--output-dir", Out()});
  EXPECT_TRUE(Contains(error, "--device 'tpu'")) << error;
  error = ErrorOf(RunRunCommand, {Model(), "--input", "x=" + (folder_ / "none.pb").string(),
                                  "--output-dir", Out()});
  EXPECT_TRUE(Contains(error, "none.pb")) << error;
}

TEST_F(RunBenchTest, HelpDescribesTheFlags) {
  testing::internal::CaptureStdout();
  EXPECT_EQ(RunRunCommand({"--help"}), 0);
  EXPECT_EQ(RunBenchCommand({"--help"}), 0);
  const std::string help = testing::internal::GetCapturedStdout();
  for (const char* flag : {"--input", "--output-dir", "--device", "--engine", "--batch",
                           "--threads", "--warmup", "--iters"}) {
    EXPECT_TRUE(Contains(help, flag)) << flag;
  }
}

TEST_F(RunBenchTest, BenchPrintsPercentilesAndThroughput) {
  testing::internal::CaptureStdout();
  const int status = RunBenchCommand({Model(), "--batch", "2", "--iters", "3", "--warmup", "1"});
  const std::string output = testing::internal::GetCapturedStdout();
  ASSERT_EQ(status, 0) << output;
  // The first input's batch dim became 2; the weight kept its shape.
  EXPECT_TRUE(Contains(output, "input 'x': float32 (2,1,7,5)")) << output;
  EXPECT_TRUE(Contains(output, "input 'W': float32 (1,1,3,3)")) << output;
  for (const char* line : {"\nlatency p50: ", "\nlatency p90: ", "\nlatency p99: ",
                           "\nthroughput: ", "(batch 2, 3 passes in "}) {
    EXPECT_TRUE(Contains(output, line)) << line << "\n" << output;
  }
}

TEST_F(RunBenchTest, BenchSetsADynamicBatchDim) {
  const fs::path model = folder_ / "dynamic.onnx";
  WriteDynamicBatchModel(model);
  testing::internal::CaptureStdout();
  const int status = RunBenchCommand({model.string(), "--batch", "5", "--iters", "3"});
  const std::string output = testing::internal::GetCapturedStdout();
  ASSERT_EQ(status, 0) << output;
  EXPECT_TRUE(Contains(output, "input 'data': float32 (5,2,3)")) << output;
}

TEST_F(RunBenchTest, BenchComparePlanTimesBothPlansAndPrintsTheSpeedup) {
  testing::internal::CaptureStdout();
  const int status = RunBenchCommand({Model(), "--iters", "3", "--warmup", "1", "--compare-plan"});
  const std::string output = testing::internal::GetCapturedStdout();
  ASSERT_EQ(status, 0) << output;
  // One line per plan that starts with its name, then the speedup.
  for (const char* line : {"\nlocal: ", "\nglobal: ", " ms (predicted ",
                           "\nspeedup global over local: "}) {
    EXPECT_TRUE(Contains(output, line)) << line << "\n" << output;
  }
  EXPECT_LT(output.find("\nlocal: "), output.find("\nglobal: ")) << output;
  // Both plans are bound before either is timed: their passes are timed in turn.
  const size_t first_report = output.find(", timed in turn with the other ---");
  ASSERT_NE(first_report, std::string::npos) << output;
  EXPECT_LT(output.find("--- plan global ---"), first_report) << output;
}

TEST_F(RunBenchTest, BenchTimesTrainingStepsUnderAGivenPlan) {
  testing::internal::CaptureStdout();
  const int status = RunBenchCommand(
      {Model(), "--iters", "2", "--warmup", "0", "--training", "--plan", "global"});
  const std::string output = testing::internal::GetCapturedStdout();
  ASSERT_EQ(status, 0) << output;
  EXPECT_TRUE(Contains(output, "timing training steps (forward + backward)")) << output;
  EXPECT_TRUE(Contains(output, "\nglobal plan: ")) << output;
  EXPECT_TRUE(Contains(output, "(batch 1, 2 passes in ")) << output;
}

TEST_F(RunBenchTest, BenchRejectsABadPlan) {
  std::string error = ErrorOf(RunBenchCommand, {Model(), "--plan", "best"});
  EXPECT_TRUE(Contains(error, "--plan best: expected none, local or global")) << error;
  error = ErrorOf(RunBenchCommand, {Model(), "--plan", "local", "--compare-plan"});
  EXPECT_TRUE(Contains(error, "--compare-plan runs both plans")) << error;
}

// --dtype float64 computes the body in float64 and still writes the file's float32 output;
// float16 is for the GPU (the CPU convolutions say so); other dtypes are refused by name.
TEST_F(RunBenchTest, DtypeFlagCastsTheBodyAndKeepsTheOutputsDtype) {
  std::string x_name, w_name;
  ReadTensorFile(Data("input_0.pb"), &x_name);
  ReadTensorFile(Data("input_1.pb"), &w_name);
  const std::vector<std::string> inputs = {"--input", x_name + "=" + Data("input_0.pb"), "--input",
                                           w_name + "=" + Data("input_1.pb")};
  std::vector<std::string> args = {Model(), "--output-dir", Out(), "--dtype", "float64"};
  args.insert(args.end(), inputs.begin(), inputs.end());
  testing::internal::CaptureStdout();
  ASSERT_EQ(RunRunCommand(args), 0);
  testing::internal::GetCapturedStdout();
  std::string name;
  const HostTensor actual = ReadTensorFile(Out() + "/output_0.pb", &name);
  const HostTensor expected = ReadTensorFile(Data("output_0.pb"), &name);
  EXPECT_EQ(actual.dtype, DType::kFloat32);
  EXPECT_LE(RelativeError(actual, expected), 1e-6);
  std::string error = ErrorOf(RunBenchCommand, {Model(), "--dtype", "float16", "--iters", "1"});
  EXPECT_TRUE(Contains(error, "float16 is not supported by the CPU convolutions")) << error;
  error = ErrorOf(RunBenchCommand, {Model(), "--dtype", "int8"});
  EXPECT_TRUE(Contains(error, "--dtype int8: expected float32, float16 or float64")) << error;
}

TEST_F(RunBenchTest, BenchRejectsBadNumbers) {
  std::string error = ErrorOf(RunBenchCommand, {Model(), "--iters", "0"});
  EXPECT_TRUE(Contains(error, "--iters '0' must be an integer from 1")) << error;
  error = ErrorOf(RunBenchCommand, {Model(), "--batch", "two"});
  EXPECT_TRUE(Contains(error, "--batch 'two'")) << error;
  error = ErrorOf(RunBenchCommand, {Model(), "--threads", "-1"});
  EXPECT_TRUE(Contains(error, "--threads '-1'")) << error;
  error = ErrorOf(RunBenchCommand, {Model(), "--batchsize", "2"});
  EXPECT_TRUE(Contains(error, "unknown flag --batchsize")) << error;
}

}  // namespace
}  // namespace mxlite::cli
