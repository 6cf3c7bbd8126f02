#include "core/context.h"

#include <charconv>

#include "core/error.h"

namespace mxlite {

const char* DeviceTypeName(DeviceType type) {
  switch (type) {
    case DeviceType::kCPU: return "cpu";
    case DeviceType::kGPU: return "gpu";
    case DeviceType::kCPUPinned: return "cpu_pinned";
  }
  return "?";
}

std::string Context::ToString() const {
  return std::string(DeviceTypeName(device_type)) + "(" + std::to_string(device_id) + ")";
}

Context Context::Parse(std::string_view text) {
  auto fail = [&]() {
    MX_THROW() << "invalid device '" << text
               << "'; expected cpu, cpu(0), gpu, gpu(N) or cpu_pinned(0)";
  };
  Context ctx;
  std::string_view rest;
  if (text.starts_with("cpu_pinned")) {
    ctx.device_type = DeviceType::kCPUPinned;
    rest = text.substr(10);
  } else if (text.starts_with("cpu") || text.starts_with("gpu")) {
    ctx.device_type = text.starts_with("cpu") ? DeviceType::kCPU : DeviceType::kGPU;
    rest = text.substr(3);
  } else {
    fail();
  }
  if (rest.empty()) return ctx;
  if (rest.size() < 3 || rest.front() != '(' || rest.back() != ')') fail();
  std::string_view number = rest.substr(1, rest.size() - 2);
  auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), ctx.device_id);
  if (error != std::errc() || end != number.data() + number.size() || ctx.device_id < 0) fail();
  if (ctx.is_host() && ctx.device_id != 0) fail();
  return ctx;
}

std::ostream& operator<<(std::ostream& out, const Context& ctx) { return out << ctx.ToString(); }

}  // namespace mxlite
