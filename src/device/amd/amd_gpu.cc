#include "device/amd/amd_gpu.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <functional>
#include <utility>

#include "device/amd/amd_common.h"
#include "zeus/common/log.h"

namespace zeus {
namespace {

Result<AmdEnergyReading> read_energy(const RocmSmi& smi, uint32_t index) {
  AmdEnergyReading reading;
  uint64_t timestamp_ns = 0;
  ZEUS_TRY(smi.call("rsmi_dev_energy_count_get", smi.api().dev_energy_count_get, index,
                    &reading.count, &reading.resolution_uj, &timestamp_ns));
  return checked_energy_reading(reading, "rsmi_dev_energy_count_get");
}

Result<uint64_t> read_average_power_uw(const RocmSmi& smi, uint32_t index) {
  uint64_t power_uw = 0;
  ZEUS_TRY(smi.call("rsmi_dev_power_ave_get", smi.api().dev_power_ave_get, index, 0u, &power_uw));
  return power_uw;
}

std::string read_name(const RocmSmi& smi, uint32_t index) {
  char buffer[256] = {};
  if (smi.call("rsmi_dev_name_get", smi.api().dev_name_get, index, buffer, sizeof(buffer)) &&
      buffer[0] != '\0') {
    return std::string(buffer);
  }
  return "AMD GPU " + std::to_string(index);
}

std::string read_uuid(const RocmSmi& smi, uint32_t index) {
  uint64_t id = 0;
  if (smi.call("rsmi_dev_unique_id_get", smi.api().dev_unique_id_get, index, &id)) {
    char text[32];
    std::snprintf(text, sizeof(text), "GPU-%016" PRIx64, id);
    return text;
  }
  char serial[64] = {};
  if (smi.call("rsmi_dev_serial_number_get", smi.api().dev_serial_number_get, index, serial,
               static_cast<uint32_t>(sizeof(serial))) &&
      serial[0] != '\0') {
    return "GPU-" + std::string(serial);
  }
  return "AMD-GPU-" + std::to_string(index);
}

// One GPU's readings at the start of the plausibility window.
struct Probe {
  Result<AmdEnergyReading> energy;
  Result<uint64_t> power_uw;
};

// Why the counter is not plausible, or "" when it is.
std::string judge_counter(const Probe& before, const Probe& after, double window_s) {
  if (!before.energy) return "the energy counter cannot be read: " + before.energy.error().message;
  if (!after.energy) return "the energy counter cannot be read: " + after.energy.error().message;
  if (!before.power_uw || !after.power_uw) {
    return "power cannot be read to check the energy counter";
  }
  long double counted_uj = after.energy->energy_uj() - before.energy->energy_uj();
  long double expected_uj =
      (static_cast<long double>(*before.power_uw) + *after.power_uw) / 2 * window_s;
  return judge_amd_energy_counter(
      counted_uj, expected_uj, window_s,
      {1.0 - kAmdEnergyPlausibilityTolerance, 1.0 + kAmdEnergyPlausibilityTolerance});
}

}  // namespace

AmdGpu::AmdGpu(std::shared_ptr<RocmSmi> smi, uint32_t index, std::string name, std::string uuid,
               bool energy_counter_plausible)
    : smi_(std::move(smi)),
      index_(index),
      name_(std::move(name)),
      uuid_(std::move(uuid)),
      energy_counter_plausible_(energy_counter_plausible),
      energy_(name_) {
  ZEUS_CHECK(smi_ != nullptr, "AmdGpu needs an opened rocm_smi library");
}

Result<PowerLimitRangeMw> AmdGpu::power_limit_range_mw() {
  uint64_t max_uw = 0;
  uint64_t min_uw = 0;
  // rocm_smi returns the maximum BEFORE the minimum.
  ZEUS_TRY(smi_->call("rsmi_dev_power_cap_range_get", smi_->api().dev_power_cap_range_get, index_,
                      0u, &max_uw, &min_uw));
  return PowerLimitRangeMw{uw_to_mw(min_uw), uw_to_mw(max_uw)};
}

Result<uint32_t> AmdGpu::default_power_limit_mw() {
  uint64_t cap_uw = 0;
  ZEUS_TRY(smi_->call("rsmi_dev_power_cap_default_get", smi_->api().dev_power_cap_default_get,
                      index_, &cap_uw));
  return uw_to_mw(cap_uw);
}

Result<uint32_t> AmdGpu::power_limit_mw() {
  uint64_t cap_uw = 0;
  ZEUS_TRY(
      smi_->call("rsmi_dev_power_cap_get", smi_->api().dev_power_cap_get, index_, 0u, &cap_uw));
  return uw_to_mw(cap_uw);
}

Result<void> AmdGpu::set_power_limit_mw(uint32_t limit_mw) {
  auto range = power_limit_range_mw();
  if (range && (limit_mw < range->min_mw || limit_mw > range->max_mw)) {
    return fail(ErrorCode::kInvalidArgument, "power limit " + std::to_string(limit_mw) +
                                                 " mW is outside " + name_ + "'s range [" +
                                                 std::to_string(range->min_mw) + ", " +
                                                 std::to_string(range->max_mw) + "] mW");
  }
  uint64_t cap_uw = static_cast<uint64_t>(limit_mw) * 1000;
  return smi_->call("rsmi_dev_power_cap_set", smi_->api().dev_power_cap_set, index_, 0u, cap_uw);
}

Result<void> AmdGpu::reset_power_limit() {
  auto default_mw = default_power_limit_mw();
  if (!default_mw) return fail(default_mw.error());
  return set_power_limit_mw(*default_mw);
}

Result<uint32_t> AmdGpu::instant_power_mw() {
  if (smi_->api().dev_current_socket_power_get != nullptr) {
    uint64_t power_uw = 0;
    auto status = smi_->call("rsmi_dev_current_socket_power_get",
                             smi_->api().dev_current_socket_power_get, index_, &power_uw);
    if (status) return uw_to_mw(power_uw);
    if (status.error().code != ErrorCode::kNotSupported) return fail(status.error());
  }
  return average_power_mw();
}

Result<uint32_t> AmdGpu::average_power_mw() {
  auto power_uw = read_average_power_uw(*smi_, index_);
  if (!power_uw) return fail(power_uw.error());
  return uw_to_mw(*power_uw);
}

Result<uint64_t> AmdGpu::total_energy_mj() {
  if (!energy_counter_plausible_) {
    return fail(amd_energy_counter_not_plausible(name_));
  }
  auto reading = read_energy(*smi_, index_);
  if (!reading) return fail(reading.error());
  return energy_.add(*reading);
}

Result<bool> AmdGpu::persistence_mode() {
  return fail(amd_no_persistence_mode());
}

Result<void> AmdGpu::set_persistence_mode(bool /*enabled*/) {
  return fail(amd_no_persistence_mode());
}

Result<std::vector<uint32_t>> AmdGpu::supported_clocks_mhz(rsmi::ClkType type, const char* what) {
  rsmi::Frequencies frequencies{};
  ZEUS_TRY(smi_->call("rsmi_dev_gpu_clk_freq_get", smi_->api().dev_gpu_clk_freq_get, index_, type,
                      &frequencies));
  if (frequencies.num_supported > rsmi::kMaxNumFrequencies) {
    return fail(ErrorCode::kInternal, std::string("rocm_smi reported ") +
                                          std::to_string(frequencies.num_supported) + " " + what +
                                          " clocks, more than its limit of 32");
  }
  std::vector<uint32_t> clocks_mhz;
  for (uint32_t i = 0; i < frequencies.num_supported; ++i) {
    clocks_mhz.push_back(static_cast<uint32_t>(frequencies.frequency[i] / 1000000));
  }
  std::sort(clocks_mhz.begin(), clocks_mhz.end(), std::greater<>());
  clocks_mhz.erase(std::unique(clocks_mhz.begin(), clocks_mhz.end()), clocks_mhz.end());
  return clocks_mhz;
}

Result<std::vector<uint32_t>> AmdGpu::supported_memory_clocks_mhz() {
  return supported_clocks_mhz(rsmi::kClkTypeMem, "memory");
}

Result<std::vector<uint32_t>> AmdGpu::supported_sm_clocks_mhz() {
  return supported_clocks_mhz(rsmi::kClkTypeSys, "system");
}

Result<void> AmdGpu::lock_clocks_mhz(rsmi::ClkType type, uint32_t min_mhz, uint32_t max_mhz) {
  ZEUS_TRY(check_amd_clock_range(min_mhz, max_mhz));
  return smi_->call("rsmi_dev_clk_range_set", smi_->api().dev_clk_range_set, index_,
                    static_cast<uint64_t>(min_mhz), static_cast<uint64_t>(max_mhz), type);
}

Result<void> AmdGpu::lock_sm_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) {
  return lock_clocks_mhz(rsmi::kClkTypeSys, min_mhz, max_mhz);
}

