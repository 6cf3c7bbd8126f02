#include "scheduler/train/model_zoo.h"

#include <algorithm>
#include <optional>
#include <string>

#include "scheduler/graph/graph_builder.h"

namespace mxlite {
namespace {

// The network's outputs: the logits, or SoftmaxOutput over them for training.
Graph BuildHead(GraphBuilder& g, Symbol logits, const ImageNetOptions& options) {
  if (!options.softmax_output) return g.Build({logits});
  return g.Build({g.SoftmaxOutput(logits, g.Input("softmax_label", {options.batch}, options.dtype),
                                  "softmax")});
}

std::string UnitName(int stage, int unit) {
  return "stage" + std::to_string(stage) + "_unit" + std::to_string(unit);
}

// conv (no bias: BatchNorm follows) -> BatchNorm, optionally -> ReLU.
Symbol ConvBn(GraphBuilder& g, Symbol x, int64_t filters, int64_t kernel, int64_t stride,
              const std::string& name, bool relu) {
  const int64_t pad = kernel / 2;
  x = g.Conv(x,
             {.num_filter = filters,
              .kernel = {kernel, kernel},
              .stride = {stride, stride},
              .pad = {pad, pad},
              .no_bias = true},
             name);
  x = g.BatchNorm(x, {}, name + "_bn");
  return relu ? g.Relu(x, name + "_relu") : x;
}

// The shortcut: identity, or a strided 1x1 projection when the shape changes.
Symbol Shortcut(GraphBuilder& g, Symbol x, int64_t in_channels, int64_t out_channels,
                int64_t stride, const std::string& name) {
  if (in_channels == out_channels && stride == 1) return x;
  return ConvBn(g, x, out_channels, 1, stride, name + "_sc", /*relu=*/false);
}

Symbol BasicBlock(GraphBuilder& g, Symbol x, int64_t in_channels, int64_t channels, int64_t stride,
                  const std::string& name) {
  Symbol y = ConvBn(g, x, channels, 3, stride, name + "_conv1", true);
  y = ConvBn(g, y, channels, 3, 1, name + "_conv2", false);
  return g.Relu(g.Add(y, Shortcut(g, x, in_channels, channels, stride, name), name + "_add"),
                name + "_out");
}

Symbol Bottleneck(GraphBuilder& g, Symbol x, int64_t in_channels, int64_t channels, int64_t stride,
                  const std::string& name) {
  const int64_t out_channels = channels * 4;
  Symbol y = ConvBn(g, x, channels, 1, 1, name + "_conv1", true);
  y = ConvBn(g, y, channels, 3, stride, name + "_conv2", true);
  y = ConvBn(g, y, out_channels, 1, 1, name + "_conv3", false);
  return g.Relu(g.Add(y, Shortcut(g, x, in_channels, out_channels, stride, name), name + "_add"),
                name + "_out");
}

Graph ResNet(const ImageNetOptions& options, const int (&units)[4], bool bottleneck) {
  GraphBuilder g;
  Symbol x =
      g.Input("data", {options.batch, 3, options.image_size, options.image_size}, options.dtype);
  x = ConvBn(g, x, 64, 7, 2, "conv0", true);
  x = g.MaxPool(x, {.kernel = {3, 3}, .stride = {2, 2}, .pad = {1, 1}}, "pool0");
  int64_t channels = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t width = int64_t{64} << stage;
    for (int unit = 0; unit < units[stage]; ++unit) {
      const int64_t stride = stage > 0 && unit == 0 ? 2 : 1;
      const std::string name = UnitName(stage + 1, unit);
      x = bottleneck ? Bottleneck(g, x, channels, width, stride, name)
                     : BasicBlock(g, x, channels, width, stride, name);
      channels = bottleneck ? width * 4 : width;
    }
  }
  x = g.Flatten(g.GlobalAvgPool(x, "pool1"), "flatten");
  return BuildHead(g, g.FullyConnected(x, {.num_hidden = options.classes}, "fc"), options);
}

// ---- MobileNet-V3-Small ----

enum class Nonlinearity { kRelu, kHardSwish };

// One inverted-residual block of torchvision's mobilenet_v3_small configuration.
struct InvertedResidual {
  int64_t kernel, expanded, out;
  bool squeeze_excite;
  Nonlinearity act;
  int64_t stride;
};

// MobileNet-V3-Small's blocks (torchvision's mobilenet_v3_small configuration).
constexpr InvertedResidual kMobileNetV3Small[] = {
    {3, 16, 16, true, Nonlinearity::kRelu, 2},
    {3, 72, 24, false, Nonlinearity::kRelu, 2},
    {3, 88, 24, false, Nonlinearity::kRelu, 1},
    {5, 96, 40, true, Nonlinearity::kHardSwish, 2},
    {5, 240, 40, true, Nonlinearity::kHardSwish, 1},
    {5, 240, 40, true, Nonlinearity::kHardSwish, 1},
    {5, 120, 48, true, Nonlinearity::kHardSwish, 1},
    {5, 144, 48, true, Nonlinearity::kHardSwish, 1},
    {5, 288, 96, true, Nonlinearity::kHardSwish, 2},
    {5, 576, 96, true, Nonlinearity::kHardSwish, 1},
    {5, 576, 96, true, Nonlinearity::kHardSwish, 1},
};

// The nearest multiple of 8, never below 90% of `value` (torchvision's channel rounding).
int64_t RoundChannels(int64_t value) {
  int64_t rounded = std::max<int64_t>(8, (value + 4) / 8 * 8);
  if (rounded * 10 < value * 9) rounded += 8;
  return rounded;
}

Symbol Activate(GraphBuilder& g, Symbol x, Nonlinearity act, const std::string& name) {
  return act == Nonlinearity::kRelu ? g.Relu(x, name) : g.HardSwish(x, name);
}

// conv (no bias) -> BatchNorm (eps 1e-3) -> the activation, when given.
Symbol ConvBnAct(GraphBuilder& g, Symbol x, int64_t filters, int64_t kernel, int64_t stride,
                 int64_t groups, std::optional<Nonlinearity> act, const std::string& name) {
  const int64_t pad = kernel / 2;
  x = g.Conv(x,
             {.num_filter = filters,
              .kernel = {kernel, kernel},
              .stride = {stride, stride},
              .pad = {pad, pad},
              .num_group = groups,
              .no_bias = true},
             name);
  x = g.BatchNorm(x, {.eps = 1e-3}, name + "_bn");
  return act ? Activate(g, x, *act, name + "_act") : x;
}

// x * hard_sigmoid(expand(relu(reduce(mean of x over the image)))).
Symbol SqueezeExcite(GraphBuilder& g, Symbol x, int64_t channels, const std::string& name) {
  const int64_t squeezed = RoundChannels(channels / 4);
  Symbol s = g.GlobalAvgPool(x, name + "_pool");
  s = g.Relu(g.Conv(s, {.num_filter = squeezed, .kernel = {1, 1}}, name + "_reduce"),
             name + "_relu");
  s = g.Conv(s, {.num_filter = channels, .kernel = {1, 1}}, name + "_expand");
  return g.Multiply(x, g.HardSigmoid(s, name + "_gate"), name + "_scale");
}

Symbol InvertedResidualBlock(GraphBuilder& g, Symbol x, int64_t in_channels,
                             const InvertedResidual& block, const std::string& name) {
  Symbol y = x;
  if (block.expanded != in_channels) {
    y = ConvBnAct(g, y, block.expanded, 1, 1, 1, block.act, name + "_expand");
  }
  y = ConvBnAct(g, y, block.expanded, block.kernel, block.stride, block.expanded, block.act,
                name + "_dw");
  if (block.squeeze_excite) y = SqueezeExcite(g, y, block.expanded, name + "_se");
  y = ConvBnAct(g, y, block.out, 1, 1, 1, std::nullopt, name + "_project");
  if (block.stride == 1 && in_channels == block.out) y = g.Add(y, x, name + "_add");
  return y;
}

}  // namespace

