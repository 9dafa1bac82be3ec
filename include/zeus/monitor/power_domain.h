// PowerDomain: which power reading of a device is sampled. GPU domains: the instant draw, the
// driver's moving average of it, or the moving average of the memory's draw (NVML's memory power
// scope, e.g. on H100) — Zeus's "device_instant", "device_average", "memory_average". CPU
// domains (RAPL, per CPU package): the package's and its DRAM zone's average power between two
// readings of their energy counters — "cpu_package_average", "cpu_dram_average", the names of
// upstream Zeus's CPU power monitor branch. On Intel RAPL the DRAM zone is not inside the
// package's counter: the two are separate draws.
//
// The choice rules are pure (no I/O): choose_power_domains() picks what a monitor samples from
// what was asked and what the GPUs support; resolve_power_domain() picks the domain a query uses
// when none is named (instant, else average: Zeus's fallback for GPUs without instant power).
// Units: mW from read_power_mw(). Thread-safety: all functions are reentrant.
// Failure: InvalidArgument naming the accepted values or the supported domains.
//
//   auto domain = zeus::parse_power_domain("memory_average");
//   auto power_mw = zeus::read_power_mw(*gpu, *domain);
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/common/result.h"
#include "zeus/device/device.h"

namespace zeus {

enum class PowerDomain {
  kDeviceInstant,
  kDeviceAverage,
  kMemoryAverage,
  kCpuPackageAverage,
  kCpuDramAverage,
};

// The GPU domains, in the order Zeus lists them.
inline constexpr std::array<PowerDomain, 3> kGpuPowerDomains = {
    PowerDomain::kDeviceInstant, PowerDomain::kDeviceAverage, PowerDomain::kMemoryAverage};
// The CPU (RAPL) domains.
inline constexpr std::array<PowerDomain, 2> kCpuPowerDomains = {PowerDomain::kCpuPackageAverage,
                                                                PowerDomain::kCpuDramAverage};
// Every domain: the GPU ones, then the CPU ones.
inline constexpr std::array<PowerDomain, 5> kAllPowerDomains = {
    PowerDomain::kDeviceInstant, PowerDomain::kDeviceAverage, PowerDomain::kMemoryAverage,
    PowerDomain::kCpuPackageAverage, PowerDomain::kCpuDramAverage};

// True for cpu_package_average and cpu_dram_average (indexed by CPU package, not GPU).
bool is_cpu_power_domain(PowerDomain domain);

// "device_instant", "device_average", "memory_average", "cpu_package_average" or
// "cpu_dram_average".
std::string power_domain_name(PowerDomain domain);
// "[device_instant, memory_average]".
std::string power_domain_list(const std::vector<PowerDomain>& domains);
// The domain of a name; InvalidArgument listing the five names otherwise.
Result<PowerDomain> parse_power_domain(std::string_view name);

// One reading of GPU `domain` from `gpu`, in mW (InvalidArgument for a CPU domain).
Result<uint32_t> read_power_mw(Gpu& gpu, PowerDomain domain);
// The cumulative energy counter behind CPU `domain` of `cpu`, in uJ, wraparound corrected
// (Cpu::package_energy_uj / dram_energy_uj; InvalidArgument for a GPU domain).
Result<uint64_t> read_cpu_energy_uj(Cpu& cpu, PowerDomain domain);
// The GPU domains every one of `gpus` answers a reading of (one reading each), in Zeus's order.
std::vector<PowerDomain> supported_power_domains(const std::vector<Gpu*>& gpus);
// The CPU domains of `cpus`: cpu_package_average when there is a package, cpu_dram_average when
// every package has a DRAM zone. Empty for no CPU.
std::vector<PowerDomain> supported_cpu_power_domains(const std::vector<Cpu*>& cpus);

// The domains to sample: every supported one when `requested` is nullopt, else the requested
// ones in order without repeats. InvalidArgument for an empty request or a requested domain that
// is not supported (the message lists the supported ones).
Result<std::vector<PowerDomain>> choose_power_domains(
    const std::optional<std::vector<PowerDomain>>& requested,
    const std::vector<PowerDomain>& supported);

// The domain a query uses: `requested` when it is monitored; without one, device_instant when
// monitored, else device_average. InvalidArgument when the domain is not monitored or neither
// device domain is.
Result<PowerDomain> resolve_power_domain(std::optional<PowerDomain> requested,
                                         const std::vector<PowerDomain>& monitored);

}  // namespace zeus
