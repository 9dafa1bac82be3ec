#include "zeusd_client/zeusd_devices.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "wire/zeusd_command.h"

namespace zeus::zeusd {
namespace {

using nlohmann::json;

GpuArchitecture architecture_from_name(const std::string& name) {
  for (int code = 0; code <= static_cast<int>(GpuArchitecture::kUnknown); ++code) {
    const auto architecture = static_cast<GpuArchitecture>(code);
    if (architecture_name(architecture) == name) return architecture;
  }
  return GpuArchitecture::kUnknown;
}

std::optional<uint32_t> optional_u32(const json& value) {
  if (!value.is_number_unsigned()) return std::nullopt;
  return value.get<uint32_t>();
}

std::optional<std::vector<uint32_t>> optional_list(const json& value) {
  if (!value.is_array()) return std::nullopt;
  std::vector<uint32_t> list;
  for (const auto& item : value) {
    if (item.is_number_unsigned()) list.push_back(item.get<uint32_t>());
  }
  return list;
}

Error malformed(const std::string& what) {
  return Error{ErrorCode::kInternal,
               "zeusd answered " + what + " with unexpected JSON (version mismatch?)"};
}

Error not_managed(const std::string& uuid) {
  return Error{ErrorCode::kNotFound, "zeusd does not manage GPU " + uuid +
                                         " (its GET /discover lists no GPU with that UUID)"};
}

}  // namespace

Result<ZeusdInventory> fetch_inventory(ZeusdClient& client) {
  auto body = client.request("GET", "/discover");
  if (!body) return fail(body.error());
  const json answer = json::parse(*body, nullptr, false);
  if (answer.is_discarded() || !answer.is_object() || !answer.contains("gpus") ||
      !answer["gpus"].is_array() || !answer.contains("cpus") || !answer["cpus"].is_array()) {
    return fail(malformed("GET /discover"));
  }
  ZeusdInventory inventory;
  for (const auto& gpu : answer["gpus"]) {
    if (!gpu.is_object() || !gpu.value("index", json()).is_number_unsigned())
      return fail(malformed("GET /discover"));
    RemoteGpuInfo info;
    info.index = gpu["index"].get<int>();
    info.name = gpu.value("name", "");
    info.uuid = gpu.value("uuid", "");
    info.architecture = architecture_from_name(gpu.value("architecture", ""));
    info.has_energy_counter = gpu.value("has_energy_counter", false);
    const json range = gpu.value("power_limit_range_mw", json());
    if (range.is_object() && range.value("min", json()).is_number_unsigned() &&
        range.value("max", json()).is_number_unsigned()) {
      info.power_limit_range_mw =
          PowerLimitRangeMw{range["min"].get<uint32_t>(), range["max"].get<uint32_t>()};
    }
    info.default_power_limit_mw = optional_u32(gpu.value("default_power_limit_mw", json()));
    info.supported_sm_clocks_mhz = optional_list(gpu.value("supported_sm_clocks_mhz", json()));
    info.supported_memory_clocks_mhz =
        optional_list(gpu.value("supported_memory_clocks_mhz", json()));
    inventory.gpus.push_back(std::move(info));
  }
  for (const auto& cpu : answer["cpus"]) {
    if (!cpu.is_object() || !cpu.value("index", json()).is_number_unsigned())
      return fail(malformed("GET /discover"));
    RemoteCpuInfo info;
    info.index = cpu["index"].get<int>();
    info.package = cpu.value("package", info.index);
    info.name = cpu.value("name", "");
    info.has_dram = cpu.value("has_dram", false);
    inventory.cpus.push_back(std::move(info));
  }
  const json caller = answer.value("caller", json::object());
  if (caller.is_object() && caller.value("capabilities", json()).is_array()) {
    for (const auto& capability : caller["capabilities"]) {
      if (capability.is_string()) inventory.capabilities.push_back(capability.get<std::string>());
    }
  }
  return inventory;
}

// ---- ZeusdGpu ----

ZeusdGpu::ZeusdGpu(std::shared_ptr<ZeusdClient> client, RemoteGpuInfo info,
                   std::unique_ptr<Gpu> local)
    : client_(std::move(client)), info_(std::move(info)), local_(std::move(local)) {}

GpuVendor ZeusdGpu::vendor() const {
  if (local_) return local_->vendor();
  return info_.architecture == GpuArchitecture::kAmd ? GpuVendor::kAmd : GpuVendor::kNvidia;
}
std::string ZeusdGpu::backend() const {
  return local_ ? local_->backend() + " via zeusd" : "zeusd";
}
std::string ZeusdGpu::name() const { return local_ ? local_->name() : info_.name; }
std::string ZeusdGpu::uuid() const { return local_ ? local_->uuid() : info_.uuid; }
GpuArchitecture ZeusdGpu::architecture() const {
  return local_ ? local_->architecture() : info_.architecture;
}
int ZeusdGpu::physical_index() const { return local_ ? local_->physical_index() : info_.index; }

std::string ZeusdGpu::target(std::string_view route) const {
  return "/gpu/" + std::string(route) + "?gpu_ids=" + std::to_string(info_.index);
}

Result<void> ZeusdGpu::change(const GpuCommand& command) {
  if (info_.index < 0) return fail(not_managed(uuid()));
  // Over TCP the change is tied to this process's lease session (restored when it stops).
  if (auto session = client_->ensure_lease_session(); !session) return session;
  // block=true: zeusd answers once the GPU has the change, or with the GPU's error.
  auto answer = client_->request("POST", gpu_command_target(command, info_.index, true));
  if (!answer) return fail(answer.error());
  return ok();
}

Result<nlohmann::json> ZeusdGpu::read_remote(std::string_view route) {
  if (info_.index < 0) return fail(not_managed(uuid()));
  const std::string where = target(route);
  auto body = client_->request("GET", where);
  if (!body) return fail(body.error());
  const json answer = json::parse(*body, nullptr, false);
  const std::string key = std::to_string(info_.index);
  // The reads answer {"<i>": {...}}; the power reads {"timestamp_ms", "power_mw": {"<i>": mW}}.
  const bool power = route == kGetPower || route == kGetAveragePower;
  const json& by_gpu = power && answer.is_object() ? answer.value("power_mw", json()) : answer;
  if (answer.is_discarded() || !by_gpu.is_object() || !by_gpu.contains(key)) {
    return fail(malformed("GET " + where));
  }
  return by_gpu[key];
}

Result<uint64_t> ZeusdGpu::read_number(std::string_view route, const char* field) {
  auto entry = read_remote(route);
  if (!entry) return fail(entry.error());
  const json& value = field != nullptr && entry->is_object() ? entry->value(field, json()) : *entry;
  if (!value.is_number_unsigned()) return fail(malformed("GET " + target(route)));
  return value.get<uint64_t>();
}

Result<PowerLimitRangeMw> ZeusdGpu::power_limit_range_mw() {
  if (local_) return local_->power_limit_range_mw();
  if (!info_.power_limit_range_mw)
    return fail(ErrorCode::kNotSupported, "zeusd reports no power limit range for " + uuid());
  return *info_.power_limit_range_mw;
}

Result<uint32_t> ZeusdGpu::default_power_limit_mw() {
  if (local_) return local_->default_power_limit_mw();
  if (!info_.default_power_limit_mw)
    return fail(ErrorCode::kNotSupported, "zeusd reports no default power limit for " + uuid());
  return *info_.default_power_limit_mw;
}

Result<uint32_t> ZeusdGpu::power_limit_mw() {
  if (local_) return local_->power_limit_mw();
  auto value = read_number(kGetPowerLimit, "power_limit_mw");
  if (!value) return fail(value.error());
  return static_cast<uint32_t>(*value);
}

Result<void> ZeusdGpu::set_power_limit_mw(uint32_t limit_mw) {
  return change(SetPowerLimit{limit_mw});
}

Result<void> ZeusdGpu::reset_power_limit() {
  // Upstream's API has no reset (zeusd's reset_power_limit is ours): set the default limit, which
  // every zeusd takes (the lease still restores what the GPU had before this process first
  // changed it).
  auto default_mw = default_power_limit_mw();
  if (!default_mw) return fail(default_mw.error());
  return set_power_limit_mw(*default_mw);
}

Result<uint32_t> ZeusdGpu::instant_power_mw() {
  if (local_) return local_->instant_power_mw();
  auto value = read_number(kGetPower, nullptr);
  if (!value) return fail(value.error());
  return static_cast<uint32_t>(*value);
}

Result<uint32_t> ZeusdGpu::average_power_mw() {
  if (local_) return local_->average_power_mw();
  // Upstream's API has no averaged reading: zeusd's get_average_power, in get_power's shape.
  auto value = read_number(kGetAveragePower, nullptr);
  if (!value) return fail(value.error());
  return static_cast<uint32_t>(*value);
}

bool ZeusdGpu::has_energy_counter() {
  return local_ ? local_->has_energy_counter() : info_.has_energy_counter;
}

Result<uint64_t> ZeusdGpu::total_energy_mj() {
  if (local_) return local_->total_energy_mj();
  return read_number(kGetCumulativeEnergy, "energy_mj");
}

Result<bool> ZeusdGpu::persistence_mode() {
  if (local_) return local_->persistence_mode();
  auto entry = read_remote(kGetPersistenceMode);
  if (!entry) return fail(entry.error());
  if (!entry->is_object() || !entry->value("enabled", json()).is_boolean())
    return fail(malformed("GET " + target(kGetPersistenceMode)));
  return (*entry)["enabled"].get<bool>();
}

Result<void> ZeusdGpu::set_persistence_mode(bool enabled) {
  return change(SetPersistenceMode{enabled});
}

Result<std::vector<uint32_t>> ZeusdGpu::supported_memory_clocks_mhz() {
  if (local_) return local_->supported_memory_clocks_mhz();
  if (!info_.supported_memory_clocks_mhz)
    return fail(ErrorCode::kNotSupported, "zeusd reports no memory clocks for " + uuid());
  return *info_.supported_memory_clocks_mhz;
}

Result<std::vector<uint32_t>> ZeusdGpu::supported_sm_clocks_mhz() {
  if (local_) return local_->supported_sm_clocks_mhz();
  if (!info_.supported_sm_clocks_mhz)
    return fail(ErrorCode::kNotSupported, "zeusd reports no SM clocks for " + uuid());
  return *info_.supported_sm_clocks_mhz;
}

Result<void> ZeusdGpu::lock_sm_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) {
  return change(LockGpuClocks{{min_mhz, max_mhz}});
}

