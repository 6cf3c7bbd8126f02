// Context: where a tensor lives and an op runs — the CPU, one GPU by ordinal, or page-locked
// ("pinned") host memory that GPUs copy from quickly (MXNet's cpu_pinned).
// Printed and parsed as "cpu", "cpu(0)", "gpu(1)", "cpu_pinned(0)"; Parse throws mxlite::Error on
// anything else.
#pragma once

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace mxlite {

enum class DeviceType : uint8_t { kCPU = 1, kGPU = 2, kCPUPinned = 3 };

// "cpu", "gpu", "cpu_pinned".
const char* DeviceTypeName(DeviceType type);

struct Context {
  DeviceType device_type = DeviceType::kCPU;
  int device_id = 0;

  static Context CPU() { return {DeviceType::kCPU, 0}; }
  static Context GPU(int id = 0) { return {DeviceType::kGPU, id}; }
  static Context CPUPinned() { return {DeviceType::kCPUPinned, 0}; }
  static Context Parse(std::string_view text);

  bool is_cpu() const { return device_type == DeviceType::kCPU; }
  bool is_gpu() const { return device_type == DeviceType::kGPU; }
  // True for memory the CPU can read and write directly (cpu and cpu_pinned).
  bool is_host() const { return device_type != DeviceType::kGPU; }
  std::string ToString() const;

  bool operator==(const Context& other) const = default;
};

std::ostream& operator<<(std::ostream& out, const Context& ctx);

}  // namespace mxlite

template <>
struct std::hash<mxlite::Context> {
  size_t operator()(const mxlite::Context& ctx) const noexcept {
    return (static_cast<size_t>(ctx.device_type) << 16) ^ static_cast<size_t>(ctx.device_id);
  }
};
