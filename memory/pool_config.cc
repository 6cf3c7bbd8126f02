#include "memory/pool_config.h"

#include <bit>

#include "core/error.h"
#include "core/settings.h"

namespace mxlite {

const char* PoolTypeName(PoolType type) {
  switch (type) {
    case PoolType::kNaive: return "Naive";
    case PoolType::kRound: return "Round";
    case PoolType::kUnpooled: return "Unpooled";
  }
  return "?";
}

PoolConfig PoolConfig::FromSettings(DeviceType device_type) {
  const bool gpu = device_type == DeviceType::kGPU;
  const std::string prefix = gpu ? "MXNET_GPU_MEM_" : "MXNET_CPU_MEM_";
  const Settings& registry = settings();
  PoolConfig config;
  const std::string type = registry.GetString(prefix + "POOL_TYPE");
  config.type = type == "Round" ? PoolType::kRound
                : type == "Unpooled" ? PoolType::kUnpooled
                                     : PoolType::kNaive;
  config.large_alloc_round_size =
      static_cast<size_t>(registry.GetInt(prefix + "LARGE_ALLOC_ROUND_SIZE"));
  config.round_linear_cutoff = static_cast<int>(registry.GetInt(prefix + "POOL_ROUND_LINEAR_CUTOFF"));
  config.reserve_percent = static_cast<int>(registry.GetInt(prefix + "POOL_RESERVE"));
  return config;
}

size_t RoundedBlockSize(const PoolConfig& config, size_t bytes) {
  MX_CHECK_GT(bytes, 0u) << "a zero-byte request has no block";
  switch (config.type) {
    case PoolType::kUnpooled:
      return bytes;
    case PoolType::kNaive: {
      const size_t unit = bytes > config.large_alloc_round_size ? config.large_alloc_round_size
                                                                : PoolConfig::kPageSize;
      return (bytes + unit - 1) / unit * unit;
    }
    case PoolType::kRound: {
      const size_t linear_unit = size_t{1} << config.round_linear_cutoff;
      if (bytes <= PoolConfig::kPageSize) return PoolConfig::kPageSize;
      if (bytes <= linear_unit) return std::bit_ceil(bytes);
      return (bytes + linear_unit - 1) / linear_unit * linear_unit;
    }
  }
  MX_THROW() << "invalid pool type " << static_cast<int>(config.type);
}

}  // namespace mxlite