Result<void> AmdGpu::lock_memory_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) {
  return lock_clocks_mhz(rsmi::kClkTypeMem, min_mhz, max_mhz);
}

Result<void> AmdGpu::reset_sm_clocks() {
  return smi_->call("rsmi_dev_perf_level_set", smi_->api().dev_perf_level_set,
                    static_cast<int32_t>(index_), rsmi::kPerfLevelAuto);
}

Result<void> AmdGpu::reset_memory_clocks() { return reset_sm_clocks(); }

Result<std::vector<std::unique_ptr<Gpu>>> open_amd_gpus(const std::string& library_path,
                                                        Clock& clock,
                                                        double plausibility_window_s) {
  auto smi = RocmSmi::open(library_path);
  if (!smi) return fail(smi.error());
  return open_amd_gpus(std::move(*smi), clock, plausibility_window_s);
}

Result<std::vector<std::unique_ptr<Gpu>>> open_amd_gpus(std::shared_ptr<RocmSmi> smi, Clock& clock,
                                                        double plausibility_window_s) {
  ZEUS_CHECK(smi != nullptr, "open_amd_gpus needs an opened rocm_smi library");
  uint32_t count = 0;
  ZEUS_TRY(smi->call("rsmi_num_monitor_devices", smi->api().num_monitor_devices, &count));
  if (count == 0) {
    return fail(ErrorCode::kUnavailable, "no AMD GPU found (rocm_smi reports 0 devices)");
  }

  std::vector<bool> plausible(count, true);
  if (plausibility_window_s > 0) {
    std::vector<Probe> before;
    for (uint32_t i = 0; i < count; ++i) {
      before.push_back(Probe{read_energy(*smi, i), read_average_power_uw(*smi, i)});
    }
    double start_s = clock.now_s();
    clock.sleep_until_s(start_s + plausibility_window_s);
    double window_s = clock.now_s() - start_s;
    for (uint32_t i = 0; i < count; ++i) {
      Probe after{read_energy(*smi, i), read_average_power_uw(*smi, i)};
      std::string why = judge_counter(before[i], after, window_s);
      if (!why.empty()) {
        plausible[i] = false;
        log_warning("AMD GPU " + std::to_string(i) + ": " + why +
                    "; measuring its energy by sampling power instead");
      }
    }
  }

  std::vector<std::unique_ptr<Gpu>> gpus;
  for (uint32_t i = 0; i < count; ++i) {
    gpus.push_back(
        std::make_unique<AmdGpu>(smi, i, read_name(*smi, i), read_uuid(*smi, i), plausible[i]));
  }
  return gpus;
}

}  // namespace zeus
