#include "device/amd/amdsmi_gpu.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <utility>

#include "device/amd/amd_common.h"
#include "zeus/common/log.h"

namespace zeus {
namespace {

uint32_t w_to_mw(uint32_t value_w) {
  return value_w > UINT32_MAX / 1000 ? UINT32_MAX : value_w * 1000;
}

Result<AmdEnergyReading> read_energy(const AmdSmi& smi, amdsmi::ProcessorHandle handle) {
  AmdEnergyReading reading;
  uint64_t timestamp = 0;
  ZEUS_TRY(smi.call("amdsmi_get_energy_count", smi.api().get_energy_count, handle, &reading.count,
                    &reading.resolution_uj, &timestamp));
  return checked_energy_reading(reading, "amdsmi_get_energy_count");
}

// Power for the plausibility check, in mW: the average, else the instant, else 0 (as upstream).
uint32_t probe_power_mw(const AmdSmi& smi, amdsmi::ProcessorHandle handle) {
  auto power = smi.power(handle);
  if (!power) return 0;
  if (power->average_w) return w_to_mw(*power->average_w);
  if (power->current_w) return w_to_mw(*power->current_w);
  return 0;
}

// Every processor handle of every socket, in AMD SMI's order.
Result<std::vector<amdsmi::ProcessorHandle>> processor_handles(const AmdSmi& smi) {
  const AmdSmiApi& api = smi.api();
  uint32_t socket_count = 0;
  ZEUS_TRY(smi.call("amdsmi_get_socket_handles", api.get_socket_handles, &socket_count,
                    static_cast<amdsmi::SocketHandle*>(nullptr)));
  std::vector<amdsmi::SocketHandle> sockets(socket_count);
  if (socket_count > 0) {
    ZEUS_TRY(smi.call("amdsmi_get_socket_handles", api.get_socket_handles, &socket_count,
                      sockets.data()));
    sockets.resize(socket_count);
  }
  std::vector<amdsmi::ProcessorHandle> handles;
  for (amdsmi::SocketHandle socket : sockets) {
    uint32_t count = 0;
    ZEUS_TRY(smi.call("amdsmi_get_processor_handles", api.get_processor_handles, socket, &count,
                      static_cast<amdsmi::ProcessorHandle*>(nullptr)));
    std::vector<amdsmi::ProcessorHandle> processors(count);
    if (count > 0) {
      ZEUS_TRY(smi.call("amdsmi_get_processor_handles", api.get_processor_handles, socket, &count,
                        processors.data()));
      processors.resize(count);
    }
    handles.insert(handles.end(), processors.begin(), processors.end());
  }
  return handles;
}

struct HipOrder {
  std::vector<int> hip_index;          // per handle
  std::vector<std::string> hip_uuid;   // per handle; "" when unknown
};

// The HIP index of each handle: enumeration info (ROCm 6.4+), else the rank of its KFD node id
// (ROCm 6.3). The indices must be 0..N-1, each once.
Result<HipOrder> hip_order(const AmdSmi& smi, const std::vector<amdsmi::ProcessorHandle>& handles) {
  const AmdSmiApi& api = smi.api();
  const size_t n = handles.size();
  HipOrder order{std::vector<int>(n, -1), std::vector<std::string>(n)};
  bool resolved = false;
  if (api.get_gpu_enumeration_info != nullptr) {
    resolved = true;
    for (size_t i = 0; i < n && resolved; ++i) {
      amdsmi::EnumerationInfo info{};
      auto status = smi.call("amdsmi_get_gpu_enumeration_info", api.get_gpu_enumeration_info,
                             handles[i], &info);
      if (!status) {
        if (status.error().code != ErrorCode::kNotSupported) return fail(status.error());
        resolved = false;  // fall back to KFD node ids
        break;
      }
      order.hip_index[i] = static_cast<int>(info.hip_id);
      info.hip_uuid[sizeof(info.hip_uuid) - 1] = '\0';
      order.hip_uuid[i] = info.hip_uuid;
    }
  }
  if (!resolved) {
    if (api.get_gpu_kfd_info == nullptr) {
      return fail(ErrorCode::kUnavailable,
                  smi.path() + " exposes neither amdsmi_get_gpu_enumeration_info nor "
                               "amdsmi_get_gpu_kfd_info, so HIP indices cannot be resolved (AMD "
                               "SMI from ROCm 6.3 or newer is needed; Zeus uses rocm_smi instead)");
    }
    std::vector<std::pair<uint32_t, size_t>> by_node;
    for (size_t i = 0; i < n; ++i) {
      amdsmi::KfdInfo info{};
      ZEUS_TRY(smi.call("amdsmi_get_gpu_kfd_info", api.get_gpu_kfd_info, handles[i], &info));
      by_node.emplace_back(info.node_id, i);
    }
    std::sort(by_node.begin(), by_node.end());
    for (size_t rank = 0; rank < n; ++rank) {
      order.hip_index[by_node[rank].second] = static_cast<int>(rank);
    }
    std::fill(order.hip_uuid.begin(), order.hip_uuid.end(), std::string());
  }
  std::vector<bool> seen(n, false);
  for (int hip : order.hip_index) {
    if (hip < 0 || static_cast<size_t>(hip) >= n || seen[hip]) {
      return fail(ErrorCode::kInvalidArgument,
                  "AMD SMI reports HIP index " + std::to_string(hip) + " for one of " +
                      std::to_string(n) + " GPUs; HIP indices must be 0-" +
                      std::to_string(static_cast<int>(n) - 1) +
                      " once each (update ROCm, or set ZEUS_AMDSMI_PATH to a missing file to use "
                      "rocm_smi)");
    }
    seen[hip] = true;
  }
  return order;
}

std::string read_name(const AmdSmi& smi, amdsmi::ProcessorHandle handle, int hip_index) {
  amdsmi::AsicInfo info{};
  if (smi.call("amdsmi_get_gpu_asic_info", smi.api().get_gpu_asic_info, handle, &info)) {
    info.market_name[sizeof(info.market_name) - 1] = '\0';
    if (info.market_name[0] != '\0') return info.market_name;
  }
  return "AMD GPU " + std::to_string(hip_index);
}

std::string read_pci_address(const AmdSmi& smi, amdsmi::ProcessorHandle handle) {
  amdsmi::Bdf bdf = 0;
  if (!smi.call("amdsmi_get_gpu_device_bdf", smi.api().get_gpu_device_bdf, handle, &bdf)) {
    return "";
  }
  return format_amdsmi_bdf(bdf);
}

bool is_mi250(const std::string& name) { return name.find("MI250") != std::string::npos; }

}  // namespace

std::string format_amdsmi_bdf(amdsmi::Bdf bdf) {
  char text[40];
  std::snprintf(text, sizeof(text), "%04" PRIx64 ":%02x:%02x.%x", bdf >> 16,
                static_cast<unsigned>((bdf >> 8) & 0xff), static_cast<unsigned>((bdf >> 3) & 0x1f),
                static_cast<unsigned>(bdf & 0x7));
  return text;
}

AmdSmiGpu::AmdSmiGpu(std::shared_ptr<AmdSmi> smi, AmdSmiGpuInfo info)
    : smi_(std::move(smi)), info_(std::move(info)), energy_(info_.name) {
  ZEUS_CHECK(smi_ != nullptr, "AmdSmiGpu needs an opened AMD SMI library");
}

Result<std::string> AmdSmiGpu::pci_address() const {
  if (info_.pci_address.empty()) {
    return fail(ErrorCode::kNotSupported, "AMD SMI reported no PCI address for " + info_.name);
  }
  return info_.pci_address;
}

Result<amdsmi::PowerCapInfo> AmdSmiGpu::cap_info() {
  amdsmi::PowerCapInfo info{};
  ZEUS_TRY(smi_->call("amdsmi_get_power_cap_info", smi_->api().get_power_cap_info, info_.handle,
                      0u, &info));
  return info;
}

Result<PowerLimitRangeMw> AmdSmiGpu::power_limit_range_mw() {
  auto info = cap_info();
  if (!info) return fail(info.error());
  return PowerLimitRangeMw{uw_to_mw(info->min_power_cap), uw_to_mw(info->max_power_cap)};
}

Result<uint32_t> AmdSmiGpu::default_power_limit_mw() {
  auto info = cap_info();
  if (!info) return fail(info.error());
  return uw_to_mw(info->default_power_cap);
}

Result<uint32_t> AmdSmiGpu::power_limit_mw() {
  auto info = cap_info();
  if (!info) return fail(info.error());
  return uw_to_mw(info->power_cap);
}

Result<void> AmdSmiGpu::set_power_limit_mw(uint32_t limit_mw) {
  auto range = power_limit_range_mw();
  if (range && (limit_mw < range->min_mw || limit_mw > range->max_mw)) {
    return fail(ErrorCode::kInvalidArgument, "power limit " + std::to_string(limit_mw) +
                                                 " mW is outside " + info_.name + "'s range [" +
                                                 std::to_string(range->min_mw) + ", " +
                                                 std::to_string(range->max_mw) + "] mW");
  }
  const uint64_t cap_uw = static_cast<uint64_t>(limit_mw) * 1000;
  return smi_->call("amdsmi_set_power_cap", smi_->api().set_power_cap, info_.handle, 0u, cap_uw);
}

Result<void> AmdSmiGpu::reset_power_limit() {
  auto info = cap_info();
  if (!info) return fail(info.error());
  if (info->power_cap == info->default_power_cap) return ok();
  return smi_->call("amdsmi_set_power_cap", smi_->api().set_power_cap, info_.handle, 0u,
                    info->default_power_cap);
}

Result<void> AmdSmiGpu::check_reports_power(const char* what) const {
  if (!info_.mi250_secondary_die) return ok();
  const int sibling = info_.hip_index - 1;
  return fail(ErrorCode::kNotSupported,
              "GPU " + std::to_string(info_.hip_index) + " is the second die of a dual-die " +
                  info_.name + ", which reports no " + what + " of its own: GPU " +
                  std::to_string(sibling) + "'s readings cover both dies; measure GPU " +
                  std::to_string(sibling) + " instead");
}

Result<uint32_t> AmdSmiGpu::socket_power_mw(bool current) {
  ZEUS_TRY(check_reports_power("power"));
  auto power = smi_->power(info_.handle);
  if (!power) return fail(power.error());
  const std::optional<uint32_t>& watts = current ? power->current_w : power->average_w;
  if (!watts) {
    return fail(ErrorCode::kNotSupported,
                info_.name + " reports no " + (current ? "current" : "average") +
                    " socket power (amdsmi_get_power_info gives N/A); use its " +
                    (current ? "average" : "instant") + " power");
  }
  return w_to_mw(*watts);
}

Result<uint32_t> AmdSmiGpu::instant_power_mw() { return socket_power_mw(/*current=*/true); }

Result<uint32_t> AmdSmiGpu::average_power_mw() { return socket_power_mw(/*current=*/false); }

Result<int> AmdSmiGpu::temperature_c() {
  int64_t celsius = 0;
  ZEUS_TRY(smi_->call("amdsmi_get_temp_metric", smi_->api().get_temp_metric, info_.handle,
                      amdsmi::kTemperatureTypeHotspot, amdsmi::kTempCurrent, &celsius));
  return static_cast<int>(std::clamp<int64_t>(celsius, -1000, 1000));
}

Result<uint64_t> AmdSmiGpu::total_energy_mj() {
  ZEUS_TRY(check_reports_power("energy"));
  if (!info_.energy_counter_plausible) {
    return fail(amd_energy_counter_not_plausible(info_.name));
  }
  auto reading = read_energy(*smi_, info_.handle);
  if (!reading) return fail(reading.error());
  return energy_.add(*reading);
}

Result<bool> AmdSmiGpu::persistence_mode() {
  return fail(amd_no_persistence_mode());
}

Result<void> AmdSmiGpu::set_persistence_mode(bool /*enabled*/) {
  return fail(amd_no_persistence_mode());
}

Result<std::vector<uint32_t>> AmdSmiGpu::clock_range_mhz(amdsmi::ClkType type) {
  amdsmi::ClkInfo info{};
  ZEUS_TRY(smi_->call("amdsmi_get_clock_info", smi_->api().get_clock_info, info_.handle, type,
                      &info));
  if (info.max_clk == info.min_clk) return std::vector<uint32_t>{info.max_clk};
  return std::vector<uint32_t>{std::max(info.max_clk, info.min_clk),
                               std::min(info.max_clk, info.min_clk)};
}

Result<std::vector<uint32_t>> AmdSmiGpu::supported_memory_clocks_mhz() {
  return clock_range_mhz(amdsmi::kClkTypeMem);
}

Result<std::vector<uint32_t>> AmdSmiGpu::supported_sm_clocks_mhz() {
  return clock_range_mhz(amdsmi::kClkTypeGfx);
}

Result<void> AmdSmiGpu::lock_clocks_mhz(amdsmi::ClkType type, uint32_t min_mhz, uint32_t max_mhz) {
  ZEUS_TRY(check_amd_clock_range(min_mhz, max_mhz));
  return smi_->call("amdsmi_set_gpu_clk_range", smi_->api().set_gpu_clk_range, info_.handle,
                    static_cast<uint64_t>(min_mhz), static_cast<uint64_t>(max_mhz), type);
}

Result<void> AmdSmiGpu::lock_sm_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) {
  return lock_clocks_mhz(amdsmi::kClkTypeGfx, min_mhz, max_mhz);
}

