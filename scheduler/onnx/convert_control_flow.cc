// ONNX control flow whose decisions are known at load, as exporters write it for shape-dependent
// Python code (torchvision's MViT pools each attention head in a Python loop over a list):
//   If    the condition is known at load: the chosen branch's nodes are imported in place of the
//         If, its outputs become the If's.
//   Loop  the trip count and the condition are known at load (each iteration's condition too):
//         the body is imported once per iteration (ConvertSubgraph: its names made unique per
//         iteration), the loop-carried values of one iteration feeding the next; the carried
//         outputs are the last iteration's and each scan output stacks its iterations' values
//         along a new first axis.
// A condition or trip count computed at run time is an error naming the node: mxlite's graphs are
// static. A loop runs at most kMaxUnrolledIterations iterations: one with no trip count, or a
// larger one, must see its condition turn false by then.
#include <algorithm>

#include "core/error.h"
#include "scheduler/onnx/onnx_converter.h"

namespace mxlite {
namespace {

constexpr int64_t kMaxUnrolledIterations = 4096;

// Whether the boolean (uint8, or any integer or float) scalar `value` is true.
bool Truth(const HostTensor& value, const std::string& what) {
  const std::vector<double> values = value.AsDoubles(what);
  MX_CHECK(values.size() == 1) << what << " must hold one value, not " << values.size();
  return values[0] != 0.0;
}

// A condition input or output known at load.
bool KnownCondition(OnnxNode& node, const std::string& name, const std::string& what) {
  const HostTensor* value = node.values().Constant(name);
  MX_CHECK(value != nullptr) << node.where() << ": " << what << " ('" << name
                             << "') is computed at run time; mxlite imports control flow whose "
                                "decisions are known at load";
  return Truth(*value, node.where() + " " + what);
}

void ConvertIf(OnnxNode& node) {
  const bool condition = KnownCondition(node, node.input_name(0), "the condition");
  const char* branch_name = condition ? "then_branch" : "else_branch";
  const onnx::GraphProto* branch = node.attrs().Graph(branch_name);
  MX_CHECK(branch != nullptr) << node.where() << ": attribute '" << branch_name << "' is missing";
  MX_CHECK(branch->output_size() == node.num_outputs())
      << node.where() << ": " << branch_name << " has " << branch->output_size()
      << " outputs, the node " << node.num_outputs();
  // Two Ifs' branches may define the same names (ONNX forbids reuse only along a nesting chain):
  // the branch's names are made the If's own.
  const std::vector<std::string> outputs =
      node.values().ConvertSubgraph(*branch, {}, node.name() + "/" + branch_name + ":");
  for (int i = 0; i < node.num_outputs(); ++i) {
    if (!node.proto().output(i).empty()) {
      node.values().Alias(node.proto().output(i), outputs[static_cast<size_t>(i)]);
    }
  }
}

// A scalar constant named after the node, defined under a fresh name.
std::string DefineScalar(OnnxNode& node, const std::string& suffix, HostTensor value) {
  const std::string name = node.name() + suffix;
  node.values().DefineConstant(name, std::move(value));
  return name;
}

void ConvertLoop(OnnxNode& node) {
  const onnx::GraphProto* body = node.attrs().Graph("body");
  MX_CHECK(body != nullptr) << node.where() << ": attribute 'body' is missing";
  const int carried = node.num_inputs() - 2;
  MX_CHECK(carried >= 0) << node.where() << ": takes at least 2 inputs (M, cond)";
  MX_CHECK(body->input_size() == carried + 2 && body->output_size() >= carried + 1)
      << node.where() << ": the body takes " << body->input_size() << " inputs and gives "
      << body->output_size() << " outputs for " << carried << " loop-carried values";
  const int scans = body->output_size() - 1 - carried;
  MX_CHECK(node.num_outputs() <= carried + scans)
      << node.where() << ": " << node.num_outputs() << " outputs for " << carried
      << " loop-carried values and " << scans << " scan outputs";

  // A trip count over the limit (TorchScript's while loops write INT64_MAX) is fine when the
  // condition ends the loop before it.
  int64_t trips = kMaxUnrolledIterations;
  bool counted = false;
  if (node.has_input(0)) {
    const std::vector<int64_t> m =
        node.RequireConstant(0, "the trip count M").ToInt64s(node.where() + " M");
    MX_CHECK(m.size() == 1) << node.where() << ": the trip count M must be a scalar";
    counted = m[0] <= kMaxUnrolledIterations;
    trips = std::min(m[0], kMaxUnrolledIterations);
  }
  bool go = !node.has_input(1) || KnownCondition(node, node.input_name(1), "the condition");
  std::vector<std::string> state;
  for (int i = 0; i < carried; ++i) state.push_back(node.input_name(2 + i));
  std::vector<std::vector<std::string>> scanned(static_cast<size_t>(scans));
  const std::string cond_true =
      DefineScalar(node, "/cond", HostTensor::From(std::vector<uint8_t>{1}, Shape{}));
  int64_t iteration = 0;
  for (; iteration < trips && go; ++iteration) {
    std::string tag = "/";  // appended: GCC 12 warns falsely on "/" + std::string
    tag += std::to_string(iteration);
    tag += ':';
    std::vector<std::string> inputs = {
        DefineScalar(node, tag + "iteration",
                     HostTensor::From(std::vector<int64_t>{iteration}, Shape{})),
        cond_true};
    inputs.insert(inputs.end(), state.begin(), state.end());
    const std::vector<std::string> outputs =
        node.values().ConvertSubgraph(*body, inputs, node.name() + tag);
    go = KnownCondition(node, outputs[0],
                        "the condition after iteration " + std::to_string(iteration));
    for (int i = 0; i < carried; ++i) state[static_cast<size_t>(i)] = outputs[1 + i];
    for (int k = 0; k < scans; ++k) {
      scanned[static_cast<size_t>(k)].push_back(outputs[static_cast<size_t>(1 + carried + k)]);
    }
  }
  MX_CHECK(counted || !go) << node.where() << ": its condition still holds after "
                           << kMaxUnrolledIterations << " iterations";
  for (int i = 0; i < carried && i < node.num_outputs(); ++i) {
    if (!node.proto().output(i).empty()) {
      node.values().Alias(node.proto().output(i), state[static_cast<size_t>(i)]);
    }
  }
  for (int k = 0; carried + k < node.num_outputs(); ++k) {
    const std::vector<std::string>& values = scanned[static_cast<size_t>(k)];
    MX_CHECK(!values.empty()) << node.where() << ": no iteration ran, so scan output " << k
                              << " would be empty";
    std::string suffix = "_scan";  // appended, as above
    suffix += std::to_string(k);
    node.SetOutput(carried + k, JoinValues(node, values, 0, /*new_axis=*/true, suffix));
  }
}

}  // namespace

MXLITE_REGISTER_ONNX_CONVERTER_CHOOSING_SUBGRAPHS(If, 1, kMaxOnnxOpset, ConvertIf);
MXLITE_REGISTER_ONNX_CONVERTER(Loop, 1, kMaxOnnxOpset, ConvertLoop);

}  // namespace mxlite
