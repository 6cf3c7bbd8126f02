// GraphBuilder: defines networks in C++ in a way that reads like the math.
//
//   GraphBuilder g;
//   Symbol x = g.Input("data", {64, 1, 28, 28});
//   Symbol y = g.Conv(x, {.num_filter = 32, .kernel = {5, 5}, .pad = {2, 2}});
//   y = g.Relu(y);
//   y = g.MaxPool(y, {.kernel = {2, 2}, .stride = {2, 2}});
//   y = g.FullyConnected(g.Flatten(y), {.num_hidden = 10});
//   Graph net = g.Build({g.SoftmaxOutput(y, g.Input("label", {64}))});
//
// Nodes are named by op and a per-prefix counter ("conv0", "fc1", "relu2") unless a name is given.
// Inputs an op declares as parameters or auxiliary states (weights, biases, BatchNorm statistics)
// and that the call does not pass are created automatically as "<node>_<input>" ("conv0_weight");
// their shapes are inferred later. Attributes are the ops' own (MXNet spelling); the option
// structs are typed shorthands that turn into them. Errors (unknown op, bad attribute, wrong
// input count) throw mxlite::Error naming the node.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/graph/graph.h"

namespace mxlite {

class GraphBuilder;

// One output of a node under construction.
struct Symbol {
  GraphBuilder* builder = nullptr;
  NodeEntry entry;
};

struct ConvOptions {
  int64_t num_filter = 0;
  std::vector<int64_t> kernel;
  std::vector<int64_t> stride = {};
  std::vector<int64_t> pad = {};
  std::vector<int64_t> dilate = {};
  int64_t num_group = 1;
  bool no_bias = false;
  std::optional<std::string> cudnn_tune = std::nullopt;  // off | limited_workspace | fastest
  std::optional<std::string> layout = std::nullopt;      // NCHW (default) | NHWC | NCW | NWC
  std::optional<int64_t> workspace = std::nullopt;       // MB
};

struct FullyConnectedOptions {
  int64_t num_hidden = 0;
  bool no_bias = false;
  bool flatten = true;
};

struct PoolOptions {
  std::vector<int64_t> kernel = {};
  std::vector<int64_t> stride = {};
  std::vector<int64_t> pad = {};
  bool ceil_mode = false;  // MXNet's pooling_convention=full
  bool count_include_pad = true;
};

struct BatchNormOptions {
  double eps = 1e-3;
  double momentum = 0.9;
  bool fix_gamma = false;  // the builder defaults to a learned gamma (MXNet's op default is true)
  bool use_global_stats = false;
};

class GraphBuilder {
 public:
  Symbol Input(const std::string& name, const Shape& shape, DType dtype = DType::kFloat32);
  // A parameter with an optional shape and dtype (inferred from its consumers when omitted; give
  // the dtype when no consumer fixes it, e.g. a transpose of the parameter).
  Symbol Parameter(const std::string& name, std::optional<Shape> shape = std::nullopt,
                   std::optional<DType> dtype = std::nullopt);

  // The generic form: any registered op, its inputs (missing trailing parameters are created),
  // attributes in MXNet spelling. Returns output 0; Outputs() gives all visible outputs.
  Symbol Op(const std::string& op, const std::vector<Symbol>& inputs,
            const std::map<std::string, std::string>& attrs = {}, const std::string& name = "");
  std::vector<Symbol> Outputs(Symbol symbol);