Result<void> ZeusdGpu::reset_sm_clocks() { return change(ResetGpuClocks{}); }

Result<void> ZeusdGpu::lock_memory_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) {
  return change(LockMemoryClocks{{min_mhz, max_mhz}});
}

Result<void> ZeusdGpu::reset_memory_clocks() { return change(ResetMemoryClocks{}); }

// ---- ZeusdCpu ----

ZeusdCpu::ZeusdCpu(std::shared_ptr<ZeusdClient> client, RemoteCpuInfo info)
    : client_(std::move(client)), info_(std::move(info)) {}

Result<uint64_t> ZeusdCpu::read(bool dram) {
  // Upstream's counter: the raw RAPL value plus its wraparounds, so monotone while zeusd runs.
  const std::string target = "/cpu/" + std::string(kGetCumulativeEnergy) +
                             "?cpu_ids=" + std::to_string(info_.index) +
                             (dram ? "&cpu=false&dram=true" : "&cpu=true&dram=false");
  auto body = client_->request("GET", target);
  if (!body) return fail(body.error());
  const json answer = json::parse(*body, nullptr, false);
  const json entry =
      answer.is_object() ? answer.value(std::to_string(info_.index), json()) : json();
  const char* field = dram ? "dram_energy_uj" : "cpu_energy_uj";
  if (!entry.is_object() || !entry.value(field, json()).is_number_unsigned()) {
    if (dram && entry.is_object() && entry.value(field, json()).is_null())
      return fail(ErrorCode::kNotSupported, info_.name + " has no DRAM zone");
    return fail(malformed("GET " + target));
  }
  const uint64_t raw_uj = entry[field].get<uint64_t>();
  std::lock_guard<std::mutex> lock(mutex_);
  Counter& counter = dram ? dram_ : package_;
  // zeusd's counters are monotone; one that went back means zeusd restarted (from 0).
  if (counter.last_raw_uj)
    counter.total_uj += raw_uj >= *counter.last_raw_uj ? raw_uj - *counter.last_raw_uj : raw_uj;
  counter.last_raw_uj = raw_uj;
  return counter.total_uj;
}

Result<uint64_t> ZeusdCpu::package_energy_uj() { return read(false); }

Result<uint64_t> ZeusdCpu::dram_energy_uj() {
  if (!info_.has_dram) return fail(ErrorCode::kNotSupported, info_.name + " has no DRAM zone");
  return read(true);
}

}  // namespace zeus::zeusd
