// RAPL zone selection: which powercap package zone belongs to the socket a process runs on,
// so a job sharing a multi-socket machine measures only its own socket (upstream Zeus's
// zeus.device.cpu.rapl.get_current_rapl_zone_id).
//
// The mapping never assumes zone index = package id (ARM and some AMD parts number packages
// arbitrarily): the process's last CPU comes from <proc_root>/<pid>/stat (field 39), its
// physical_package_id N and die_id D from <sysfs_root>/devices/system/cpu/cpu<k>/topology/, and
// the answer is the top-level zone intel-rapl:Z whose name reads "package-N" or
// "package-N-die-D" (multi-die parts expose one zone per die). The kernel may move a process
// between sockets: pin it (taskset) for the answer to hold.
// Thread-safety: stateless. Failure: NotFound naming the files or the missing zone.
//
//   auto zone = zeus::get_current_rapl_zone_id();            // this process
//   EnergyMonitorOptions options{.cpu_indices = std::vector<int>{*zone}};
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "zeus/common/result.h"

namespace zeus {

struct RaplZoneLookup {
  std::string proc_root = "/proc";
  std::string sysfs_root = "/sys";
  std::string powercap_root = "/sys/class/powercap";
  // sysfs_root from ZEUS_SYSFS_ROOT and powercap_root as DiscoverOptions::from_environment().
  static RaplZoneLookup from_environment();
};

// The RAPL package zone id (the Z of intel-rapl:Z; a cpu_indices entry) of the socket process
// `pid` (nullopt: this process) last ran on.
Result<int> get_current_rapl_zone_id(
    std::optional<int> pid = std::nullopt,
    const RaplZoneLookup& where = RaplZoneLookup::from_environment());

// Pure parts, for tests and callers with their own readings:
// The logical CPU a /proc/<pid>/stat line says the process last ran on (its 39th field; the
// command name in parentheses may hold spaces and parentheses).
Result<int> stat_last_cpu(const std::string& stat_line);
// The zone among (zone id, zone name) pairs named "package-<package_id>" or, with a die id,
// "package-<package_id>-die-<die_id>"; nullopt when none is.
std::optional<int> match_rapl_package_zone(const std::vector<std::pair<int, std::string>>& zones,
                                           int package_id, std::optional<int> die_id);

// The powercap root to use when none is configured: `preferred` (/sys/class/powercap) when it has
// an intel-rapl zone, else `container` (/zeus_sys/class/powercap, where upstream Zeus's Docker
// instructions mount the host's powercap tree) when that has one, else `preferred`.
std::string choose_powercap_root(const std::string& preferred, const std::string& container);

}  // namespace zeus
