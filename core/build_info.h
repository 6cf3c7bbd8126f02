// Facts about this build and this machine, for `mxlite info`, the tuning DB key and bug reports.
// Querying is cheap except the first GPU probe; a missing or failing CUDA driver counts as zero
// GPUs (never an error).
#pragma once

#include <string>
#include <vector>

namespace mxlite {

struct GpuInfo {
  int id = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  size_t total_memory = 0;
};

struct BuildInfo {
  std::string version;
  std::string compiler;
  std::string build_type;
  bool cuda_enabled = false;
  std::string cuda_runtime_version;  // "13.0" or "" when CUDA is off
  std::string cudnn_version;         // "9.19.0"
  std::string cublas_version;        // "13.1.0"
  std::string gpu_probe_error;       // why no GPU is visible, when none is
  std::vector<GpuInfo> gpus;
  std::string cpu_model;
  std::vector<std::string> cpu_features;  // e.g. avx2, fma, avx512f
  unsigned hardware_threads = 0;
};

BuildInfo GetBuildInfo();

// Number of visible GPUs; any CUDA error (no driver, no device, CUDA off) counts as zero.
int VisibleGpuCount();

// CPU feature query for kernel dispatch ("avx2", "fma", "avx512f", ...).
bool CpuSupports(const std::string& feature);

}  // namespace mxlite