Result<void> AmdSmiGpu::lock_memory_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) {
  return lock_clocks_mhz(amdsmi::kClkTypeMem, min_mhz, max_mhz);
}

Result<void> AmdSmiGpu::reset_sm_clocks() {
  return smi_->call("amdsmi_set_gpu_perf_level", smi_->api().set_gpu_perf_level, info_.handle,
                    amdsmi::kPerfLevelAuto);
}

Result<void> AmdSmiGpu::reset_memory_clocks() { return reset_sm_clocks(); }

Result<std::vector<std::unique_ptr<Gpu>>> open_amdsmi_gpus(const std::string& library_path,
                                                           Clock& clock,
                                                           double plausibility_window_s) {
  auto opened = AmdSmi::open(library_path);
  if (!opened) return fail(opened.error());
  std::shared_ptr<AmdSmi> smi = std::move(*opened);
  auto handles = processor_handles(*smi);
  if (!handles) return fail(handles.error());
  if (handles->empty()) {
    return fail(ErrorCode::kUnavailable, "no AMD GPU found (AMD SMI reports 0 processors)");
  }
  auto order = hip_order(*smi, *handles);
  if (!order) return fail(order.error());

  const size_t n = handles->size();
  std::vector<AmdSmiGpuInfo> infos(n);
  for (size_t i = 0; i < n; ++i) {
    AmdSmiGpuInfo& info = infos[static_cast<size_t>(order->hip_index[i])];
    info.handle = (*handles)[i];
    info.hip_index = order->hip_index[i];
    info.name = read_name(*smi, info.handle, info.hip_index);
    info.pci_address = read_pci_address(*smi, info.handle);
    info.uuid = !order->hip_uuid[i].empty() ? order->hip_uuid[i]
                : !info.pci_address.empty() ? "AMD-GPU-" + info.pci_address
                                            : "AMD-GPU-" + std::to_string(info.hip_index);
    info.energy_counter_plausible = plausibility_window_s <= 0;
  }

  // Power decides the MI250 rule and the expected energy (upstream reads it once, up front).
  std::vector<uint32_t> power_mw(n);
  for (size_t i = 0; i < n; ++i) power_mw[i] = probe_power_mw(*smi, infos[i].handle);
  for (size_t i = 0; i < n; ++i) {
    AmdSmiGpuInfo& info = infos[i];
    if (!is_mi250(info.name)) continue;
    if (info.hip_index % 2 == 1 && power_mw[i] == 0) {
      info.mi250_secondary_die = true;
      info.energy_counter_plausible = false;
      log_warning("AMD GPU " + std::to_string(info.hip_index) + " is the second die of an " +
                  info.name + " package; the driver reports power for both dies on GPU " +
                  std::to_string(info.hip_index - 1) + " only, so this one has no power or "
                  "energy readings of its own");
    } else if (info.hip_index % 2 == 0 && power_mw[i] > 0) {
      log_warning("AMD GPU " + std::to_string(info.hip_index) + " is a dual-die " + info.name +
                  ": its power and energy cover both dies (GPUs " +
                  std::to_string(info.hip_index) + " and " + std::to_string(info.hip_index + 1) +
                  ")");
    }
  }

  if (plausibility_window_s > 0) {
    std::vector<Result<AmdEnergyReading>> before;
    for (const AmdSmiGpuInfo& info : infos) before.push_back(read_energy(*smi, info.handle));
    const double start_s = clock.now_s();
    clock.sleep_until_s(start_s + plausibility_window_s);
    const double window_s = clock.now_s() - start_s;
    for (size_t i = 0; i < n; ++i) {
      AmdSmiGpuInfo& info = infos[i];
      if (info.mi250_secondary_die) continue;
      auto after = read_energy(*smi, info.handle);
      std::string why;
      if (!before[i] || !after) {
        why = "the energy counter cannot be read: " +
              (!before[i] ? before[i].error().message : after.error().message);
      } else {
        const long double expected_uj = static_cast<long double>(power_mw[i]) * 1000 * window_s;
        why = judge_amd_energy_counter(after->energy_uj() - before[i]->energy_uj(), expected_uj,
                                       window_s, kAmdSmiEnergyRatioBounds);
      }
      info.energy_counter_plausible = why.empty();
      if (!why.empty()) {
        log_warning("AMD GPU " + std::to_string(info.hip_index) + ": " + why +
                    "; measuring its energy by sampling power instead");
      }
    }
  }

  std::vector<std::unique_ptr<Gpu>> gpus;
  for (AmdSmiGpuInfo& info : infos) gpus.push_back(std::make_unique<AmdSmiGpu>(smi, std::move(info)));
  return gpus;
}

}  // namespace zeus
