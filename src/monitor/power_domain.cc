#include "zeus/monitor/power_domain.h"

#include <algorithm>

#include "zeus/common/log.h"

namespace zeus {
namespace {

bool contains(const std::vector<PowerDomain>& domains, PowerDomain domain) {
  return std::find(domains.begin(), domains.end(), domain) != domains.end();
}

}  // namespace

std::string power_domain_name(PowerDomain domain) {
  switch (domain) {
    case PowerDomain::kDeviceInstant:
      return "device_instant";
    case PowerDomain::kDeviceAverage:
      return "device_average";
    case PowerDomain::kMemoryAverage:
      return "memory_average";
    case PowerDomain::kCpuPackageAverage:
      return "cpu_package_average";
    case PowerDomain::kCpuDramAverage:
      return "cpu_dram_average";
  }
  return "unknown";
}

bool is_cpu_power_domain(PowerDomain domain) {
  return domain == PowerDomain::kCpuPackageAverage || domain == PowerDomain::kCpuDramAverage;
}

std::string power_domain_list(const std::vector<PowerDomain>& domains) {
  std::string text = "[";
  for (size_t i = 0; i < domains.size(); ++i) {
    if (i > 0) text += ", ";
    text += power_domain_name(domains[i]);
  }
  return text + "]";
}

Result<PowerDomain> parse_power_domain(std::string_view name) {
  for (PowerDomain domain : kAllPowerDomains) {
    if (name == power_domain_name(domain)) return domain;
  }
  return fail(ErrorCode::kInvalidArgument,
              "unknown power domain '" + std::string(name) + "': use one of " +
                  power_domain_list({kAllPowerDomains.begin(), kAllPowerDomains.end()}));
}

Result<uint32_t> read_power_mw(Gpu& gpu, PowerDomain domain) {
  switch (domain) {
    case PowerDomain::kDeviceInstant:
      return gpu.instant_power_mw();
    case PowerDomain::kDeviceAverage:
      return gpu.average_power_mw();
    case PowerDomain::kMemoryAverage:
      return gpu.memory_average_power_mw();
    case PowerDomain::kCpuPackageAverage:
    case PowerDomain::kCpuDramAverage:
      break;
  }
  return fail(ErrorCode::kInvalidArgument,
              "power domain " + power_domain_name(domain) + " is not a GPU domain");
}

Result<uint64_t> read_cpu_energy_uj(Cpu& cpu, PowerDomain domain) {
  if (domain == PowerDomain::kCpuPackageAverage) return cpu.package_energy_uj();
  if (domain == PowerDomain::kCpuDramAverage) return cpu.dram_energy_uj();
  return fail(ErrorCode::kInvalidArgument,
              "power domain " + power_domain_name(domain) + " is not a CPU domain");
}

std::vector<PowerDomain> supported_cpu_power_domains(const std::vector<Cpu*>& cpus) {
  if (cpus.empty()) return {};
  std::vector<PowerDomain> supported = {PowerDomain::kCpuPackageAverage};
  if (std::all_of(cpus.begin(), cpus.end(), [](Cpu* cpu) { return cpu->has_dram(); })) {
    supported.push_back(PowerDomain::kCpuDramAverage);
  }
  return supported;
}

std::vector<PowerDomain> supported_power_domains(const std::vector<Gpu*>& gpus) {
  std::vector<PowerDomain> supported;
  for (PowerDomain domain : kGpuPowerDomains) {
    bool all = !gpus.empty();
    for (Gpu* gpu : gpus) {
      if (auto reading = read_power_mw(*gpu, domain); !reading) {
        log_info("power domain " + power_domain_name(domain) + ": " + reading.error().to_string());
        all = false;
        break;
      }
    }
    if (all) supported.push_back(domain);
  }
  return supported;
}

Result<std::vector<PowerDomain>> choose_power_domains(
    const std::optional<std::vector<PowerDomain>>& requested,
    const std::vector<PowerDomain>& supported) {
  if (!requested) {
    if (supported.empty()) {
      return fail(ErrorCode::kNotSupported,
                  "the devices support no power domain: neither a GPU's instant, average nor "
                  "memory power nor a CPU's RAPL energy can be read");
    }
    return supported;
  }
  if (requested->empty()) {
    return fail(ErrorCode::kInvalidArgument,
                "power_domains must be None (every supported domain) or non-empty");
  }
  std::vector<PowerDomain> chosen;
  for (PowerDomain domain : *requested) {
    if (!contains(supported, domain)) {
      return fail(ErrorCode::kInvalidArgument,
                  "power domain " + power_domain_name(domain) +
                      " is not supported by the monitored devices; supported domains are " +
                      power_domain_list(supported));
    }
    if (!contains(chosen, domain)) chosen.push_back(domain);
  }
  return chosen;
}

Result<PowerDomain> resolve_power_domain(std::optional<PowerDomain> requested,
                                         const std::vector<PowerDomain>& monitored) {
  if (requested) {
    if (contains(monitored, *requested)) return *requested;
    return fail(ErrorCode::kInvalidArgument,
                "power domain " + power_domain_name(*requested) +
                    " is not being monitored; monitored domains are " +
                    power_domain_list(monitored) +
                    " (pass one of them, or list it in power_domains when creating the monitor)");
  }
  for (PowerDomain domain : {PowerDomain::kDeviceInstant, PowerDomain::kDeviceAverage}) {
    if (contains(monitored, domain)) return domain;
  }
  return fail(ErrorCode::kInvalidArgument,
              "neither device_instant nor device_average is being monitored (monitored: " +
                  power_domain_list(monitored) + "); pass power_domain explicitly");
}

}  // namespace zeus
