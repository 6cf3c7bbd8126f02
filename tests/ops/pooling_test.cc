#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ops/cpu/parallel.h"
#include "tests/ops/op_harness.h"
#include "tests/ops/reference.h"

namespace mxlite::testing {
namespace {

using Attrs = std::map<std::string, std::string>;

// Distinct values (a shuffled ramp in [-1, 1)), so no max-pool window has a tie that finite
// differences could cross.
void DistinctValues(HostTensor& tensor, std::mt19937_64& random) {
  std::vector<double> values(static_cast<size_t>(tensor.size()));
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(values.size());
  }
  std::shuffle(values.begin(), values.end(), random);
  for (int64_t i = 0; i < tensor.size(); ++i) tensor.Set(i, values[i]);
}

std::vector<int64_t> TupleOr(const Attrs& attrs, const std::string& name, size_t dims,
                             int64_t fallback) {
  auto it = attrs.find(name);
  if (it == attrs.end() || it->second == "()") return std::vector<int64_t>(dims, fallback);
  return *ParseIntTuple(it->second);
}

// Plain pooling for channels-first data with 1 to 3 spatial dims, written from the MXNet
// definitions independently of the kernel: padded spatial dims are handled as 3-D with extent 1.
struct ReferencePooling {
  std::vector<int64_t> in, kernel, stride, pad, dilate, out;
  std::string type = "max";
  bool include_pad = true;

  ReferencePooling(const Attrs& attrs, const Shape& data) {
    const size_t dims = static_cast<size_t>(data.ndim() - 2);
    for (size_t d = 0; d < dims; ++d) in.push_back(data[static_cast<int>(d) + 2]);
    if (attrs.count("pool_type")) type = attrs.at("pool_type");
    if (attrs.count("count_include_pad")) include_pad = attrs.at("count_include_pad") == "true";
    const bool global = attrs.count("global_pool") && attrs.at("global_pool") == "true";
    const bool full = attrs.count("pooling_convention") && attrs.at("pooling_convention") == "full";
    kernel = global ? in : TupleOr(attrs, "kernel", dims, 1);
    stride = global ? std::vector<int64_t>(dims, 1) : TupleOr(attrs, "stride", dims, 1);
    pad = global ? std::vector<int64_t>(dims, 0) : TupleOr(attrs, "pad", dims, 0);
    dilate = global ? std::vector<int64_t>(dims, 1) : TupleOr(attrs, "dilate", dims, 1);
    for (size_t d = 0; d < dims; ++d) {
      const int64_t reach = (kernel[d] - 1) * dilate[d] + 1;
      const double span = static_cast<double>(in[d] + 2 * pad[d] - reach) / stride[d];
      int64_t extent = 1 + static_cast<int64_t>(full ? std::ceil(span) : std::floor(span));
      if (full && (extent - 1) * stride[d] >= in[d] + pad[d]) --extent;
      out.push_back(extent);
    }
    while (in.size() < 3) {  // leading dims of extent 1
      in.insert(in.begin(), 1);
      kernel.insert(kernel.begin(), 1);
      stride.insert(stride.begin(), 1);
      pad.insert(pad.begin(), 0);
      dilate.insert(dilate.begin(), 1);
      out.insert(out.begin(), 1);
    }
  }

