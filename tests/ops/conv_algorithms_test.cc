// The CPU convolution algorithms (ops/cpu/conv_algorithms.h) against im2col_gemm, the reference
// (itself checked against finite differences in convolution_test.cc): every algorithm, direction
// and element type on every case it claims; Supports() compared with the expected claims both
// ways; WorkspaceBytes compared with what Run took from its ScratchSpace; refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "ops/cpu/avx512.h"
#include "ops/cpu/conv_algorithms.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/parallel.h"
#include "tests/ops/reference.h"

namespace mxlite::cpu {
namespace {

struct ConvCase {
  std::string name;
  int64_t batch, in_channels, out_channels, groups, height, width, kernel, stride, pad, dilate;

  ConvGeometry Geometry(ConvLayout layout = ConvLayout::kNCHW) const {
    ConvGeometry g;
    g.batch = batch;
    g.in_channels = in_channels;
    g.out_channels = out_channels;
    g.groups = groups;
    g.in_h = height;
    g.in_w = width;
    g.kernel_h = g.kernel_w = kernel;
    g.stride_h = g.stride_w = stride;
    g.pad_h = g.pad_w = pad;
    g.dilate_h = g.dilate_w = dilate;
    g.out_h = (height + 2 * pad - dilate * (kernel - 1) - 1) / stride + 1;
    g.out_w = (width + 2 * pad - dilate * (kernel - 1) - 1) / stride + 1;
    g.layout = layout;
    return g;
  }
};

// name, N, C, O, groups, H, W, kernel, stride, pad, dilate. Odd sizes put partial Winograd tiles
// on the right and bottom edges.
const std::vector<ConvCase> kCases = {
    {"3x3_p1_7x9", 1, 4, 6, 1, 7, 9, 3, 1, 1, 1},
    {"3x3_p0_batch3", 3, 3, 5, 1, 6, 5, 3, 1, 0, 1},
    {"3x3_p2_5x11", 1, 5, 4, 1, 5, 11, 3, 1, 2, 1},
    {"3x3_p1_groups2_batch3", 3, 4, 6, 2, 9, 6, 3, 1, 1, 1},
    {"3x3_p1_2x3", 1, 2, 3, 1, 2, 3, 3, 1, 1, 1},
    {"3x3_p3", 1, 2, 2, 1, 4, 5, 3, 1, 3, 1},
    {"3x3_p1_13x13_16to8", 1, 16, 8, 1, 13, 13, 3, 1, 1, 1},
    // Several 16-tile blocks of the fused Winograd kernel (blocks spanning two images, a partial
    // last block), output channels over several 6-row panels, channel counts that are not
    // multiples of the 8-lane vectors.
    {"3x3_p1_batch2_19x22_11to13", 2, 11, 13, 1, 19, 22, 3, 1, 1, 1},
    {"3x3_p1_groups3_batch2_10x9", 2, 15, 21, 3, 10, 9, 3, 1, 1, 1},
    {"3x3_p0_batch5_4x4_9to7", 5, 9, 7, 1, 4, 4, 3, 1, 0, 1},
    {"1x1_batch3", 3, 8, 5, 1, 5, 7, 1, 1, 0, 1},
    {"1x1_groups2", 1, 6, 4, 2, 3, 5, 1, 1, 0, 1},
    {"1x1_stride2", 1, 4, 3, 1, 7, 7, 1, 2, 0, 1},
    {"1x1_pad1", 1, 4, 3, 1, 4, 5, 1, 1, 1, 1},
    {"depthwise_3x3_p1_batch3", 3, 6, 6, 6, 7, 8, 3, 1, 1, 1},
    {"depthwise_x2_5x5_s2_p2_d2", 1, 3, 6, 3, 11, 9, 5, 2, 2, 2},
    {"depthwise_3x3_s2_p0_batch3", 3, 4, 4, 4, 9, 10, 3, 2, 0, 1},
    {"depthwise_1ch_x3", 1, 1, 3, 1, 6, 6, 3, 1, 1, 1},
    // Channel counts over the AVX2 kernel's 8-lane vectors (with a scalar tail), output rows long
    // enough for its 4-pixel tiles between the padded edges, stride 2 and dilation.
    {"depthwise_3x3_p1_20ch_batch2_13x11", 2, 20, 20, 20, 13, 11, 3, 1, 1, 1},
    {"depthwise_3x3_s2_p1_16ch_14x15", 1, 16, 16, 16, 14, 15, 3, 2, 1, 1},
    {"depthwise_5x5_d2_p4_8ch_12x17", 1, 8, 8, 8, 12, 17, 5, 1, 4, 2},
    // Rows long enough for the 3-wide kernel's 8-pixel sliding tiles at stride 1 and 2, then a
    // 4-pixel tile and lone edge pixels; 24 channels: three vectors.
    {"depthwise_3x3_p1_24ch_6x30", 1, 24, 24, 24, 6, 30, 3, 1, 1, 1},
    {"depthwise_3x3_s2_p1_24ch_batch2_7x53", 2, 24, 24, 24, 7, 53, 3, 2, 1, 1},
    // 7 output rows do not halve: two threads take 16-channel slices of every row instead.
    {"depthwise_3x3_p1_32ch_7x7", 1, 32, 32, 32, 7, 7, 3, 1, 1, 1},
    // Edge pixels four vectors at a time, then one, then a scalar tail (44 = 4 * 8 + 8 + 4), in
    // channel slices of 16 on two threads (slices that start mid-group).
    {"depthwise_3x3_p1_44ch_batch2_7x7", 2, 44, 44, 44, 7, 7, 3, 1, 1, 1},
    {"depthwise_3x3_s2_p1_72ch_14x14", 1, 72, 72, 72, 14, 14, 3, 2, 1, 1},
    {"5x5_s2_p2", 1, 3, 4, 1, 9, 8, 5, 2, 2, 1},
    {"3x3_dilate2", 1, 3, 2, 1, 8, 7, 3, 1, 2, 2},
    // A ResNet-style stem (several 16-column chunks, a partial last one, 13 output channels: two
    // blocks of 6 and one of 1), three phases with dilation, and a reduction too long for
    // direct_nchw (32 * 9 = 288 > 256).
    {"7x7_s2_p3_batch2_37x41_3to13", 2, 3, 13, 1, 37, 41, 7, 2, 3, 1},
    {"3x3_s3_p1_d2_batch2_20x35", 2, 2, 7, 1, 20, 35, 3, 3, 1, 2},
    {"3x3_p1_32to4", 1, 32, 4, 1, 6, 5, 3, 1, 1, 1},
    {"3x3_p1_64to8", 1, 64, 8, 1, 6, 7, 3, 1, 1, 1},  // a reduction of 576: past direct_nchw's 512
    // An NHWC stem for direct_nhwc: a full 32-channel block plus one more vector, rows of an
    // 8-pixel tile and a 1-pixel rest (AVX2: 3-, 3-, 2- and 1-pixel tiles), padding on every side;
    // 13 outputs (a partial vector); and a row of two whole 8-pixel tiles (a 7x7 stride-2 stem).
    {"3x3_s2_p1_batch2_15x17_3to40", 2, 3, 40, 1, 15, 17, 3, 2, 1, 1},
    {"5x5_s1_p2_d2_11x10_2to13", 1, 2, 13, 1, 11, 10, 5, 1, 2, 2},
    {"7x7_s2_p3_9x32_3to64", 1, 3, 64, 1, 9, 32, 7, 2, 3, 1},
    // Multiples of 16 channels for NCHW16c: rows of two full 14-pixel tiles and a rest, an odd
    // number of output blocks (a pair and a single), strides, dilation, 1x1, padding so wide that
    // corner windows read nothing, and depthwise rows of 8-pixel tiles with edges.
    {"b16_3x3_p1_batch2_9x30_32to48", 2, 32, 48, 1, 9, 30, 3, 1, 1, 1},
    {"b16_1x1_batch2_5x6_16to32", 2, 16, 32, 1, 5, 6, 1, 1, 0, 1},
    // A pointwise layer on rows narrower than a tile, computed as one row of 49 pixels (three
    // 14-pixel tiles and a rest), 80 outputs (two pairs of blocks and a single).
    {"b16_1x1_batch2_7x7_48to80", 2, 48, 80, 1, 7, 7, 1, 1, 0, 1},
    {"b16_3x3_s2_p2_d2_11x12_16to16", 1, 16, 16, 1, 11, 12, 3, 2, 2, 2},
    {"b16_3x3_p3_4x5_16to32", 1, 16, 32, 1, 4, 5, 3, 1, 3, 1},
    {"b16_1x1_s2_9x9_32to16", 1, 32, 16, 1, 9, 9, 1, 2, 0, 1},
    // Strided rows long enough for whole 14-pixel tiles at stride 2 (its own tiles) and a rest;
    // stride 3 (the tiles of any stride).
    {"b16_3x3_s2_p1_5x33_32to48", 1, 32, 48, 1, 5, 33, 3, 2, 1, 1},
    {"b16_3x3_s3_p1_7x47_16to32", 1, 16, 32, 1, 7, 47, 3, 3, 1, 1},
    {"b16_depthwise_3x3_s2_p1_32ch_13x15", 1, 32, 32, 32, 13, 15, 3, 2, 1, 1},
    {"b16_depthwise_5x5_d2_p4_batch2_16ch_12x17", 2, 16, 16, 16, 12, 17, 5, 1, 4, 2},
    // Wide rows: the edge pixels run alone instead of on a width-padded copy.
    {"b16_depthwise_3x3_p1_16ch_5x40", 1, 16, 16, 16, 5, 40, 3, 1, 1, 1},
    // Sliding tiles of 7- and 5-wide kernels (ConvNeXt's, EfficientNet's): whole 8-pixel tiles,
    // a narrower rest and edges; stride 2.
    {"b16_depthwise_7x7_p3_batch2_32ch_9x45", 2, 32, 32, 32, 9, 45, 7, 1, 3, 1},
    {"b16_depthwise_5x5_s2_p2_16ch_11x41", 1, 16, 16, 16, 11, 41, 5, 2, 2, 1},
    // Groups of whole blocks: pairs of output blocks within a group (2 per group), single blocks
    // (1 and 3 per group, where a pair would take two groups), several input blocks per group.
    {"b16_3x3_p1_groups2_batch2_7x9_32to64", 2, 32, 64, 2, 7, 9, 3, 1, 1, 1},
    {"b16_3x3_s2_p1_groups3_9x8_48to48", 1, 48, 48, 3, 9, 8, 3, 2, 1, 1},
    {"b16_1x1_groups2_5x6_64to96", 1, 64, 96, 2, 5, 6, 1, 1, 0, 1},
    // Groups inside blocks for grouped_nchw16c: 8 channels (two groups a block; a 14-pixel tile, a
    // rest, edges; stride 2), 4 (RegNet/ResNeXt-like), 2 with dilation and wide padding; and
    // filters that differ from the channels (no claim).
    {"b16_3x3_p1_groups6_batch2_9x19_48to48", 2, 48, 48, 6, 9, 19, 3, 1, 1, 1},
    {"b16_3x3_s2_p1_groups4_11x12_32to32", 1, 32, 32, 4, 11, 12, 3, 2, 1, 1},
    {"b16_3x3_p1_groups8_7x7_32to32", 1, 32, 32, 8, 7, 7, 3, 1, 1, 1},
    {"b16_5x5_p4_d2_groups8_10x9_16to16", 1, 16, 16, 8, 10, 9, 5, 1, 4, 2},
    {"b16_3x3_p1_groups4_6x7_32to64", 1, 32, 64, 4, 6, 7, 3, 1, 1, 1},
    // Groups of 8 and 2 at channel counts off 16 for grouped_nhwc (RegNet-Y's 104 and 440): a
    // masked last vector, 8-pixel tiles and single ones, edges, stride 2.
    {"groups13_3x3_s2_p1_batch2_9x23_104to104", 2, 104, 104, 13, 9, 23, 3, 2, 1, 1},
    {"groups5_3x3_p1_7x20_40to40", 1, 40, 40, 5, 7, 20, 3, 1, 1, 1},
    {"groups3_5x5_p2_d2_6x13_6to6", 1, 6, 6, 3, 6, 13, 5, 1, 2, 2},
    {"b16_5x5_p2_groups6_9x20_48to48", 1, 48, 48, 6, 9, 20, 5, 1, 2, 1},
};

const std::set<std::string> kAllCases = [] {
  std::set<std::string> names;
  for (const ConvCase& c : kCases) names.insert(c.name);
  return names;
}();

const std::set<std::string> kWinogradForward = {"3x3_p1_7x9",
                                                "3x3_p0_batch3",
                                                "3x3_p2_5x11",
                                                "3x3_p1_groups2_batch3",
                                                "3x3_p1_2x3",
                                                "3x3_p3",
                                                "3x3_p1_13x13_16to8",
                                                "depthwise_3x3_p1_batch3",
                                                "depthwise_1ch_x3",
                                                "depthwise_3x3_p1_20ch_batch2_13x11",
                                                "depthwise_3x3_p1_24ch_6x30",
                                                "3x3_p1_batch2_19x22_11to13",
                                                "3x3_p1_groups3_batch2_10x9",
                                                "3x3_p0_batch5_4x4_9to7",
                                                "3x3_p1_32to4",
                                                "3x3_p1_64to8",
                                                "depthwise_3x3_p1_32ch_7x7",
                                                "depthwise_3x3_p1_44ch_batch2_7x7",
                                                "b16_3x3_p1_batch2_9x30_32to48",
                                                "b16_3x3_p3_4x5_16to32",
                                                "b16_depthwise_3x3_p1_16ch_5x40",
                                                "b16_3x3_p1_groups2_batch2_7x9_32to64",
                                                "b16_3x3_p1_groups6_batch2_9x19_48to48",
                                                "b16_3x3_p1_groups8_7x7_32to32",
                                                "b16_3x3_p1_groups4_6x7_32to64",
                                                "groups5_3x3_p1_7x20_40to40"};
const std::set<std::string> kDepthwise = {"depthwise_3x3_p1_batch3",
                                          "depthwise_x2_5x5_s2_p2_d2",
                                          "depthwise_3x3_s2_p0_batch3",
                                          "depthwise_1ch_x3",
                                          "depthwise_3x3_p1_20ch_batch2_13x11",
                                          "depthwise_3x3_s2_p1_16ch_14x15",
                                          "depthwise_5x5_d2_p4_8ch_12x17",
                                          "depthwise_3x3_p1_24ch_6x30",
                                          "depthwise_3x3_s2_p1_24ch_batch2_7x53",
                                          "depthwise_3x3_p1_32ch_7x7",
                                          "depthwise_3x3_p1_44ch_batch2_7x7",
                                          "depthwise_3x3_s2_p1_72ch_14x14",
                                          "b16_depthwise_3x3_s2_p1_32ch_13x15",
                                          "b16_depthwise_5x5_d2_p4_batch2_16ch_12x17",
                                          "b16_depthwise_3x3_p1_16ch_5x40",
                                          "b16_depthwise_7x7_p3_batch2_32ch_9x45",
                                          "b16_depthwise_5x5_s2_p2_16ch_11x41"};
// What NCHW16c's algorithms claim (forward only): groups with channels and filters in whole
// blocks, and the depthwise layers whose channels are.
const std::set<std::string> kBlockedDirect = {"b16_3x3_p1_batch2_9x30_32to48",
                                              "b16_1x1_batch2_5x6_16to32",
                                              "b16_1x1_batch2_7x7_48to80",
                                              "b16_3x3_s2_p2_d2_11x12_16to16",
                                              "b16_3x3_p3_4x5_16to32",
                                              "b16_1x1_s2_9x9_32to16",
                                              "b16_3x3_p1_groups2_batch2_7x9_32to64",
                                              "b16_3x3_s2_p1_groups3_9x8_48to48",
                                              "b16_1x1_groups2_5x6_64to96",
                                              "b16_3x3_s2_p1_5x33_32to48",
                                              "b16_3x3_s3_p1_7x47_16to32"};
const std::set<std::string> kBlockedLaneGroups = {
    "b16_3x3_p1_groups6_batch2_9x19_48to48", "b16_3x3_s2_p1_groups4_11x12_32to32",
    "b16_3x3_p1_groups8_7x7_32to32", "b16_5x5_p4_d2_groups8_10x9_16to16",
    "b16_5x5_p2_groups6_9x20_48to48"};
const std::set<std::string> kBlockedDepthwise = {
    "depthwise_3x3_s2_p1_16ch_14x15",     "depthwise_3x3_p1_32ch_7x7",
    "b16_depthwise_3x3_s2_p1_32ch_13x15", "b16_depthwise_5x5_d2_p4_batch2_16ch_12x17",
    "b16_depthwise_3x3_p1_16ch_5x40",     "b16_depthwise_7x7_p3_batch2_32ch_9x45",
    "b16_depthwise_5x5_s2_p2_16ch_11x41"};

// The cases each algorithm must claim (and no others), per direction.
std::set<std::string> ExpectedClaims(std::string_view algorithm, ConvLayout layout,
                                     ConvDirection direction) {
  if (layout == ConvLayout::kNCHW16c) {
    if (direction != ConvDirection::kForward) return {};
    if (algorithm == "direct_nchw16c") return kBlockedDirect;
    if (algorithm == "depthwise_direct") return kBlockedDepthwise;
    if (algorithm == "grouped_nchw16c") return kBlockedLaneGroups;
  }
  if (algorithm == "im2col_gemm" || algorithm == "im2row_gemm") return kAllCases;
  if (algorithm == "gemm_1x1") {
    return {"1x1_batch3", "1x1_groups2", "b16_1x1_batch2_5x6_16to32", "b16_1x1_batch2_7x7_48to80",
            "b16_1x1_groups2_5x6_64to96"};
  }
  if (algorithm == "depthwise_direct") return kDepthwise;
  if (algorithm == "grouped_nhwc") {
    if (direction != ConvDirection::kForward) return {};
    std::set<std::string> claims;  // groups of 2, 4 or 8 channels with as many filters
    for (const ConvCase& c : kCases) {
      const int64_t width = c.groups > 1 ? c.in_channels / c.groups : 0;
      if ((width == 2 || width == 4 || width == 8) && c.out_channels == c.in_channels) {
        claims.insert(c.name);
      }
    }
    return claims;
  }
  if (algorithm == "direct_nchw") {
    if (direction != ConvDirection::kForward) return {};
    std::set<std::string> claims = kAllCases;
    for (const ConvCase& c : kCases) {
      if (c.in_channels / c.groups * c.kernel * c.kernel > 512) claims.erase(c.name);
    }
    return claims;
  }
  if (algorithm == "direct_nhwc") {
    if (direction != ConvDirection::kForward) return {};
    std::set<std::string> claims = kAllCases;
    for (const ConvCase& c : kCases) {
      if (c.groups != 1) claims.erase(c.name);  // one group only
    }
    for (const ConvCase& c : kCases) {
      if (c.in_channels * c.kernel * c.kernel > 256) claims.erase(c.name);
    }
    return claims;
  }
  if (algorithm == "winograd_2x2_3x3" || algorithm == "winograd_4x4_3x3") {
    if (direction == ConvDirection::kBackwardFilter) return {};
    std::set<std::string> claims = kWinogradForward;
    if (direction == ConvDirection::kBackwardData) {  // needs pad <= 2
      claims.erase("3x3_p3");
      claims.erase("b16_3x3_p3_4x5_16to32");
    }
    return claims;
  }
  ADD_FAILURE() << "no expected claims for " << algorithm;
  return {};
}

constexpr ConvDirection kDirections[] = {ConvDirection::kForward, ConvDirection::kBackwardData,
                                         ConvDirection::kBackwardFilter};

template <typename T>
std::vector<T> RandomValues(int64_t count, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<T> values(static_cast<size_t>(count));
  for (T& value : values) value = static_cast<T>(uniform(random));
  return values;
}

// The inputs of every direction in NCHW / OIHW.
template <typename T>
struct ConvInputs {
  std::vector<T> data, weight, bias, output_grad;

