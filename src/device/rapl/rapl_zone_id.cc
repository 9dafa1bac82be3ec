// get_current_rapl_zone_id(): the RAPL package zone of the socket a process runs on.
#include <unistd.h>

#include <charconv>
#include <sstream>

#include "common/sysfs.h"
#include "device/rapl/rapl_cpu.h"
#include "zeus/device/device.h"
#include "zeus/device/rapl_zone.h"

namespace zeus {
namespace {

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

// True when `root` has a top-level intel-rapl:N entry.
bool has_rapl_zone(const std::string& root) {
  auto entries = list_directory(root);
  if (!entries) return false;
  for (const auto& entry : *entries) {
    if (rapl_zone_number(entry, "")) return true;
  }
  return false;
}

}  // namespace

RaplZoneLookup RaplZoneLookup::from_environment() {
  const DiscoverOptions options = DiscoverOptions::from_environment();
  RaplZoneLookup where;
  where.sysfs_root = options.sysfs_root;
  where.powercap_root = options.powercap_root;
  return where;
}

Result<int> stat_last_cpu(const std::string& stat_line) {
  const size_t close = stat_line.rfind(')');
  if (close == std::string::npos) {
    return fail(ErrorCode::kInvalidArgument, "not a /proc/<pid>/stat line (no \"(comm)\")");
  }
  // After "pid (comm)" come fields 3, 4, ...: the processor is field 39, the 37th of these.
  std::istringstream rest(stat_line.substr(close + 1));
  std::string field;
  for (int i = 0; i < 37; ++i) {
    if (!(rest >> field)) {
      return fail(ErrorCode::kInvalidArgument,
                  "a /proc/<pid>/stat line with fewer than 39 fields (no processor field)");
    }
  }
  auto cpu = parse_int(field);
  if (!cpu || *cpu < 0) {
    return fail(ErrorCode::kInvalidArgument,
                "the processor field of a /proc/<pid>/stat line is not a CPU number: " + field);
  }
  return *cpu;
}

std::optional<int> match_rapl_package_zone(const std::vector<std::pair<int, std::string>>& zones,
                                           int package_id, std::optional<int> die_id) {
  const std::string package = "package-" + std::to_string(package_id);
  const std::string die = die_id ? package + "-die-" + std::to_string(*die_id) : std::string();
  for (const auto& [zone, name] : zones) {
    if (name == package || (!die.empty() && name == die)) return zone;
  }
  return std::nullopt;
}

std::string choose_powercap_root(const std::string& preferred, const std::string& container) {
  if (has_rapl_zone(preferred)) return preferred;
  if (has_rapl_zone(container)) return container;
  return preferred;
}

Result<int> get_current_rapl_zone_id(std::optional<int> pid, const RaplZoneLookup& where) {
  const int process = pid ? *pid : static_cast<int>(::getpid());
  const std::string stat_path = where.proc_root + "/" + std::to_string(process) + "/stat";
  auto stat = read_text_file(stat_path);
  if (!stat) {
    return fail(stat.error().code, "cannot read " + stat_path + " (is process " +
                                       std::to_string(process) +
                                       " running?): " + stat.error().message);
  }
  auto cpu = stat_last_cpu(*stat);
  if (!cpu) return fail(cpu.error().code, stat_path + ": " + cpu.error().message);

  const std::string topology =
      where.sysfs_root + "/devices/system/cpu/cpu" + std::to_string(*cpu) + "/topology";
  auto package_text = read_text_file(topology + "/physical_package_id");
  if (!package_text) return fail(package_text.error());
  auto package_id = parse_int(*package_text);
  if (!package_id) {
    return fail(ErrorCode::kInternal,
                topology + "/physical_package_id is not an integer: " + *package_text);
  }
  // die_id is missing on older kernels and some platforms: then only "package-N" matches.
  std::optional<int> die_id;
  if (auto die_text = read_text_file(topology + "/die_id")) die_id = parse_int(*die_text);

  auto entries = list_directory(where.powercap_root);
  if (!entries) return fail(entries.error());
  std::vector<std::pair<int, std::string>> zones;
  for (const auto& entry : *entries) {
    auto zone = rapl_zone_number(entry, "");
    if (!zone) continue;
    auto name = read_text_file(where.powercap_root + "/" + entry + "/name");
    if (name) zones.emplace_back(*zone, *name);
  }
  if (auto zone = match_rapl_package_zone(zones, *package_id, die_id)) return *zone;
  return fail(
      ErrorCode::kNotFound,
      "no RAPL package zone named package-" + std::to_string(*package_id) +
          (die_id ? " or package-" + std::to_string(*package_id) + "-die-" + std::to_string(*die_id)
                  : std::string()) +
          " under " + where.powercap_root + " (process " + std::to_string(process) +
          " last ran on CPU " + std::to_string(*cpu) +
          "); set ZEUS_POWERCAP_ROOT to the host's powercap tree");
}

}  // namespace zeus
