// The fused depthwise block kernel (ops/cpu/depthwise_block.h) against a direct double-precision
// reference of its three stages, over geometries that exercise the ring of expanded rows (stride,
// dilation, padding, tall kernels, bands that end inside an image, several images), channel counts
// off the vector width, absent stages, biases and clamps, one to three threads and both GEMM
// implementations; and the errors for geometries it does not run.
#include "ops/cpu/depthwise_block.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>
#include <random>
#include <vector>

#include "core/error.h"
#include "ops/cpu/depthwise_rows.h"
#include "ops/cpu/parallel.h"

namespace mxlite::cpu {
namespace {

struct BlockCase {
  const char* name;
  int64_t batch, height, width, in_channels, channels, out_channels;
  int64_t kernel, stride, pad, dilate;
  bool expand, project, biases;
  float low, high;  // the clamp of every stage that has one (expand, depthwise)
};

void PrintTo(const BlockCase& c, std::ostream* out) { *out << c.name; }

std::vector<float> Random(int64_t count, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(static_cast<size_t>(count));
  for (float& value : values) value = uniform(random);
  return values;
}

double Clamp(double value, float low, float high) {
  return std::min<double>(std::max<double>(value, low), high);
}

DepthwiseBlockGeometry Geometry(const BlockCase& c) {
  DepthwiseBlockGeometry g;
  ConvGeometry& d = g.depthwise;
  d.batch = c.batch;
  d.in_channels = d.out_channels = d.groups = c.channels;
  d.in_h = c.height;
  d.in_w = c.width;
  d.kernel_h = d.kernel_w = c.kernel;
  d.stride_h = d.stride_w = c.stride;
  d.pad_h = d.pad_w = c.pad;
  d.dilate_h = d.dilate_w = c.dilate;
  d.layout = ConvLayout::kNHWC;
  const int64_t extent = c.dilate * (c.kernel - 1) + 1;
  d.out_h = (c.height + 2 * c.pad - extent) / c.stride + 1;
  d.out_w = (c.width + 2 * c.pad - extent) / c.stride + 1;
  g.expand = c.expand;
  g.project = c.project;
  g.in_channels = c.expand ? c.in_channels : c.channels;
  g.out_channels = c.project ? c.out_channels : c.channels;
  return g;
}

struct BlockData {
  std::vector<float> data, expand_weight, expand_bias, weight, bias, project_weight, project_bias;
};

BlockData MakeData(const BlockCase& c, const DepthwiseBlockGeometry& g) {
  const ConvGeometry& d = g.depthwise;
  BlockData b;
  b.data = Random(d.batch * d.in_h * d.in_w * g.in_channels, 1);
  b.expand_weight = Random(c.channels * g.in_channels, 2);
  b.expand_bias = Random(c.channels, 3);
  b.weight = Random(c.channels * c.kernel * c.kernel, 4);
  b.bias = Random(c.channels, 5);
  b.project_weight = Random(g.out_channels * c.channels, 6);
  b.project_bias = Random(g.out_channels, 7);
  return b;
}

// The three stages one after the other, in double.
std::vector<double> Reference(const BlockCase& c, const DepthwiseBlockGeometry& g,
                              const BlockData& b) {
  const ConvGeometry& d = g.depthwise;
  const int64_t pixels_in = d.batch * d.in_h * d.in_w, pixels_out = d.batch * d.out_h * d.out_w;
  const int64_t channels = c.channels;
  std::vector<double> expanded(static_cast<size_t>(pixels_in * channels));
  for (int64_t p = 0; p < pixels_in; ++p) {
    for (int64_t o = 0; o < channels; ++o) {
      if (!c.expand) {
        expanded[p * channels + o] = b.data[p * channels + o];
        continue;
      }
      double sum = c.biases ? b.expand_bias[o] : 0.0;
      for (int64_t i = 0; i < g.in_channels; ++i) {
        sum += double{b.data[p * g.in_channels + i]} * b.expand_weight[o * g.in_channels + i];
      }
      expanded[p * channels + o] = Clamp(sum, c.low, c.high);
    }
  }
  std::vector<double> depthwise(static_cast<size_t>(pixels_out * channels));
  for (int64_t n = 0; n < d.batch; ++n) {
    for (int64_t oh = 0; oh < d.out_h; ++oh) {
      for (int64_t ow = 0; ow < d.out_w; ++ow) {
        for (int64_t ch = 0; ch < channels; ++ch) {
          double sum = c.biases ? b.bias[ch] : 0.0;
          for (int64_t i = 0; i < c.kernel; ++i) {
            for (int64_t j = 0; j < c.kernel; ++j) {
              const int64_t ih = oh * c.stride - c.pad + i * c.dilate;
              const int64_t iw = ow * c.stride - c.pad + j * c.dilate;
              if (ih < 0 || ih >= d.in_h || iw < 0 || iw >= d.in_w) continue;
              sum += expanded[((n * d.in_h + ih) * d.in_w + iw) * channels + ch] *
                     b.weight[(ch * c.kernel + i) * c.kernel + j];
            }
          }
          depthwise[((n * d.out_h + oh) * d.out_w + ow) * channels + ch] =
              Clamp(sum, c.low, c.high);
        }
      }
    }
  }
  if (!c.project) return depthwise;
  std::vector<double> output(static_cast<size_t>(pixels_out * g.out_channels));
  for (int64_t p = 0; p < pixels_out; ++p) {
    for (int64_t o = 0; o < g.out_channels; ++o) {
      double sum = c.biases ? b.project_bias[o] : 0.0;
      for (int64_t ch = 0; ch < channels; ++ch) {
        sum += depthwise[p * channels + ch] * b.project_weight[o * channels + ch];
      }
      output[p * g.out_channels + o] = sum;  // a linear bottleneck: no clamp
    }
  }
  return output;
}

// The block on `b`; `residual` (the output's size) is added by the projection when given.
std::vector<float> RunBlock(const BlockCase& c, const DepthwiseBlockGeometry& g, const BlockData& b,
                            bool packed, const std::vector<float>* residual = nullptr) {
  const ConvGeometry& d = g.depthwise;
  std::vector<float> by_tap(b.weight.size());
  DepthwiseWeightsByTap(d, b.weight.data(), by_tap.data());
  const PackedGemmOperand expand_packed =
      PackedGemmOperand::Pack(PackedGemmOperand::Side::kB, Transpose::kYes, g.in_channels,
                              c.channels, b.expand_weight.data(), g.in_channels);
  const PackedGemmOperand project_packed =
      PackedGemmOperand::Pack(PackedGemmOperand::Side::kB, Transpose::kYes, c.channels,
                              g.out_channels, b.project_weight.data(), c.channels);
  DepthwiseBlockTensors t;
  t.data = b.data.data();
  t.expand = {b.expand_weight.data(), packed ? &expand_packed : nullptr,
              Epilogue<float>::Clamp(c.low, c.high)};
  if (c.biases) t.expand.epilogue.column_bias = b.expand_bias.data();
  t.depthwise = {by_tap.data(), c.biases ? b.bias.data() : nullptr,
                 Epilogue<float>::Clamp(c.low, c.high)};
  t.project = {b.project_weight.data(), packed ? &project_packed : nullptr, Epilogue<float>{}};
  if (c.biases) t.project.epilogue.column_bias = b.project_bias.data();
  if (residual != nullptr) t.residual = residual->data();
  std::vector<float> output(static_cast<size_t>(d.batch * d.out_h * d.out_w * g.out_channels),
                            std::numeric_limits<float>::quiet_NaN());
  t.output = output.data();
  ScratchSpace scratch(Context::CPU());
  DepthwiseBlockForward(g, t, scratch);
  EXPECT_LE(scratch.bytes_requested(), DepthwiseBlockWorkspaceBytes(g, IntraOpThreads()) + 64);
  return output;
}

const BlockCase kCases[] = {
    // name, N, H, W, Cin, C, Cout, kernel, stride, pad, dilate, expand, project, biases, clamp
    {"inverted_residual", 1, 20, 17, 8, 48, 16, 3, 1, 1, 1, true, true, true, 0.0f, 6.0f},
    {"stride2", 2, 23, 19, 6, 24, 8, 3, 2, 1, 1, true, true, true, 0.0f, 6.0f},
    {"odd_channels", 2, 11, 9, 5, 13, 7, 3, 1, 1, 1, true, true, false, -0.5f, 0.5f},
    {"expand_only", 3, 9, 12, 4, 16, 16, 3, 1, 1, 1, true, false, true, 0.0f, 6.0f},
    {"project_only", 2, 15, 15, 24, 24, 12, 3, 1, 1, 1, false, true, true, 0.0f, 6.0f},
    {"project_only_stride2", 1, 16, 14, 16, 16, 8, 3, 2, 1, 1, false, true, false, 0.0f, 6.0f},
    {"kernel5_dilate2", 2, 21, 13, 8, 32, 8, 5, 1, 4, 2, true, true, true, 0.0f, 6.0f},
    {"kernel5_stride3_no_pad", 1, 26, 20, 8, 16, 16, 5, 3, 0, 1, true, true, true,
     -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity()},
    {"tall_image", 1, 120, 8, 8, 64, 24, 3, 1, 1, 1, true, true, true, 0.0f, 6.0f},
};

class DepthwiseBlockTest : public ::testing::TestWithParam<BlockCase> {};

TEST_P(DepthwiseBlockTest, MatchesTheStagesOneByOne) {
  const BlockCase& c = GetParam();
  const DepthwiseBlockGeometry g = Geometry(c);
  const BlockData b = MakeData(c, g);
  const std::vector<double> expected = Reference(c, g, b);
  double scale = 1e-6;
  for (double value : expected) scale = std::max(scale, std::fabs(value));
  for (GemmImplementation gemm : {GemmImplementation::kAuto, GemmImplementation::kEigen}) {
    SetGemmImplementation(gemm);
    for (int threads : {1, 2, 3}) {
      for (bool packed : {false, true}) {
        SCOPED_TRACE(testing::Message() << "threads " << threads << ", packed " << packed
                                        << ", gemm " << ActiveGemm().name);
        ScopedIntraOpThreads scope(threads);
        const std::vector<float> actual = RunBlock(c, g, b, packed);
        ASSERT_EQ(actual.size(), expected.size());
        for (size_t i = 0; i < expected.size(); ++i) {
          ASSERT_NEAR(actual[i], expected[i], 2e-5 * scale) << "element " << i;
        }
      }
    }
  }
  SetGemmImplementation(GemmImplementation::kAuto);
}

// A fused residual gives the bits of adding it to the block's output afterwards: the projection's
// store adds it after the bias (it has no clamp here), bands and threads splitting the rows
// anywhere. A block without a projection refuses one.
TEST_P(DepthwiseBlockTest, AResidualGivesTheBitsOfAnAdditionAfter) {
  const BlockCase& c = GetParam();
  const DepthwiseBlockGeometry g = Geometry(c);
  const BlockData b = MakeData(c, g);
  const ConvGeometry& d = g.depthwise;
  const std::vector<float> residual = Random(d.batch * d.out_h * d.out_w * g.out_channels, 8);
  if (!c.project) {
    EXPECT_THROW(RunBlock(c, g, b, /*packed=*/true, &residual), Error);
    return;
  }
  for (GemmImplementation gemm : {GemmImplementation::kAuto, GemmImplementation::kEigen}) {
    SetGemmImplementation(gemm);
    for (int threads : {1, 3}) {
      SCOPED_TRACE(testing::Message() << "threads " << threads << ", gemm " << ActiveGemm().name);
      ScopedIntraOpThreads scope(threads);
      const std::vector<float> alone = RunBlock(c, g, b, /*packed=*/true);
      const std::vector<float> fused = RunBlock(c, g, b, /*packed=*/true, &residual);
      ASSERT_EQ(fused.size(), alone.size());
      for (size_t i = 0; i < alone.size(); ++i) {
        ASSERT_EQ(fused[i], alone[i] + residual[i]) << "element " << i;
      }
    }
  }
  SetGemmImplementation(GemmImplementation::kAuto);
}

INSTANTIATE_TEST_SUITE_P(Geometries, DepthwiseBlockTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(DepthwiseBlockErrors, GeometriesItDoesNotRunAreRefusedByName) {
  DepthwiseBlockGeometry g = Geometry(kCases[0]);
  g.expand = g.project = false;
  g.in_channels = g.out_channels = g.depthwise.in_channels;
  EXPECT_THROW(CheckDepthwiseBlockGeometry(g), Error);

  g = Geometry(kCases[0]);
  g.depthwise.out_channels *= 2;  // a channel multiplier of 2
  try {
    CheckDepthwiseBlockGeometry(g);
    ADD_FAILURE() << "a multiplier-2 depthwise convolution was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("groups == in channels == out channels"),
              std::string::npos)
        << error.what();
  }

  g = Geometry(kCases[4]);  // project only
  g.in_channels = 5;        // but the input has other channels than the depthwise stage
  EXPECT_THROW(CheckDepthwiseBlockGeometry(g), Error);

  g = Geometry(kCases[0]);
  g.depthwise.layout = ConvLayout::kNCHW;
  EXPECT_THROW(CheckDepthwiseBlockGeometry(g), Error);
}

}  // namespace
}  // namespace mxlite::cpu
