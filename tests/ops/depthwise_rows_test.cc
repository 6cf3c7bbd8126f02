// One NHWC depthwise output row (ops/cpu/depthwise_rows.h) under every kernel this build and CPU
// can run — the AVX-512 and AVX2 vector kernels and the portable loops — against a
// double-precision reference, over kernels 1 to 7 wide (the sliding tiles' 3, 5 and 7 and the
// general tile's others), strides 1 to 3, dilation, rows too narrow for a whole tile, channel
// counts off both vector widths and slices of them; the two vector kernels must agree to the bit
// (both sum bias, then taps in order, one FMA each), channels outside a slice stay untouched, and
// a NaN input stays NaN through the clamp.
#include "ops/cpu/depthwise_rows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <ostream>
#include <random>
#include <vector>

#include "ops/cpu/conv_depthwise_avx2.h"
#include "ops/cpu/conv_depthwise_avx512.h"

namespace mxlite::cpu {
namespace {

struct RowCase {
  const char* name;
  int64_t channels, height, width, kernel_h, kernel_w, stride, pad, dilate;
  ChannelRange slice;  // {0, 0}: every channel
};

void PrintTo(const RowCase& c, std::ostream* out) { *out << c.name; }

ConvGeometry Geometry(const RowCase& c) {
  ConvGeometry g;
  g.batch = 1;
  g.in_channels = g.out_channels = g.groups = c.channels;
  g.in_h = c.height;
  g.in_w = c.width;
  g.kernel_h = c.kernel_h;
  g.kernel_w = c.kernel_w;
  g.stride_h = g.stride_w = c.stride;
  g.pad_h = g.pad_w = c.pad;
  g.dilate_h = g.dilate_w = c.dilate;
  g.layout = ConvLayout::kNHWC;
  g.out_h = (c.height + 2 * c.pad - (c.dilate * (c.kernel_h - 1) + 1)) / c.stride + 1;
  g.out_w = (c.width + 2 * c.pad - (c.dilate * (c.kernel_w - 1) + 1)) / c.stride + 1;
  return g;
}

std::vector<float> Random(int64_t count, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(static_cast<size_t>(count));
  for (float& value : values) value = uniform(random);
  return values;
}

// A row kernel's signature (DepthwiseForwardRowNhwcAvx2 / Avx512), the portable one wrapped.
using RowKernel = void (*)(const ConvGeometry&, const float* const*, const float*, const float*,
                           const Epilogue<float>&, int64_t, int64_t, float*);

struct NamedKernel {
  const char* name;
  RowKernel run;
};

void DispatchedRow(const ConvGeometry& g, const float* const* rows, const float* by_tap,
                   const float* bias, const Epilogue<float>& clamp, int64_t begin, int64_t end,
                   float* y_row) {
  DepthwiseRowNhwc<float>(g, rows, by_tap, bias, clamp, {begin, end}, y_row);
}

std::vector<NamedKernel> KernelsOfThisCpu() {
  std::vector<NamedKernel> kernels = {{"dispatched", DispatchedRow}};
  if (detail::DepthwiseAvx512Available()) {
    kernels.push_back({"avx512", detail::DepthwiseForwardRowNhwcAvx512});
  }
  if (detail::DepthwiseAvx2Available()) {
    kernels.push_back({"avx2", detail::DepthwiseForwardRowNhwcAvx2});
  }
  return kernels;
}

class DepthwiseRowsTest : public testing::TestWithParam<RowCase> {};

TEST_P(DepthwiseRowsTest, EveryKernelMatchesTheReferenceAndTheVectorKernelsAgreeToTheBit) {
  const RowCase& c = GetParam();
  const ConvGeometry g = Geometry(c);
  const ChannelRange slice = c.slice.end > 0 ? c.slice : AllChannels(g);
  const std::vector<float> data = Random(g.in_h * g.in_w * g.in_channels, 1);
  const std::vector<float> weight = Random(g.out_channels * g.kernel_spatial(), 2);
  const std::vector<float> bias = Random(g.out_channels, 3);
  std::vector<float> by_tap(weight.size());
  DepthwiseWeightsByTap(g, weight.data(), by_tap.data());
  const Epilogue<float> clamp = Epilogue<float>::Clamp(-0.75f, 0.75f);
  constexpr float kUntouched = 12345.0f;

  std::vector<std::vector<float>> results;  // per kernel, the whole output
  for (const NamedKernel& kernel : KernelsOfThisCpu()) {
    SCOPED_TRACE(kernel.name);
    std::vector<float> output(static_cast<size_t>(g.out_h * g.out_w * g.out_channels), kUntouched);
    std::vector<const float*> rows(static_cast<size_t>(g.kernel_h));
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      ChannelsLastInputRows(g, data.data(), 0, oh, rows.data());
      kernel.run(g, rows.data(), by_tap.data(), bias.data(), clamp, slice.begin, slice.end,
                 output.data() + oh * g.out_w * g.out_channels);
    }
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        for (int64_t ch = 0; ch < g.out_channels; ++ch) {
          const float got = output[(oh * g.out_w + ow) * g.out_channels + ch];
          if (ch < slice.begin || ch >= slice.end) {
            ASSERT_EQ(got, kUntouched) << "channel " << ch << " outside the slice was written";
            continue;
          }
          double sum = bias[ch];
          for (int64_t i = 0; i < g.kernel_h; ++i) {
            for (int64_t j = 0; j < g.kernel_w; ++j) {
              const int64_t ih = oh * g.stride_h - g.pad_h + i * g.dilate_h;
              const int64_t iw = ow * g.stride_w - g.pad_w + j * g.dilate_w;
              if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) continue;
              sum += double(weight[ch * g.kernel_spatial() + i * g.kernel_w + j]) *
                     data[(ih * g.in_w + iw) * g.in_channels + ch];
            }
          }
          const double expected = std::clamp(sum, -0.75, 0.75);
          ASSERT_NEAR(got, expected, 1e-5) << "at (" << oh << ", " << ow << ", " << ch << ")";
        }
      }
    }
    results.push_back(std::move(output));
  }
  for (size_t k = 1; k < results.size(); ++k) {
    const char* name = KernelsOfThisCpu()[k].name;
    if (std::strcmp(name, "avx2") != 0 && std::strcmp(name, "avx512") != 0) continue;
    EXPECT_EQ(std::memcmp(results[0].data(), results[k].data(), results[0].size() * sizeof(float)),
              0)
        << name << " differs in its bits from the dispatched kernel";
  }
}

