// Reference networks as graphs, built with GraphBuilder (random weights: parameters are created
// by the builder and initialised by the caller). For the examples, the benchmarks and tests.
//
//   Graph net = ResNet18({.batch = 1});          // data (1, 3, 224, 224) -> fc1000
//   Graph small = MobileNetV3Small({.batch = 2, .image_size = 64, .classes = 10});
//   Graph demo = FashionMnistNet(64, /*batchnorm=*/true);
//
// Layer names are stable (conv0, stage1_unit0_conv1, ..., fc), so tuning reports and DB entries
// of two builds of the same network line up. The ImageNet networks end in FullyConnected logits
// (no softmax) unless ImageNetOptions::softmax_output; FashionMnistNet ends in SoftmaxOutput with
// a "softmax_label" input.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "scheduler/graph/graph.h"

namespace mxlite {

struct ImageNetOptions {
  int64_t batch = 1;
  int64_t image_size = 224;
  int64_t classes = 1000;
  DType dtype = DType::kFloat32;  // of the data, and so of every parameter
  double dropout = 0.2;           // before the classifier, where the network has one (MobileNet-V3)
  // End in SoftmaxOutput with a "softmax_label" input (batch) for training, not in the logits.
  bool softmax_output = false;
};

// The demo network of examples/train_fashion_mnist: two 5x5 convolutions (32 and 64 filters,
// each followed by BatchNorm when asked, ReLU and 2x2 max pooling), FC 1024, FC 10, SoftmaxOutput.
Graph FashionMnistNet(int64_t batch, bool batchnorm);

// ResNet v1 (He et al. 2015) with BatchNorm: a 7x7/2 stem and 3x3/2 max pool, four stages of
// basic blocks (ResNet-18: 2-2-2-2) or bottleneck blocks (ResNet-50: 3-4-6-3), global average
// pooling and the classifier.
Graph ResNet18(const ImageNetOptions& options = {});
Graph ResNet50(const ImageNetOptions& options = {});

// MobileNet-V3-Small as torchvision builds it (2,542,856 parameters at 1000
// classes): a 3x3/2 stem with hard swish, eleven inverted-residual blocks (1x1 expansion, kxk
// depthwise, squeeze-excitation gated by a hard sigmoid where torchvision has it, 1x1 projection,
// the input added back when the shape allows), a 1x1 conv to 576 channels, global average
// pooling, FC 1024 with hard swish, dropout and the classifier. Convolutions carry no bias
// (BatchNorm follows, eps 1e-3) except the squeeze-excitation's.
Graph MobileNetV3Small(const ImageNetOptions& options = {});

}  // namespace mxlite