  std::vector<double> Run(const std::vector<double>& x, int64_t planes) const {
    std::vector<double> y;
    const int64_t in_plane = in[0] * in[1] * in[2];
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t a = 0; a < out[0]; ++a) {
        for (int64_t b = 0; b < out[1]; ++b) {
          for (int64_t c = 0; c < out[2]; ++c) {
            y.push_back(Window(x.data() + p * in_plane, {a, b, c}));
          }
        }
      }
    }
    return y;
  }

  double Window(const double* x, const std::array<int64_t, 3>& o) const {
    double best = -1e300, sum = 0;
    int64_t real = 0, padded = 1;
    std::array<int64_t, 3> lo, hi;  // the taps lo, lo + dilate, ... before hi
    for (int d = 0; d < 3; ++d) {
      lo[d] = o[d] * stride[d] - pad[d];
      hi[d] = lo[d] + (kernel[d] - 1) * dilate[d] + 1;
      int64_t taps_in_padding = 0;  // the taps inside the padded input
      for (int64_t t = lo[d]; t < hi[d]; t += dilate[d]) taps_in_padding += t < in[d] + pad[d];
      padded *= taps_in_padding;
    }
    for (int64_t i = lo[0]; i < hi[0]; i += dilate[0]) {
      for (int64_t j = lo[1]; j < hi[1]; j += dilate[1]) {
        for (int64_t k = lo[2]; k < hi[2]; k += dilate[2]) {
          if (i < 0 || j < 0 || k < 0 || i >= in[0] || j >= in[1] || k >= in[2]) continue;
          const double v = x[(i * in[1] + j) * in[2] + k];
          best = std::max(best, v);
          sum += v;
          ++real;
        }
      }
    }
    if (real == 0) return 0;  // a window wholly in padding
    if (type == "max") return best;
    if (type == "sum") return sum;
    return sum / static_cast<double>(include_pad ? padded : real);
  }
};

ReferenceFn PoolingReference(const Attrs& attrs) {
  return [attrs](const auto& inputs, const auto& shapes) {
    ReferencePooling pooling(attrs, shapes[0]);
    return std::vector<std::vector<double>>{pooling.Run(inputs[0], shapes[0][0] * shapes[0][1])};
  };
}

void CheckCase(const Attrs& attrs, const Shape& data) {
  OpCase test_case{"Pooling", attrs, {data}};
  test_case.init["data"] = DistinctValues;
  CheckGradients(test_case);
  CheckForwardAgainstReference(test_case, PoolingReference(attrs));
}

TEST(PoolingTest, Max2DWithPadding) {
  CheckCase({{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}}, {2, 3, 7, 6});
}

TEST(PoolingTest, MaxOverlappingWindowsStrideOne) {
  CheckCase({{"kernel", "(2,3)"}, {"stride", "(1,1)"}}, {1, 2, 5, 5});
}

TEST(PoolingTest, AvgCountIncludePadBothWays) {
  for (const char* include : {"true", "false"}) {
    CheckCase({{"kernel", "(3,3)"},
               {"stride", "(2,2)"},
               {"pad", "(1,1)"},
               {"pool_type", "avg"},
               {"count_include_pad", include}},
              {2, 2, 6, 5});
  }
}

TEST(PoolingTest, CountIncludePadChangesBorderValues) {
  Attrs attrs{{"kernel", "(3)"}, {"pad", "(1)"}, {"pool_type", "avg"}};
  OpCase test_case{"Pooling", attrs, {{1, 1, 3}}};
  std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat64);
  for (int i = 0; i < 3; ++i) inputs[0].Set(i, 3.0 * (i + 1));  // 3, 6, 9
  EXPECT_EQ(RunForward(test_case, inputs).outputs[0].Values(),
            (std::vector<double>{3.0, 6.0, 5.0}));  // (0+3+6)/3, (3+6+9)/3, (6+9+0)/3
  test_case.attrs["count_include_pad"] = "false";
  EXPECT_EQ(RunForward(test_case, inputs).outputs[0].Values(),
            (std::vector<double>{4.5, 6.0, 7.5}));
}

TEST(PoolingTest, SumPool) {
  CheckCase({{"kernel", "(2,2)"}, {"stride", "(2,1)"}, {"pad", "(0,1)"}, {"pool_type", "sum"}},
            {2, 3, 5, 4});
}

