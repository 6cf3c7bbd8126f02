// Layout transforms (cpu::TransposeAxes) on the activations the convolution planner moves between
// NCHW and NHWC: a network's 3-channel input, MobileNet-V2's stem output, a ResNet stage,
// GoogLeNet's inception outputs (28x28 and 14x14) and a small 28x28 map.
//
//   build/bin/transpose_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Args: shape index, direction (0: NCHW -> NHWC, 1: NHWC -> NCHW), threads, evict (1: stream
// 16 MB through the caches before each run, as for a value produced and consumed in a pass whose
// other layers have moved on, as the planner times a transform on the CPU; 0: both buffers hot).
// Reported: GB/s moved (bytes read plus bytes written).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <iterator>
#include <sstream>
#include <vector>

#include "core/shape.h"
#include "ops/cpu/parallel.h"
#include "ops/cpu/transpose.h"

namespace mxlite {
namespace {

// Written NCHW.
const Shape kShapes[] = {Shape{1, 3, 224, 224}, Shape{1, 32, 112, 112}, Shape{1, 16, 112, 112},
                         Shape{8, 64, 56, 56},  Shape{1, 4, 56, 56},    Shape{1, 256, 28, 28},
                         Shape{1, 512, 14, 14}, Shape{1, 64, 28, 28}};

void StreamThroughCaches(std::vector<float>& scratch) {
  for (size_t i = 0; i < scratch.size(); i += 16) scratch[i] += 1.0f;
  benchmark::DoNotOptimize(scratch.data());
}

void BM_LayoutTransform(benchmark::State& state) {
  const Shape nchw = kShapes[state.range(0)];
  const bool to_nhwc = state.range(1) == 0;
  cpu::ScopedIntraOpThreads threads(static_cast<int>(state.range(2)));
  const bool evict = state.range(3) != 0;
  const Shape nhwc{nchw[0], nchw[2], nchw[3], nchw[1]};
  const Shape in_shape = to_nhwc ? nchw : nhwc;
  const std::vector<int> axes =
      to_nhwc ? std::vector<int>{0, 2, 3, 1} : std::vector<int>{0, 3, 1, 2};
  std::vector<float> in(static_cast<size_t>(in_shape.size()), 1.0f), out(in.size(), 0.0f);
  std::vector<float> scratch(evict ? 4 << 20 : 0);
  for (auto _ : state) {
    if (evict) {
      state.PauseTiming();
      StreamThroughCaches(scratch);
      state.ResumeTiming();
    }
    cpu::TransposeAxes(in.data(), in_shape, axes, out.data(), DType::kFloat32);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * 2 * static_cast<int64_t>(in.size() * sizeof(float)));
  std::ostringstream label;
  label << (to_nhwc ? "NCHW->NHWC " : "NHWC->NCHW ") << nchw << ", " << state.range(2)
        << " thread(s), " << (evict ? "evicted" : "hot");
  state.SetLabel(label.str());
}

void LayoutTransformArgs(benchmark::internal::Benchmark* bench) {
  for (int64_t shape = 0; shape < static_cast<int64_t>(std::size(kShapes)); ++shape) {
    for (int64_t direction : {0, 1}) {
      for (int64_t threads : {1, 2}) {
        for (int64_t evict : {0, 1}) bench->Args({shape, direction, threads, evict});
      }
    }
  }
  bench->ArgNames({"shape", "direction", "threads", "evict"})->UseRealTime();
}

BENCHMARK(BM_LayoutTransform)->Apply(LayoutTransformArgs);

}  // namespace
}  // namespace mxlite

BENCHMARK_MAIN();
