// GPU paths of the engines: per-worker streams, copies on copy threads, stream synchronisation of
// synchronous GPU ops. Skipped when no GPU is visible.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "core/build_info.h"
#include "core/error.h"
#include "engine/engine.h"

#if MXLITE_USE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace mxlite {
namespace {

class EngineGpu : public ::testing::TestWithParam<EngineType> {
 protected:
  void SetUp() override {
    if (VisibleGpuCount() == 0) GTEST_SKIP() << "no GPU visible: GPU engine paths not tested";
    engine_ = CreateEngine(GetParam());
  }
  std::unique_ptr<Engine> engine_;
};

#if MXLITE_USE_CUDA

TEST_P(EngineGpu, CopiesRoundTripThroughTheGpu) {
  constexpr size_t kCount = 1 << 16;
  std::vector<float> host(kCount), back(kCount, -1.0f);
  std::iota(host.begin(), host.end(), 0.0f);
  void* allocation = nullptr;
  ASSERT_EQ(cudaMalloc(&allocation, kCount * sizeof(float)), cudaSuccess);
  float* device = static_cast<float*>(allocation);
  VarHandle host_var = engine_->NewVar(), device_var = engine_->NewVar(),
            back_var = engine_->NewVar();
  Context gpu = Context::GPU(0);
  bool saw_stream = true;
  engine_->PushSync(
      [&](RunContext rctx) {
        saw_stream = saw_stream && rctx.stream != nullptr && rctx.ctx == gpu;
        cudaMemcpyAsync(device, host.data(), kCount * sizeof(float), cudaMemcpyHostToDevice,
                        static_cast<cudaStream_t>(rctx.stream));
      },
      gpu, {host_var}, {device_var}, 0, "to_gpu", {FnProperty::kCopyToGpu});
  // A normal GPU op on a worker stream, ordered between the two copies by device_var.
  engine_->PushSync(
      [&](RunContext rctx) {
        saw_stream = saw_stream && rctx.stream != nullptr;
        cudaMemsetAsync(device, 0, sizeof(float), static_cast<cudaStream_t>(rctx.stream));
      },
      gpu, {}, {device_var}, 0, "zero_first");
  engine_->PushSync(
      [&](RunContext rctx) {
        cudaMemcpyAsync(back.data(), device, kCount * sizeof(float), cudaMemcpyDeviceToHost,
                        static_cast<cudaStream_t>(rctx.stream));
      },
      gpu, {device_var}, {back_var}, 0, "from_gpu", {FnProperty::kCopyFromGpu});
  engine_->WaitForVar(back_var);  // the sync op's stream was synchronised before completion
  EXPECT_TRUE(saw_stream);
  EXPECT_EQ(back[0], 0.0f);
  for (size_t i = 1; i < kCount; ++i) ASSERT_EQ(back[i], host[i]) << i;
  engine_->WaitForAll();
  cudaFree(device);
}

TEST_P(EngineGpu, CudaErrorsPoisonTheWrittenVar) {
  VarHandle var = engine_->NewVar();
  engine_->PushSync(
      [](RunContext rctx) {
        // An invalid copy direction is rejected at once (and is not a sticky error).
        int a = 0, b = 0;
        if (cudaMemcpyAsync(&a, &b, sizeof(int), static_cast<cudaMemcpyKind>(99),
                            static_cast<cudaStream_t>(rctx.stream)) != cudaSuccess) {
          cudaGetLastError();
          throw Error("cuda copy rejected");
        }
      },
      Context::GPU(0), {}, {var}, 0, "bad_copy");
  EXPECT_THROW(engine_->WaitForVar(var), Error);
  engine_->WaitForAll();
}

// Device memory for a test, freed at the end of it.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    EXPECT_EQ(cudaMalloc(&data_, bytes), cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(data_); }
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_;
};

// Runs `segment` `passes` times; before each, `b` is cleared by an op of its own, and after it
// `b` is read back: every pass must find the byte the segment writes there.
void ExpectEveryPassWrites(Engine& engine, const std::shared_ptr<const OpSegment>& segment,
                           const DeviceBuffer& b, VarHandle b_var, unsigned char expected,
                           uint64_t passes) {
  const Context gpu = Context::GPU(0);
  std::vector<unsigned char> host(b.bytes());
  VarHandle host_var = engine.NewVar();
  for (uint64_t pass = 0; pass < passes; ++pass) {
    engine.PushSync(
        [&](RunContext run) {
          cudaMemsetAsync(b.data(), 0, b.bytes(), static_cast<cudaStream_t>(run.stream));
        },
        gpu, {}, {b_var}, 0, "clear b");
    engine.PushSegment(segment);
    engine.PushSync(
        [&](RunContext run) {
          cudaMemcpyAsync(host.data(), b.data(), b.bytes(), cudaMemcpyDeviceToHost,
                          static_cast<cudaStream_t>(run.stream));
        },
        gpu, {b_var}, {host_var}, 0, "read b", {FnProperty::kCopyFromGpu});
    engine.WaitForVar(host_var);
    for (size_t i = 0; i < host.size(); ++i) ASSERT_EQ(host[i], expected) << "pass " << pass;
  }
  engine.WaitForAll();
}