TEST(PoolingTest, FullConventionIsCeilMode) {
  Attrs valid{{"kernel", "(3,3)"}, {"stride", "(2,2)"}};
  Attrs full = valid;
  full["pooling_convention"] = "full";
  EXPECT_EQ(InferOutputShapes({"Pooling", valid, {{1, 1, 6, 8}}})[0], (Shape{1, 1, 2, 3}));
  EXPECT_EQ(InferOutputShapes({"Pooling", full, {{1, 1, 6, 8}}})[0], (Shape{1, 1, 3, 4}));
  for (const char* type : {"max", "avg", "sum"}) {
    Attrs attrs = full;
    attrs["pool_type"] = type;
    attrs["pad"] = "(1,0)";
    CheckCase(attrs, {2, 2, 6, 8});
  }
}

TEST(PoolingTest, FullConventionNeverStartsAWindowInThePadding) {
  // in 4, kernel 2, stride 3, pad 1: ceil gives 3 windows, the third starting at 5 >= 4 + 1 - 1,
  // wholly in the right padding; PyTorch's rule drops it.
  Attrs attrs{{"kernel", "(2)"},
              {"stride", "(3)"},
              {"pad", "(1)"},
              {"pooling_convention", "full"},
              {"pool_type", "avg"}};
  EXPECT_EQ(InferOutputShapes({"Pooling", attrs, {{1, 1, 4}}})[0], (Shape{1, 1, 2}));
  CheckCase(attrs, {1, 2, 4});
}

TEST(PoolingTest, GlobalPooling) {
  for (const char* type : {"max", "avg", "sum"}) {
    Attrs attrs{{"global_pool", "true"}, {"pool_type", type}, {"kernel", "(7,7)"}};
    EXPECT_EQ(InferOutputShapes({"Pooling", attrs, {{2, 3, 5, 4}}})[0], (Shape{2, 3, 1, 1}));
    CheckCase(attrs, {2, 3, 5, 4});
  }
  // kernel may be left out with global_pool.
  EXPECT_EQ(InferOutputShapes({"Pooling", {{"global_pool", "true"}}, {{2, 3, 5}}})[0],
            (Shape{2, 3, 1}));
}

TEST(PoolingTest, OneDimensional) {
  for (const char* type : {"max", "avg"}) {
    CheckCase({{"kernel", "(3)"}, {"stride", "(2)"}, {"pad", "(1)"}, {"pool_type", type}},
              {2, 3, 9});
  }
}

TEST(PoolingTest, ThreeDimensional) {
  CheckCase({{"kernel", "(2,2,2)"}, {"stride", "(2,1,2)"}, {"pad", "(1,0,0)"}}, {1, 2, 3, 4, 4});
  CheckCase({{"kernel", "(2,3,2)"},
             {"pool_type", "avg"},
             {"pad", "(1,1,1)"},
             {"count_include_pad", "false"}},
            {2, 1, 3, 3, 4});
}

TEST(PoolingTest, BatchOfOneAndOneByOneOutput) {
  CheckCase({{"kernel", "(2,2)"}, {"stride", "(2,2)"}}, {1, 1, 2, 2});
  CheckCase({{"kernel", "(1,1)"}}, {1, 3, 2, 3});
}

TEST(PoolingTest, WindowsWhollyInPaddingGiveZeroAndNoGradient) {
  // in 2, kernel 2, pad 2: windows start at -2 (all padding), -1, 0, 1, 2 (all padding).
  for (const char* type : {"max", "avg", "sum"}) {
    for (const char* include : {"true", "false"}) {
      Attrs attrs{
          {"kernel", "(2)"}, {"pad", "(2)"}, {"pool_type", type}, {"count_include_pad", include}};
      EXPECT_EQ(InferOutputShapes({"Pooling", attrs, {{1, 1, 2}}})[0], (Shape{1, 1, 5}));
      OpCase test_case{"Pooling", attrs, {{1, 2, 2}}};
      test_case.init["data"] = DistinctValues;
      OpRun run = RunForward(test_case, MakeInputs(test_case, DType::kFloat64));
      for (double value : run.outputs[0].Values()) EXPECT_TRUE(std::isfinite(value));
      EXPECT_EQ(run.outputs[0].Get(0), 0.0);
      EXPECT_EQ(run.outputs[0].Get(4), 0.0);
      CheckCase(attrs, {1, 2, 2});
    }
  }
}

