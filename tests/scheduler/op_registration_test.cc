// An op is one place: what the rest of mxlite asks of an op comes from its own registration.
// Two ops registered here, alike but for their layout role, are moved or refused by the layout
// planner accordingly, with the axis they name retargeted by their own rule; and no source file
// of scheduler/ compares an op's name (the op's traits say what it is). That every op has GPU
// kernels or says it is CPU-only is tests/ops/gpu_vs_cpu_test.cc's GpuKernels check.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/error.h"
#include "ops/copy_kernels.h"
#include "ops/operator.h"
#include "scheduler/graph/graph_builder.h"
#include "scheduler/graph/infer_shapes.h"
#include "scheduler/planning/conv_planning.h"

namespace mxlite {
namespace {

// output = data, with an `axis` attribute naming a data axis (as BatchNorm's does).
OpDef AxisCopyOp(const std::string& name, LayoutRole role) {
  OpDef op;
  op.name = name;
  op.doc = "test only: copies its input; `axis` names one of its axes";
  op.attributes.Int("axis", "an axis of the data", Default("1"));
  op.input_names = [](const Attributes&) { return std::vector<std::string>{"data"}; };
  op.output_names = [](const Attributes&) { return std::vector<std::string>{"output"}; };
  op.infer_shape = [](const Attributes&, ShapeInference& shapes) {
    shapes.AssignOutput(0, shapes.Input(0));
  };
  op.forward[DeviceType::kCPU] = CopyForwardCpu;
  op.cpu_only = true;
  op.layout.role = role;
  op.layout.retarget = [](const Attributes& attrs, ActivationLayout layout,
                          std::map<std::string, std::string>& text) {
    text["axis"] = AxisTextIn(layout, attrs.GetInt("axis"));
  };
  return op;
}

MXLITE_REGISTER_OP(_test_agnostic_copy) {
  return AxisCopyOp("_test_agnostic_copy", LayoutRole::kAgnostic);
}
MXLITE_REGISTER_OP(_test_fixed_copy) { return AxisCopyOp("_test_fixed_copy", LayoutRole::kFixed); }

Graph ConvCopyConv(const std::string& copy_op) {
  GraphBuilder g;
  Symbol x = g.Input("data", {1, 4, 5, 5});
  Symbol y = g.Conv(x, {.num_filter = 4, .kernel = {1, 1}}, "c1");
  y = g.Op(copy_op, {y}, {}, "copy");
  return g.Build({g.Conv(y, {.num_filter = 4, .kernel = {1, 1}}, "c2")});
}

TEST(OpRegistration, TheLayoutPlannerFollowsAnOpsDeclaredRole) {
  const std::map<std::string, ActivationLayout> nhwc = {{"c1", ActivationLayout::kNHWC},
                                                        {"copy", ActivationLayout::kNHWC},
                                                        {"c2", ActivationLayout::kNHWC}};
  const Graph agnostic = ConvCopyConv("_test_agnostic_copy");
  const Graph moved = RewriteLayouts(agnostic, InferGraphShapes(agnostic), nhwc, false);
  const Node& copy = moved.node(moved.Find("copy"));
  EXPECT_EQ(copy.attrs.GetInt("axis"), 3);  // the channel axis, retargeted by the op's rule
  EXPECT_EQ(moved.node(copy.inputs[0].node).name, "c1");  // no transform between

  const Graph fixed = ConvCopyConv("_test_fixed_copy");
  try {
    RewriteLayouts(fixed, InferGraphShapes(fixed), nhwc, false);
    FAIL() << "a fixed op was moved";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("'copy' (_test_fixed_copy) runs only as written"),
              std::string::npos)
        << error.what();
  }
}

// Every .cc and .h under scheduler/, for the comparison below, but the ONNX importer's formula
// matcher (scheduler/onnx/onnx_patterns.cc): the formulas it finds are runs of ONNX op types by
// definition, as the converter table's keys are; it names no mxlite op.
std::vector<std::filesystem::path> SchedulerSources() {
  std::vector<std::filesystem::path> files;
  const std::filesystem::path root = std::filesystem::path(MXLITE_SOURCE_DIR) / "scheduler";
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    const std::string extension = entry.path().extension().string();
    if (entry.path().filename() == "onnx_patterns.cc") continue;
    if (extension == ".cc" || extension == ".h") files.push_back(entry.path());
  }
  return files;
}

TEST(OpRegistration, SchedulerComparesNoOpNames) {
  const std::regex comparison(R"((op->name|op\.name|op_type\(\))\s*[!=]=)");
  const std::vector<std::filesystem::path> files = SchedulerSources();
  ASSERT_GT(files.size(), 20u);
  for (const std::filesystem::path& file : files) {
    std::ifstream in(file);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      EXPECT_FALSE(std::regex_search(line, comparison))
          << file.string() << ":" << number << " compares an op's name: " << line;
    }
  }
}

}  // namespace
}  // namespace mxlite
