// AmdGpu: an AMD GPU driven through rocm_smi (librocm_smi64.so, loaded at run time).
//
// Units: converts rocm_smi's microwatts to mW and its energy count (count x resolution uJ) to mJ;
// the sub-mJ remainder is kept, so repeated reads do not drift. Clocks in MHz.
// Energy counter: at open, each GPU's counter is checked for plausibility (Python Zeus): the
// energy it accumulates over a short window must lie within +-50 % of average power x window.
// A GPU that fails has has_energy_counter() == false (with a warning saying why), and the monitor
// measures it by sampling power instead.
// Thread-safety: every method may be called from several threads.
// Failure: rocm_smi statuses become Errors (PERMISSION -> PermissionDenied "needs root", a lost
// GPU -> Unavailable, a function the library lacks -> NotSupported "function not found").
//
//   zeus::SystemClock clock;
//   auto gpus = zeus::open_amd_gpus("librocm_smi64.so", clock);
//   if (gpus) (*gpus)[0]->set_power_limit_mw(250000);
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "device/amd/amd_energy.h"
#include "device/amd/rocm_smi_api.h"
#include "zeus/common/clock.h"
#include "zeus/device/device.h"

namespace zeus {

class AmdGpu final : public Gpu {
 public:
  // rocm_smi device `index` of an initialised library. energy_counter_plausible is the outcome of
  // the plausibility check (open_amd_gpus runs it).
  AmdGpu(std::shared_ptr<RocmSmi> smi, uint32_t index, std::string name, std::string uuid,
         bool energy_counter_plausible);

  GpuVendor vendor() const override { return GpuVendor::kAmd; }
  std::string backend() const override { return "rocm_smi"; }
  std::string name() const override { return name_; }
  // "GPU-<16 hex digits of rocm_smi's unique id>", the form HIP_VISIBLE_DEVICES accepts.
  std::string uuid() const override { return uuid_; }
  GpuArchitecture architecture() const override { return GpuArchitecture::kAmd; }
  int physical_index() const override { return static_cast<int>(index_); }

  Result<PowerLimitRangeMw> power_limit_range_mw() override;
  Result<uint32_t> default_power_limit_mw() override;
  Result<uint32_t> power_limit_mw() override;
  Result<void> set_power_limit_mw(uint32_t limit_mw) override;
  Result<void> reset_power_limit() override;

  // Socket power where rocm_smi has rsmi_dev_current_socket_power_get, else the average.
  Result<uint32_t> instant_power_mw() override;
  Result<uint32_t> average_power_mw() override;

  bool has_energy_counter() override { return energy_counter_plausible_; }
  // count x resolution uJ, converted to mJ. NotSupported when the counter failed its check.
  Result<uint64_t> total_energy_mj() override;

  // AMD GPUs have no persistence mode: NotSupported.
  Result<bool> persistence_mode() override;
  Result<void> set_persistence_mode(bool enabled) override;

  // Supported clocks (rocm_smi lists them in Hz), highest first, in MHz.
  Result<std::vector<uint32_t>> supported_memory_clocks_mhz() override;
  Result<std::vector<uint32_t>> supported_sm_clocks_mhz() override;
  // rsmi_dev_clk_range_set on the system (SM) / memory clock.
  Result<void> lock_sm_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) override;
  Result<void> lock_memory_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) override;
  // rsmi_dev_perf_level_set(AUTO): hands clocks back to the driver (resets both domains).
  Result<void> reset_sm_clocks() override;
  Result<void> reset_memory_clocks() override;

 private:
  Result<std::vector<uint32_t>> supported_clocks_mhz(rsmi::ClkType type, const char* what);
  Result<void> lock_clocks_mhz(rsmi::ClkType type, uint32_t min_mhz, uint32_t max_mhz);

  std::shared_ptr<RocmSmi> smi_;
  uint32_t index_;
  std::string name_;
  std::string uuid_;
  bool energy_counter_plausible_;

  AmdEnergyAccumulator energy_;
};

// Relative tolerance of the plausibility check: the counter's energy over the window must be
// within this fraction of average power x window.
inline constexpr double kAmdEnergyPlausibilityTolerance = 0.5;

// Opens every GPU rocm_smi reports. Runs the plausibility check on all GPUs at once, waiting
// plausibility_window_s on `clock` (0 skips the check and trusts the counters).
// Unavailable when the library cannot be loaded, rsmi_init fails, or no AMD GPU is found.
Result<std::vector<std::unique_ptr<Gpu>>> open_amd_gpus(const std::string& library_path,
                                                        Clock& clock,
                                                        double plausibility_window_s = 0.5);

// The same over an already opened library.
Result<std::vector<std::unique_ptr<Gpu>>> open_amd_gpus(std::shared_ptr<RocmSmi> smi, Clock& clock,
                                                        double plausibility_window_s = 0.5);

}  // namespace zeus
