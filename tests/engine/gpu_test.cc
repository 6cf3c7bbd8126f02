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