// Channels-last pooling against the channels-first reference on transposed data.
void CheckChannelsLast(Attrs attrs, const Shape& channels_first, const std::string& layout,
                       bool gradients) {
  attrs["layout"] = layout;
  std::vector<int64_t> dims{channels_first[0]};
  for (int d = 2; d < channels_first.ndim(); ++d) dims.push_back(channels_first[d]);
  dims.push_back(channels_first[1]);
  OpCase test_case{"Pooling", attrs, {Shape(dims)}};
  test_case.init["data"] = DistinctValues;
  if (gradients) CheckGradients(test_case);
  Attrs first_attrs = attrs;
  first_attrs.erase("layout");
  CheckForwardAgainstReference(test_case, [&](const auto& inputs, const auto& shapes) {
    const Shape& data = shapes[0];
    const int64_t n = data[0], c = data[data.ndim() - 1], s = data.size() / n / c;
    ReferencePooling pooling(first_attrs, channels_first);
    std::vector<double> out =
        pooling.Run(MoveChannels(inputs[0], n, c, s, /*to_last=*/false), n * c);
    const int64_t out_s = static_cast<int64_t>(out.size()) / n / c;
    return std::vector<std::vector<double>>{MoveChannels(out, n, c, out_s, /*to_last=*/true)};
  });
}

TEST(PoolingTest, ChannelsLastLayouts) {
  const Attrs max{{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}};
  const Attrs avg{
      {"kernel", "(2,3)"}, {"pad", "(1,1)"}, {"pool_type", "avg"}, {"count_include_pad", "false"}};
  CheckChannelsLast(max, {2, 3, 5, 6}, "NHWC", true);
  CheckChannelsLast(avg, {1, 4, 4, 3}, "NHWC", true);
  CheckChannelsLast(
      {{"kernel", "(3)"}, {"pool_type", "sum"}, {"pooling_convention", "full"}, {"stride", "(2)"}},
      {2, 3, 8}, "NWC", true);
  // More channels than one kernel block (64), forward only.
  CheckChannelsLast(max, {2, 70, 6, 5}, "NHWC", false);
  CheckChannelsLast(avg, {1, 130, 4, 4}, "NHWC", false);
  EXPECT_EQ(InferOutputShapes({"Pooling",
                               {{"kernel", "(2,2)"}, {"stride", "(2,2)"}, {"layout", "NHWC"}},
                               {{1, 8, 6, 3}}})[0],
            (Shape{1, 4, 3, 3}));
}

// NCHW16c pooling against the channels-first reference on reordered data; then, in float32, the
// same bits as the op in NCHW.
void CheckBlocked(Attrs attrs, const Shape& nchw, bool gradients) {
  const int64_t n = nchw[0], c = nchw[1];
  attrs["layout"] = "NCHW16c";
  OpCase test_case{"Pooling", attrs, {Shape{n, c / 16, nchw[2], nchw[3], 16}}};
  test_case.init["data"] = DistinctValues;
  if (gradients) CheckGradients(test_case);
  Attrs plain_attrs = attrs;
  plain_attrs.erase("layout");
  CheckForwardAgainstReference(test_case, [&](const auto& inputs, const auto&) {
    ReferencePooling pooling(plain_attrs, nchw);
    const int64_t s = nchw[2] * nchw[3];
    std::vector<double> out = pooling.Run(MoveToBlocks(inputs[0], n, c, s, false), n * c);
    const int64_t out_s = static_cast<int64_t>(out.size()) / n / c;
    return std::vector<std::vector<double>>{MoveToBlocks(out, n, c, out_s, true)};
  });
  OpCase plain{"Pooling", plain_attrs, {nchw}};
  const std::vector<HostTensor> plain_inputs = MakeInputs(plain, DType::kFloat32);
  std::vector<HostTensor> blocked_inputs = MakeInputs(test_case, DType::kFloat32);
  const std::vector<double> blocked_values =
      MoveToBlocks(plain_inputs[0].Values(), n, c, nchw[2] * nchw[3], true);
  for (int64_t i = 0; i < blocked_inputs[0].size(); ++i)
    blocked_inputs[0].Set(i, blocked_values[i]);
  const std::vector<double> expected = RunForward(plain, plain_inputs).outputs[0].Values();
  const OpRun run = RunForward(test_case, blocked_inputs);
  const HostTensor& actual = run.outputs[0];
  const int64_t out_s = actual.size() / n / c;
  EXPECT_EQ(MoveToBlocks(actual.Values(), n, c, out_s, false), expected) << "not NCHW's bits";
}

