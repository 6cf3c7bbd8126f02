// GFLOP/s of the CPU Convolution forward (im2col + GEMM, NCHW, float32, with bias) on the
// ResNet-50 layer set, batch 1 and 16, 1 and 2 intra-op threads; and the packed Sgemm on a large
// square product, the machine's GEMM peak that the convolution is measured against.
// bench/conv_torch.py measures PyTorch on the same layers.
//
//   build-bench/bin/conv_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// The op runs as a user's graph runs it: through the registry's CPU kernel, with a ScratchSpace
// from the pooled allocator per call (pages are reused after the first iteration).
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "bench/resnet50_layers.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/parallel.h"
#include "ops/operator.h"

namespace mxlite {
namespace {

using bench::ConvLayer;
using bench::kResNet50Layers;

std::vector<float> RandomValues(int64_t count, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(static_cast<size_t>(count));
  for (float& value : values) value = uniform(random);
  return values;
}

// Args: layer index, batch, intra-op threads.
void BM_ConvolutionForward(benchmark::State& state) {
  const ConvLayer& layer = kResNet50Layers[state.range(0)];
  const int64_t batch = state.range(1);
  cpu::ScopedIntraOpThreads threads(static_cast<int>(state.range(2)));
  const std::string k = std::to_string(layer.kernel), s = std::to_string(layer.stride),
                    p = std::to_string(layer.pad);
  const OpDef& op = OpRegistry::Global().Get("Convolution");
  const Attributes attrs = ParseOpAttributes(op,
                                             {{"kernel", "(" + k + "," + k + ")"},
                                              {"stride", "(" + s + "," + s + ")"},
                                              {"pad", "(" + p + "," + p + ")"},
                                              {"num_filter", std::to_string(layer.out_channels)}},
                                             "bench");
  const Shape data_shape{batch, layer.in_channels, layer.size, layer.size};
  ShapeInference shapes;
  shapes.node = "bench";
  shapes.inputs = {data_shape, std::nullopt, std::nullopt};
  InferShapes(op, attrs, shapes);

  std::vector<std::vector<float>> buffers;
  std::vector<TensorView> inputs, outputs;
  for (size_t i = 0; i < shapes.inputs.size(); ++i) {
    buffers.push_back(RandomValues(shapes.inputs[i]->size(), i + 1));
    inputs.push_back({buffers.back().data(), *shapes.inputs[i], DType::kFloat32, Context::CPU()});
  }
  buffers.push_back(RandomValues(shapes.outputs[0]->size(), 9));
  outputs.push_back({buffers.back().data(), *shapes.outputs[0], DType::kFloat32, Context::CPU()});

  const ForwardKernel& forward = ForwardKernelFor(op, DeviceType::kCPU);
  const Shape& out = *shapes.outputs[0];
  const double flops = 2.0 * out.size() * layer.in_channels * layer.kernel * layer.kernel;
  for (auto _ : state) {
    ScratchSpace scratch(Context::CPU());
    OpContext ctx{Context::CPU(), false, nullptr, &scratch, nullptr, nullptr, "bench"};
    forward(ctx, attrs, inputs, outputs, {WriteMode::kWrite});
    benchmark::DoNotOptimize(buffers.back().data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(std::string(layer.name) + " batch " + std::to_string(batch) + ", " +
                 std::to_string(state.range(2)) + " thread(s)");
}

void ConvolutionArgs(benchmark::internal::Benchmark* bench) {
  for (int64_t threads : {1, 2}) {
    for (int64_t batch : {1, 16}) {
      for (int64_t layer = 0; layer < static_cast<int64_t>(std::size(kResNet50Layers)); ++layer) {
        bench->Args({layer, batch, threads});
      }
    }
  }
}
BENCHMARK(BM_ConvolutionForward)
    ->Apply(ConvolutionArgs)
    ->ArgNames({"layer", "batch", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The machine's GEMM peak as this build reaches it: a 2048^3 Sgemm. Args: intra-op threads.
void BM_SgemmPeak(benchmark::State& state) {
  cpu::ScopedIntraOpThreads threads(static_cast<int>(state.range(0)));
  const int64_t n = 2048;
  std::vector<float> a = RandomValues(n * n, 1), b = RandomValues(n * n, 2), c(n * n);
  for (auto _ : state) {
    cpu::Sgemm(cpu::Transpose::kNo, cpu::Transpose::kNo, n, n, n, 1.0f, a.data(), n, b.data(), n,
               0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(cpu::ActiveGemm().name);
}
BENCHMARK(BM_SgemmPeak)
    ->Arg(1)
    ->Arg(2)
    ->ArgNames({"threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mxlite

BENCHMARK_MAIN();
