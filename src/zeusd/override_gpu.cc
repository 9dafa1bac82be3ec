#include "zeusd/override_gpu.h"

#include "zeusd/gpu_locks.h"

namespace zeus::zeusd {

// The commands run without the service's table lock (gpu_locks.h): the caller holds this GPU's
// lock, so nothing else changes it meanwhile, and everyone else goes on.
Result<void> OverrideGpu::run_unlocked(GpuOperation operation, const OverrideValues& values) {
  return without_service_lock([&] { return overrides_->run(operation, values); });
}

Result<void> OverrideGpu::set_power_limit_mw(uint32_t limit_mw) {
  if (!overrides_->has(GpuOperation::kSetPowerLimit)) return inner_->set_power_limit_mw(limit_mw);
  OverrideValues values{gpu_id_};
  values.power_limit_mw = limit_mw;
  return run_unlocked(GpuOperation::kSetPowerLimit, values);
}

Result<void> OverrideGpu::reset_power_limit() {
  if (!overrides_->has(GpuOperation::kSetPowerLimit)) return inner_->reset_power_limit();
  auto default_mw = inner_->default_power_limit_mw();
  if (!default_mw) return tl::unexpected(default_mw.error());
  return set_power_limit_mw(*default_mw);
}

Result<void> OverrideGpu::set_persistence_mode(bool enabled) {
  if (!overrides_->has(GpuOperation::kSetPersistenceMode)) {
    return inner_->set_persistence_mode(enabled);
  }
  OverrideValues values{gpu_id_};
  values.enabled = enabled;
  return run_unlocked(GpuOperation::kSetPersistenceMode, values);
}

Result<void> OverrideGpu::lock_sm_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) {
  if (!overrides_->has(GpuOperation::kSetGpuLockedClocks)) {
    return inner_->lock_sm_clocks_mhz(min_mhz, max_mhz);
  }
  OverrideValues values{gpu_id_};
  values.min_clock_mhz = min_mhz;
  values.max_clock_mhz = max_mhz;
  return run_unlocked(GpuOperation::kSetGpuLockedClocks, values);
}

Result<void> OverrideGpu::lock_memory_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) {
  if (!overrides_->has(GpuOperation::kSetMemLockedClocks)) {
    return inner_->lock_memory_clocks_mhz(min_mhz, max_mhz);
  }
  OverrideValues values{gpu_id_};
  values.min_clock_mhz = min_mhz;
  values.max_clock_mhz = max_mhz;
  return run_unlocked(GpuOperation::kSetMemLockedClocks, values);
}

Result<void> OverrideGpu::reset_sm_clocks() {
  for (GpuOperation operation :
       {GpuOperation::kResetGpuLockedClocks, GpuOperation::kResetLockedClocks}) {
    if (overrides_->has(operation)) return run_unlocked(operation, OverrideValues{gpu_id_});
  }
  return inner_->reset_sm_clocks();
}

Result<void> OverrideGpu::reset_memory_clocks() {
  for (GpuOperation operation :
       {GpuOperation::kResetMemLockedClocks, GpuOperation::kResetLockedClocks}) {
    if (overrides_->has(operation)) return run_unlocked(operation, OverrideValues{gpu_id_});
  }
  return inner_->reset_memory_clocks();
}

void apply_command_overrides(std::vector<std::unique_ptr<Gpu>>& gpus,
                             std::shared_ptr<const CommandOverrides> overrides) {
  if (!overrides || overrides->empty()) return;
  for (size_t i = 0; i < gpus.size(); ++i) {
    gpus[i] = std::make_unique<OverrideGpu>(std::move(gpus[i]), static_cast<int>(i), overrides);
  }
}

}  // namespace zeus::zeusd
