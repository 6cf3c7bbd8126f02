// PoolConfig: how a pooled storage manager rounds sizes and when it gives memory back, and the
// rounding rules themselves (MXNet's; docs/design.md, Memory):
//   Naive     round up to a page (4096 B); sizes above large_alloc_round_size round up to a
//             multiple of it instead. Blocks are reused for requests of the same rounded size.
//   Round     at least a page; up to 2^round_linear_cutoff round up to a power of two; above it,
//             to a multiple of 2^round_linear_cutoff.
//   Unpooled  exact sizes, nothing cached: every Free goes back to the device.
#pragma once

#include <cstddef>

#include "core/context.h"

namespace mxlite {

enum class PoolType { kNaive, kRound, kUnpooled };

const char* PoolTypeName(PoolType type);

struct PoolConfig {
  static constexpr size_t kPageSize = 4096;

  PoolType type = PoolType::kNaive;
  size_t large_alloc_round_size = size_t{2} << 20;
  int round_linear_cutoff = 24;
  int reserve_percent = 5;

  // The configuration the settings registry gives for this kind of device: the MXNET_GPU_MEM_*
  // settings for GPUs, the MXNET_CPU_MEM_* ones for host memory. Throws on invalid settings.
  static PoolConfig FromSettings(DeviceType device_type);
};

// The size of the block that serves a request of `bytes` (> 0) under `config`.
size_t RoundedBlockSize(const PoolConfig& config, size_t bytes);

}  // namespace mxlite
