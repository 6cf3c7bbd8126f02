// The element-wise vector functions (ops/cpu/vector_math.h: exp, sigmoid, silu, gelu) on one
// thread, over 16384 floats that stay in L1, on each instruction set this CPU runs, forced
// through the detail::*With entry points (the ops use the best one).
//
//   taskset -c 0 build/bin/vector_math_bench --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true
//
// Args: function (0 exp, 1 sigmoid, 2 silu, 3 gelu), instruction set (0 Eigen, 1 AVX2, 2 AVX-512;
// skipped where the CPU lacks it). Reported: items_per_second, floats per second (ns per float =
// 1e9 over it).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ops/cpu/avx512.h"
#include "ops/cpu/gemm.h"
#include "ops/cpu/vector_math.h"

namespace mxlite {
namespace {

using cpu::VectorIsa;
using Function = void (*)(VectorIsa, const float*, float*, int64_t);

constexpr Function kFunctions[] = {cpu::detail::ExpFloatsWith, cpu::detail::SigmoidFloatsWith,
                                   cpu::detail::SiluFloatsWith, cpu::detail::GeluFloatsWith};
constexpr const char* kFunctionNames[] = {"exp", "sigmoid", "silu", "gelu"};
constexpr VectorIsa kIsas[] = {VectorIsa::kEigen, VectorIsa::kAvx2, VectorIsa::kAvx512};
constexpr const char* kIsaNames[] = {"eigen", "avx2", "avx512"};

bool Runs(VectorIsa isa) {
  return isa == VectorIsa::kEigen || (isa == VectorIsa::kAvx2 && cpu::CpuSupportsAvx2Fma()) ||
         (isa == VectorIsa::kAvx512 && cpu::CpuSupportsAvx512f());
}

void BM_VectorFunction(benchmark::State& state) {
  const Function function = kFunctions[state.range(0)];
  const VectorIsa isa = kIsas[state.range(1)];
  if (!Runs(isa)) {
    state.SkipWithError("this CPU does not run the instruction set");
    return;
  }
  constexpr int64_t kFloats = 16384;
  std::vector<float> x(kFloats), y(kFloats);
  for (int64_t i = 0; i < kFloats; ++i) x[i] = static_cast<float>(i % 1000) / 250.0f - 2.0f;
  for (auto _ : state) {
    function(isa, x.data(), y.data(), kFloats);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * kFloats);  // floats per second
  state.SetLabel(std::string(kFunctionNames[state.range(0)]) + " " + kIsaNames[state.range(1)]);
}
BENCHMARK(BM_VectorFunction)->ArgsProduct({{0, 1, 2, 3}, {0, 1, 2}})->UseRealTime();

}  // namespace
}  // namespace mxlite

BENCHMARK_MAIN();