  explicit ConvInputs(const ConvGeometry& g)
      : data(RandomValues<T>(g.batch * g.in_channels * g.in_spatial(), 1)),
        weight(RandomValues<T>(g.out_channels * g.patch_size(), 2)),
        bias(RandomValues<T>(g.out_channels, 3)),
        output_grad(RandomValues<T>(g.batch * g.out_channels * g.out_spatial(), 4)) {}
};

// Runs `algorithm` in its own layout on NCHW inputs and returns the result in NCHW / OIHW, after
// checking that Run took exactly WorkspaceBytes from its scratch space (at most that with a
// prepared weight). `clamp` and `with_bias`
// shape the forward's epilogue.
template <typename T>
struct Epilogues {
  T low = -std::numeric_limits<T>::infinity();
  T high = std::numeric_limits<T>::infinity();
  bool with_bias = true;
  const std::vector<T>* residual = nullptr;  // NCHW, the output's shape; or none
};

template <typename T>
std::vector<T> RunInNCHW(const ConvAlgorithm& algorithm, ConvDirection direction,
                         const ConvGeometry& nchw, const ConvInputs<T>& in,
                         const Epilogues<T>& epilogue = {}, bool prepare_weight = false) {
  const bool last = algorithm.layout() == ConvLayout::kNHWC;
  const bool blocked = algorithm.layout() == ConvLayout::kNCHW16c;
  ConvGeometry g = nchw;
  g.layout = algorithm.layout();
  const int64_t n = g.batch, c = g.in_channels, o = g.out_channels;
  auto to_layout = [&](const std::vector<T>& x, int64_t outer, int64_t channels, int64_t spatial) {
    if (blocked) return testing::MoveToBlocks(x, outer, channels, spatial, true);
    return last ? testing::MoveChannels(x, outer, channels, spatial, true) : x;
  };
  const std::vector<T> data = to_layout(in.data, n, c, g.in_spatial());
  const std::vector<T> weight =  // OIHW in NCHW16c too
      last
          ? testing::MoveChannels(in.weight, o, g.in_channels_per_group(), g.kernel_spatial(), true)
          : in.weight;
  const std::vector<T> output_grad = to_layout(in.output_grad, n, o, g.out_spatial());
  const std::vector<T> residual = epilogue.residual != nullptr
                                      ? to_layout(*epilogue.residual, n, o, g.out_spatial())
                                      : std::vector<T>{};

  int64_t outer = 0, channels = 0, spatial = 0;
  switch (direction) {
    case ConvDirection::kForward:
      outer = n, channels = o, spatial = g.out_spatial();
      break;
    case ConvDirection::kBackwardData:
      outer = n, channels = c, spatial = g.in_spatial();
      break;
    case ConvDirection::kBackwardFilter:
      outer = o, channels = g.in_channels_per_group(), spatial = g.kernel_spatial();
      break;
  }
  // Pre-filled with garbage: every direction must overwrite its destination.
  std::vector<T> result(static_cast<size_t>(outer * channels * spatial), T(1e6));
  ConvTensors<T> tensors;
  tensors.data = data.data();
  tensors.weight = weight.data();
  tensors.bias = epilogue.with_bias ? in.bias.data() : nullptr;
  tensors.clamp_low = epilogue.low;
  tensors.clamp_high = epilogue.high;
  if (epilogue.residual != nullptr) tensors.residual = residual.data();
  tensors.output_grad = output_grad.data();
  tensors.output = tensors.data_grad = tensors.weight_grad = result.data();
  std::unique_ptr<PreparedConvWeight> prepared;
  if constexpr (std::is_same_v<T, float>) {
    if (prepare_weight) {
      prepared = algorithm.PrepareWeight(g, weight.data());
      tensors.prepared_weight = prepared.get();
    }
  }
  ScratchSpace scratch(Context::CPU());
  algorithm.Run(direction, g, tensors, scratch);
  const size_t workspace = algorithm.WorkspaceBytes(g, direction, DTypeOf<T>::value);
  if (prepared != nullptr) {
    EXPECT_LE(scratch.bytes_requested(), workspace) << "workspace of " << algorithm.name();
  } else {
    EXPECT_EQ(scratch.bytes_requested(), workspace) << "workspace of " << algorithm.name();
  }
  if (blocked) return testing::MoveToBlocks(result, outer, channels, spatial, false);
  return last ? testing::MoveChannels(result, outer, channels, spatial, false) : result;
}

// max |actual - expected| relative to max(1, max |expected|).
template <typename T>
double RelativeError(const std::vector<T>& actual, const std::vector<T>& expected) {
  double diff = 0, scale = 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(actual[i]) - expected[i]));
    scale = std::max(scale, std::abs(static_cast<double>(expected[i])));
  }
  return diff / scale;
}

