#include "core/context.h"

#include <charconv>

#include "core/error.h"

namespace mxlite {

std::string Context::ToString() const {
  return std::string(is_cpu() ? "cpu(" : "gpu(") + std::to_string(device_id) + ")";
}

Context Context::Parse(std::string_view text) {
  auto fail = [&]() {
    MX_THROW() << "invalid device '" << text << "'; expected cpu, cpu(0), gpu or gpu(N)";
  };
  std::string_view kind = text.substr(0, 3);
  if (kind != "cpu" && kind != "gpu") fail();
  Context ctx{kind == "cpu" ? DeviceType::kCPU : DeviceType::kGPU, 0};
  std::string_view rest = text.substr(3);
  if (rest.empty()) return ctx;
  if (rest.size() < 3 || rest.front() != '(' || rest.back() != ')') fail();
  std::string_view number = rest.substr(1, rest.size() - 2);
  auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), ctx.device_id);
  if (error != std::errc() || end != number.data() + number.size() || ctx.device_id < 0) fail();
  if (ctx.is_cpu() && ctx.device_id != 0) fail();
  return ctx;
}

std::ostream& operator<<(std::ostream& out, const Context& ctx) { return out << ctx.ToString(); }

}  // namespace mxlite
