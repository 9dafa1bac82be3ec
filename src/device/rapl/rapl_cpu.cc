#include "device/rapl/rapl_cpu.h"

#include <algorithm>
#include <utility>

#include "common/sysfs.h"

namespace zeus {

constexpr std::string_view kZonePrefix = "intel-rapl:";

std::optional<int> rapl_zone_number(const std::string& entry, const std::string& parent) {
  std::string prefix = std::string(kZonePrefix) + (parent.empty() ? "" : parent + ":");
  if (entry.rfind(prefix, 0) != 0) return std::nullopt;
  std::string digits = entry.substr(prefix.size());
  if (digits.empty() || digits.size() > 6 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::stoi(digits);
}

namespace {

// Reads energy_uj, replacing a permission error by the RAPL-specific explanation.
Result<uint64_t> read_energy_file(const std::string& path) {
  auto value = read_uint64_file(path);
  if (!value && value.error().code == ErrorCode::kPermissionDenied) {
    return fail(ErrorCode::kPermissionDenied,
                "reading RAPL energy needs root since Linux 5.10 (CVE-2020-8694): run as root or "
                "use zeusd (cannot read " +
                    path + ")");
  }
  return value;
}

Result<std::optional<RaplZoneCounter>> open_dram(const std::string& package_dir,
                                                 const std::string& package_number) {
  auto entries = list_directory(package_dir);
  if (!entries) return fail(entries.error());
  std::vector<std::pair<int, std::string>> subzones;
  for (const auto& entry : *entries) {
    if (auto m = rapl_zone_number(entry, package_number)) subzones.emplace_back(*m, entry);
  }
  std::sort(subzones.begin(), subzones.end());
  for (const auto& [m, entry] : subzones) {
    std::string dir = package_dir + "/" + entry;
    auto name = read_text_file(dir + "/name");
    if (!name || *name != "dram") continue;
    auto counter = RaplZoneCounter::open(dir);
    if (!counter) return fail(counter.error());
    return std::optional<RaplZoneCounter>(std::move(*counter));
  }
  return std::optional<RaplZoneCounter>();
}

}  // namespace

Result<RaplZoneCounter> RaplZoneCounter::open(const std::string& zone_dir) {
  auto max_range_uj = read_uint64_file(zone_dir + "/max_energy_range_uj");
  if (!max_range_uj) return fail(max_range_uj.error());
  std::string energy_path = zone_dir + "/energy_uj";
  auto baseline_uj = read_energy_file(energy_path);
  if (!baseline_uj) return fail(baseline_uj.error());
  return RaplZoneCounter(std::move(energy_path), *max_range_uj, *baseline_uj);
}

Result<uint64_t> RaplZoneCounter::energy_uj() {
  auto raw_uj = read_energy_file(energy_path_);
  if (!raw_uj) return fail(raw_uj.error());
  if (*raw_uj >= last_raw_uj_) {
    total_uj_ += *raw_uj - last_raw_uj_;
  } else if (last_raw_uj_ <= max_energy_range_uj_) {
    total_uj_ += (max_energy_range_uj_ - last_raw_uj_) + *raw_uj;
  } else {
    // The previous value was above the advertised range: count from zero.
    total_uj_ += *raw_uj;
  }
  last_raw_uj_ = *raw_uj;
  return total_uj_;
}

RaplCpu::RaplCpu(int index, std::string name, RaplZoneCounter package,
                 std::optional<RaplZoneCounter> dram)
    : index_(index), name_(std::move(name)), package_(std::move(package)), dram_(std::move(dram)) {}

Result<uint64_t> RaplCpu::package_energy_uj() {
  std::lock_guard<std::mutex> lock(mutex_);
  return package_.energy_uj();
}

Result<uint64_t> RaplCpu::dram_energy_uj() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!dram_) return fail(ErrorCode::kNotSupported, name_ + " has no RAPL DRAM zone");
  return dram_->energy_uj();
}

Result<std::vector<std::unique_ptr<Cpu>>> open_rapl_cpus(const std::string& powercap_root) {
  const std::string not_found =
      "no RAPL zones under " + powercap_root +
      " (not an Intel/AMD CPU with powercap, or the intel_rapl module is not loaded)";
  auto entries = list_directory(powercap_root);
  if (!entries) {
    if (entries.error().code == ErrorCode::kNotFound) return fail(ErrorCode::kNotFound, not_found);
    return fail(entries.error());
  }
  std::vector<std::pair<int, std::string>> packages;
  for (const auto& entry : *entries) {
    if (auto n = rapl_zone_number(entry, "")) packages.emplace_back(*n, entry);
  }
  std::sort(packages.begin(), packages.end());

  std::vector<std::unique_ptr<Cpu>> cpus;
  for (const auto& [n, entry] : packages) {
    std::string dir = powercap_root + "/" + entry;
    auto name = read_text_file(dir + "/name");
    if (!name) return fail(name.error());
    if (name->rfind("package-", 0) != 0) continue;  // e.g. "psys"
    auto package = RaplZoneCounter::open(dir);
    if (!package) return fail(package.error());
    auto dram = open_dram(dir, std::to_string(n));
    if (!dram) return fail(dram.error());
    cpus.push_back(
        std::make_unique<RaplCpu>(n, std::move(*name), std::move(*package), std::move(*dram)));
  }
  if (cpus.empty()) return fail(ErrorCode::kNotFound, not_found);
  return cpus;
}

}  // namespace zeus
