// Convolution, Deconvolution and FullyConnected against PyTorch: forward and every gradient, for a
// fixed output gradient, on the fixtures made by tests/ops/fixtures/make_torch_fixtures.py
// (PyTorch CPU, float64). mxlite runs in float64 and float32 and must match to 1e-4 relative
// (relative to max(1, |reference|), as in the op harness; float64 to 1e-8).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "tests/ops/op_harness.h"

namespace mxlite::testing {
namespace {

struct Fixture {
  OpCase test_case;
  std::map<std::string, HostTensor> tensors;  // inputs, output, output_grad, <input>_grad
};

HostTensor ReadTensor(std::istringstream& header, std::istream& in, const std::string& where) {
  int ndim = 0;
  header >> ndim;
  std::vector<int64_t> dims(static_cast<size_t>(ndim));
  for (int64_t& dim : dims) header >> dim;
  HostTensor tensor(Shape(dims), DType::kFloat64);
  std::string values;
  std::getline(in, values);
  std::istringstream stream(values);
  for (int64_t i = 0; i < tensor.size(); ++i) {
    double value = 0;
    MX_CHECK(static_cast<bool>(stream >> value)) << where << ": too few values";
    tensor.Set(i, value);
  }
  return tensor;
}

Fixture LoadFixture(const std::string& name) {
  const std::string path = std::string(MXLITE_SOURCE_DIR) + "/tests/ops/fixtures/" + name + ".txt";
  std::ifstream in(path);
  MX_CHECK(in.good()) << "cannot open " << path
                      << " (made by tests/ops/fixtures/make_torch_fixtures.py)";
  Fixture fixture;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream header(line);
    std::string kind, key;
    header >> kind;
    if (kind.empty() || kind[0] == '#') continue;
    header >> key;
    if (kind == "op") {
      fixture.test_case.op = key;
    } else if (kind == "attr") {
      header >> fixture.test_case.attrs[key];
    } else if (kind == "tensor") {
      fixture.tensors[key] = ReadTensor(header, in, path + " " + key);
    } else {
      MX_THROW() << path << ": unknown record '" << kind << "'";
    }
  }
  return fixture;
}

void ExpectClose(const std::string& what, const HostTensor& got, const HostTensor& want,
                 double tolerance) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  int mismatches = 0;
  for (int64_t i = 0; i < want.size(); ++i) {
    const double error = std::abs(got.Get(i) - want.Get(i));
    if (error > tolerance * std::max(1.0, std::abs(want.Get(i))) && ++mismatches <= 5) {
      ADD_FAILURE() << what << " element " << i << ": mxlite " << got.Get(i) << ", PyTorch "
                    << want.Get(i);
    }
  }
  EXPECT_EQ(mismatches, 0) << what;
}

class TorchFixtureTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TorchFixtureTest, ForwardAndGradientsMatchPyTorch) {
  Fixture fixture = LoadFixture(GetParam());
  const std::vector<std::string> names =
      InputNames(OpRegistry::Global().Get(fixture.test_case.op),
                 ParseOpAttributes(OpRegistry::Global().Get(fixture.test_case.op),
                                   fixture.test_case.attrs, "node0"));
  // Every input shape is given, so shape inference also checks the parameter shapes.
  for (const std::string& name : names) {
    ASSERT_EQ(fixture.tensors.count(name), 1u) << "fixture lacks " << name;
    fixture.test_case.input_shapes.push_back(fixture.tensors[name].shape());
  }
  for (DType dtype : {DType::kFloat64, DType::kFloat32}) {
    SCOPED_TRACE(DTypeName(dtype));
    const double tolerance = dtype == DType::kFloat64 ? 1e-8 : 1e-4;
    std::vector<HostTensor> inputs;
    for (const std::string& name : names) inputs.push_back(fixture.tensors[name].As(dtype));
    OpRun forward = RunForward(fixture.test_case, inputs);
    ExpectClose("output", forward.outputs[0], fixture.tensors["output"], tolerance);
    const std::vector<HostTensor> grads =
        RunBackward(fixture.test_case, forward, {fixture.tensors["output_grad"].As(dtype)});
    for (size_t i = 0; i < names.size(); ++i) {
      ExpectClose(names[i] + " gradient", grads[i], fixture.tensors[names[i] + "_grad"], tolerance);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(PyTorch, TorchFixtureTest,
                         ::testing::Values("conv2d_stride_pad_dilate_groups", "conv2d_depthwise",
                                           "conv2d_1x1_no_bias", "conv2d_nhwc", "conv1d",
                                           "deconv2d_groups", "linear_flatten", "linear_last_axis"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace mxlite::testing