const RowCase kRowCases[] = {
    // The sliding tiles: 3, 5 and 7 wide at stride 1 and 2, rows of whole and partial tiles.
    {"k3_s1_p1_48ch_56w", 48, 4, 56, 3, 3, 1, 1, 1, {}},
    {"k3_s2_p1_72ch_29w", 72, 5, 29, 3, 3, 2, 1, 1, {}},
    {"k5_s1_p2_40ch_21w", 40, 6, 21, 5, 5, 1, 2, 1, {}},
    {"k5_s2_p2_24ch_30w", 24, 6, 30, 5, 5, 2, 2, 1, {}},
    {"k7_s1_p3_96ch_19w", 96, 8, 19, 7, 7, 1, 3, 1, {}},
    {"k7_s2_p3_17ch_40w", 17, 8, 40, 7, 7, 2, 3, 1, {}},
    // The general tile: other widths, stride 3, dilation, tall and flat kernels.
    {"k1x1_s1_p0_33ch_20w", 33, 2, 20, 1, 1, 1, 0, 1, {}},
    {"k3_s1_p2_d2_20ch_25w", 20, 6, 25, 3, 3, 1, 2, 2, {}},
    {"k3_s3_p1_31ch_40w", 31, 4, 40, 3, 3, 3, 1, 1, {}},
    {"k5x3_s1_p1_16ch_18w", 16, 7, 18, 5, 3, 1, 1, 1, {}},
    {"k4x4_s1_p1_19ch_22w", 19, 5, 22, 4, 4, 1, 1, 1, {}},
    {"k9x9_s1_p4_8ch_24w", 8, 9, 24, 9, 9, 1, 4, 1, {}},
    // Rows too narrow for one tile, every pixel touching the padding.
    {"k3_s1_p1_5ch_7w", 5, 3, 7, 3, 3, 1, 1, 1, {}},
    {"k5_s1_p2_1ch_9w", 1, 3, 9, 5, 5, 1, 2, 1, {}},
    {"k7_s1_p3_70ch_7w", 70, 7, 7, 7, 7, 1, 3, 1, {}},
    {"k3_s2_p0_3ch_3w", 3, 3, 3, 3, 3, 2, 0, 1, {}},
    {"k3_s1_p1_20ch_3w", 20, 3, 3, 3, 3, 1, 1, 1, {}},
    {"k5_s1_p2_18ch_4w", 18, 4, 4, 5, 5, 1, 2, 1, {}},
    // Slices of the channels (how threads share a row): whole lines and odd ends.
    {"k3_s1_p1_64ch_slice16to48", 64, 3, 30, 3, 3, 1, 1, 1, {16, 48}},
    {"k5_s2_p2_72ch_slice37to71", 72, 5, 33, 5, 5, 2, 2, 1, {37, 71}},
    {"k3_s1_p1_40ch_slice3to4", 40, 3, 12, 3, 3, 1, 1, 1, {3, 4}},
};

INSTANTIATE_TEST_SUITE_P(Rows, DepthwiseRowsTest, testing::ValuesIn(kRowCases),
                         [](const testing::TestParamInfo<RowCase>& info) {
                           return std::string(info.param.name);
                         });

TEST(DepthwiseRowsTest, ANanInputStaysNanThroughTheClampInEveryKernel) {
  const RowCase c{"k5_s1_p2_40ch_24w", 40, 5, 24, 5, 5, 1, 2, 1, {}};
  const ConvGeometry g = Geometry(c);
  std::vector<float> data = Random(g.in_h * g.in_w * g.in_channels, 1);
  data[(2 * g.in_w + 11) * g.in_channels + 37] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> by_tap = Random(g.out_channels * g.kernel_spatial(), 2);
  const Epilogue<float> clamp = Epilogue<float>::Clamp(0.0f, 6.0f);
  for (const NamedKernel& kernel : KernelsOfThisCpu()) {
    SCOPED_TRACE(kernel.name);
    std::vector<float> y_row(static_cast<size_t>(g.out_w * g.out_channels));
    std::vector<const float*> rows(static_cast<size_t>(g.kernel_h));
    ChannelsLastInputRows(g, data.data(), 0, 2, rows.data());  // row 2 reads input row 2 at tap 2
    kernel.run(g, rows.data(), by_tap.data(), nullptr, clamp, 0, g.in_channels, y_row.data());
    for (int64_t ow = 9; ow <= 13; ++ow) {  // every pixel whose window holds column 11
      EXPECT_TRUE(std::isnan(y_row[ow * g.out_channels + 37])) << "pixel " << ow;
      EXPECT_FALSE(std::isnan(y_row[ow * g.out_channels + 36])) << "pixel " << ow;
    }
    EXPECT_FALSE(std::isnan(y_row[8 * g.out_channels + 37]));
  }
}

}  // namespace
}  // namespace mxlite::cpu