double Tolerance(std::string_view algorithm, bool is_float) {
  if (!is_float) return 1e-9;
  return algorithm == "winograd_4x4_3x3" ? 1e-3 : 1e-4;  // F(4x4) amplifies rounding
}

template <typename T>
void CheckAgainstIm2Col(int threads) {
  ScopedIntraOpThreads scoped(threads);
  const ConvAlgorithm* reference = FindCpuConvAlgorithm("im2col_gemm", ConvLayout::kNCHW);
  ASSERT_NE(reference, nullptr);
  for (const ConvAlgorithm* algorithm : CpuConvAlgorithms()) {
    for (ConvDirection direction : kDirections) {
      std::set<std::string> claimed;
      for (const ConvCase& c : kCases) {
        ConvGeometry g = c.Geometry(algorithm->layout());
        if (!algorithm->Supports(g, direction)) continue;
        claimed.insert(c.name);
        SCOPED_TRACE(std::string(algorithm->name()) + " " +
                     ActivationLayoutName(algorithm->layout()) + " " +
                     ConvDirectionName(direction) + " " + c.name);
        const ConvGeometry nchw = c.Geometry();
        const ConvInputs<T> inputs(nchw);
        const std::vector<T> expected = RunInNCHW(*reference, direction, nchw, inputs);
        const std::vector<T> actual = RunInNCHW(*algorithm, direction, nchw, inputs);
        EXPECT_LE(RelativeError(actual, expected),
                  Tolerance(algorithm->name(), std::is_same_v<T, float>));
      }
      EXPECT_EQ(claimed, ExpectedClaims(algorithm->name(), algorithm->layout(), direction))
          << algorithm->name() << " " << ActivationLayoutName(algorithm->layout()) << " "
          << ConvDirectionName(direction);
    }
  }
}

