#include "scheduler/train/model_zoo.h"

#include <string>

#include "scheduler/graph/graph_builder.h"

namespace mxlite {
namespace {

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
  Symbol x = g.Input("data", {options.batch, 3, options.image_size, options.image_size});
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
  return g.Build({g.FullyConnected(x, {.num_hidden = options.classes}, "fc")});
}

}  // namespace

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
