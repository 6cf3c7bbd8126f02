// GFLOP/s of every CPU convolution algorithm (ops/cpu/conv_algorithms.h) that supports the layer,
// forward, backward-data and backward-filter, float32, batch 1 (and 16 on the 3x3 layers), 1 and 2
// intra-op threads, on the ResNet-50 layer set (bench/resnet50_layers.h). NCHW algorithms run NCHW
// tensors, NHWC ones NHWC tensors. GFLOP/s counts the direct convolution's 2 * multiply-adds for
// every algorithm (so Winograd's figure is "effective"). The tuner uses the same calls to time its
// candidates.
//
// BM_DepthwiseNhwc: depthwise_direct NHWC forward on MobileNet-V2's 3x3 depthwise layers and 5x5 /
// 7x7 ones (batch 1, 1 and 2 threads), the input hot or evicted from the caches before each run (as
// in a network, where the previous layer just wrote it, partly out to L3), the weight prepared or
// not. BM_MobileNetFirstLayer: MobileNet-V2's 3-channel first layer under every forward algorithm.
// BM_MobileNetPointwise: MobileNet-V2's 1x1 layers at 14x14 and 7x7 under every forward algorithm,
// caches hot or evicted (and the input read back in) before each run.
// BM_DepthwiseBlock: MobileNet-V2's inverted-residual blocks at 112x112 and 56x56 (expand 1x1,
// depthwise 3x3, project 1x1, NHWC) run fused (ops/cpu/depthwise_block.h), 1 and 2 threads, hot.
//
//   build-bench/bin/conv_algorithms_bench --benchmark_min_time=0.1
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/resnet50_layers.h"
#include "ops/cpu/cache_state.h"
#include "ops/cpu/conv_algorithms.h"
#include "ops/cpu/depthwise_block.h"
#include "ops/cpu/parallel.h"

