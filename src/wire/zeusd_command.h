// zeusd's wire, shared by the daemon (src/zeusd/) and its client (src/zeusd_client/): the API
// groups a caller may be granted, the changes a client asks of one GPU as one typed command, and
// the routes that carry them — upstream Zeus's daemon API (`POST /gpu/<op>?gpu_ids=..&block=..`,
// every parameter in the query string) plus zeusd's additions (reset_power_limit,
// get_average_power).
//
// GpuCommand is what both ends mean by a change: the client encodes one (gpu_command_target), the
// daemon's route table decodes a write route's parameters into the commands it makes on each GPU
// (gpu_write_routes()), and the daemon's change path visits it (src/zeusd/gpu_change.h).
// Units: mW, MHz. Pure: no I/O. Thread-safety: plain values and stateless functions.
//
//   zeus::zeusd::GpuCommand command = zeus::zeusd::SetPowerLimit{250000};
//   client.request("POST", zeus::zeusd::gpu_command_target(command, 0, /*block=*/true));
//   // "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=250000&block=true"
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "zeus/common/result.h"

namespace zeus::zeusd {

// ---- API groups ----

// What a caller may do: gpu-control (the commands below), gpu-read (GPU reads), cpu-read (RAPL).
enum class Capability { kGpuControl = 0, kGpuRead = 1, kCpuRead = 2 };
inline constexpr int kCapabilityCount = 3;

// "gpu-control", "gpu-read", "cpu-read" (/discover's caller.capabilities and enabled_api_groups,
// tokens' scopes, --allow and --enable).
std::string_view capability_name(Capability capability);
// The inverse of capability_name(); InvalidArgument naming the valid ones otherwise.
Result<Capability> parse_capability(std::string_view name);

// ---- GPU commands ----

struct SetPowerLimit {
  uint32_t power_limit_mw = 0;
  bool operator==(const SetPowerLimit&) const = default;
};
// Back to the driver's default limit (zeusd's addition: upstream's clients set the default).
struct ResetPowerLimit {
  bool operator==(const ResetPowerLimit&) const = default;
};
struct SetPersistenceMode {
  bool enabled = false;
  bool operator==(const SetPersistenceMode&) const = default;
};
// A clock lock's range, [min_mhz, max_mhz].
struct ClockRangeMhz {
  uint32_t min_mhz = 0;
  uint32_t max_mhz = 0;
  bool operator==(const ClockRangeMhz&) const = default;
};
// Locks the SM (graphics) clocks: LockGpuClocks{{900, 1410}}.
struct LockGpuClocks : ClockRangeMhz {};
struct LockMemoryClocks : ClockRangeMhz {};
// Unlock the SM clocks, the memory clocks.
struct ResetGpuClocks {
  bool operator==(const ResetGpuClocks&) const = default;
};
struct ResetMemoryClocks {
  bool operator==(const ResetMemoryClocks&) const = default;
};

using GpuCommand = std::variant<SetPowerLimit, ResetPowerLimit, SetPersistenceMode, LockGpuClocks,
                                ResetGpuClocks, LockMemoryClocks, ResetMemoryClocks>;

// The write route that carries `command` alone: "set_power_limit", "reset_gpu_locked_clocks", ...
std::string_view gpu_command_route(const GpuCommand& command);
// "/gpu/<route>?gpu_ids=<gpu>[&<its parameters>]&block=true|false", as upstream's client sends it.
std::string gpu_command_target(const GpuCommand& command, int gpu, bool block);

// One write route, POST /gpu/<op>?gpu_ids=..&block=..&<numbers>&<flags>: the parameters its query
// must carry (besides gpu_ids and block) and the commands they make on each GPU, in order.
struct GpuWriteRoute {
  std::string_view op;
  std::vector<std::string> numbers;  // unsigned 32-bit parameters
  std::vector<std::string> flags;    // boolean parameters
  std::vector<GpuCommand> (*decode)(const std::map<std::string, uint32_t>& numbers,
                                    const std::map<std::string, bool>& flags);
};
// Every write route: upstream's seven (set_power_limit, set_persistence_mode,
// set_gpu_locked_clocks, set_mem_locked_clocks, reset_gpu_locked_clocks, reset_mem_locked_clocks,
// reset_locked_clocks — both resets) and zeusd's reset_power_limit. decode() reads only the
// parameters its route names, which the caller has checked are present.
const std::vector<GpuWriteRoute>& gpu_write_routes();

// ---- Read routes (GET /gpu/<op>?gpu_ids=.., GET /cpu/<op>?cpu_ids=..) ----

// {"<i>": {"power_limit_mw"}}
inline constexpr std::string_view kGetPowerLimit = "get_power_limit";
// {"<i>": {"min_power_limit_mw", "max_power_limit_mw"}}
inline constexpr std::string_view kGetPowerLimitConstraints = "get_power_limit_constraints";
// {"<i>": {"enabled"}}
inline constexpr std::string_view kGetPersistenceMode = "get_persistence_mode";
// GPUs: {"<i>": {"energy_mj"}}; CPUs (cpu_ids, cpu, dram): {"<i>": {"cpu_energy_uj",
// "dram_energy_uj"}}
inline constexpr std::string_view kGetCumulativeEnergy = "get_cumulative_energy";
// {"timestamp_ms", "power_mw": {"<i>": mW}}: the instant power; for CPUs {"<i>": {"cpu_mw",
// "dram_mw"}}.
inline constexpr std::string_view kGetPower = "get_power";
// The same shape as get_power, with the power the driver averages over its own window (NVML:
// about 1 s); zeusd's addition.
inline constexpr std::string_view kGetAveragePower = "get_average_power";

}  // namespace zeus::zeusd
