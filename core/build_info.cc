#include "core/build_info.h"

#include <fstream>
#include <thread>

#if MXLITE_USE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#endif

namespace mxlite {

namespace {

std::string ReadCpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown";
}

#if MXLITE_USE_CUDA
std::string VersionText(int major, int minor, int patch) {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

void ProbeCuda(BuildInfo& info) {
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) {
    info.cuda_runtime_version = std::to_string(runtime / 1000) + "." +
                                std::to_string((runtime % 1000) / 10);
  }
  size_t cudnn = cudnnGetVersion();  // major*10000 + minor*100 + patch in cuDNN 9
  info.cudnn_version = VersionText(static_cast<int>(cudnn / 10000),
                                   static_cast<int>((cudnn % 10000) / 100),
                                   static_cast<int>(cudnn % 100));
  int major = 0, minor = 0, patch = 0;
  cublasGetProperty(MAJOR_VERSION, &major);
  cublasGetProperty(MINOR_VERSION, &minor);
  cublasGetProperty(PATCH_LEVEL, &patch);
  info.cublas_version = VersionText(major, minor, patch);

  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    info.gpu_probe_error = cudaGetErrorString(status);
    cudaGetLastError();  // clear the sticky error so later CUDA calls start clean
    return;
  }
  for (int id = 0; id < count; ++id) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, id) != cudaSuccess) continue;
    info.gpus.push_back({id, prop.name, prop.major, prop.minor, prop.totalGlobalMem});
  }
  if (count == 0) info.gpu_probe_error = "no CUDA device";
}
#endif

}  // namespace

bool CpuSupports(const std::string& feature) {
  if (feature == "sse4.2") return __builtin_cpu_supports("sse4.2");
  if (feature == "avx") return __builtin_cpu_supports("avx");
  if (feature == "avx2") return __builtin_cpu_supports("avx2");
  if (feature == "fma") return __builtin_cpu_supports("fma");
  if (feature == "avx512f") return __builtin_cpu_supports("avx512f");
  if (feature == "avx512bw") return __builtin_cpu_supports("avx512bw");
  if (feature == "avx512vl") return __builtin_cpu_supports("avx512vl");
  return false;
}

int VisibleGpuCount() {
#if MXLITE_USE_CUDA
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return n;
  }();
  return count;
#else
  return 0;
#endif
}

BuildInfo GetBuildInfo() {
  BuildInfo info;
  info.version = MXLITE_VERSION;
  info.compiler = std::string("g++ ") + __VERSION__;
#ifdef NDEBUG
  info.build_type = "release (assertions off)";
#else
  info.build_type = "debug (assertions on)";
#endif
  info.cuda_enabled = MXLITE_USE_CUDA;
#if MXLITE_USE_CUDA
  ProbeCuda(info);
#else
  info.gpu_probe_error = "built without CUDA";
#endif
  info.cpu_model = ReadCpuModel();
  for (const char* feature : {"sse4.2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl"}) {
    if (CpuSupports(feature)) info.cpu_features.push_back(feature);
  }
  info.hardware_threads = std::thread::hardware_concurrency();
  return info;
}

}  // namespace mxlite
