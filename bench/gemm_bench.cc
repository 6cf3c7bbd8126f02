// GEMM throughput: mxlite's Sgemm against Eigen 3.4, at large square sizes and at the im2col GEMM
// shapes of ResNet-50 convolutions (batch 1), with 1 and 2 threads, as GFLOP/s and as a share of
// this machine's measured fp32 FMA peak (BM_FmaPeak, measured the same way at start-up).
//
//   build-gemm/bin/gemm_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// BM_PointwiseNhwc/<plain|packed_b>/<layer>/threads:<t>: the GEMM of an NHWC 1x1 convolution of
// MobileNet-V2 (C (pixels x out) = X (pixels x in) * W^T, W stored out x in) with W packed on every
// call (plain) or once beforehand (packed_b: PackedGemmOperand, as inference keeps it).
//
// Rows: BM_Sgemm/<impl>/<shape>/threads:<t>, impl = mxlite (Sgemm as shipped: the kernel it picks
// on this CPU, named in the row's label), mxlite_avx2 (the AVX2+FMA 6x16 kernel forced, to compare
// with the AVX-512 pair kernel where that is picked), eigen_avx2 (Eigen's GEMM compiled in this file for AVX2+FMA, as a user building
// with -march=native gets it), eigen_fallback (mxlite's portable path: Eigen as the library
// compiles it). Counters: GFLOPS, and pct_peak = GFLOPS / measured 256-bit FMA peak for the same
// thread count (a 512-bit kernel on a CPU with two 512-bit FMA pipes can pass 100).

// Eigen is the peer and is compiled for this CPU (bench/CMakeLists.txt builds this file with
// -mavx2 -mfma). The library itself targets baseline x86-64 and picks its kernel at run time.

#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ops/cpu/gemm.h"
#include "ops/cpu/parallel.h"

namespace {

using mxlite::cpu::ParallelFor;
using mxlite::cpu::ScopedIntraOpThreads;
using mxlite::cpu::Transpose;

// ---- Peak: 12 independent FMA chains per thread (latency 4 x 2 pipes needs >= 8) ---------------

constexpr int kPeakChains = 12;

float FmaChains(int64_t iterations) {
  __m256 acc[kPeakChains];
  for (int i = 0; i < kPeakChains; ++i) acc[i] = _mm256_set1_ps(0.001f * static_cast<float>(i));
  const __m256 scale = _mm256_set1_ps(0.9999f), offset = _mm256_set1_ps(0.0001f);
  for (int64_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kPeakChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], scale, offset);
  }
  __m256 sum = acc[0];
  for (int i = 1; i < kPeakChains; ++i) sum = _mm256_add_ps(sum, acc[i]);
  return _mm256_cvtss_f32(sum);
}

constexpr double kFlopsPerPeakIteration = 2.0 * 8 * kPeakChains;

// GFLOP/s of `threads` threads running FMA chains together on the intra-op pool.
double MeasurePeakGflops(int threads, int64_t iterations) {
  ScopedIntraOpThreads scope(threads);
  std::vector<float> sink(threads);
  const auto start = std::chrono::steady_clock::now();
  ParallelFor(threads, [&](int64_t t) { sink[t] = FmaChains(iterations); });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  benchmark::DoNotOptimize(sink.data());
  return kFlopsPerPeakIteration * static_cast<double>(iterations) * threads / seconds / 1e9;
}

// Best of a few short runs, once per thread count (the reference for pct_peak).
double PeakGflops(int threads) {
  static double cached[3] = {0, 0, 0};
  if (threads < 1 || threads > 2) return MeasurePeakGflops(threads, 50'000'000);
  if (cached[threads] == 0) {
    for (int run = 0; run < 5; ++run) {
      cached[threads] = std::max(cached[threads], MeasurePeakGflops(threads, 50'000'000));
    }
  }
  return cached[threads];
}

void BM_FmaPeak(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  constexpr int64_t kIterations = 20'000'000;
  ScopedIntraOpThreads scope(threads);
  std::vector<float> sink(threads);
  for (auto _ : state) {
    ParallelFor(threads, [&](int64_t t) { sink[t] = FmaChains(kIterations); });
    benchmark::DoNotOptimize(sink.data());
  }
  state.counters["GFLOPS"] = benchmark::Counter(kFlopsPerPeakIteration * kIterations * threads *
                                                    static_cast<double>(state.iterations()) / 1e9,
                                                benchmark::Counter::kIsRate);
  state.SetLabel("12 chains of vfmadd231ps ymm per thread");
}
BENCHMARK(BM_FmaPeak)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---- GEMM ---------------------------------------------------------------------------------------

