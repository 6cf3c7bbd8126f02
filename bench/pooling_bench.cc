// The Pooling op's CPU forward on the pooling layers of torchvision's networks, in each layout the
// convolution planner may give it (NCHW, NHWC, NCHW16c), through the op registry as an executor
// calls it: ResNet's and GoogLeNet's first max pools (3x3 stride 2 over 64 channels at 112x112),
// GoogLeNet's stride-2 pools and its inception branches' 3x3 stride-1 pools, VGG's 2x2 pools,
// Inception-V3's 3x3 average pools and DenseNet's 2x2 transitions.
//
//   build/bin/pooling_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
//
// Args: layer, layout (0 NCHW, 1 NHWC, 2 NCHW16c), threads, evict (1: stream 16 MB through the
// caches before each run, as the layer meets its input when the convolution before it has written
// it out past L2; 0: hot). Reported: GB/s moved (input read once plus output written). Input and
// output are 64-byte aligned, as the executor's buffers are (with malloc's 16-byte alignment every
// vector load of the channels-last kernels crossed two cache lines).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "ops/cpu/aligned_vector.h"
#include "ops/cpu/parallel.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

struct PoolingLayer {
  const char* name;
  int64_t channels, size;  // input channels and height = width
  const char* kernel;
  const char* stride;
  const char* pad;
  const char* pool_type;
  const char* convention;  // "valid" or "full" (ceil mode)
};

const PoolingLayer kLayers[] = {
    {"ResNet max 3x3/2 64@112", 64, 112, "(3,3)", "(2,2)", "(1,1)", "max", "valid"},
    {"GoogLeNet max 3x3/2 ceil 64@112", 64, 112, "(3,3)", "(2,2)", "(0,0)", "max", "full"},
    {"GoogLeNet max 3x3/2 ceil 192@56", 192, 56, "(3,3)", "(2,2)", "(0,0)", "max", "full"},
    {"GoogLeNet branch max 3x3/1 256@28", 256, 28, "(3,3)", "(1,1)", "(1,1)", "max", "full"},
    {"GoogLeNet branch max 3x3/1 512@14", 512, 14, "(3,3)", "(1,1)", "(1,1)", "max", "full"},
    {"VGG max 2x2/2 128@112", 128, 112, "(2,2)", "(2,2)", "(0,0)", "max", "valid"},
    {"Inception-V3 avg 3x3/1 192@35", 192, 35, "(3,3)", "(1,1)", "(1,1)", "avg", "valid"},
    {"DenseNet avg 2x2/2 128@56", 128, 56, "(2,2)", "(2,2)", "(0,0)", "avg", "valid"},
};

const char* const kLayouts[] = {"NCHW", "NHWC", "NCHW16c"};

Shape InputShape(const PoolingLayer& layer, int layout) {
  switch (layout) {
    case 0:
      return Shape{1, layer.channels, layer.size, layer.size};
    case 1:
      return Shape{1, layer.size, layer.size, layer.channels};
    default:
      return Shape{1, layer.channels / 16, layer.size, layer.size, 16};
  }
}

void BM_Pooling(benchmark::State& state) {
  const PoolingLayer& layer = kLayers[state.range(0)];
  const int layout = static_cast<int>(state.range(1));
  cpu::ScopedIntraOpThreads threads(static_cast<int>(state.range(2)));
  const bool evict = state.range(3) != 0;
  const OpDef& op = OpRegistry::Global().Get("Pooling");
  std::map<std::string, std::string> raw = {
      {"kernel", layer.kernel},     {"stride", layer.stride},
      {"pad", layer.pad},           {"pool_type", layer.pool_type},
      {"layout", kLayouts[layout]}, {"pooling_convention", layer.convention}};
  const Attributes attrs = ParseOpAttributes(op, raw, "pool");
  ShapeInference shapes;
  shapes.node = "pool";
  shapes.inputs = {InputShape(layer, layout)};
  InferShapes(op, attrs, shapes);
  const Shape in_shape = *shapes.inputs[0], out_shape = *shapes.outputs[0];
  cpu::AlignedVector<float> in(static_cast<size_t>(in_shape.size()));
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f;
  cpu::AlignedVector<float> out(static_cast<size_t>(out_shape.size()));
  std::vector<float> scratch_bytes(evict ? 4 << 20 : 0);
  ScratchSpace scratch(Context::CPU());
  OpContext ctx{Context::CPU(), false, nullptr, &scratch, nullptr, nullptr, "pool"};
  const std::vector<TensorView> inputs = {{in.data(), in_shape, DType::kFloat32, Context::CPU()}};
  const std::vector<TensorView> outputs = {
      {out.data(), out_shape, DType::kFloat32, Context::CPU()}};
  const std::vector<WriteMode> req = {WriteMode::kWrite};
  const ForwardKernel& forward = ForwardKernelFor(op, DeviceType::kCPU);
  for (auto _ : state) {
    if (evict) {
      state.PauseTiming();
      for (size_t i = 0; i < scratch_bytes.size(); i += 16) scratch_bytes[i] += 1.0f;
      benchmark::DoNotOptimize(scratch_bytes.data());
      state.ResumeTiming();
    }
    forward(ctx, attrs, inputs, outputs, req);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>((in.size() + out.size()) * sizeof(float)));
  std::ostringstream label;
  label << layer.name << " " << kLayouts[layout] << ", " << state.range(2) << " thread(s), "
        << (evict ? "evicted" : "hot");
  state.SetLabel(label.str());
}
BENCHMARK(BM_Pooling)
    ->ArgsProduct(
        {benchmark::CreateDenseRange(0, std::size(kLayers) - 1, 1), {0, 1, 2}, {1, 2}, {0, 1}})
    ->ArgNames({"layer", "layout", "threads", "evict"})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace mxlite

BENCHMARK_MAIN();
