// The ONNX backend node tests through the importer and the executor, in two suites:
//   - Debian's libonnx-testdata (ONNX 1.12: opsets 1 to 17), lists onnx_pass_list.txt and
//     onnx_excluded.txt;
//   - the tests of opsets 18 to 21 from PyPI's onnx 1.16.2, which tools/fetch_onnx_node_tests.sh
//     writes under the build folder (tools/test.sh runs it), lists onnx_pass_list_opset18-21.txt
//     and onnx_excluded_opset18-21.txt.
//
// A pass list names the tests that must pass: each one's model.onnx is imported, bound for
// inference with the initialisers and test_data_set_*/input_*.pb, run, and every output compared
// with output_*.pb (ONNX's tolerances: rtol 1e-3, atol 1e-7). An excluded list names node tests
// of imported op types that do not pass, each with the reason. DISABLED_Survey (run with
// --gtest_also_run_disabled_tests) prints the outcome of every node test of both suites, to
// maintain the lists.
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

struct NodeTestSuite {
  fs::path dir;
  std::string pass_list, excluded;
  std::string when_missing;  // why the suite's folder may be absent, for the skip message
};

const NodeTestSuite kDebianSuite{"/usr/share/libonnx-testdata/data/node", "onnx_pass_list.txt",
                                 "onnx_excluded.txt", "libonnx-testdata is not installed"};
const NodeTestSuite kOpset18Suite{
    fs::path(MXLITE_BINARY_DIR) / "onnx-node-tests" / "opset18-21",
    "onnx_pass_list_opset18-21.txt", "onnx_excluded_opset18-21.txt",
    "the node tests of opsets 18-21 are not there: run tools/fetch_onnx_node_tests.sh (it needs "
    "PyPI)"};
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
    const bool same = a[i] == e[i];  // infinities of one sign too
    if (!both_nan && !same && !(std::abs(a[i] - e[i]) <= kAtol + kRtol * std::abs(e[i]))) {
      out << "element " << i << " is " << a[i] << ", expected " << e[i];
      return out.str();
    }
  }
  return "";
}

// Runs one node test; "" when every data set matches, else the first problem.
std::string RunNodeTest(const fs::path& suite, const std::string& test) {
  const fs::path dir = suite / test;
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

void ExpectPassListPasses(const NodeTestSuite& suite, size_t at_least) {
  const std::vector<std::string> tests = ReadList(suite.pass_list);
  EXPECT_GT(tests.size(), at_least);
  for (const std::string& test : tests) {
    EXPECT_EQ(RunNodeTest(suite.dir, test), "") << test;
  }
}

void ExpectListsDisjointAndExisting(const NodeTestSuite& suite) {
  const std::vector<std::string> passing = ReadList(suite.pass_list);
  const std::set<std::string> pass_set(passing.begin(), passing.end());
  EXPECT_EQ(pass_set.size(), passing.size()) << suite.pass_list << " has duplicates";
  for (const std::string& test : passing) EXPECT_TRUE(fs::exists(suite.dir / test)) << test;
  for (const std::string& test : ReadList(suite.excluded)) {
    EXPECT_FALSE(pass_set.count(test)) << test << " is both passing and excluded";
    EXPECT_TRUE(fs::exists(suite.dir / test)) << test;
  }
}

void Survey(const NodeTestSuite& suite) {
  if (!fs::exists(suite.dir)) {
    std::cout << "SKIP " << suite.dir.string() << ": " << suite.when_missing << "\n";
    return;
  }
  std::vector<std::string> tests;
  for (const auto& entry : fs::directory_iterator(suite.dir)) {
    tests.push_back(entry.path().filename().string());
  }
  std::sort(tests.begin(), tests.end());
  std::cout << "# " << suite.dir.string() << "\n";
  for (const std::string& test : tests) {
    std::string result = RunNodeTest(suite.dir, test);
    std::replace(result.begin(), result.end(), '\n', ' ');
    std::cout << (result.empty() ? "PASS " : "FAIL ") << test << " " << result << "\n";
  }
}

TEST(OnnxConformance, PassListPasses) {
  if (!fs::exists(kDebianSuite.dir)) GTEST_SKIP() << kDebianSuite.when_missing;
  ExpectPassListPasses(kDebianSuite, 400);
}

TEST(OnnxConformance, ListsAreDisjointAndExist) {
  if (!fs::exists(kDebianSuite.dir)) GTEST_SKIP() << kDebianSuite.when_missing;
  ExpectListsDisjointAndExisting(kDebianSuite);
}

TEST(OnnxConformance, Opset18To21PassListPasses) {
  if (!fs::exists(kOpset18Suite.dir)) GTEST_SKIP() << kOpset18Suite.when_missing;
  ExpectPassListPasses(kOpset18Suite, 100);
}

TEST(OnnxConformance, Opset18To21ListsAreDisjointAndExist) {
  if (!fs::exists(kOpset18Suite.dir)) GTEST_SKIP() << kOpset18Suite.when_missing;
  ExpectListsDisjointAndExisting(kOpset18Suite);
}

TEST(OnnxConformance, DISABLED_Survey) {
  Survey(kDebianSuite);
  Survey(kOpset18Suite);
}

}  // namespace
}  // namespace mxlite