struct GemmShape {
  const char* name;
  int64_t m, n, k;
};

// im2col GEMM of a convolution: M = out channels, N = out H*W*batch, K = in channels * kh * kw.
const GemmShape kShapes[] = {
    {"square512", 512, 512, 512},
    {"square1024", 1024, 1024, 1024},
    {"square2048", 2048, 2048, 2048},
    {"conv3x3_64to64_56", 64, 56 * 56, 64 * 9},
    {"conv1x1_256to64_56", 64, 56 * 56, 256},
    {"conv3x3_128to128_28", 128, 28 * 28, 128 * 9},
    {"conv3x3_256to256_14", 256, 14 * 14, 256 * 9},
    {"conv1x1_1024to256_14", 256, 14 * 14, 1024},
    {"conv7x7s2_3to64_224", 64, 112 * 112, 3 * 49},
};

enum class Impl { kMxlite, kMxliteAvx2, kEigenAvx2, kEigenFallback };

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMajor>;
using Map = Eigen::Map<RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;
using ConstColumnsMap = Eigen::Map<const RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;

// Eigen's GEMM has no threads of its own without OpenMP: give each thread half the columns of C,
// the same split mxlite makes for these shapes.
void EigenAvx2Gemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c,
                   int threads) {
  const ConstMap a_map(a, m, k);
  ParallelFor(threads, [&](int64_t t) {
    const int64_t begin = n * t / threads, end = n * (t + 1) / threads;
    const ConstColumnsMap b_block(b + begin, k, end - begin, Eigen::OuterStride<>(n));
    Map c_block(c + begin, m, end - begin, Eigen::OuterStride<>(n));
    c_block.noalias() = a_map * b_block;
  });
}

mxlite::cpu::GemmImplementation ImplementationFor(Impl impl) {
  switch (impl) {
    case Impl::kMxliteAvx2: return mxlite::cpu::GemmImplementation::kAvx2Fma;
    case Impl::kEigenFallback: return mxlite::cpu::GemmImplementation::kEigen;
    default: return mxlite::cpu::GemmImplementation::kAuto;
  }
}

void BM_Sgemm(benchmark::State& state, Impl impl, GemmShape shape, int threads) {
  const auto [name, m, n, k] = shape;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(m * k), b(k * n), c(m * n, 0.0f);
  for (float& x : a) x = dist(rng);
  for (float& x : b) x = dist(rng);

  ScopedIntraOpThreads scope(threads);
  mxlite::cpu::SetGemmImplementation(ImplementationFor(impl));
  const auto run = [&] {
    if (impl == Impl::kEigenAvx2) {
      EigenAvx2Gemm(m, n, k, a.data(), b.data(), c.data(), threads);
    } else {
      mxlite::cpu::Sgemm(Transpose::kNo, Transpose::kNo, m, n, k, 1.0f, a.data(), k, b.data(), n,
                         0.0f, c.data(), n);
    }
  };
  run();  // warm-up: packing buffers, pool threads, caches
  for (auto _ : state) {
    run();
    benchmark::ClobberMemory();
  }
  const double flops = 2.0 * m * n * k;
  const double gflops_total = flops * static_cast<double>(state.iterations()) / 1e9;
  state.counters["GFLOPS"] = benchmark::Counter(gflops_total, benchmark::Counter::kIsRate);
  // A rate divided by the peak: kIsRate divides by the elapsed time.
  state.counters["pct_peak"] =
      benchmark::Counter(100.0 * gflops_total / PeakGflops(threads), benchmark::Counter::kIsRate);
  state.SetLabel(impl == Impl::kEigenAvx2
                     ? std::string("Eigen ") + Eigen::SimdInstructionSetsInUse()
                     : mxlite::cpu::ActiveGemm().ToString());
  mxlite::cpu::SetGemmImplementation(mxlite::cpu::GemmImplementation::kAuto);
}

