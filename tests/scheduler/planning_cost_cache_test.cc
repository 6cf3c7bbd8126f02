// The layout planner's cost cache (scheduler/planning/cost_cache.h): what is stored is found again
// for the same device and versions only, survives a reopen (a new process), and follows the DB
// settings; it never reaches the convolution tuner's entries.
#include "scheduler/planning/cost_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/settings.h"
#include "ops/conv/tuner.h"

namespace mxlite {
namespace {

namespace fs = std::filesystem;

class PlanningCostCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ =
        fs::temp_directory_path() / ("mxlite_planning_cost_cache_test_" + std::to_string(getpid()));
    fs::remove_all(folder_);
    settings().Set("MXNET_TUNING_DB_PATH", (folder_ / "tuning.sqlite").string());
  }
  void TearDown() override {
    settings().Reset("MXNET_TUNING_DB_PATH");
    settings().Reset("MXNET_TUNING_DB_MODE");
    fs::remove_all(folder_);
  }
  fs::path folder_;
};

TEST_F(PlanningCostCacheTest, StoredCostsComeBackForTheirDeviceOnly) {
  PlanningCostCache& cache = PlanningCostCache::Global();
  const conv::TuningEnvironment cpu = PlanningEnvironment(Context::CPU());
  EXPECT_FALSE(cache.Lookup("transform NCHW->NHWC data=(1,8,4,4) test", cpu));
  cache.Store("transform NCHW->NHWC data=(1,8,4,4) test", "transpose", 0.25, cpu);
  EXPECT_EQ(cache.Lookup("transform NCHW->NHWC data=(1,8,4,4) test", cpu), 0.25);
  conv::TuningEnvironment other = cpu;
  other.device = "another device";
  EXPECT_FALSE(cache.Lookup("transform NCHW->NHWC data=(1,8,4,4) test", other));

  // Pointing the settings elsewhere and back reopens the file, as a new process would: the entry
  // is on disk.
  const std::string path = settings().GetString("MXNET_TUNING_DB_PATH");
  settings().Set("MXNET_TUNING_DB_PATH", (folder_ / "elsewhere.sqlite").string());
  EXPECT_FALSE(cache.Lookup("transform NCHW->NHWC data=(1,8,4,4) test", cpu));
  settings().Set("MXNET_TUNING_DB_PATH", path);
  EXPECT_EQ(cache.Lookup("transform NCHW->NHWC data=(1,8,4,4) test", cpu), 0.25);
}

TEST_F(PlanningCostCacheTest, ReadOnlyKeepsNothingNew) {
  settings().Set("MXNET_TUNING_DB_MODE", "read_only");
  PlanningCostCache& cache = PlanningCostCache::Global();
  const conv::TuningEnvironment cpu = PlanningEnvironment(Context::CPU());
  cache.Store("node Pooling test", "Pooling", 1.5, cpu);
  settings().Set("MXNET_TUNING_DB_MODE", "update");  // reopened: what is on disk
  EXPECT_FALSE(cache.Lookup("node Pooling test", cpu));
}

}  // namespace
}  // namespace mxlite
