// ResNet-50's characteristic convolutions, shared by the convolution benchmarks
// (conv_bench, conv_algorithms_bench, conv_tuning_bench; bench/conv_torch.py lists the same).
#pragma once

#include <cstdint>

#include "ops/cpu/im2col.h"

namespace mxlite::bench {

struct ConvLayer {
  const char* name;
  int64_t in_channels, out_channels, kernel, stride, pad, size;
};

inline constexpr ConvLayer kResNet50Layers[] = {
    {"3x3 64->64 56x56", 64, 64, 3, 1, 1, 56},       {"1x1 256->64 56x56", 256, 64, 1, 1, 0, 56},
    {"3x3 128->128 28x28", 128, 128, 3, 1, 1, 28},   {"3x3 256->256 14x14", 256, 256, 3, 1, 1, 14},
    {"1x1 1024->256 14x14", 1024, 256, 1, 1, 0, 14}, {"7x7 3->64 s2 224x224", 3, 64, 7, 2, 3, 224},
    {"3x3 512->512 7x7", 512, 512, 3, 1, 1, 7},      {"1x1 512->2048 7x7", 512, 2048, 1, 1, 0, 7},
};

// The layer at `batch` in `layout`.
inline cpu::ConvGeometry LayerGeometry(const ConvLayer& layer, cpu::ConvLayout layout,
                                       int64_t batch) {
  cpu::ConvGeometry g;
  g.batch = batch;
  g.in_channels = layer.in_channels;
  g.out_channels = layer.out_channels;
  g.in_h = g.in_w = layer.size;
  g.kernel_h = g.kernel_w = layer.kernel;
  g.stride_h = g.stride_w = layer.stride;
  g.pad_h = g.pad_w = layer.pad;
  g.out_h = g.out_w = (layer.size + 2 * layer.pad - layer.kernel) / layer.stride + 1;
  g.layout = layout;
  return g;
}

}  // namespace mxlite::bench