// The fused activation (ConvTensors::clamp_low / clamp_high): every algorithm's forward, with
// and without bias, equals the reference's unclamped output clamped afterwards, for bounds that
// cut both tails (clip), only the lower one (relu) and a ReLU6-like pair.
template <typename T>
void CheckClampedForward(int threads) {
  ScopedIntraOpThreads scoped(threads);
  const ConvAlgorithm* reference = FindCpuConvAlgorithm("im2col_gemm", ConvLayout::kNCHW);
  const T inf = std::numeric_limits<T>::infinity();
  const std::pair<T, T> bounds[] = {{T(-0.3), T(0.5)}, {T(0), inf}, {T(0), T(0.6)}};
  for (const ConvAlgorithm* algorithm : CpuConvAlgorithms()) {
    for (const ConvCase& c : kCases) {
      const ConvGeometry nchw = c.Geometry();
      if (!algorithm->Supports(c.Geometry(algorithm->layout()), ConvDirection::kForward)) {
        continue;
      }
      const ConvInputs<T> inputs(nchw);
      for (bool with_bias : {true, false}) {
        Epilogues<T> plain;
        plain.with_bias = with_bias;
        const std::vector<T> unclamped =
            RunInNCHW(*reference, ConvDirection::kForward, nchw, inputs, plain);
        for (const auto& [low, high] : bounds) {
          SCOPED_TRACE(std::string(algorithm->name()) + " " +
                       ActivationLayoutName(algorithm->layout()) + " " + c.name + " bias " +
                       std::to_string(with_bias) + " clamp [" + std::to_string(low) + ", " +
                       std::to_string(high) + "]");
          std::vector<T> expected = unclamped;
          int clamped = 0;
          for (T& value : expected) {
            const T bounded = std::min(std::max(value, low), high);
            clamped += bounded != value;
            value = bounded;
          }
          EXPECT_GT(clamped, 0) << "the bounds must cut some outputs";
          const Epilogues<T> epilogue{low, high, with_bias};
          const std::vector<T> actual =
              RunInNCHW(*algorithm, ConvDirection::kForward, nchw, inputs, epilogue);
          EXPECT_LE(RelativeError(actual, expected),
                    Tolerance(algorithm->name(), std::is_same_v<T, float>));
          for (size_t i = 0; i < actual.size(); ++i) {
            ASSERT_TRUE(actual[i] >= low && actual[i] <= high)
                << "element " << i << " = " << actual[i];
          }
        }
      }
    }
  }
}

