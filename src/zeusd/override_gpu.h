// OverrideGpu: a Gpu whose writes run the operator's command overrides (command_overrides.h)
// where one is configured and go to the wrapped GPU otherwise; every read goes to the wrapped GPU.
// zeusd wraps its GPUs in it at start, so its leases and restores (which call the same Gpu
// methods) go through the commands too. Resets of locked clocks use reset_gpu_locked_clocks /
// reset_mem_locked_clocks, or else reset_locked_clocks (which resets both, so the reset of both
// kinds runs it twice: keep it idempotent).
// Thread-safety: as the wrapped GPU (zeusd serialises device calls).
//
//   devices.gpus[i] = std::make_unique<OverrideGpu>(std::move(devices.gpus[i]), i, overrides);
#pragma once

#include <memory>

#include "zeus/device/device.h"
#include "zeusd/command_overrides.h"

namespace zeus::zeusd {

class OverrideGpu final : public Gpu {
 public:
  OverrideGpu(std::unique_ptr<Gpu> inner, int gpu_id,
              std::shared_ptr<const CommandOverrides> overrides)
      : inner_(std::move(inner)), gpu_id_(gpu_id), overrides_(std::move(overrides)) {}

  GpuVendor vendor() const override { return inner_->vendor(); }
  std::string name() const override { return inner_->name(); }
  std::string uuid() const override { return inner_->uuid(); }
  GpuArchitecture architecture() const override { return inner_->architecture(); }
  int physical_index() const override { return inner_->physical_index(); }
  Result<std::string> pci_address() const override { return inner_->pci_address(); }
  Result<PowerLimitRangeMw> power_limit_range_mw() override { return inner_->power_limit_range_mw(); }
  Result<uint32_t> default_power_limit_mw() override { return inner_->default_power_limit_mw(); }
  Result<uint32_t> power_limit_mw() override { return inner_->power_limit_mw(); }
  Result<uint32_t> instant_power_mw() override { return inner_->instant_power_mw(); }
  Result<uint32_t> average_power_mw() override { return inner_->average_power_mw(); }
  Result<uint32_t> memory_average_power_mw() override { return inner_->memory_average_power_mw(); }
  Result<int> temperature_c() override { return inner_->temperature_c(); }
  PowerScope power_scope() override { return inner_->power_scope(); }
  bool has_energy_counter() override { return inner_->has_energy_counter(); }
  Result<uint64_t> total_energy_mj() override { return inner_->total_energy_mj(); }
  Result<bool> persistence_mode() override { return inner_->persistence_mode(); }
  Result<std::vector<uint32_t>> supported_memory_clocks_mhz() override {
    return inner_->supported_memory_clocks_mhz();
  }
  Result<std::vector<uint32_t>> supported_sm_clocks_mhz() override {
    return inner_->supported_sm_clocks_mhz();
  }

  Result<void> set_power_limit_mw(uint32_t limit_mw) override;
  // The default limit, through set_power_limit's command when there is one.
  Result<void> reset_power_limit() override;
  Result<void> set_persistence_mode(bool enabled) override;
  Result<void> lock_sm_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) override;
  Result<void> reset_sm_clocks() override;
  Result<void> lock_memory_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) override;
  Result<void> reset_memory_clocks() override;

 private:
  Result<void> run_unlocked(GpuOperation operation, const OverrideValues& values);
  std::unique_ptr<Gpu> inner_;
  int gpu_id_;
  std::shared_ptr<const CommandOverrides> overrides_;
};

// Wraps every GPU of `gpus` (index i becomes {gpu_id} i) when `overrides` has any operation.
void apply_command_overrides(std::vector<std::unique_ptr<Gpu>>& gpus,
                             std::shared_ptr<const CommandOverrides> overrides);

}  // namespace zeus::zeusd