TEST(PoolingTest, BlockedLayout) {
  CheckBlocked({{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}}, {2, 32, 7, 6}, true);
  CheckBlocked(
      {{"kernel", "(2,3)"}, {"pad", "(1,1)"}, {"pool_type", "avg"}, {"count_include_pad", "false"}},
      {1, 16, 5, 4}, true);
  CheckBlocked({{"kernel", "(3,3)"},
                {"stride", "(2,2)"},
                {"pool_type", "avg"},
                {"pooling_convention", "full"}},
               {1, 32, 8, 9}, true);
  CheckBlocked({{"kernel", "(2,2)"}, {"pool_type", "sum"}, {"pad", "(2,2)"}}, {1, 16, 3, 3}, true);
  CheckBlocked({{"global_pool", "true"}, {"pool_type", "avg"}}, {2, 48, 7, 7}, true);
  CheckBlocked({{"global_pool", "true"}}, {1, 64, 5, 5}, false);
  EXPECT_EQ(InferOutputShapes({"Pooling",
                               {{"kernel", "(2,2)"}, {"stride", "(2,2)"}, {"layout", "NCHW16c"}},
                               {{1, 2, 6, 8, 16}}})[0],
            (Shape{1, 2, 3, 4, 16}));
  ExpectShapeError({"Pooling", {{"kernel", "(2,2)"}, {"layout", "NCHW16c"}}, {{1, 2, 6, 8}}},
                   {"NCHW16c", "(1,2,6,8)", "(N, C/16, H, W, 16)"});
  ExpectShapeError({"Pooling", {{"kernel", "(2,2)"}, {"layout", "NCHW16c"}}, {{1, 2, 6, 8, 8}}},
                   {"(1,2,6,8,8)"});
}

// Dilated windows (ONNX's dilations): taps dilate apart, in every layout, with padding, both
// conventions and every reduction; windows whose taps straddle the data's edges.
TEST(PoolingTest, DilatedWindows) {
  for (const char* type : {"max", "avg", "sum"}) {
    for (const char* include_pad : {"true", "false"}) {
      SCOPED_TRACE(std::string(type) + " count_include_pad " + include_pad);
      const Attrs two_d = {{"kernel", "(3,2)"}, {"dilate", "(2,3)"},
                           {"stride", "(1,2)"}, {"pad", "(2,1)"},
                           {"pool_type", type}, {"count_include_pad", include_pad}};
      CheckCase(two_d, {2, 3, 8, 9});
      Attrs full = two_d;
      full["pooling_convention"] = "full";
      CheckCase(full, {1, 2, 9, 10});
      CheckCase({{"kernel", "(2,2,2)"},
                 {"dilate", "(2,1,3)"},
                 {"pool_type", type},
                 {"count_include_pad", include_pad},
                 {"pad", "(1,0,1)"}},
                {1, 2, 4, 5, 7});
      CheckCase({{"kernel", "(3)"},
                 {"dilate", "(4)"},
                 {"pool_type", type},
                 {"pad", "(3)"},
                 {"count_include_pad", include_pad}},
                {2, 2, 11});
      CheckChannelsLast(two_d, {2, 3, 8, 9}, "NHWC", true);
      CheckBlocked(two_d, {1, 32, 8, 9}, true);
    }
  }
  EXPECT_EQ(
      InferOutputShapes({"Pooling", {{"kernel", "(3,3)"}, {"dilate", "(2,2)"}}, {{1, 1, 9, 7}}})[0],
      (Shape{1, 1, 5, 3}));
  ExpectShapeError({"Pooling", {{"kernel", "(3,3)"}, {"dilate", "(3,3)"}}, {{1, 1, 6, 6}}},
                   {"kernel (3,3) dilated by (3,3) exceeds data (1,1,6,6)"});
}

