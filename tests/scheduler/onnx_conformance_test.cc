// The ONNX backend node tests (Debian libonnx-testdata) through the importer and the executor.
//
// tests/scheduler/onnx_pass_list.txt names the tests that must pass: each one's model.onnx is
// imported, bound for inference with the initialisers and test_data_set_*/input_*.pb, run, and
// every output compared with output_*.pb (ONNX's tolerances: rtol 1e-3, atol 1e-7).
// tests/scheduler/onnx_excluded.txt names the node tests of imported op types that do not pass,
// each with the reason. DISABLED_Survey (run with --gtest_also_run_disabled_tests) prints the
// outcome of every node test, to maintain both lists.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "core/error.h"
#include "scheduler/graph/executor.h"
#include "scheduler/onnx/onnx_import.h"

namespace mxlite {
namespace {

namespace fs = std::filesystem;

const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";
constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-7;

// The first word of each line that is neither blank nor a # comment.
std::vector<std::string> ReadList(const std::string& file) {
  std::ifstream in(std::string(MXLITE_SOURCE_DIR) + "/tests/scheduler/" + file);
  EXPECT_TRUE(in.good()) << "cannot read " << file;
  std::vector<std::string> names;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string name;
    if (words >> name && name[0] != '#') names.push_back(name);
  }
  return names;
}

// Files dir/prefix_0.pb, dir/prefix_1.pb, ... in index order.
std::vector<fs::path> Numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int i = 0; fs::exists(dir / (prefix + "_" + std::to_string(i) + ".pb")); ++i) {
    files.push_back(dir / (prefix + "_" + std::to_string(i) + ".pb"));
  }
  return files;
}

HostTensor ToHost(const NDArray& array) {
  HostTensor tensor{array.dtype(), array.shape(), std::vector<uint8_t>(array.bytes())};
  array.SyncCopyToCPU(tensor.bytes.data(), tensor.bytes.size());
  return tensor;
}

// "" when `actual` matches `expected`, else what differs.
std::string Compare(const HostTensor& actual, const HostTensor& expected) {
  std::ostringstream out;
  if (actual.dtype != expected.dtype || actual.shape != expected.shape) {
    out << "got " << DTypeName(actual.dtype) << actual.shape << ", expected "
        << DTypeName(expected.dtype) << expected.shape;
    return out.str();
  }
  const std::vector<double> a = actual.AsDoubles("output"), e = expected.AsDoubles("expected");
  for (size_t i = 0; i < a.size(); ++i) {
    const bool both_nan = std::isnan(a[i]) && std::isnan(e[i]);
    if (!both_nan && !(std::abs(a[i] - e[i]) <= kAtol + kRtol * std::abs(e[i]))) {
      out << "element " << i << " is " << a[i] << ", expected " << e[i];
      return out.str();
    }
  }
  return "";
}

// Runs one node test; "" when every data set matches, else the first problem.
std::string RunNodeTest(const std::string& test) {
  const fs::path dir = kNodeTests / test;
  if (!fs::exists(dir / "model.onnx")) return "no such test";
  int data_sets = 0;
  try {
    for (int set = 0; fs::exists(dir / ("test_data_set_" + std::to_string(set)));
         ++set, ++data_sets) {
      const fs::path data = dir / ("test_data_set_" + std::to_string(set));
      ImportOptions options;
      for (const fs::path& file : Numbered(data, "input")) {
        std::string name;
        HostTensor tensor = ReadTensorFile(file.string(), &name);
        options.input_shapes[name] = tensor.shape;
        options.constant_inputs[name] = std::move(tensor);
      }
      const ImportedModel model = ImportOnnx((dir / "model.onnx").string(), options);
      BindOptions bind{.ctx = Context::CPU(), .arrays = ParameterArrays(model, Context::CPU())};
      for (const auto& [onnx_name, variable] : model.inputs) {
        bind.arrays[variable] = ToNDArray(options.constant_inputs.at(onnx_name), Context::CPU());
      }
      auto executor = Executor::Bind(model.graph, bind);
      executor->Forward(/*is_train=*/false);
      const std::vector<fs::path> expected = Numbered(data, "output");
      if (expected.size() != executor->outputs().size()) {
        return "model has " + std::to_string(executor->outputs().size()) + " outputs, data " +
               std::to_string(expected.size());
      }
      for (size_t i = 0; i < expected.size(); ++i) {
        const std::string diff =
            Compare(ToHost(executor->outputs()[i]), ReadTensorFile(expected[i].string()));
        if (!diff.empty()) return "output " + model.output_names[i] + ": " + diff;
      }
    }
  } catch (const std::exception& error) {
    return error.what();
  }
  return data_sets > 0 ? "" : "no test data";
}

TEST(OnnxConformance, PassListPasses) {
  if (!fs::exists(kNodeTests)) GTEST_SKIP() << "libonnx-testdata is not installed";
  const std::vector<std::string> tests = ReadList("onnx_pass_list.txt");
  EXPECT_GT(tests.size(), 100u);
  for (const std::string& test : tests) {
    EXPECT_EQ(RunNodeTest(test), "") << test;
  }
}

TEST(OnnxConformance, ListsAreDisjointAndExist) {
  if (!fs::exists(kNodeTests)) GTEST_SKIP() << "libonnx-testdata is not installed";
  const std::vector<std::string> passing = ReadList("onnx_pass_list.txt");
  const std::set<std::string> pass_set(passing.begin(), passing.end());
  EXPECT_EQ(pass_set.size(), passing.size()) << "onnx_pass_list.txt has duplicates";
  for (const std::string& test : ReadList("onnx_excluded.txt")) {
    EXPECT_FALSE(pass_set.count(test)) << test << " is both passing and excluded";
    EXPECT_TRUE(fs::exists(kNodeTests / test)) << test;
  }
}

TEST(OnnxConformance, DISABLED_Survey) {
  std::vector<std::string> tests;
  for (const auto& entry : fs::directory_iterator(kNodeTests)) {
    tests.push_back(entry.path().filename().string());
  }
  std::sort(tests.begin(), tests.end());
  for (const std::string& test : tests) {
    std::string result = RunNodeTest(test);
    std::replace(result.begin(), result.end(), '\n', ' ');
    std::cout << (result.empty() ? "PASS " : "FAIL ") << test << " " << result << "\n";
  }
}

}  // namespace
}  // namespace mxlite
