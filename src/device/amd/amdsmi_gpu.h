// AmdSmiGpu: an AMD GPU driven through AMD SMI (libamd_smi.so, loaded at run time), the library
// ROCm 6.3+ recommends and upstream Zeus uses; rocm_smi (AmdGpu) remains the fallback.
//
// Index: physical_index() is the GPU's HIP index (what HIP_VISIBLE_DEVICES and PyTorch's cuda:N
// count), not AMD SMI's handle order (PCI order), which differs on some nodes (MI350X in SPX
// mode). The HIP index comes from amdsmi_get_gpu_enumeration_info (ROCm 6.4+), else from sorting
// the handles by KFD node id (ROCm 6.3), as HIP itself enumerates.
// Units: power caps uW -> mW; socket power W -> mW; energy count x resolution uJ -> mJ (sub-mJ
// remainder kept); clocks MHz; temperature (hotspot) degrees C.
// Power: instant_power_mw() is current_socket_power, average_power_mw() average_socket_power;
// the one the GPU reports as N/A answers NotSupported (MI300 has only the first, MI200 only the
// second).
// Energy counter: checked at open like upstream Zeus: over a 0.5 s window the counter's energy
// must lie strictly between 0.1x and 10x power x window; a GPU reading 0 W cannot be checked.
// Either way the GPU answers has_energy_counter() == false and the monitor samples its power.
// MI250/MI250X: each package shows as two GPUs (dies) but only the even one reports power and
// energy, for both dies. An odd-HIP-index MI250 die that reads 0 W answers NotSupported for power
// and energy, with a message pointing at its even sibling; the even die logs that its readings
// cover both.
// Thread-safety: every method may be called from several threads.
// Failure: AMD SMI statuses become Errors (see amdsmi_api.h).
//
//   zeus::SystemClock clock;
//   auto gpus = zeus::open_amdsmi_gpus("libamd_smi.so", clock);
//   if (gpus) (*gpus)[0]->set_power_limit_mw(250000);
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device/amd/amd_energy.h"
#include "device/amd/amdsmi_api.h"
#include "zeus/common/clock.h"
#include "zeus/device/device.h"

namespace zeus {

// What open_amdsmi_gpus learned about one GPU before creating it.
struct AmdSmiGpuInfo {
  amdsmi::ProcessorHandle handle = nullptr;
  int hip_index = 0;
  std::string name;
  std::string uuid;         // "GPU-<hex>", the HIP UUID HIP_VISIBLE_DEVICES accepts
  std::string pci_address;  // "0000:c5:00.0", "" when AMD SMI has none
  bool energy_counter_plausible = false;
  bool mi250_secondary_die = false;  // odd MI250 die whose power its sibling reports
};

class AmdSmiGpu final : public Gpu {
 public:
  AmdSmiGpu(std::shared_ptr<AmdSmi> smi, AmdSmiGpuInfo info);

  GpuVendor vendor() const override { return GpuVendor::kAmd; }
  std::string backend() const override { return "amdsmi"; }
  std::string name() const override { return info_.name; }
  std::string uuid() const override { return info_.uuid; }
  GpuArchitecture architecture() const override { return GpuArchitecture::kAmd; }
  int physical_index() const override { return info_.hip_index; }
  Result<std::string> pci_address() const override;

  Result<PowerLimitRangeMw> power_limit_range_mw() override;
  Result<uint32_t> default_power_limit_mw() override;
  Result<uint32_t> power_limit_mw() override;
  Result<void> set_power_limit_mw(uint32_t limit_mw) override;
  Result<void> reset_power_limit() override;

  Result<uint32_t> instant_power_mw() override;
  Result<uint32_t> average_power_mw() override;
  Result<int> temperature_c() override;

  bool has_energy_counter() override { return info_.energy_counter_plausible; }
  Result<uint64_t> total_energy_mj() override;

  // AMD GPUs have no persistence mode: NotSupported.
  Result<bool> persistence_mode() override;
  Result<void> set_persistence_mode(bool enabled) override;

  // AMD SMI gives each clock domain's range, not its levels: {max, min} in MHz (as upstream).
  Result<std::vector<uint32_t>> supported_memory_clocks_mhz() override;
  Result<std::vector<uint32_t>> supported_sm_clocks_mhz() override;
  // amdsmi_set_gpu_clk_range on the GFX (SM) / memory clock.
  Result<void> lock_sm_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) override;
  Result<void> lock_memory_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) override;
  // amdsmi_set_gpu_perf_level(AUTO): AMD has no per-domain reset, so either resets both.
  Result<void> reset_sm_clocks() override;
  Result<void> reset_memory_clocks() override;

 private:
  Result<amdsmi::PowerCapInfo> cap_info();
  Result<void> check_reports_power(const char* what) const;
  // current_socket_power (current) or average_socket_power in mW; NotSupported when N/A.
  Result<uint32_t> socket_power_mw(bool current);
  Result<std::vector<uint32_t>> clock_range_mhz(amdsmi::ClkType type);
  Result<void> lock_clocks_mhz(amdsmi::ClkType type, uint32_t min_mhz, uint32_t max_mhz);

  std::shared_ptr<AmdSmi> smi_;
  AmdSmiGpuInfo info_;
  AmdEnergyAccumulator energy_;
};

// Bounds of the plausibility check (upstream Zeus's loose "rule out obvious problems" range).
inline constexpr AmdEnergyRatioBounds kAmdSmiEnergyRatioBounds{0.1, 10.0};

// Opens every GPU AMD SMI reports (all sockets' processors), ordered by HIP index. Runs the
// plausibility check on all GPUs at once, waiting plausibility_window_s on `clock` (0 skips it
// and trusts the counters). Unavailable when the library cannot be loaded or initialised, or
// reports no GPU; InvalidArgument when the HIP indices it reports are not 0..N-1 once each.
Result<std::vector<std::unique_ptr<Gpu>>> open_amdsmi_gpus(const std::string& library_path,
                                                           Clock& clock,
                                                           double plausibility_window_s = 0.5);

// "0000:c5:00.0" from AMD SMI's packed BDF.
std::string format_amdsmi_bdf(amdsmi::Bdf bdf);

}  // namespace zeus
