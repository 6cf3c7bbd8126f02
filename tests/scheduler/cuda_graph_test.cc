// GPU inference passes replayed as CUDA graphs (MXNET_ENABLE_CUDA_GRAPHS=1; engine/segment_graph.h,
// Executor::ReplayKey): a replayed executor computes the bits of one that runs its steps, pass
// after pass on new inputs, under the plans none and global (whose weight transforms are constant
// steps inside the pass), and follows a weight written between passes (captured again); training
// passes are never captured. Skipped when no GPU is visible.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <random>

#include "core/build_info.h"
#include "core/settings.h"
#include "engine/engine.h"
#include "scheduler/graph/executor.h"
#include "scheduler/graph/graph_builder.h"
#include "tests/scheduler/random_arguments.h"

namespace mxlite {
namespace {

namespace fs = std::filesystem;

// Convolutions (one fused with its residual and relu), BatchNorm, pooling, a fully connected layer
// (cuBLAS) and a softmax: the kinds of step an imported convnet's pass holds.
Graph SmallConvNet() {
  GraphBuilder g;
  Symbol x = g.Input("data", {2, 8, 12, 12});
  Symbol c1 = g.Relu(g.BatchNorm(g.Conv(x, {.num_filter = 16, .kernel = {3, 3}, .pad = {1, 1}},
                                        "c1"),
                                 {}, "bn1"),
                     "r1");
  Symbol c2 = g.Conv(c1, {.num_filter = 16, .kernel = {3, 3}, .pad = {1, 1}}, "c2");
  Symbol s = g.Relu(g.Add(c2, c1, "s2"), "r2");
  Symbol p = g.MaxPool(s, {.kernel = {2, 2}, .stride = {2, 2}}, "pool");
  Symbol fc = g.FullyConnected(g.Flatten(p), {.num_hidden = 10}, "fc");
  return g.Build({g.Op("softmax", {fc}, {}, "prob")});
}

class CudaGraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (VisibleGpuCount() == 0) GTEST_SKIP() << "no GPU visible: CUDA graphs not exercised";
    static std::atomic<int> counter{0};
    folder_ = fs::temp_directory_path() / ("mxlite_cuda_graph_test_" + std::to_string(getpid()) +
                                           "_" + std::to_string(counter++));
    fs::remove_all(folder_);
    settings().Set("MXNET_TUNING_DB_PATH", (folder_ / "tuning.sqlite").string());
  }
  void TearDown() override {
    settings().Reset("MXNET_TUNING_DB_PATH");
    settings().Reset("MXNET_ENABLE_CUDA_GRAPHS");
    fs::remove_all(folder_);
  }

  static std::unique_ptr<Executor> Bind(const Graph& graph, ConvPlanKind plan, bool graphs,
                                        bool training = false) {
    auto exec = Executor::Bind(graph, {.ctx = Context::GPU(0), .training = training,
                                       .conv_plan = plan, .cuda_graphs = graphs});
    testing_support::FillRandomArguments(*exec, 11);
    return exec;
  }

  static void SetArg(Executor& exec, const std::string& name, uint64_t seed) {
    std::mt19937_64 random(seed);
    std::uniform_real_distribution<float> uniform(-1, 1);
    std::vector<float> values(static_cast<size_t>(exec.Arg(name).size()));
    for (float& v : values) v = uniform(random);
    exec.Arg(name).SyncCopyFromCPU(values.data(), values.size() * sizeof(float));
  }

  static std::vector<float> Pass(Executor& exec) {
    exec.Forward(false);
    return exec.outputs()[0].ToVector<float>();
  }

  fs::path folder_;
};

TEST_F(CudaGraphTest, ReplayedPassesComputeTheBitsOfPassesThatRunTheirSteps) {
  const Graph graph = SmallConvNet();
  for (ConvPlanKind plan : {ConvPlanKind::kNone, ConvPlanKind::kGlobal}) {
    SCOPED_TRACE(ConvPlanKindName(plan));
    std::unique_ptr<Executor> steps = Bind(graph, plan, false);
    std::unique_ptr<Executor> replayed = Bind(graph, plan, true);
    const GraphReplayCounts before = Engine::Get().graph_replay_counts();
    for (int pass = 0; pass < 8; ++pass) {
      SetArg(*steps, "data", 100 + pass);
      SetArg(*replayed, "data", 100 + pass);
      ASSERT_EQ(Pass(*replayed), Pass(*steps)) << "pass " << pass;
    }
    // The first pass grows the workspace and computes the constants, which changes the key, and
    // each GPU worker runs the steps once under a key before it captures: up to four passes run
    // their steps. Then one capture, and replays.
    GraphReplayCounts after = Engine::Get().graph_replay_counts();
    EXPECT_EQ(after.failed_captures, before.failed_captures);
    EXPECT_EQ(after.captures, before.captures + 1);
    EXPECT_GE(after.replays, before.replays + 3);

    // A weight written between passes: the next passes run the steps (convolutions and constant
    // steps derive their kept forms again), then one captures again; results follow the weight.
    SetArg(*steps, "c2_weight", 7);
    SetArg(*replayed, "c2_weight", 7);
    for (int pass = 0; pass < 8; ++pass) {
      ASSERT_EQ(Pass(*replayed), Pass(*steps)) << "pass " << pass << " after the new weight";
    }
    const GraphReplayCounts last = Engine::Get().graph_replay_counts();
    EXPECT_EQ(last.captures, after.captures + 1);
    EXPECT_GE(last.replays, after.replays + 3);
    EXPECT_EQ(last.failed_captures, before.failed_captures);
  }
}

TEST_F(CudaGraphTest, TheSettingTurnsReplaysOnAndTheBindOptionWins) {
  const Graph graph = SmallConvNet();
  const auto captures_of = [&](std::optional<bool> option) {
    auto exec = Executor::Bind(graph, {.ctx = Context::GPU(0), .conv_plan = ConvPlanKind::kNone,
                                       .cuda_graphs = option});
    testing_support::FillRandomArguments(*exec, 3);
    const uint64_t before = Engine::Get().graph_replay_counts().captures;
    for (int pass = 0; pass < 8; ++pass) Pass(*exec);
    return Engine::Get().graph_replay_counts().captures - before;
  };
  EXPECT_EQ(captures_of(std::nullopt), 0u);  // MXNet's default: off
  settings().Set("MXNET_ENABLE_CUDA_GRAPHS", "1");
  EXPECT_EQ(captures_of(std::nullopt), 1u);
  EXPECT_EQ(captures_of(false), 0u);
  settings().Reset("MXNET_ENABLE_CUDA_GRAPHS");
  EXPECT_EQ(captures_of(true), 1u);
}

TEST_F(CudaGraphTest, TrainingPassesRunTheirSteps) {
  const Graph graph = SmallConvNet();
  std::unique_ptr<Executor> exec = Bind(graph, ConvPlanKind::kNone, true, /*training=*/true);
  const GraphReplayCounts before = Engine::Get().graph_replay_counts();
  for (int pass = 0; pass < 3; ++pass) {
    exec->Forward(true);
    exec->Backward();
  }
  Engine::Get().WaitForAll();
  const GraphReplayCounts after = Engine::Get().graph_replay_counts();
  EXPECT_EQ(after.captures + after.replays + after.failed_captures,
            before.captures + before.replays + before.failed_captures);
}

}  // namespace
}  // namespace mxlite
