// zeusd's wire (zeusd_command.h): capability names, and GPU commands to and from write routes.
#include "wire/zeusd_command.h"

#include <array>

namespace zeus::zeusd {
namespace {

constexpr std::array<std::string_view, kCapabilityCount> kCapabilityNames = {
    "gpu-control", "gpu-read", "cpu-read"};

std::string number(std::string_view name, uint32_t value) {
  return std::string(name) + "=" + std::to_string(value);
}
std::string clock_range(uint32_t min_mhz, uint32_t max_mhz) {
  return number("min_clock_mhz", min_mhz) + "&" + number("max_clock_mhz", max_mhz);
}

// Each command's route and the query parameters it adds (besides gpu_ids and block).
struct Encoded {
  std::string_view route;
  std::string parameters;
};
Encoded encode(const SetPowerLimit& c) {
  return {"set_power_limit", number("power_limit_mw", c.power_limit_mw)};
}
Encoded encode(const ResetPowerLimit&) { return {"reset_power_limit", ""}; }
Encoded encode(const SetPersistenceMode& c) {
  return {"set_persistence_mode", c.enabled ? "enabled=true" : "enabled=false"};
}
Encoded encode(const LockGpuClocks& c) {
  return {"set_gpu_locked_clocks", clock_range(c.min_mhz, c.max_mhz)};
}
Encoded encode(const ResetGpuClocks&) { return {"reset_gpu_locked_clocks", ""}; }
Encoded encode(const LockMemoryClocks& c) {
  return {"set_mem_locked_clocks", clock_range(c.min_mhz, c.max_mhz)};
}
Encoded encode(const ResetMemoryClocks&) { return {"reset_mem_locked_clocks", ""}; }

Encoded encode(const GpuCommand& command) {
  return std::visit([](const auto& c) { return encode(c); }, command);
}

using Numbers = std::map<std::string, uint32_t>;
using Flags = std::map<std::string, bool>;

std::vector<GpuCommand> reset_both(const Numbers&, const Flags&) {
  return {ResetGpuClocks{}, ResetMemoryClocks{}};
}

}  // namespace

std::string_view capability_name(Capability capability) {
  return kCapabilityNames[static_cast<size_t>(capability)];
}

Result<Capability> parse_capability(std::string_view name) {
  for (size_t i = 0; i < kCapabilityNames.size(); ++i) {
    if (kCapabilityNames[i] == name) return static_cast<Capability>(i);
  }
  return fail(ErrorCode::kInvalidArgument, "unknown capability '" + std::string(name) +
                                               "' (use gpu-control, gpu-read or cpu-read)");
}

std::string_view gpu_command_route(const GpuCommand& command) { return encode(command).route; }

std::string gpu_command_target(const GpuCommand& command, int gpu, bool block) {
  const Encoded encoded = encode(command);
  std::string target = "/gpu/" + std::string(encoded.route) + "?gpu_ids=" + std::to_string(gpu);
  if (!encoded.parameters.empty()) target += "&" + encoded.parameters;
  return target + (block ? "&block=true" : "&block=false");
}

const std::vector<GpuWriteRoute>& gpu_write_routes() {
  static const std::vector<GpuWriteRoute> routes = {
      {"set_power_limit",
       {"power_limit_mw"},
       {},
       [](const Numbers& n, const Flags&) -> std::vector<GpuCommand> {
         return {SetPowerLimit{n.at("power_limit_mw")}};
       }},
      {"reset_power_limit",
       {},
       {},
       [](const Numbers&, const Flags&) -> std::vector<GpuCommand> { return {ResetPowerLimit{}}; }},
      {"set_persistence_mode",
       {},
       {"enabled"},
       [](const Numbers&, const Flags& f) -> std::vector<GpuCommand> {
         return {SetPersistenceMode{f.at("enabled")}};
       }},
      {"set_gpu_locked_clocks",
       {"min_clock_mhz", "max_clock_mhz"},
       {},
       [](const Numbers& n, const Flags&) -> std::vector<GpuCommand> {
         return {LockGpuClocks{{n.at("min_clock_mhz"), n.at("max_clock_mhz")}}};
       }},
      {"set_mem_locked_clocks",
       {"min_clock_mhz", "max_clock_mhz"},
       {},
       [](const Numbers& n, const Flags&) -> std::vector<GpuCommand> {
         return {LockMemoryClocks{{n.at("min_clock_mhz"), n.at("max_clock_mhz")}}};
       }},
      {"reset_gpu_locked_clocks",
       {},
       {},
       [](const Numbers&, const Flags&) -> std::vector<GpuCommand> { return {ResetGpuClocks{}}; }},
      {"reset_mem_locked_clocks",
       {},
       {},
       [](const Numbers&, const Flags&) -> std::vector<GpuCommand> {
         return {ResetMemoryClocks{}};
       }},
      {"reset_locked_clocks", {}, {}, reset_both},
  };
  return routes;
}

}  // namespace zeus::zeusd