// Fills a with `value`, then copies a to b; `extra` runs between the two.
std::vector<SegmentStep> FillAndCopySteps(const DeviceBuffer& a, const DeviceBuffer& b,
                                          VarHandle a_var, VarHandle b_var, int value,
                                          SyncFn extra) {
  std::vector<SegmentStep> steps;
  steps.push_back({[&a, value](RunContext run) {
                     if (cudaMemsetAsync(a.data(), value, a.bytes(),
                                         static_cast<cudaStream_t>(run.stream)) != cudaSuccess) {
                       throw Error("fill a failed");
                     }
                   },
                   {},
                   {a_var},
                   "fill a"});
  steps.push_back({std::move(extra), {a_var}, {}, "extra"});
  steps.push_back({[&a, &b](RunContext run) {
                     if (cudaMemcpyAsync(b.data(), a.data(), b.bytes(), cudaMemcpyDeviceToDevice,
                                         static_cast<cudaStream_t>(run.stream)) != cudaSuccess) {
                       throw Error("copy a to b failed");
                     }
                   },
                   {a_var},
                   {b_var},
                   "copy a to b"});
  return steps;
}

// Enough pushes that some replay whatever worker runs each: ThreadedEngine's shared pool has
// MXNET_CPU_WORKER_NTHREADS + MXNET_CPU_PRIORITY_NTHREADS = 5 workers by default, each with a stream.
constexpr uint64_t kPasses = 12;
constexpr uint64_t kMostWorkers = 5;

// A segment with a replay key: the first push on a worker runs the steps, a later one captures
// and launches, the rest launch the graph, and each does the segment's work (b is cleared before
// every push).
TEST_P(EngineGpu, RecordedSegmentsReplayAsCudaGraphs) {
  DeviceBuffer a(1 << 16), b(1 << 16);
  VarHandle a_var = engine_->NewVar(), b_var = engine_->NewVar();
  std::shared_ptr<const OpSegment> segment = engine_->NewSegment(
      Context::GPU(0), FillAndCopySteps(a, b, a_var, b_var, 7, [](RunContext) {}),
      [] { return std::vector<uint64_t>{1}; });
  ExpectEveryPassWrites(*engine_, segment, b, b_var, 7, kPasses);
  // Each worker's stream runs the steps once before it may capture.
  const GraphReplayCounts counts = engine_->graph_replay_counts();
  EXPECT_EQ(counts.captures, 1u);
  EXPECT_GE(counts.replays, kPasses - 1 - kMostWorkers);
  EXPECT_EQ(counts.failed_captures, 0u);
}

// A step that synchronises its stream cannot be captured: the capture is dropped, that push runs
// the steps, and so do the later ones; every push does the work.
TEST_P(EngineGpu, ASegmentThatSynchronisesRunsItsStepsInstead) {
  DeviceBuffer a(1 << 12), b(1 << 12);
  VarHandle a_var = engine_->NewVar(), b_var = engine_->NewVar();
  std::shared_ptr<const OpSegment> segment = engine_->NewSegment(
      Context::GPU(0), FillAndCopySteps(a, b, a_var, b_var, 3, [](RunContext run) {
        if (cudaStreamSynchronize(static_cast<cudaStream_t>(run.stream)) != cudaSuccess) {
          cudaGetLastError();
          throw Error("cudaStreamSynchronize failed");
        }
      }),
      [] { return std::vector<uint64_t>{1}; });
  ExpectEveryPassWrites(*engine_, segment, b, b_var, 3, kPasses);
  const GraphReplayCounts counts = engine_->graph_replay_counts();
  EXPECT_EQ(counts.captures, 0u);
  EXPECT_EQ(counts.replays, 0u);
  EXPECT_EQ(counts.failed_captures, 1u);
}

// Without a key, a segment runs its steps every time.
TEST_P(EngineGpu, SegmentsWithoutAKeyRunTheirSteps) {
  DeviceBuffer a(1 << 12), b(1 << 12);
  VarHandle a_var = engine_->NewVar(), b_var = engine_->NewVar();
  std::shared_ptr<const OpSegment> segment = engine_->NewSegment(
      Context::GPU(0), FillAndCopySteps(a, b, a_var, b_var, 9, [](RunContext) {}));
  ExpectEveryPassWrites(*engine_, segment, b, b_var, 9, 3);
  const GraphReplayCounts counts = engine_->graph_replay_counts();
  EXPECT_EQ(counts.captures + counts.replays + counts.failed_captures, 0u);
}

#endif  // MXLITE_USE_CUDA

TEST_P(EngineGpu, GpuOpsOrderAgainstCpuOps) {
  VarHandle var = engine_->NewVar();
  std::vector<int> order;
  for (int i = 0; i < 50; ++i) {
    Context ctx = i % 2 == 0 ? Context::CPU() : Context::GPU(0);
    engine_->PushSync([&order, i](RunContext) { order.push_back(i); }, ctx, {}, {var}, 0, "mixed");
  }
  engine_->WaitForAll();
  std::vector<int> expected(50);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(order, expected);
}

INSTANTIATE_TEST_SUITE_P(AllEngines, EngineGpu,
                         ::testing::Values(EngineType::kNaive, EngineType::kThreaded,
                                           EngineType::kThreadedPerDevice),
                         [](const ::testing::TestParamInfo<EngineType>& info) {
                           return std::string(EngineTypeName(info.param));
                         });

TEST(EngineWithoutGpu, PushToAMissingGpuIsAClearError) {
  if (VisibleGpuCount() > 0) GTEST_SKIP() << "a GPU is visible; this checks the no-GPU message";
  std::unique_ptr<Engine> engine = CreateEngine(EngineType::kThreadedPerDevice);
  VarHandle var = engine->NewVar();
  try {
    engine->PushSync([](RunContext) {}, Context::GPU(0), {}, {var}, 0, "gpu_op");
    ADD_FAILURE() << "push to gpu(0) without a GPU did not throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gpu(0)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("0 GPU(s) are visible"), std::string::npos) << e.what();
  }
  engine->WaitForAll();
}

}  // namespace
}  // namespace mxlite