// NHWC 1x1 convolutions of MobileNet-V2 at batch 1 as GEMMs: m = pixels, n = out, k = in channels;
// its classifier (one row: the row-vector path, or the packed path with a pre-packed weight); and
// the per-token Linear layers of ConvNeXt-T (m = pixels of a stage) and ViT-B/16 (197 tokens).
const GemmShape kPointwiseShapes[] = {
    {"mbv2_16to96_112", 112 * 112, 96, 16}, {"mbv2_24to144_56", 56 * 56, 144, 24},
    {"mbv2_144to24_56", 56 * 56, 24, 144},  {"mbv2_384to64_14", 14 * 14, 64, 384},
    {"mbv2_576to96_14", 14 * 14, 96, 576},  {"mbv2_960to160_7", 7 * 7, 160, 960},
    {"mbv2_960to320_7", 7 * 7, 320, 960},   {"mbv2_320to1280_7", 7 * 7, 1280, 320},
    {"mbv2_classifier_b1", 1, 1000, 1280},  // FullyConnected 1280 -> 1000 at batch 1
    {"convnext_96to384_56", 56 * 56, 384, 96},  {"convnext_384to96_56", 56 * 56, 96, 384},
    {"convnext_384to1536_14", 14 * 14, 1536, 384}, {"convnext_1536to384_14", 14 * 14, 384, 1536},
    {"convnext_768to3072_7", 7 * 7, 3072, 768}, {"convnext_3072to768_7", 7 * 7, 768, 3072},
    {"vit_768to2304_197", 197, 2304, 768},      {"vit_3072to768_197", 197, 768, 3072},
};

void BM_PointwiseNhwc(benchmark::State& state, bool packed_b, GemmShape shape, int threads) {
  const auto [name, m, n, k] = shape;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(m * k), w(n * k), c(m * n);
  for (float& v : x) v = dist(rng);
  for (float& v : w) v = dist(rng);
  ScopedIntraOpThreads scope(threads);
  const mxlite::cpu::PackedGemmOperand packed = mxlite::cpu::PackedGemmOperand::Pack(
      mxlite::cpu::PackedGemmOperand::Side::kB, Transpose::kYes, k, n, w.data(), k);
  const auto run = [&] {
    if (packed_b) {
      mxlite::cpu::Sgemm(Transpose::kNo, m, 1.0f, x.data(), k, packed, 0.0f, c.data(), n);
    } else {
      mxlite::cpu::Sgemm(Transpose::kNo, Transpose::kYes, m, n, k, 1.0f, x.data(), k, w.data(), k,
                         0.0f, c.data(), n);
    }
  };
  run();
  for (auto _ : state) {
    run();
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPS"] = benchmark::Counter(
      2.0 * m * n * k * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
  state.SetLabel(mxlite::cpu::ActiveGemm().ToString());
}

void RegisterGemmBenchmarks() {
  const std::pair<Impl, const char*> impls[] = {{Impl::kMxlite, "mxlite"},
                                                {Impl::kMxliteAvx2, "mxlite_avx2"},
                                                {Impl::kEigenAvx2, "eigen_avx2"},
                                                {Impl::kEigenFallback, "eigen_fallback"}};
  for (const GemmShape& shape : kShapes) {
    for (int threads : {1, 2}) {
      for (const auto& [impl, impl_name] : impls) {
        const std::string name = std::string("BM_Sgemm/") + impl_name + "/" + shape.name +
                                 "/threads:" + std::to_string(threads);
        benchmark::RegisterBenchmark(name.c_str(), BM_Sgemm, impl, shape, threads)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  for (const GemmShape& shape : kPointwiseShapes) {
    for (int threads : {1, 2}) {
      for (bool packed_b : {false, true}) {
        const std::string name = std::string("BM_PointwiseNhwc/") +
                                 (packed_b ? "packed_b/" : "plain/") + shape.name +
                                 "/threads:" + std::to_string(threads);
        benchmark::RegisterBenchmark(name.c_str(), BM_PointwiseNhwc, packed_b, shape, threads)
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  RegisterGemmBenchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("fma_peak_gflops_1_thread", std::to_string(PeakGflops(1)));
  benchmark::AddCustomContext("fma_peak_gflops_2_threads", std::to_string(PeakGflops(2)));
  benchmark::AddCustomContext("gemm", mxlite::cpu::ActiveGemm().ToString());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
