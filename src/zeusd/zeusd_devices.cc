#include "zeusd/zeusd_devices.h"

#include <algorithm>

#include <nlohmann/json.hpp>

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

Result<void> ZeusdGpu::change(const char* method, const std::string& knob,
                              const std::string& body) {
  if (info_.index < 0) return fail(not_managed(uuid()));
  auto answer = client_->request(method, "/gpu/" + std::to_string(info_.index) + "/" + knob, body);
  if (!answer) return fail(answer.error());
  return ok();
}

Result<uint64_t> ZeusdGpu::read_remote(const std::string& knob, const char* field) {
  if (info_.index < 0) return fail(not_managed(uuid()));
  const std::string target = "/gpu/" + std::to_string(info_.index) + "/" + knob;
  auto body = client_->request("GET", target);
  if (!body) return fail(body.error());
  const json answer = json::parse(*body, nullptr, false);
  if (answer.is_discarded() || !answer.is_object() ||
      !answer.value(field, json()).is_number_unsigned()) {
    return fail(malformed("GET " + target));
  }
  return answer[field].get<uint64_t>();
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
  auto value = read_remote("power_limit", "power_limit_mw");
  if (!value) return fail(value.error());
  return static_cast<uint32_t>(*value);
}

Result<void> ZeusdGpu::set_power_limit_mw(uint32_t limit_mw) {
  return change("POST", "power_limit", json{{"power_limit_mw", limit_mw}}.dump());
}

Result<void> ZeusdGpu::reset_power_limit() { return change("DELETE", "power_limit", ""); }

Result<uint32_t> ZeusdGpu::instant_power_mw() {
  if (local_) return local_->instant_power_mw();
  auto value = read_remote("power", "instant_power_mw");
  if (!value) return fail(value.error());
  return static_cast<uint32_t>(*value);
}

Result<uint32_t> ZeusdGpu::average_power_mw() {
  if (local_) return local_->average_power_mw();
  auto value = read_remote("power", "average_power_mw");
  if (!value) return fail(value.error());
  return static_cast<uint32_t>(*value);
}

bool ZeusdGpu::has_energy_counter() {
  return local_ ? local_->has_energy_counter() : info_.has_energy_counter;
}

Result<uint64_t> ZeusdGpu::total_energy_mj() {
  if (local_) return local_->total_energy_mj();
  return read_remote("energy", "total_energy_mj");
}

Result<bool> ZeusdGpu::persistence_mode() {
  if (local_) return local_->persistence_mode();
  if (info_.index < 0) return fail(not_managed(uuid()));
  auto body = client_->request("GET", "/gpu/" + std::to_string(info_.index) + "/persistence_mode");
  if (!body) return fail(body.error());
  const json answer = json::parse(*body, nullptr, false);
  if (answer.is_discarded() || !answer.is_object() ||
      !answer.value("enabled", json()).is_boolean()) {
    return fail(malformed("GET persistence_mode"));
  }
  return answer["enabled"].get<bool>();
}

Result<void> ZeusdGpu::set_persistence_mode(bool enabled) {
  return change("POST", "persistence_mode", json{{"enabled", enabled}}.dump());
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
  return change("POST", "sm_clocks", json{{"min_mhz", min_mhz}, {"max_mhz", max_mhz}}.dump());
}

Result<void> ZeusdGpu::reset_sm_clocks() { return change("DELETE", "sm_clocks", ""); }

Result<void> ZeusdGpu::lock_memory_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) {
  return change("POST", "memory_clocks", json{{"min_mhz", min_mhz}, {"max_mhz", max_mhz}}.dump());
}

Result<void> ZeusdGpu::reset_memory_clocks() { return change("DELETE", "memory_clocks", ""); }

// ---- ZeusdCpu ----

ZeusdCpu::ZeusdCpu(std::shared_ptr<ZeusdClient> client, RemoteCpuInfo info)
    : client_(std::move(client)), info_(std::move(info)) {}

Result<uint64_t> ZeusdCpu::read(bool dram) {
  const std::string target = "/cpu/" + std::to_string(info_.index) + "/energy";
  auto body = client_->request("GET", target);
  if (!body) return fail(body.error());
  const json answer = json::parse(*body, nullptr, false);
  const char* field = dram ? "dram_energy_uj" : "package_energy_uj";
  if (answer.is_discarded() || !answer.is_object() ||
      !answer.value(field, json()).is_number_unsigned()) {
    if (dram && answer.is_object())
      return fail(ErrorCode::kNotSupported, info_.name + " has no DRAM zone");
    return fail(malformed("GET " + target));
  }
  const uint64_t raw_uj = answer[field].get<uint64_t>();
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
