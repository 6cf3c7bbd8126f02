// The KVStore in one process: the local type (several devices' gradients summed on the CPU), its
// settings and errors, and the pure parts of dist_sync (signature comparison). The distributed
// runs themselves are the mpirun tests (kvstore_dist_check.cc).
#include <gtest/gtest.h>

#include "core/build_info.h"
#include "core/error.h"
#include "core/settings.h"
#include "scheduler/kvstore/communicator.h"
#include "tests/scheduler/kvstore_training.h"

namespace mxlite {
namespace {

// Passes when `text` contains `part` (and shows both when it does not).
::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' lacks '" << part << "'";
}

NDArray Filled(const Shape& shape, std::vector<float> values) {
  return NDArray::FromVector(values, shape, Context::CPU());
}

std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(KVStoreTest, SettingsHaveMXNetDefaults) {
  EXPECT_EQ(settings().Spec("MXNET_KVSTORE_REDUCTION_NTHREADS").default_value, "4");
  EXPECT_EQ(settings().Spec("MXNET_KVSTORE_BIGARRAY_BOUND").default_value, "1000000");
  EXPECT_EQ(settings().Spec("MXNET_KVSTORE_TIMEOUT").default_value, "300");
}

TEST(KVStoreTest, LocalPushSumsDevicesAndPullCopiesToEach) {
  auto kv = KVStore::Create("local");
  EXPECT_EQ(kv->type(), "local");
  EXPECT_EQ(kv->rank(), 0);
  EXPECT_EQ(kv->num_workers(), 1);
  const Shape shape{2, 2};
  kv->Init("w", Filled(shape, {1, 2, 3, 4}));
  NDArray out0(shape, Context::CPU()), out1(shape, Context::CPU());
  kv->Pull({"w"}, std::vector<std::vector<NDArray>>{{out0, out1}});
  EXPECT_EQ(out1.ToVector<float>(), (std::vector<float>{1, 2, 3, 4}));

  kv->Push({"w"}, std::vector<std::vector<NDArray>>{{Filled(shape, {1, 1, 1, 1}),
                                                     Filled(shape, {10, 20, 30, 40}),
                                                     Filled(shape, {0.5, 0.5, 0.5, 0.5})}});
  kv->Pull({"w"}, std::vector<std::vector<NDArray>>{{out0, out1}});
  EXPECT_EQ(out0.ToVector<float>(), (std::vector<float>{11.5, 21.5, 31.5, 41.5}));
  EXPECT_EQ(out1.ToVector<float>(), out0.ToVector<float>());
}

TEST(KVStoreTest, PushPullWithOptimizerUpdatesTheStoredWeight) {
  auto kv = KVStore::Create("device");
  kv->Init("w", Filled({3}, {1, 1, 1}));
  kv->SetOptimizer(Optimizer::Sgd({.learning_rate = 0.5}));
  NDArray out({3}, Context::CPU());
  kv->PushPull({"w"}, {Filled({3}, {2, 4, -2})}, {out});
  EXPECT_EQ(out.ToVector<float>(), (std::vector<float>{0, -1, 2}));
  kv->PushPull({"w"}, {Filled({3}, {2, 0, 0})}, {out});
  EXPECT_EQ(out.ToVector<float>(), (std::vector<float>{-1, -1, 2}));
  EXPECT_EQ(kv->optimizer()->num_update(), 2);
}

TEST(KVStoreTest, ThreadedSumOfBigArraysEqualsTheSerialSumExactly) {
  const int64_t count = 100003;
  std::vector<std::vector<float>> inputs(3, std::vector<float>(count));
  std::mt19937 random(5);
  std::uniform_real_distribution<float> value(-1, 1);
  for (auto& input : inputs) {
    for (float& v : input) v = value(random);
  }
  std::vector<const void*> pointers;
  for (auto& input : inputs) pointers.push_back(input.data());
  std::vector<float> serial(count), threaded(count);
  SumArrays(pointers, serial.data(), count, DType::kFloat32, /*threads=*/1, /*bound=*/10);
  SumArrays(pointers, threaded.data(), count, DType::kFloat32, /*threads=*/4, /*bound=*/10);
  EXPECT_EQ(serial, threaded);
  EXPECT_EQ(serial[count - 1],
            (inputs[0][count - 1] + inputs[1][count - 1]) + inputs[2][count - 1]);
}

TEST(KVStoreTest, LocalDataParallelTrainingEqualsOneExecutorOnTheCombinedBatch) {
  using namespace kvstore_testing;
  auto kv = KVStore::Create("local");
  const auto parallel = TrainDataParallel(*kv, /*rows_per_worker=*/6, /*workers=*/3,
                                          /*first_worker=*/0, /*total_workers=*/3, /*steps=*/4);
  const auto single = TrainSingle(/*total_rows=*/18, /*steps=*/4);
  EXPECT_LT(MaxRelativeDifference(parallel, single), 1e-5);
  // And training did move the weights.
  auto untrained = BindMlp(6);
  EXPECT_GT(MaxRelativeDifference(Weights(*untrained), single), 1e-3);
}

TEST(KVStoreTest, ErrorsNameTheKeyAndWhatWasExpected) {
  auto kv = KVStore::Create("local");
  kv->Init("w", Filled({2}, {1, 2}));
  EXPECT_TRUE(Contains(ErrorOf([&] {
                         kv->Init("w", Filled({2}, {1, 2}));
                       }),
                       "key 'w' is initialised twice"));
  EXPECT_TRUE(Contains(ErrorOf([&] {
                         kv->Push({"v"}, {Filled({2}, {1, 2})});
                       }),
                       "key 'v' was not initialised"));
  EXPECT_TRUE(Contains(ErrorOf([&] {
                         kv->Push({"w"}, {Filled({3}, {1, 2, 3})});
                       }),
                       "key 'w' holds (2) float32 but was pushed (3) float32"));
  NDArray wrong({4}, Context::CPU());
  EXPECT_TRUE(Contains(ErrorOf([&] { kv->Pull({"w"}, {wrong}); }), "key 'w' holds (2)"));
  EXPECT_TRUE(Contains(
      ErrorOf([] { KVStore::Create("dist_async"); }),
      "'dist_async' is not known; expected local (or device), dist_sync or dist_sync_device"));
  if (!HasMpiSupport()) {
    EXPECT_TRUE(Contains(ErrorOf([] { KVStore::Create("dist_sync"); }), "need MPI"));
  }
}

// One rank (MPI singleton) with NCCL on GPU 0: the store's arrays live on the GPU and a push of
// one gradient updates the weight there.
TEST(KVStoreTest, DistSyncDeviceKeepsWeightsOnTheGpu) {
  if (VisibleGpuCount() == 0) GTEST_SKIP() << "no GPU visible: dist_sync_device (NCCL) not run";
  if (!HasNcclSupport()) GTEST_SKIP() << "built without NCCL: dist_sync_device not run";
  auto kv = KVStore::Create("dist_sync_device");
  EXPECT_TRUE(kv->context().is_gpu());
  kv->Init("w", Filled({3}, {1, 1, 1}).CopyTo(kv->context()));
  kv->SetOptimizer(Optimizer::Sgd({.learning_rate = 0.5}));
  NDArray out({3}, kv->context());
  kv->PushPull({"w"}, {Filled({3}, {2, 4, -2}).CopyTo(kv->context())}, {out});
  EXPECT_EQ(out.ToVector<float>(), (std::vector<float>{0, -1, 2}));
}

TEST(KVStoreTest, SignatureMismatchNamesTheFirstDifferingKeyOnBothRanks) {
  const std::vector<std::string> a = {"'fc1_weight' (16,20) float32", "'fc1_bias' (16) float32"};
  std::vector<std::string> b = a;
  EXPECT_EQ(DescribeSignatureMismatch({a, b, a}), "");
  b[1] = "'fc1_bias' (17) float32";
  EXPECT_EQ(DescribeSignatureMismatch({a, a, b}),
            "the ranks initialise different parameter sets; first difference at key #1: rank 0 "
            "has 'fc1_bias' (16) float32, rank 2 has 'fc1_bias' (17) float32");
  const std::vector<std::string> shorter = {a[0]};
  EXPECT_TRUE(Contains(DescribeSignatureMismatch({a, b, shorter}),
                       "key #1: rank 0 has 'fc1_bias' (16) float32, rank 1 has"));
  EXPECT_TRUE(Contains(DescribeSignatureMismatch({shorter, a}),
                       "rank 0 has nothing (it initialises 1 keys), rank 1 has 'fc1_bias'"));
}

}  // namespace
}  // namespace mxlite