namespace mxlite::cpu {
namespace {

using mxlite::bench::ConvLayer;
using mxlite::bench::kResNet50Layers;
using mxlite::bench::LayerGeometry;

constexpr ConvDirection kDirections[] = {ConvDirection::kForward, ConvDirection::kBackwardData,
                                         ConvDirection::kBackwardFilter};

std::vector<float> RandomValues(int64_t count, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(static_cast<size_t>(count));
  for (float& value : values) value = uniform(random);
  return values;
}

// Args: algorithm index, layer, direction, threads, batch, prepared (forward: 1 = the weight
// prepared once, as an inference executor keeps it; 0 = as every training call runs).
void BM_ConvAlgorithm(benchmark::State& state) {
  const ConvAlgorithm& algorithm = *CpuConvAlgorithms()[state.range(0)];
  const ConvLayer& layer = kResNet50Layers[state.range(1)];
  const ConvDirection direction = kDirections[state.range(2)];
  ScopedIntraOpThreads threads(static_cast<int>(state.range(3)));
  const ConvGeometry g = LayerGeometry(layer, algorithm.layout(), state.range(4));
  std::vector<float> data = RandomValues(g.batch * g.in_channels * g.in_spatial(), 1);
  std::vector<float> weight = RandomValues(g.out_channels * g.patch_size(), 2);
  std::vector<float> bias = RandomValues(g.out_channels, 3);
  std::vector<float> output = RandomValues(g.batch * g.out_channels * g.out_spatial(), 4);
  std::vector<float> data_grad(data.size()), weight_grad(weight.size());
  ConvTensors<float> tensors;
  tensors.data = data.data();
  tensors.weight = weight.data();
  tensors.bias = bias.data();
  tensors.output_grad = output.data();
  tensors.output = output.data();
  tensors.data_grad = data_grad.data();
  tensors.weight_grad = weight_grad.data();
  std::unique_ptr<PreparedConvWeight> prepared;
  if (state.range(5) == 1) prepared = algorithm.PrepareWeight(g, weight.data());
  tensors.prepared_weight = prepared.get();
  for (auto _ : state) {
    ScratchSpace scratch(Context::CPU());
    algorithm.Run(direction, g, tensors, scratch);
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * g.multiply_adds() / 1e9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
  state.counters["workspace_MB"] =
      static_cast<double>(algorithm.WorkspaceBytes(g, direction, DType::kFloat32)) / 1e6;
  state.SetLabel(std::string(algorithm.name()) + " " + ActivationLayoutName(algorithm.layout()) +
                 " " + ConvDirectionName(direction) + " " + layer.name + " batch " +
                 std::to_string(g.batch) + ", " + std::to_string(state.range(3)) + " thread(s)" +
                 (prepared != nullptr ? ", weight prepared" : ""));
}

// Only the (algorithm, layer, direction) triples the algorithm supports; batch 16 on 3x3 layers.
void ConvAlgorithmArgs(benchmark::internal::Benchmark* bench) {
  const auto& algorithms = CpuConvAlgorithms();
  for (int64_t layer = 0; layer < static_cast<int64_t>(std::size(kResNet50Layers)); ++layer) {
    for (int64_t direction = 0; direction < 3; ++direction) {
      for (int64_t a = 0; a < static_cast<int64_t>(algorithms.size()); ++a) {
        const ConvAlgorithm& algorithm = *algorithms[a];
        const ConvGeometry g = LayerGeometry(kResNet50Layers[layer], algorithm.layout(), 1);
        if (!algorithm.Supports(g, kDirections[direction])) continue;
        const bool prepares =
            direction == 0 &&
            algorithm.PrepareWeight(g, RandomValues(g.out_channels * g.patch_size(), 2).data()) !=
                nullptr;
        for (int64_t batch : {1, 16}) {
          if (batch > 1 && kResNet50Layers[layer].kernel != 3) continue;
          for (int64_t threads : {1, 2}) {
            for (int64_t prepared = 0; prepared <= (prepares ? 1 : 0); ++prepared) {
              bench->Args({a, layer, direction, threads, batch, prepared});
            }
          }
        }
      }
    }
  }
}
BENCHMARK(BM_ConvAlgorithm)
    ->Apply(ConvAlgorithmArgs)
    ->ArgNames({"algorithm", "layer", "direction", "threads", "batch", "prepared"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// Depthwise layers (pad kernel / 2): channels, input height = width, stride, kernel. MobileNet-V2's
// 3x3 layers, then EfficientNet-B0's and MNASNet's 5x5 ones and ConvNeXt-T's 7x7 stage-1 layer.
struct DepthwiseLayer {
  int64_t channels, size, stride, kernel;
};
constexpr DepthwiseLayer kDepthwiseLayers[] = {
    {32, 112, 1, 3}, {96, 112, 2, 3}, {144, 56, 1, 3}, {144, 56, 2, 3}, {192, 28, 2, 3},
    {384, 14, 1, 3}, {576, 14, 1, 3}, {960, 7, 1, 3},  {192, 28, 1, 3}, {576, 14, 2, 3},
    {144, 56, 2, 5}, {240, 28, 1, 5}, {72, 56, 2, 5},  {672, 14, 1, 5}, {96, 56, 1, 7}};

// Random forward operands of a geometry (data, weight and bias; an output to write) and the
// ConvTensors that point at them.
struct ForwardOperands {
  explicit ForwardOperands(const ConvGeometry& g)
      : data(RandomValues(g.batch * g.in_channels * g.in_spatial(), 1)),
        weight(RandomValues(g.out_channels * g.patch_size(), 2)),
        bias(RandomValues(g.out_channels, 3)),
        output(static_cast<size_t>(g.batch * g.out_channels * g.out_spatial())) {
    tensors.data = data.data();
    tensors.weight = weight.data();
    tensors.bias = bias.data();
    tensors.output = output.data();
  }
  ForwardOperands(const ForwardOperands&) = delete;  // tensors points into the vectors
  ForwardOperands& operator=(const ForwardOperands&) = delete;

  std::vector<float> data, weight, bias, output;
  ConvTensors<float> tensors;
};

// Before each timed run, outside the timed span, puts the caches where a network's pass leaves
// them (ops/cpu/cache_state.h): `bytes` written through them (16 MB: out of L2; 64 MB: out of L3
// too), then the input read back in by the intra-op threads (which also wakes the pool's helpers,
// asleep after the write). 0 bytes: no-op, the caches stay hot.
class PassCaches {
 public:
  PassCaches(size_t bytes, const ForwardOperands& operands, const ConvGeometry& g)
      : evictor_(bytes > 0 ? std::make_unique<CacheEvictor>(bytes) : nullptr),
        input_(operands.data.data()),
        input_bytes_(static_cast<size_t>(g.batch * g.in_channels * g.in_spatial()) *
                     sizeof(float)) {}
  void Prepare(benchmark::State& state) {
    if (!evictor_) return;
    state.PauseTiming();
    evictor_->Evict();
    TouchForReading(input_, input_bytes_);
    state.ResumeTiming();
  }

 private:
  std::unique_ptr<CacheEvictor> evictor_;
  const void* input_;
  size_t input_bytes_;
};

// The benchmark loop of a forward run on `operands` (caches set before each run by `caches`), and
// its GFLOP/s counter.
void TimeForward(benchmark::State& state, const ConvAlgorithm& algorithm, const ConvGeometry& g,
                 const ForwardOperands& operands, PassCaches& caches) {
  for (auto _ : state) {
    caches.Prepare(state);
    ScratchSpace scratch(Context::CPU());
    algorithm.Run(ConvDirection::kForward, g, operands.tensors, scratch);
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * g.multiply_adds() / 1e9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

// Args: layer, threads, evict (1: stream 16 MB through the caches before each run), prepared (1:
// the weight prepared once, as inference keeps it; 0: transposed by every call, as training).
void BM_DepthwiseNhwc(benchmark::State& state) {
  const DepthwiseLayer& layer = kDepthwiseLayers[state.range(0)];
  ScopedIntraOpThreads threads(static_cast<int>(state.range(1)));
  const ConvLayer as_layer{"",           layer.channels,   layer.channels, layer.kernel,
                           layer.stride, layer.kernel / 2, layer.size};
  ConvGeometry g = LayerGeometry(as_layer, ConvLayout::kNHWC, 1);
  g.groups = layer.channels;
  const ConvAlgorithm& algorithm = *FindCpuConvAlgorithm("depthwise_direct", ConvLayout::kNHWC);
  ForwardOperands operands(g);
  PassCaches caches(state.range(2) ? size_t{16} << 20 : 0, operands, g);
  const std::unique_ptr<PreparedConvWeight> prepared =
      state.range(3) ? algorithm.PrepareWeight(g, operands.weight.data()) : nullptr;
  operands.tensors.prepared_weight = prepared.get();
  TimeForward(state, algorithm, g, operands, caches);
  state.SetLabel("depthwise_direct NHWC " + std::to_string(layer.channels) + " channels " +
                 std::to_string(layer.size) + "x" + std::to_string(layer.size) + " kernel " +
                 std::to_string(layer.kernel) + " stride " + std::to_string(layer.stride) + ", " +
                 std::to_string(state.range(1)) + " thread(s), input " +
                 (state.range(2) ? "evicted" : "hot") + ", weight " +
                 (state.range(3) ? "prepared" : "per call"));
}
BENCHMARK(BM_DepthwiseNhwc)
    ->ArgsProduct({benchmark::CreateDenseRange(0, std::size(kDepthwiseLayers) - 1, 1),
                   {1, 2},
                   {0, 1},
                   {0, 1}})
    ->ArgNames({"layer", "threads", "evict", "prepared"})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// MobileNet-V2's first layer (3 -> 32 channels, 3x3, stride 2, pad 1, 224x224, batch 1) in
// `layout`: the planner weighs direct_nchw (and a transform of its 1.6 MB output) against
// direct_nhwc (and a transform of the 3-channel input).
constexpr ConvLayer kMobileNetFirstLayer = {"3x3 3->32 s2 224x224", 3, 32, 3, 2, 1, 224};
ConvGeometry MobileNetFirstLayer(ConvLayout layout) {
  return LayerGeometry(kMobileNetFirstLayer, layout, 1);
}

// Args: algorithm index (every forward algorithm that supports the layer), threads.
void BM_MobileNetFirstLayer(benchmark::State& state) {
  const ConvAlgorithm& algorithm = *CpuConvAlgorithms()[state.range(0)];
  ScopedIntraOpThreads threads(static_cast<int>(state.range(1)));
  const ConvGeometry g = MobileNetFirstLayer(algorithm.layout());
  ForwardOperands operands(g);
  PassCaches hot(0, operands, g);
  TimeForward(state, algorithm, g, operands, hot);
  state.SetLabel(std::string(algorithm.name()) + " " + ActivationLayoutName(algorithm.layout()) +
                 ", " + std::to_string(state.range(1)) + " thread(s)");
}
void MobileNetFirstLayerArgs(benchmark::internal::Benchmark* bench) {
  const auto& algorithms = CpuConvAlgorithms();
  for (int64_t a = 0; a < static_cast<int64_t>(algorithms.size()); ++a) {
    if (!algorithms[a]->Supports(MobileNetFirstLayer(algorithms[a]->layout()),
                                 ConvDirection::kForward)) {
      continue;
    }
    for (int64_t threads : {1, 2}) bench->Args({a, threads});
  }
}
BENCHMARK(BM_MobileNetFirstLayer)
    ->Apply(MobileNetFirstLayerArgs)
    ->ArgNames({"algorithm", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// MobileNet-V2's pointwise layers at 14x14 and 7x7 (batch 1). Timed alone their weights
// (0.1-1.6 MB) stay in cache from one run to the next; in a pass they come from memory (the
// profiled in-pass times match the evicted runs here, not the hot ones).
constexpr ConvLayer kMobileNetPointwise[] = {
    {"1x1 64->384 14x14", 64, 384, 1, 1, 0, 14}, {"1x1 384->64 14x14", 384, 64, 1, 1, 0, 14},
    {"1x1 96->576 14x14", 96, 576, 1, 1, 0, 14}, {"1x1 576->96 14x14", 576, 96, 1, 1, 0, 14},
    {"1x1 160->960 7x7", 160, 960, 1, 1, 0, 7},  {"1x1 960->160 7x7", 960, 160, 1, 1, 0, 7},
    {"1x1 960->320 7x7", 960, 320, 1, 1, 0, 7},  {"1x1 320->1280 7x7", 320, 1280, 1, 1, 0, 7}};

// Args: algorithm index, layer, threads, evict_mb (MB written before each run, then the input read
// back in: 0 keeps the caches hot; 16 moves the weight out of L2 into L3, where a pass of a small
// network leaves it; 64 moves it out of L3 too, as a pass of MobileNet-V2 mostly does here). The
// weight is prepared once, as inference keeps it.
void BM_MobileNetPointwise(benchmark::State& state) {
  const ConvAlgorithm& algorithm = *CpuConvAlgorithms()[state.range(0)];
  const ConvLayer& layer = kMobileNetPointwise[state.range(1)];
  ScopedIntraOpThreads threads(static_cast<int>(state.range(2)));
  const ConvGeometry g = LayerGeometry(layer, algorithm.layout(), 1);
  ForwardOperands operands(g);
  PassCaches caches(size_t(state.range(3)) << 20, operands, g);
  const std::unique_ptr<PreparedConvWeight> prepared =
      algorithm.PrepareWeight(g, operands.weight.data());
  operands.tensors.prepared_weight = prepared.get();
  TimeForward(state, algorithm, g, operands, caches);
  state.SetLabel(std::string(algorithm.name()) + " " + ActivationLayoutName(algorithm.layout()) +
                 " " + layer.name + ", " + std::to_string(state.range(2)) + " thread(s), " +
                 (state.range(3) ? std::to_string(state.range(3)) + " MB written before each run"
                                 : std::string("caches hot")));
}
void MobileNetPointwiseArgs(benchmark::internal::Benchmark* bench) {
  const auto& algorithms = CpuConvAlgorithms();
  for (int64_t a = 0; a < static_cast<int64_t>(algorithms.size()); ++a) {
    for (int64_t layer = 0; layer < static_cast<int64_t>(std::size(kMobileNetPointwise)); ++layer) {
      const ConvGeometry g = LayerGeometry(kMobileNetPointwise[layer], algorithms[a]->layout(), 1);
      if (!algorithms[a]->Supports(g, ConvDirection::kForward)) continue;
      for (int64_t threads : {1, 2}) {
        for (int64_t evict_mb : {0, 16, 64}) bench->Args({a, layer, threads, evict_mb});
      }
    }
  }
}
BENCHMARK(BM_MobileNetPointwise)
    ->Apply(MobileNetPointwiseArgs)
    ->ArgNames({"algorithm", "layer", "threads", "evict_mb"})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

struct BlockLayer {
  int64_t in_channels, channels, out_channels, size, stride;
};
// features.2, .3, .4 (the blocks whose expanded tensors outgrow L2 at batch 1).
constexpr BlockLayer kMobileNetBlocks[] = {
    {16, 96, 24, 112, 2}, {24, 144, 24, 56, 1}, {24, 144, 32, 56, 2}};

// Args: block, threads.
void BM_DepthwiseBlock(benchmark::State& state) {
  const BlockLayer& layer = kMobileNetBlocks[state.range(0)];
  ScopedIntraOpThreads threads(static_cast<int>(state.range(1)));
  const ConvLayer as_layer{"", layer.channels, layer.channels, 3, layer.stride, 1, layer.size};
  DepthwiseBlockGeometry g;
  g.depthwise = LayerGeometry(as_layer, ConvLayout::kNHWC, 1);
  g.depthwise.groups = layer.channels;
  g.expand = g.project = true;
  g.in_channels = layer.in_channels;
  g.out_channels = layer.out_channels;
  const ConvGeometry& d = g.depthwise;
  const std::vector<float> data = RandomValues(d.in_spatial() * g.in_channels, 1);
  const std::vector<float> expand = RandomValues(layer.channels * g.in_channels, 2);
  const std::vector<float> by_tap = RandomValues(9 * layer.channels, 3);
  const std::vector<float> project = RandomValues(g.out_channels * layer.channels, 4);
  std::vector<float> output(static_cast<size_t>(d.out_spatial() * g.out_channels));
  DepthwiseBlockTensors tensors;
  tensors.data = data.data();
  tensors.expand.weight = expand.data();
  tensors.depthwise.by_tap = by_tap.data();
  tensors.project.weight = project.data();
  tensors.output = output.data();
  for (auto _ : state) {
    ScratchSpace scratch(Context::CPU());
    DepthwiseBlockForward(g, tensors, scratch);
    benchmark::ClobberMemory();
  }
  const double multiply_adds =
      static_cast<double>(d.in_spatial()) * g.in_channels * layer.channels +
      d.multiply_adds() + static_cast<double>(d.out_spatial()) * layer.channels * g.out_channels;
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * multiply_adds / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel("block " + std::to_string(layer.in_channels) + "->" +
                 std::to_string(layer.channels) + "->" + std::to_string(layer.out_channels) +
                 " at " + std::to_string(layer.size) + "x" + std::to_string(layer.size) +
                 " stride " + std::to_string(layer.stride) + ", " +
                 std::to_string(state.range(1)) + " thread(s)");
}
BENCHMARK(BM_DepthwiseBlock)
    ->ArgsProduct({benchmark::CreateDenseRange(0, std::size(kMobileNetBlocks) - 1, 1), {1, 2}})
    ->ArgNames({"block", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace mxlite::cpu

BENCHMARK_MAIN();