  Symbol Conv(Symbol x, const ConvOptions& options, const std::string& name = "");
  Symbol FullyConnected(Symbol x, const FullyConnectedOptions& options,
                        const std::string& name = "");
  Symbol Activation(Symbol x, const std::string& act_type, const std::string& name = "");
  Symbol Relu(Symbol x, const std::string& name = "") { return Activation(x, "relu", name); }
  Symbol Sigmoid(Symbol x, const std::string& name = "") { return Activation(x, "sigmoid", name); }
  Symbol Tanh(Symbol x, const std::string& name = "") { return Activation(x, "tanh", name); }
  // x * sigmoid(x), x * max(0, min(1, x / 6 + 1 / 2)) (MobileNet-V3's hard swish) and the exact
  // GELU, x/2 * (1 + erf(x / sqrt 2)).
  Symbol Silu(Symbol x, const std::string& name = "") { return Op("silu", {x}, {}, name); }
  Symbol HardSwish(Symbol x, const std::string& name = "") {
    return Op("hard_swish", {x}, {}, name);
  }
  Symbol Gelu(Symbol x, const std::string& name = "") { return Op("gelu", {x}, {}, name); }
  // max(0, min(1, x / 6 + 1 / 2)): PyTorch's Hardsigmoid (MobileNet-V3's squeeze-excitation gate).
  Symbol HardSigmoid(Symbol x, const std::string& name = "") {
    return Op("hard_sigmoid", {x}, {{"alpha", "0.1666666666666667"}, {"beta", "0.5"}}, name);
  }
  // a * b element-wise, dims of size 1 broadcast (broadcast_mul): e.g. a (N, C, 1, 1) gate.
  Symbol Multiply(Symbol a, Symbol b, const std::string& name = "") {
    return Op("broadcast_mul", {a, b}, {}, name);
  }
  // max(a, b) and min(a, b) element-wise, broadcasting as Multiply.
  Symbol Maximum(Symbol a, Symbol b, const std::string& name = "") {
    return Op("broadcast_maximum", {a, b}, {}, name);
  }
  Symbol Minimum(Symbol a, Symbol b, const std::string& name = "") {
    return Op("broadcast_minimum", {a, b}, {}, name);
  }
  // The mean / sum over `axis` (all axes when empty), keeping them with extent 1 when asked.
  Symbol Mean(Symbol x, const std::vector<int64_t>& axis = {}, bool keepdims = false,
              const std::string& name = "");
  Symbol Sum(Symbol x, const std::vector<int64_t>& axis = {}, bool keepdims = false,
             const std::string& name = "");
  // x[begin:end:step] on the leading axes (MXNet's slice; negative indices count from the end).
  Symbol Slice(Symbol x, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
               const std::vector<int64_t>& step = {}, const std::string& name = "");
  // MXNet's Reshape, with its codes 0 (keep), -1 (infer), -2, -3, -4.
  Symbol Reshape(Symbol x, const std::vector<int64_t>& shape, const std::string& name = "");
  // The trailing axes resampled to `size`: "nearest" or "linear" (bilinear on images), with
  // ONNX's coordinate modes (half_pixel: PyTorch's align_corners=False; align_corners).
  Symbol Resize(Symbol x, const std::vector<int64_t>& size, const std::string& mode = "nearest",
                const std::string& coordinate_transformation_mode = "half_pixel",
                const std::string& name = "");
  Symbol MaxPool(Symbol x, const PoolOptions& options, const std::string& name = "");
  Symbol AvgPool(Symbol x, const PoolOptions& options, const std::string& name = "");
  Symbol GlobalAvgPool(Symbol x, const std::string& name = "");
  Symbol BatchNorm(Symbol x, const BatchNormOptions& options = {}, const std::string& name = "");
  // Layer normalisation along `axis` with a learned gamma and beta (ops/layer_norm.h).
  Symbol LayerNorm(Symbol x, int axis = -1, double eps = 1e-5, const std::string& name = "");
  // Group normalisation of (N, C, ...) in `groups` groups of channels, with a learned gamma and
  // beta per channel (ops/group_norm.h).
  Symbol GroupNorm(Symbol x, int64_t groups, double eps = 1e-5, const std::string& name = "");
  Symbol Dropout(Symbol x, double p, const std::string& name = "");
  Symbol Flatten(Symbol x, const std::string& name = "");
  Symbol Add(Symbol a, Symbol b, const std::string& name = "");
  Symbol Concat(const std::vector<Symbol>& inputs, int dim = 1, const std::string& name = "");
  Symbol SoftmaxOutput(Symbol x, Symbol label, const std::string& name = "");

  // The graph of everything `outputs` depend on.
  Graph Build(const std::vector<Symbol>& outputs) const;
  const Graph& graph() const { return graph_; }

 private:
  std::string AutoName(const std::string& op, const std::string& given);

  Graph graph_;
  std::map<std::string, int> name_counters_;
};

}  // namespace mxlite