// The fused residual (ConvTensors::residual): every algorithm's forward, with and without bias and
// clamp, gives exactly the bits of its own plain forward with the residual added and the clamp
// applied afterwards, whether its store adds the residual (FusesResidual: the GEMM paths) or Run
// adds it in a pass after the kernel.
template <typename T>
void CheckResidualForward(int threads) {
  ScopedIntraOpThreads scoped(threads);
  const T inf = std::numeric_limits<T>::infinity();
  int fused_in_store = 0;
  for (const ConvAlgorithm* algorithm : CpuConvAlgorithms()) {
    for (const ConvCase& c : kCases) {
      const ConvGeometry nchw = c.Geometry();
      if (!algorithm->Supports(c.Geometry(algorithm->layout()), ConvDirection::kForward)) {
        continue;
      }
      fused_in_store += algorithm->FusesResidual() ? 1 : 0;
      const ConvInputs<T> inputs(nchw);
      const std::vector<T> residual =
          RandomValues<T>(nchw.batch * nchw.out_channels * nchw.out_spatial(), 5);
      for (bool with_bias : {true, false}) {
        for (T low : {-inf, T(0)}) {
          SCOPED_TRACE(std::string(algorithm->name()) + " " +
                       ActivationLayoutName(algorithm->layout()) + " " + c.name + " bias " +
                       std::to_string(with_bias) + " low " + std::to_string(low));
          Epilogues<T> plain;
          plain.with_bias = with_bias;
          std::vector<T> expected =
              RunInNCHW(*algorithm, ConvDirection::kForward, nchw, inputs, plain);
          for (size_t i = 0; i < expected.size(); ++i) {
            expected[i] = std::max(expected[i] + residual[i], low);
          }
          Epilogues<T> fused = plain;
          fused.low = low;
          fused.residual = &residual;
          EXPECT_EQ(RunInNCHW(*algorithm, ConvDirection::kForward, nchw, inputs, fused), expected);
        }
      }
    }
  }
  EXPECT_GT(fused_in_store, 0) << "no algorithm added the residual in its store";
}

TEST(ConvAlgorithms, ResidualForwardFloat32) { CheckResidualForward<float>(2); }
TEST(ConvAlgorithms, ResidualForwardFloat32OnOneThread) { CheckResidualForward<float>(1); }
TEST(ConvAlgorithms, ResidualForwardFloat64) { CheckResidualForward<double>(2); }

// A 3x3 problem whose tensors are set for every direction, for the forward-only checks: add a
// clamp or a residual, then run a backward direction.
struct EveryDirectionCall {
  ConvGeometry g = ConvCase{"3x3", 1, 4, 4, 1, 6, 6, 3, 1, 1, 1}.Geometry();
  ConvInputs<float> in{g};
  std::vector<float> buffer = std::vector<float>(static_cast<size_t>(
      g.batch * g.in_channels * g.in_spatial() + g.out_channels * g.patch_size()));
  ConvTensors<float> tensors;
  ScratchSpace scratch{Context::CPU()};
  const ConvAlgorithm& im2col = *FindCpuConvAlgorithm("im2col_gemm", ConvLayout::kNCHW);

  EveryDirectionCall() {
    tensors.data = in.data.data();
    tensors.weight = in.weight.data();
    tensors.output_grad = in.output_grad.data();
    tensors.data_grad = tensors.weight_grad = tensors.output = buffer.data();
  }
  // Both backward directions throw an error that contains `message`.
  void ExpectBackwardRefused(const std::string& what, const std::string& message) {
    for (ConvDirection direction : {ConvDirection::kBackwardData, ConvDirection::kBackwardFilter}) {
      try {
        im2col.Run(direction, g, tensors, scratch);
        ADD_FAILURE() << "a " << ConvDirectionName(direction) << " with " << what << " ran";
      } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find(message), std::string::npos) << error.what();
      }
    }
  }
};