// Rows wide enough for the channels-first float32 kernel's 16-column vectors (stride 1 and 2 along
// the width, a full vector and a masked rest, edges on both sides, dilation, ceil mode, every
// reduction): against the reference, and NCHW16c and NHWC with NCHW's bits.
TEST(PoolingTest, WideRowsMatchTheReferenceAndTheBlockedBits) {
  for (const char* type : {"max", "avg", "sum"}) {
    SCOPED_TRACE(type);
    const Attrs stride_two = {{"kernel", "(3,3)"},
                              {"stride", "(2,2)"},
                              {"pad", "(1,1)"},
                              {"pool_type", type},
                              {"pooling_convention", "full"},
                              {"count_include_pad", "false"}};
    const Attrs stride_one = {
        {"kernel", "(2,3)"}, {"stride", "(1,1)"}, {"pad", "(1,1)"}, {"pool_type", type}};
    const Attrs dilated = {{"kernel", "(2,3)"},
                           {"dilate", "(1,2)"},
                           {"stride", "(1,2)"},
                           {"pad", "(0,2)"},
                           {"pool_type", type}};
    for (const Attrs& attrs : {stride_two, stride_one, dilated}) {
      CheckCase(attrs, {1, 2, 5, 71});
      CheckBlocked(attrs, {1, 16, 4, 70}, false);
      CheckChannelsLast(attrs, {1, 16, 3, 69}, "NHWC", false);
    }
  }
}

// Channels-last and NCHW16c rows go in runs of up to four shifted windows: rows whose interiors
// leave every remainder (1 to 3 windows after the runs of four) and none, at stride 1 and 2,
// against the reference, and NCHW16c with NCHW's bits.
TEST(PoolingTest, EveryRunLengthOfTheLaneKernels) {
  for (const char* type : {"max", "avg"}) {
    for (const char* stride : {"(1,1)", "(2,2)"}) {
      const Attrs attrs = {{"kernel", "(3,3)"},
                           {"stride", stride},
                           {"pad", "(1,1)"},
                           {"pool_type", type},
                           {"count_include_pad", "false"}};
      for (int64_t width = 3; width <= 20; ++width) {
        SCOPED_TRACE(std::string(type) + " stride " + stride + " width " + std::to_string(width));
        CheckBlocked(attrs, {1, 16, 3, width}, false);
        CheckChannelsLast(attrs, {1, 32, 3, width}, "NHWC", false);
      }
    }
  }
}

TEST(PoolingTest, MaxBackwardRoutesTiesToTheFirstMaximum) {
  OpCase test_case{"Pooling", {{"kernel", "(2,2)"}}, {{1, 1, 2, 2}}};
  std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat64);
  for (int i = 0; i < 4; ++i) inputs[0].Set(i, 1.0);
  OpRun run = RunForward(test_case, inputs);
  HostTensor grad(Shape{1, 1, 1, 1}, DType::kFloat64);
  grad.Set(0, 2.5);
  EXPECT_EQ(RunBackward(test_case, run, {grad})[0].Values(), (std::vector<double>{2.5, 0, 0, 0}));
}

