// NvmlGpu: one NVIDIA GPU driven through NVML (libnvidia-ml.so.1, loaded at run time).
//
// Units are NVML's: mW, mJ, MHz. Power limits are validated against the GPU's range before the
// driver is called; the energy counter exists only from Volta on (has_energy_counter()).
// Average and instant power come from nvmlDeviceGetFieldValues (NVML_FI_DEV_POWER_AVERAGE /
// _INSTANT) where the driver has them, otherwise from nvmlDeviceGetPowerUsage. Each field's scope
// is resolved at its first reading, as upstream Zeus does since its C2C superchip hardening: the
// GPU scope when it answers, else (with a warning) the module scope, as on Grace Hopper, whose
// figures then cover the whole CPU + GPU module; when neither answers, GetPowerUsage serves.
// Thread-safety: every method may be called from any thread (NVML is thread-safe; the cached
// limit range is guarded).
// Failure: NVML errors become Errors with NVML's message and the fix (see nvml_error.h).
// open_nvml_gpus() is the factory discover() calls.
//
//   auto gpus = zeus::open_nvml_gpus("libnvidia-ml.so.1");
//   if (!gpus) return fail(gpus.error());
//   auto energy_mj = (*gpus)[0]->total_energy_mj();
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "device/nvml/nvml_library.h"
#include "zeus/device/device.h"

namespace zeus {

class NvmlGpu final : public Gpu {
 public:
  // Describes the GPU with NVML index `index`, whose handle is `handle`; reads its name, UUID
  // and architecture, and probes the energy counter (NOT_SUPPORTED on a Volta+ GPU means none:
  // its power is sampled). Fails when NVML cannot report the name or UUID.
  static Result<std::unique_ptr<NvmlGpu>> open(std::shared_ptr<nvml::NvmlLibrary> library,
                                               int index);

  GpuVendor vendor() const override { return GpuVendor::kNvidia; }
  std::string backend() const override { return "nvml"; }
  std::string name() const override { return name_; }
  std::string uuid() const override { return uuid_; }
  Result<std::string> pci_address() const override;
  GpuArchitecture architecture() const override { return architecture_; }
  int physical_index() const override { return index_; }

  Result<PowerLimitRangeMw> power_limit_range_mw() override;
  Result<uint32_t> default_power_limit_mw() override;
  Result<uint32_t> power_limit_mw() override;
  Result<void> set_power_limit_mw(uint32_t limit_mw) override;
  Result<void> reset_power_limit() override;

  Result<uint32_t> instant_power_mw() override;
  Result<uint32_t> average_power_mw() override;
  // NVML_FI_DEV_POWER_AVERAGE with the memory scope (no fallback: NotSupported where the driver
  // or GPU lacks it, e.g. A40).
  Result<uint32_t> memory_average_power_mw() override;
  Result<int> temperature_c() override;
  Result<uint32_t> sm_clock_mhz() override;
  // The instant power field's resolved scope (resolving it now if no reading did yet).
  PowerScope power_scope() override;

  bool has_energy_counter() override { return has_energy_counter_; }
  Result<uint64_t> total_energy_mj() override;

  Result<bool> persistence_mode() override;
  Result<void> set_persistence_mode(bool enabled) override;

  Result<std::vector<uint32_t>> supported_memory_clocks_mhz() override;
  Result<std::vector<uint32_t>> supported_sm_clocks_mhz() override;
  Result<void> lock_sm_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) override;
  Result<void> reset_sm_clocks() override;
  Result<void> lock_memory_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) override;
  Result<void> reset_memory_clocks() override;

 private:
  NvmlGpu(std::shared_ptr<nvml::NvmlLibrary> library, nvml::nvmlDevice_t handle, int index);

  // Calls `fn(args...)` unless the entry point is missing; maps failures for `operation`
  // ("reading the power limit"), which the message completes with " of GPU <index>".
  template <typename Fn, typename... Args>
  Result<void> call(Fn fn, std::string_view symbol, std::string_view operation,
                    Args... args) const {
    if (fn == nullptr) return fail(library_->missing_function(symbol, describe(operation)));
    nvml::nvmlReturn_t rc = fn(handle_, args...);
    if (rc == nvml::kNvmlSuccess) return ok();
    return fail(library_->error(rc, describe(operation)));
  }
  // "<operation> of GPU <index>".
  std::string describe(std::string_view operation) const;
  // Power in mW from field `field_id`, falling back to nvmlDeviceGetPowerUsage.
  Result<uint32_t> power_mw(unsigned int field_id, std::string_view operation);
  // One field value with `scope`; its NVML status (kNvmlErrorUnknown for a non-power value).
  nvml::nvmlReturn_t read_power_field(unsigned int field_id, unsigned int scope,
                                      uint32_t* value_mw) const;
  // The scope field `field_id` answers in (GPU first, then module, cached in `*cache`), with
  // the value read in `*value_mw`; -1 when neither answers; an Error for a lost GPU and the like.
  Result<int> resolve_power_scope(unsigned int field_id, std::atomic<int>* cache,
                                  std::string_view operation, uint32_t* value_mw);

  std::shared_ptr<nvml::NvmlLibrary> library_;
  nvml::nvmlDevice_t handle_;
  int index_;
  std::string name_;
  std::string uuid_;
  std::string pci_address_;  // "" when nvmlDeviceGetPciInfo_v3 did not answer at open
  GpuArchitecture architecture_ = GpuArchitecture::kUnknown;
  bool has_energy_counter_ = false;
  std::string energy_counter_missing_;  // why there is no counter; empty when there is one
  // False once the driver showed it lacks the power fields; then GetPowerUsage is used.
  std::atomic<bool> power_fields_usable_{true};
  // Resolved NVML_POWER_SCOPE_* of the instant and average fields; -1 until resolved.
  std::atomic<int> instant_scope_{-1};
  std::atomic<int> average_scope_{-1};

  std::mutex mutex_;
  std::optional<PowerLimitRangeMw> range_mw_;  // guarded by mutex_
  std::optional<uint32_t> default_limit_mw_;   // guarded by mutex_
};

// A GPU the driver lists but that could not be opened (lost, no permission, ...), and why.
struct SkippedGpu {
  int physical_index = 0;
  std::string reason;
};

// Every GPU NVML sees that can be opened, in NVML index order (physical_index() = NVML index),
// sharing one loaded library. A GPU that cannot be opened is left out and listed in `*skipped`
// (when given); when none can be opened, the first one's error is returned. Unavailable when the
// library cannot be loaded or nvmlInit fails; an empty vector when the driver reports no GPU.
Result<std::vector<std::unique_ptr<Gpu>>> open_nvml_gpus(
    const std::string& library_path, std::vector<SkippedGpu>* skipped = nullptr);

}  // namespace zeus