// A residual belongs to the forward: the other directions refuse it by name.
TEST(ConvAlgorithms, ResidualOnlyOnTheForward) {
  EveryDirectionCall call;
  call.tensors.residual = call.in.output_grad.data();
  call.ExpectBackwardRefused("a residual", "a residual applies to the forward only");
}

// A weight prepared once (PrepareWeight, as inference keeps it) gives the forward's bits without
// it: every algorithm, every case it claims, bias and clamp, 1 and 2 threads. Exactly the GEMM
// paths (only under the packed AVX2 GEMM), the Winograd ones (their AVX2 kernel's transformed
// weight), depthwise_direct NHWC and the NCHW16c algorithms prepare something.
TEST(ConvAlgorithms, PreparedWeightGivesTheSameBits) {
  const std::set<std::string> avx2_paths = {"im2col_gemm", "im2row_gemm", "gemm_1x1",
                                             "winograd_2x2_3x3", "winograd_4x4_3x3"};
  for (int threads : {1, 2}) {
    ScopedIntraOpThreads scoped(threads);
    for (const ConvAlgorithm* algorithm : CpuConvAlgorithms()) {
      for (const ConvCase& c : kCases) {
        const ConvGeometry g = c.Geometry(algorithm->layout());
        if (!algorithm->Supports(g, ConvDirection::kForward)) {
          EXPECT_THROW(algorithm->PrepareWeight(g, std::vector<float>(1024).data()), Error);
          continue;
        }
        SCOPED_TRACE(std::string(algorithm->name()) + " " +
                     ActivationLayoutName(algorithm->layout()) + " " + c.name + " threads " +
                     std::to_string(threads));
        const ConvGeometry nchw = c.Geometry();
        const ConvInputs<float> inputs(nchw);
        const std::vector<float> weight(
            static_cast<size_t>(g.out_channels * g.in_channels_per_group() * g.kernel_spatial()));
        const bool prepares =
            (avx2_paths.count(std::string(algorithm->name())) == 1 && CpuSupportsAvx2Fma()) ||
            (algorithm->name() == "depthwise_direct" && algorithm->layout() == ConvLayout::kNHWC) ||
            algorithm->name() == "grouped_nhwc" || algorithm->layout() == ConvLayout::kNCHW16c;
        EXPECT_EQ(algorithm->PrepareWeight(g, weight.data()) != nullptr, prepares);
        const Epilogues<float> epilogue{-0.4f, 0.9f, true};
        const std::vector<float> plain =
            RunInNCHW(*algorithm, ConvDirection::kForward, nchw, inputs, epilogue);
        const std::vector<float> prepared =
            RunInNCHW(*algorithm, ConvDirection::kForward, nchw, inputs, epilogue, true);
        ASSERT_EQ(plain.size(), prepared.size());
        for (size_t i = 0; i < plain.size(); ++i) {
          ASSERT_EQ(plain[i], prepared[i]) << "element " << i;
        }
      }
    }
  }
}

// A prepared weight is for the forward of the geometry it was made for.
TEST(ConvAlgorithms, PreparedWeightRefusedElsewhere) {
  if (!CpuSupportsAvx2Fma()) GTEST_SKIP() << "weights are prepared for the AVX2 GEMM only";
  const ConvAlgorithm* gemm = FindCpuConvAlgorithm("gemm_1x1", ConvLayout::kNHWC);
  ASSERT_NE(gemm, nullptr);
  const ConvCase& c = kCases[10];  // 1x1_batch3
  ASSERT_EQ(c.name, "1x1_batch3");
  ConvGeometry g = c.Geometry(ConvLayout::kNHWC);
  const ConvInputs<float> inputs(c.Geometry());
  std::vector<float> out(static_cast<size_t>(g.batch * g.out_channels * g.out_spatial()));
  const auto prepared = gemm->PrepareWeight(g, inputs.weight.data());
  ASSERT_NE(prepared, nullptr);
  ConvTensors<float> tensors;
  tensors.data = inputs.data.data();
  tensors.weight = inputs.weight.data();
  tensors.output_grad = out.data();
  tensors.data_grad = out.data();
  tensors.prepared_weight = prepared.get();
  ScratchSpace scratch(Context::CPU());
  EXPECT_THROW(gemm->Run(ConvDirection::kBackwardData, g, tensors, scratch), Error);
  // Another geometry (more output channels) than the one it was made for.
  ConvGeometry wider = g;
  wider.out_channels = 2 * g.out_channels;
  std::vector<float> wide_out(static_cast<size_t>(g.batch * wider.out_channels * g.out_spatial()));
  std::vector<float> wide_weight(static_cast<size_t>(wider.out_channels * g.in_channels));
  tensors.weight = wide_weight.data();
  tensors.output = wide_out.data();
  try {
    gemm->Run(ConvDirection::kForward, wider, tensors, scratch);
    FAIL() << "a prepared weight of another geometry was used";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("was not made for"), std::string::npos) << e.what();
  }
}

// Winograd's transformed weight likewise: another geometry's is refused by name, not read past
// its end.
TEST(ConvAlgorithms, WinogradTransformedWeightRefusedElsewhere) {
  if (!CpuSupportsAvx2Fma()) GTEST_SKIP() << "the transformed weight is the AVX2 kernel's";
  const ConvAlgorithm* winograd = FindCpuConvAlgorithm("winograd_4x4_3x3", ConvLayout::kNCHW);
  ASSERT_NE(winograd, nullptr);
  const ConvCase& c = kCases[0];  // 3x3_p1_7x9: 4 -> 6 channels
  ASSERT_EQ(c.name, "3x3_p1_7x9");
  const ConvGeometry g = c.Geometry();
  const ConvInputs<float> inputs(g);
  const auto prepared = winograd->PrepareWeight(g, inputs.weight.data());
  ASSERT_NE(prepared, nullptr);
  ConvGeometry wider = g;
  wider.out_channels = 4 * g.out_channels;  // 24 output channels: 4 panels of U instead of 1
  std::vector<float> weight(static_cast<size_t>(wider.out_channels * g.in_channels * 9));
  std::vector<float> out(static_cast<size_t>(wider.out_channels * g.out_spatial()));
  ConvTensors<float> tensors;
  tensors.data = inputs.data.data();
  tensors.weight = weight.data();
  tensors.output = out.data();
  tensors.prepared_weight = prepared.get();
  ScratchSpace scratch(Context::CPU());
  try {
    winograd->Run(ConvDirection::kForward, wider, tensors, scratch);
    FAIL() << "a transformed weight of another geometry was used";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("winograd_4x4_3x3: a prepared weight of"),
              std::string::npos)
        << e.what();
  }
}