TEST(PoolingTest, LargeInputsRunInParallel) {
  const Attrs attrs{{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}};
  OpCase test_case{"Pooling", attrs, {{4, 16, 40, 40}}};
  CheckForwardAgainstReference(test_case, PoolingReference(attrs));
  Attrs avg = attrs;
  avg["pool_type"] = "avg";
  // Stride 1 (GoogLeNet's branch pooling): rows of equal interior windows go four at a time,
  // a row of 11 leaves three; the padded edges one at a time.
  CheckBlocked({{"kernel", "(3,3)"}, {"pad", "(1,1)"}}, {1, 32, 9, 11}, true);
  CheckChannelsLast({{"kernel", "(3,3)"}, {"pad", "(1,1)"}}, {1, 48, 9, 11}, "NHWC", false);
  CheckForwardAgainstReference({"Pooling", avg, {{4, 16, 40, 40}}}, PoolingReference(avg));
  CheckChannelsLast(attrs, {4, 16, 40, 40}, "NHWC", false);
}

// One image with one channel block (channels last, NCHW16c) or one plane per channel: the forward
// splits the output rows into bands; every layout still matches the reference, with the same bits
// on one and two threads.
TEST(PoolingTest, OneImageSplitsItsRowsAcrossThreads) {
  const Attrs max{{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pooling_convention", "full"}};
  const Attrs avg{{"kernel", "(3,3)"}, {"pad", "(1,1)"}, {"pool_type", "avg"}};
  for (const Attrs& attrs : {max, avg}) {
    CheckForwardAgainstReference({"Pooling", attrs, {{1, 2, 111, 111}}}, PoolingReference(attrs));
    CheckChannelsLast(attrs, {1, 32, 111, 97}, "NHWC", false);
    CheckBlocked(attrs, {1, 16, 111, 97}, false);
    for (const std::string layout : {"NHWC", "NCHW16c"}) {
      Attrs with_layout = attrs;
      with_layout["layout"] = layout;
      const Shape shape = layout == "NHWC" ? Shape{1, 111, 97, 32} : Shape{1, 1, 111, 97, 16};
      OpCase test_case{"Pooling", with_layout, {shape}};
      const std::vector<HostTensor> inputs = MakeInputs(test_case, DType::kFloat32);
      std::vector<double> on_one, on_two;
      {
        cpu::ScopedIntraOpThreads threads(1);
        on_one = RunForward(test_case, inputs).outputs[0].Values();
      }
      {
        cpu::ScopedIntraOpThreads threads(2);
        on_two = RunForward(test_case, inputs).outputs[0].Values();
      }
      EXPECT_EQ(on_one, on_two) << layout;
    }
  }
}

TEST(PoolingTest, ShapeErrorsNameTheOpNodeAndShapes) {
  ExpectShapeError({"Pooling", {{"kernel", "(5,5)"}}, {{1, 1, 4, 8}}}, {"(5,5)", "(1,1,4,8)"});
  ExpectShapeError({"Pooling", {{"kernel", "(2)"}}, {{1, 1, 4, 8}}}, {"kernel", "(1,1,4,8)"});
  ExpectShapeError({"Pooling", {}, {{1, 1, 4, 8}}}, {"global_pool", "(1,1,4,8)"});
  ExpectShapeError({"Pooling", {{"kernel", "(2,2)"}, {"layout", "NCW"}}, {{1, 1, 4, 8}}},
                   {"NCW", "(1,1,4,8)"});
  ExpectShapeError({"Pooling", {{"kernel", "(2,2)"}}, {{1, 4, 8}}}, {"kernel", "(1,4,8)"});
  ExpectShapeError({"Pooling", {{"kernel", "(2,2)"}, {"stride", "(0,1)"}}, {{1, 1, 4, 8}}},
                   {"stride"});
  ExpectShapeError({"Pooling", {{"kernel", "(2,2)"}}, {{4, 8}}}, {"(4,8)"});
}

TEST(PoolingTest, UnsupportedPoolTypeIsAClearError) {
  try {
    InferOutputShapes({"Pooling", {{"kernel", "(2,2)"}, {"pool_type", "lp"}}, {{1, 1, 4, 4}}});
    FAIL() << "lp pooling was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("max, avg, sum"), std::string::npos) << error.what();
  }
}

MXLITE_GPU_CASES(Pooling) {
  std::vector<OpCase> cases;
  auto add = [&](OpCase c) { cases.push_back(std::move(c)); };
  // Pooling: max / avg / sum, padding, full convention, global, 1-D, 3-D, NHWC.
  for (const char* type : {"max", "avg", "sum"}) {
    add({"Pooling",
         {{"kernel", "(3,3)"}, {"pool_type", type}, {"stride", "(2,2)"}, {"pad", "(1,1)"}},
         {{2, 3, 7, 8}}});
    add({"Pooling",
         {{"kernel", "(3,2)"},
          {"pool_type", type},
          {"stride", "(2,2)"},
          {"pooling_convention", "full"}},
         {{1, 2, 8, 7}}});
  }
  add({"Pooling",
       {{"kernel", "(3,3)"},
        {"pool_type", "avg"},
        {"pad", "(1,1)"},
        {"count_include_pad", "false"}},
       {{2, 2, 5, 5}}});
  add({"Pooling", {{"kernel", "(2,2)"}, {"pool_type", "avg"}, {"pad", "(2,2)"}}, {{1, 2, 3, 3}}});
  add({"Pooling", {{"global_pool", "true"}, {"pool_type", "avg"}}, {{2, 3, 5, 4}}});
  for (const char* type : {"max", "avg"}) {
    add({"Pooling",
         {{"kernel", "(3,2)"}, {"dilate", "(2,3)"}, {"pad", "(2,1)"}, {"pool_type", type}},
         {{2, 3, 8, 9}}});
    add({"Pooling",
         {{"kernel", "(3,3)"}, {"dilate", "(2,2)"}, {"pool_type", type}, {"layout", "NHWC"}},
         {{1, 9, 8, 5}}});
  }
  add({"Pooling",
       {{"kernel", "(9,9)"}, {"dilate", "(2,2)"}, {"pool_type", "avg"}},
       {{1, 2, 20, 20}}});  // a large window: the block kernels
  add({"Pooling", {{"global_pool", "true"}, {"pool_type", "max"}}, {{2, 3, 5, 4}}});
  add({"Pooling", {{"kernel", "(3,)"}, {"stride", "(2,)"}}, {{2, 3, 9}}});
  add({"Pooling", {{"kernel", "(2,2,2)"}, {"pool_type", "avg"}}, {{1, 2, 4, 4, 4}}});
  add({"Pooling",
       {{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}, {"layout", "NHWC"}},
       {{2, 7, 6, 5}}});
  add({"Pooling",
       {{"kernel", "(2,2)"},
        {"pool_type", "avg"},
        {"layout", "NHWC"},
        {"pooling_convention", "full"},
        {"stride", "(2,2)"}},
       {{1, 5, 5, 3}}});
  // Windows of 64 elements and more are split among a block's threads (NCHW: a block per output;
  // NHWC: per output position and 32 channels, here 40 so that one tile is partial).
  for (const char* type : {"max", "avg", "sum"}) {
    for (const char* layout : {"NCHW", "NHWC"}) {
      const bool nhwc = std::string(layout) == "NHWC";
      add({"Pooling",
           {{"global_pool", "true"}, {"pool_type", type}, {"layout", layout}},
           {nhwc ? Shape{2, 9, 10, 40} : Shape{2, 40, 9, 10}}});
      add({"Pooling",
           {{"kernel", "(9,8)"},
            {"pool_type", type},
            {"stride", "(4,5)"},
            {"pad", "(3,2)"},
            {"count_include_pad", "false"},
            {"layout", layout}},
           {nhwc ? Shape{1, 17, 19, 3} : Shape{1, 3, 17, 19}}});
    }
  }
  return cases;
}

}  // namespace
}  // namespace mxlite::testing