Graph MobileNetV3Small(const ImageNetOptions& options) {
  GraphBuilder g;
  Symbol x =
      g.Input("data", {options.batch, 3, options.image_size, options.image_size}, options.dtype);
  x = ConvBnAct(g, x, 16, 3, 2, 1, Nonlinearity::kHardSwish, "conv0");
  int64_t channels = 16;
  int index = 0;
  for (const InvertedResidual& block : kMobileNetV3Small) {
    x = InvertedResidualBlock(g, x, channels, block, "block" + std::to_string(index++));
    channels = block.out;
  }
  x = ConvBnAct(g, x, 576, 1, 1, 1, Nonlinearity::kHardSwish, "conv_last");
  x = g.Flatten(g.GlobalAvgPool(x, "pool"), "flatten");
  x = g.HardSwish(g.FullyConnected(x, {.num_hidden = 1024}, "fc1"), "fc1_act");
  if (options.dropout > 0) x = g.Dropout(x, options.dropout, "dropout");
  return BuildHead(g, g.FullyConnected(x, {.num_hidden = options.classes}, "fc"), options);
}

Graph FashionMnistNet(int64_t batch, bool batchnorm) {
  GraphBuilder g;
  Symbol x = g.Input("data", {batch, 1, 28, 28});
  for (int64_t filters : {32, 64}) {
    x = g.Conv(x, {.num_filter = filters, .kernel = {5, 5}, .pad = {2, 2}});
    if (batchnorm) x = g.BatchNorm(x);
    x = g.MaxPool(g.Relu(x), {.kernel = {2, 2}, .stride = {2, 2}});
  }
  x = g.Relu(g.FullyConnected(g.Flatten(x), {.num_hidden = 1024}));
  x = g.FullyConnected(x, {.num_hidden = 10});
  return g.Build({g.SoftmaxOutput(x, g.Input("softmax_label", {batch}))});
}

Graph ResNet18(const ImageNetOptions& options) { return ResNet(options, {2, 2, 2, 2}, false); }

Graph ResNet50(const ImageNetOptions& options) { return ResNet(options, {3, 4, 6, 3}, true); }

}  // namespace mxlite