TEST(ConvAlgorithms, ClampedForwardFloat32) { CheckClampedForward<float>(2); }
TEST(ConvAlgorithms, ClampedForwardFloat32OnOneThread) { CheckClampedForward<float>(1); }
TEST(ConvAlgorithms, ClampedForwardFloat64) { CheckClampedForward<double>(2); }

// A clamp belongs to the forward; the other directions and inverted bounds are refused by name.
TEST(ConvAlgorithms, ClampOnlyOnTheForward) {
  EveryDirectionCall call;
  call.tensors.clamp_low = 0.0f;
  call.ExpectBackwardRefused("a clamp", "forward only");
  call.tensors.clamp_low = 1.0f;
  call.tensors.clamp_high = 0.5f;
  try {
    call.im2col.Run(ConvDirection::kForward, call.g, call.tensors, call.scratch);
    FAIL() << "inverted clamp bounds ran";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("above its high bound"), std::string::npos)
        << error.what();
  }
}

TEST(ConvAlgorithms, Float64MatchesIm2Col) { CheckAgainstIm2Col<double>(2); }
TEST(ConvAlgorithms, Float32MatchesIm2Col) { CheckAgainstIm2Col<float>(2); }
TEST(ConvAlgorithms, Float64MatchesIm2ColOnOneThread) { CheckAgainstIm2Col<double>(1); }
TEST(ConvAlgorithms, Float32MatchesIm2ColOnOneThread) { CheckAgainstIm2Col<float>(1); }

// Winograd splits its work differently on 1 and 2 threads (tile blocks, output-channel panels);
// every value must still be computed the same way.
TEST(ConvAlgorithms, WinogradFloat32SameBitsOnOneAndTwoThreads) {
  const ConvCase shape{"batch2", 2, 11, 13, 1, 19, 22, 3, 1, 1, 1};
  const ConvGeometry g = shape.Geometry();
  const ConvInputs<float> inputs(g);
  for (const char* name : {"winograd_2x2_3x3", "winograd_4x4_3x3"}) {
    const ConvAlgorithm& winograd = *FindCpuConvAlgorithm(name, ConvLayout::kNCHW);
    for (ConvDirection direction : {ConvDirection::kForward, ConvDirection::kBackwardData}) {
      std::vector<float> results[2];
      for (int threads : {1, 2}) {
        ScopedIntraOpThreads scoped(threads);
        results[threads - 1] = RunInNCHW(winograd, direction, g, inputs);
      }
      EXPECT_EQ(results[0], results[1]) << name << " " << ConvDirectionName(direction);
    }
  }
}

// Winograd's products run two 6-row panels in AVX-512 registers where the GEMM uses AVX-512 tiles,
// one in AVX2 registers elsewhere (and for an odd panel left over): each sum is formed in the
// same order, so the output has the same bits either way (13 output channels: two panels and a
// partial third).
TEST(ConvAlgorithms, WinogradFloat32SameBitsWithAvx2AndAvx512Products) {
  if (!CpuSupportsAvx2Fma() || !CpuSupportsAvx512f()) {
    GTEST_SKIP() << "the AVX-512 products need avx512f, avx2 and fma";
  }
  const ConvCase shape{"batch2", 2, 11, 13, 1, 19, 22, 3, 1, 1, 1};
  const ConvGeometry g = shape.Geometry();
  const ConvInputs<float> inputs(g);
  for (const char* name : {"winograd_2x2_3x3", "winograd_4x4_3x3"}) {
    const ConvAlgorithm& winograd = *FindCpuConvAlgorithm(name, ConvLayout::kNCHW);
    std::vector<float> results[2];
    for (int wide = 0; wide < 2; ++wide) {
      SetGemmImplementation(wide ? GemmImplementation::kAvx512 : GemmImplementation::kAvx2Fma);
      results[wide] = RunInNCHW(winograd, ConvDirection::kForward, g, inputs);
    }
    SetGemmImplementation(GemmImplementation::kAuto);
    EXPECT_EQ(results[0], results[1]) << name;
  }
}

// The float32 forward of `name` (in `layout`) on `shape` gives the same bits on 1 and 2 threads.
void ExpectForwardSameBitsOnOneAndTwoThreads(const char* name, ConvLayout layout,
                                             const ConvCase& shape) {
  const ConvGeometry g = shape.Geometry();
  const ConvInputs<float> inputs(g);
  const ConvAlgorithm& algorithm = *FindCpuConvAlgorithm(name, layout);
  std::vector<float> results[2];
  for (int threads : {1, 2}) {
    ScopedIntraOpThreads scoped(threads);
    results[threads - 1] = RunInNCHW(algorithm, ConvDirection::kForward, g, inputs);
  }
  EXPECT_EQ(results[0], results[1]) << name;
}

// The AVX2 NHWC depthwise kernel: rows are tasks and every pixel sums in one order, whichever of
// its paths (4-pixel tile, checked edge pixel, scalar channel tail) computed it.
TEST(ConvAlgorithms, DepthwiseNhwcFloat32SameBitsOnOneAndTwoThreads) {
  ExpectForwardSameBitsOnOneAndTwoThreads("depthwise_direct", ConvLayout::kNHWC,
                                          {"dw", 2, 20, 20, 20, 13, 11, 3, 1, 1, 1});
}

// Threads share rows that do not divide evenly by channel slices (each a whole number of cache
// lines of every pixel), in any mix with row runs; the slices' bits are the whole row's.
TEST(ConvAlgorithms, DepthwiseNhwcChannelSlicesGiveTheSameBits) {
  const ConvAlgorithm& depthwise = *FindCpuConvAlgorithm("depthwise_direct", ConvLayout::kNHWC);
  for (const ConvCase& shape : {ConvCase{"7 rows, 3 slices", 1, 48, 48, 48, 7, 7, 3, 1, 1, 1},
                                ConvCase{"5 rows, stride 2", 1, 32, 32, 32, 9, 10, 3, 2, 1, 1},
                                ConvCase{"3 rows, 8 slices", 1, 128, 128, 128, 3, 5, 3, 1, 1, 1}}) {
    const ConvGeometry g = shape.Geometry();
    const ConvInputs<float> inputs(g);
    const Epilogues<float> epilogue{-0.4f, 0.9f, true};
    std::vector<float> one_thread;
    {
      ScopedIntraOpThreads scoped(1);
      one_thread = RunInNCHW(depthwise, ConvDirection::kForward, g, inputs, epilogue);
    }
    for (int threads : {2, 3, 4, 8}) {
      ScopedIntraOpThreads scoped(threads);
      EXPECT_EQ(RunInNCHW(depthwise, ConvDirection::kForward, g, inputs, epilogue), one_thread)
          << shape.name << ", " << threads << " threads";
    }
  }
}

