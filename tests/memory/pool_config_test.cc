#include "memory/pool_config.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/settings.h"

namespace mxlite {
namespace {

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * 1024;

PoolConfig Naive(size_t large_round = 2 * kMiB) {
  PoolConfig config;
  config.type = PoolType::kNaive;
  config.large_alloc_round_size = large_round;
  return config;
}

PoolConfig Round(int cutoff) {
  PoolConfig config;
  config.type = PoolType::kRound;
  config.round_linear_cutoff = cutoff;
  return config;
}

TEST(PoolConfigTest, NaiveRoundsToPagesThenToLargeUnits) {
  PoolConfig config = Naive();
  EXPECT_EQ(RoundedBlockSize(config, 1), 4 * kKiB);
  EXPECT_EQ(RoundedBlockSize(config, 4096), 4 * kKiB);
  EXPECT_EQ(RoundedBlockSize(config, 4097), 8 * kKiB);
  EXPECT_EQ(RoundedBlockSize(config, 2 * kMiB), 2 * kMiB);          // at the threshold: pages
  EXPECT_EQ(RoundedBlockSize(config, 2 * kMiB + 1), 4 * kMiB);      // above: 2 MiB units
  EXPECT_EQ(RoundedBlockSize(config, 5 * kMiB), 6 * kMiB);
  // MXNET_GPU_MEM_LARGE_ALLOC_ROUND_SIZE=1 disables rounding of large sizes.
  EXPECT_EQ(RoundedBlockSize(Naive(1), 5 * kMiB + 3), 5 * kMiB + 3);
}

TEST(PoolConfigTest, RoundUsesPowersOfTwoThenMultiplesOfTheCutoff) {
  PoolConfig config = Round(20);
  // 32 B and 4095 B share a 4 KiB block.
  EXPECT_EQ(RoundedBlockSize(config, 32), 4 * kKiB);
  EXPECT_EQ(RoundedBlockSize(config, 4095), 4 * kKiB);
  EXPECT_EQ(RoundedBlockSize(config, 4097), 8 * kKiB);
  EXPECT_EQ(RoundedBlockSize(config, 600 * kKiB), 1 * kMiB);
  EXPECT_EQ(RoundedBlockSize(config, 1 * kMiB), 1 * kMiB);          // 2^20 itself
  EXPECT_EQ(RoundedBlockSize(config, 1 * kMiB + 1), 2 * kMiB);
  // 2 MiB + 1 and 3 MiB share a 3 MiB block.
  EXPECT_EQ(RoundedBlockSize(config, 2 * kMiB + 1), 3 * kMiB);
  EXPECT_EQ(RoundedBlockSize(config, 3 * kMiB), 3 * kMiB);
  EXPECT_EQ(RoundedBlockSize(Round(24), 3 * kMiB), 4 * kMiB);       // below 16 MiB: power of two
  EXPECT_EQ(RoundedBlockSize(Round(24), 17 * kMiB), 32 * kMiB);     // above: 16 MiB units
}

TEST(PoolConfigTest, UnpooledKeepsExactSizes) {
  PoolConfig config;
  config.type = PoolType::kUnpooled;
  EXPECT_EQ(RoundedBlockSize(config, 33), 33u);
  EXPECT_THROW(RoundedBlockSize(config, 0), Error);
}

class PoolSettingsTest : public ::testing::Test {
 protected:
  void TearDown() override { settings().ReloadEnvironment(); }
};

TEST_F(PoolSettingsTest, ReadsGpuAndCpuSettingsSeparately) {
  settings().ReplaceEnvironment({{"MXNET_GPU_MEM_POOL_TYPE", "Round"},
                                 {"MXNET_GPU_MEM_POOL_ROUND_LINEAR_CUTOFF", "22"},
                                 {"MXNET_GPU_MEM_POOL_RESERVE", "7"},
                                 {"MXNET_CPU_MEM_POOL_TYPE", "Unpooled"}});
  PoolConfig gpu = PoolConfig::FromSettings(DeviceType::kGPU);
  EXPECT_EQ(gpu.type, PoolType::kRound);
  EXPECT_EQ(gpu.round_linear_cutoff, 22);
  EXPECT_EQ(gpu.reserve_percent, 7);
  PoolConfig cpu = PoolConfig::FromSettings(DeviceType::kCPU);
  EXPECT_EQ(cpu.type, PoolType::kUnpooled);
  EXPECT_EQ(cpu.round_linear_cutoff, 24);
}

TEST_F(PoolSettingsTest, InvalidSettingsAreClearErrors) {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"MXNET_GPU_MEM_POOL_ROUND_LINEAR_CUTOFF", "19", "20..34"},
      {"MXNET_GPU_MEM_POOL_ROUND_LINEAR_CUTOFF", "35", "20..34"},
      {"MXNET_GPU_MEM_POOL_RESERVE", "101", "0..100"},
      {"MXNET_GPU_MEM_POOL_RESERVE", "-1", "0..100"},
      {"MXNET_GPU_MEM_POOL_TYPE", "Pooled", "Naive, Round, Unpooled"},
  };
  for (const auto& [variable, value, allowed] : cases) {
    settings().ReplaceEnvironment({{variable, value}});
    try {
      PoolConfig::FromSettings(DeviceType::kGPU);
      ADD_FAILURE() << variable << "=" << value << " was accepted";
    } catch (const Error& error) {
      std::string message = error.what();
      EXPECT_NE(message.find(variable), std::string::npos) << message;
      EXPECT_NE(message.find("'" + value + "'"), std::string::npos) << message;
      EXPECT_NE(message.find(allowed), std::string::npos) << message;
    }
  }
}

}  // namespace
}  // namespace mxlite