// direct_nchw deals rows and channel blocks to threads; each value is summed the same way.
TEST(ConvAlgorithms, DirectFloat32SameBitsOnOneAndTwoThreads) {
  ExpectForwardSameBitsOnOneAndTwoThreads("direct_nchw", ConvLayout::kNCHW,
                                          {"stem", 2, 3, 13, 1, 37, 41, 7, 2, 3, 1});
}

// direct_nhwc deals output rows to threads; each value is summed the same way.
TEST(ConvAlgorithms, DirectNhwcFloat32SameBitsOnOneAndTwoThreads) {
  ExpectForwardSameBitsOnOneAndTwoThreads("direct_nhwc", ConvLayout::kNHWC,
                                          {"stem", 2, 3, 40, 1, 15, 17, 3, 2, 1, 1});
}

// The NCHW16c kernels deal (row, block pair) tasks to threads in runs, in either order (pairs
// outer when the weights outweigh an image: the second shape); each value is summed the same way.
TEST(ConvAlgorithms, Nchw16cFloat32SameBitsOnOneAndTwoThreads) {
  ExpectForwardSameBitsOnOneAndTwoThreads("direct_nchw16c", ConvLayout::kNCHW16c,
                                          {"rows", 2, 32, 48, 1, 9, 30, 3, 1, 1, 1});
  ExpectForwardSameBitsOnOneAndTwoThreads("direct_nchw16c", ConvLayout::kNCHW16c,
                                          {"pairs", 1, 64, 80, 1, 3, 5, 3, 1, 1, 1});
  ExpectForwardSameBitsOnOneAndTwoThreads("depthwise_direct", ConvLayout::kNCHW16c,
                                          {"dw", 2, 32, 32, 32, 13, 11, 3, 1, 1, 1});
  ExpectForwardSameBitsOnOneAndTwoThreads("grouped_nchw16c", ConvLayout::kNCHW16c,
                                          {"groups", 2, 32, 32, 8, 13, 11, 3, 1, 1, 1});
}

TEST(ConvAlgorithms, RegistryHasEveryNamedAlgorithmOncePerLayout) {
  std::set<std::pair<std::string, ConvLayout>> seen;
  for (const ConvAlgorithm* algorithm : CpuConvAlgorithms()) {
    EXPECT_TRUE(seen.insert({std::string(algorithm->name()), algorithm->layout()}).second)
        << algorithm->name();
    EXPECT_TRUE(algorithm->deterministic());
  }
  const std::pair<const char*, ConvLayout> expected[] = {
      {"im2col_gemm", ConvLayout::kNCHW},        {"im2row_gemm", ConvLayout::kNHWC},
      {"gemm_1x1", ConvLayout::kNCHW},           {"gemm_1x1", ConvLayout::kNHWC},
      {"winograd_2x2_3x3", ConvLayout::kNCHW},   {"winograd_4x4_3x3", ConvLayout::kNCHW},
      {"depthwise_direct", ConvLayout::kNCHW},   {"depthwise_direct", ConvLayout::kNHWC},
      {"direct_nchw", ConvLayout::kNCHW},        {"direct_nhwc", ConvLayout::kNHWC},
      {"direct_nchw16c", ConvLayout::kNCHW16c},  {"depthwise_direct", ConvLayout::kNCHW16c},
      {"grouped_nchw16c", ConvLayout::kNCHW16c}, {"grouped_nhwc", ConvLayout::kNHWC}};
  for (const auto& [name, layout] : expected) {
    const ConvAlgorithm* found = FindCpuConvAlgorithm(name, layout);
    ASSERT_NE(found, nullptr) << name;
    EXPECT_EQ(found->name(), name);
  }
  EXPECT_EQ(seen.size(), std::size(expected));
  EXPECT_EQ(FindCpuConvAlgorithm("winograd_2x2_3x3", ConvLayout::kNHWC), nullptr);
  EXPECT_EQ(FindCpuConvAlgorithm("fft", ConvLayout::kNCHW), nullptr);
  EXPECT_FALSE(FindCpuConvAlgorithm("winograd_4x4_3x3", ConvLayout::kNCHW)
                   ->HasDirection(ConvDirection::kBackwardFilter));
}

TEST(ConvAlgorithms, RefusesWhatItDoesNotSupport) {
  const ConvCase strided{"s2", 1, 4, 4, 1, 8, 8, 3, 2, 1, 1};
  const ConvGeometry g = strided.Geometry();
  const ConvAlgorithm& winograd = *FindCpuConvAlgorithm("winograd_2x2_3x3", ConvLayout::kNCHW);
  EXPECT_FALSE(winograd.Supports(g, ConvDirection::kForward));
  EXPECT_EQ(winograd.WorkspaceBytes(g, ConvDirection::kForward, DType::kFloat32), 0u);
  const ConvInputs<float> in(g);
  std::vector<float> output(static_cast<size_t>(g.batch * g.out_channels * g.out_spatial()));
  ConvTensors<float> tensors;
  tensors.data = in.data.data();
  tensors.weight = in.weight.data();
  tensors.output = output.data();
  ScratchSpace scratch(Context::CPU());
  try {
    winograd.Run(ConvDirection::kForward, g, tensors, scratch);
    FAIL() << "winograd ran a strided convolution";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("winograd_2x2_3x3"), std::string::npos) << message;
    EXPECT_NE(message.find("does not support forward"), std::string::npos) << message;
    EXPECT_NE(message.find("stride 2x2"), std::string::npos) << message;
  }
  // A layout the algorithm is not written for, and a missing tensor.
  const ConvAlgorithm& im2row = *FindCpuConvAlgorithm("im2row_gemm", ConvLayout::kNHWC);
  EXPECT_FALSE(im2row.Supports(g, ConvDirection::kForward));
  const ConvAlgorithm& im2col = *FindCpuConvAlgorithm("im2col_gemm", ConvLayout::kNCHW);
  tensors.output = nullptr;
  EXPECT_THROW(im2col.Run(ConvDirection::kForward, g, tensors, scratch), Error);
  // Groups that do not divide the channels: no algorithm claims it.
  ConvGeometry bad = g;
  bad.groups = 3;
  for (const ConvAlgorithm* algorithm : CpuConvAlgorithms()) {
    for (ConvDirection direction : kDirections) {
      EXPECT_FALSE(algorithm->Supports(bad, direction)) << algorithm->name();
    }
  }
}

}  // namespace
}  // namespace mxlite::cpu
