// Devices: the GPUs and CPUs whose energy Zeus measures and whose power it controls.
//
// Units are the hardware's integers: milliwatts (mW), millijoules (mJ), microjoules (uJ),
// megahertz (MHz). The monitor converts to SI doubles once, where it reads a device.
// Backends: NVML (NVIDIA, libnvidia-ml.so.1), AMD SMI (AMD, libamd_smi.so; rocm_smi's
// librocm_smi64.so where AMD SMI is missing or too old), RAPL
// (/sys/class/powercap) and Replay (a scripted power model on a Clock). Vendor libraries are
// loaded at run time; a machine without them gets an Unavailable error, never a crash.
//
// Thread-safety: every Gpu and Cpu method may be called concurrently from several threads (the
// power sampler reads on its own thread while the optimizer sets limits).
// Failure: every call that touches hardware returns Result; messages name the fix, e.g.
// "setting a power limit needs root or CAP_SYS_ADMIN".
//
//   auto devices = zeus::discover(zeus::DiscoverOptions::from_environment());
//   for (auto& gpu : devices->gpus) std::cout << gpu->name() << "\n";
//   auto energy_mj = devices->gpus[0]->total_energy_mj();
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zeus/common/result.h"

namespace zeus {

enum class GpuVendor { kNvidia, kAmd, kReplay };

// NVIDIA architecture generations (values are NVML's nvmlDeviceArchitecture_t codes where
// NVML has one), plus kAmd and kUnknown.
enum class GpuArchitecture {
  kKepler = 2,
  kMaxwell = 3,
  kPascal = 4,
  kVolta = 5,
  kTuring = 6,
  kAmpere = 7,
  kAda = 8,
  kHopper = 9,
  kBlackwell = 10,
  kAmd = 100,
  kUnknown = 101,
};

// "Volta", "Hopper", "AMD", "unknown".
std::string architecture_name(GpuArchitecture architecture);
// "nvidia", "amd", "replay".
std::string vendor_name(GpuVendor vendor);

// What a GPU's power and energy figures cover. kGpu: the GPU board alone. kModule: the whole
// module of a C2C superchip (Grace Hopper), whose NVML answers power only for CPU + GPU + memory
// together; adding a CPU measurement of the same module would count the CPU twice.
enum class PowerScope { kGpu, kModule };

// "gpu" or "module" (the text `zeus devices` and the Python API show).
std::string power_scope_name(PowerScope scope);

struct PowerLimitRangeMw {
  uint32_t min_mw = 0;
  uint32_t max_mw = 0;
};

class Gpu {
 public:
  virtual ~Gpu() = default;

  virtual GpuVendor vendor() const = 0;
  // The library that drives it: "nvml", "amdsmi", "rocm_smi", "replay" (zeusd-backed GPUs add
  // " via zeusd").
  virtual std::string backend() const { return "unknown"; }
  // Product name, e.g. "NVIDIA H100 80GB HBM3".
  virtual std::string name() const = 0;
  // Stable unique id, e.g. "GPU-8f2c...".
  virtual std::string uuid() const = 0;
  virtual GpuArchitecture architecture() const = 0;
  // Index on the physical machine (NVML/rocm_smi index; AMD SMI: the HIP index), not the
  // framework-visible index.
  virtual int physical_index() const = 0;
  // PCI address in `lspci -D` form ("0000:01:00.0"); NotSupported where the backend has none.
  virtual Result<std::string> pci_address() const {
    return fail(ErrorCode::kNotSupported, "this GPU backend reports no PCI address");
  }

  // Power limit (cap) control, in mW.
  virtual Result<PowerLimitRangeMw> power_limit_range_mw() = 0;
  virtual Result<uint32_t> default_power_limit_mw() = 0;
  virtual Result<uint32_t> power_limit_mw() = 0;
  // Sets the limit; InvalidArgument outside the range, PermissionDenied without root.
  virtual Result<void> set_power_limit_mw(uint32_t limit_mw) = 0;
  // Back to the default limit.
  virtual Result<void> reset_power_limit() = 0;

  // Power draw: instant (gauge) and the driver's short moving average, in mW.
  virtual Result<uint32_t> instant_power_mw() = 0;
  virtual Result<uint32_t> average_power_mw() = 0;
  // Optional readings (NotSupported unless a backend has them): the driver's moving average of
  // the memory's power draw in mW (NVML's average power field with the memory scope, e.g. on
  // H100), and the GPU's core temperature in degrees Celsius.
  virtual Result<uint32_t> memory_average_power_mw();
  virtual Result<int> temperature_c();
  // The SM clock the GPU runs at now, in MHz (NVML's clock info): what a clock lock, a power cap
  // or the driver's own boost leaves in force. NotSupported unless a backend has it.
  virtual Result<uint32_t> sm_clock_mhz();
  // The scope of the power readings (and so of the energy measured from them). NVML probes the
  // GPU scope first and falls back to the module scope, as upstream Zeus; other backends: kGpu.
  virtual PowerScope power_scope() { return PowerScope::kGpu; }

  // True when total_energy_mj() is a usable monotone counter (NVIDIA Volta and newer whose
  // counter answered when probed at open; AMD when the counter passed its plausibility check).
  virtual bool has_energy_counter() = 0;
  // Cumulative energy since driver load, in mJ (a monotone counter). NotSupported when
  // has_energy_counter() is false.
  virtual Result<uint64_t> total_energy_mj() = 0;

  virtual Result<bool> persistence_mode() = 0;
  virtual Result<void> set_persistence_mode(bool enabled) = 0;

  // Clock control, in MHz. Supported SM clocks are listed for the highest memory clock.
  virtual Result<std::vector<uint32_t>> supported_memory_clocks_mhz() = 0;
  virtual Result<std::vector<uint32_t>> supported_sm_clocks_mhz() = 0;
  virtual Result<void> lock_sm_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) = 0;
  virtual Result<void> reset_sm_clocks() = 0;
  virtual Result<void> lock_memory_clocks_mhz(uint32_t min_mhz, uint32_t max_mhz) = 0;
  virtual Result<void> reset_memory_clocks() = 0;
};

// One CPU package, measured through RAPL.
class Cpu {
 public:
  virtual ~Cpu() = default;
  // Package index (the N of intel-rapl:N).
  virtual int index() const = 0;
  // Zone name, e.g. "package-0".
  virtual std::string name() const = 0;
  // Cumulative package energy in uJ since this object was created, wraparound corrected
  // (monotone). PermissionDenied when the counter is not readable (root needed since Linux 5.10).
  virtual Result<uint64_t> package_energy_uj() = 0;
  // True when the package has a DRAM sub-zone.
  virtual bool has_dram() const = 0;
  // Cumulative DRAM energy in uJ, like package_energy_uj(). NotSupported without a DRAM zone.
  virtual Result<uint64_t> dram_energy_uj() = 0;
  // The hardware counter's reading when this object began counting, in uJ: start plus
  // package_energy_uj() is the raw counter plus its wraparounds (what Zeus's zeusd reports).
  // 0 where the backend has no raw counter.
  virtual uint64_t package_counter_start_uj() const { return 0; }
  virtual uint64_t dram_counter_start_uj() const { return 0; }
};

// Energy of a system-on-chip's power rails in mJ, cumulative since the Soc was opened; nullopt
// for a rail the board does not have (upstream Zeus's JetsonMeasurement fields).
struct SocEnergyMj {
  std::optional<double> cpu_mj;
  std::optional<double> gpu_mj;
  std::optional<double> total_mj;
};

// A system-on-chip measured through the power monitors on its rails (NVIDIA Jetson). It has no
// energy counter: rail power is integrated over time (at every read and on a background thread).
class Soc {
 public:
  virtual ~Soc() = default;
  // "jetson".
  virtual std::string name() const = 0;
  // The rails used, e.g. "gpu: VDD_GPU_SOC".
  virtual std::vector<std::string> rail_descriptions() const = 0;
  // Integrates the rails' power up to now; the cumulative energy. NotFound when a rail
  // disappeared, PermissionDenied when it cannot be read.
  virtual Result<SocEnergyMj> energy_mj() = 0;
};

// Why a backend was or was not used.
struct BackendReport {
  std::string backend;  // "nvml", "amdsmi", "rocm_smi", "rapl", "jetson"
  bool used = false;
  std::string detail;   // "2 GPUs" or the reason it was skipped
};

// What discover() found. gpus[i] is the GPU the framework calls i (after CUDA_VISIBLE_DEVICES /
// HIP_VISIBLE_DEVICES); cpus[i] is RAPL package i.
struct Devices {
  std::vector<std::unique_ptr<Gpu>> gpus;
  std::vector<std::unique_ptr<Cpu>> cpus;
  std::unique_ptr<Soc> soc;  // nullptr: no SoC (not a Jetson)
  std::vector<BackendReport> backends;
};

struct DiscoverOptions {
  bool want_gpus = true;
  bool want_cpus = true;
  // Look for a Jetson's power rails under sysfs_root.
  bool want_soc = true;
  // Library paths; defaults are the sonames the drivers install.
  std::string nvml_path = "libnvidia-ml.so.1";
  std::string amdsmi_path = "libamd_smi.so";
  std::string rocm_smi_path = "librocm_smi64.so";
  std::string powercap_root = "/sys/class/powercap";
  // Root of sysfs (CPU topology, hwmon power monitors); a fake tree in tests.
  std::string sysfs_root = "/sys";
  // Values of CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES; nullopt = unset
  // (all GPUs visible). ROCR_VISIBLE_DEVICES applies to AMD GPUs only, before HIP's.
  std::optional<std::string> cuda_visible_devices;
  std::optional<std::string> hip_visible_devices;
  std::optional<std::string> rocr_visible_devices;

  // Defaults overridden by ZEUS_NVML_PATH, ZEUS_AMDSMI_PATH, ZEUS_ROCM_SMI_PATH,
  // ZEUS_POWERCAP_ROOT, ZEUS_SYSFS_ROOT (set to an empty value: as if unset),
  // CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES. Without
  // ZEUS_POWERCAP_ROOT, powercap_root is $ZEUS_SYSFS_ROOT/class/powercap, or else
  // /sys/class/powercap unless only the container mount /zeus_sys/class/powercap has RAPL zones
  // (choose_powercap_root in zeus/device/rapl_zone.h).
  static DiscoverOptions from_environment();
};

// Finds devices: NVML first, then AMD SMI, then rocm_smi, then none; RAPL for CPUs. A backend that cannot be used
// is reported in Devices::backends, not returned as an error; so is a GPU that cannot be opened
// (lost, ...): it is left out and the others are kept (framework indices count the usable GPUs).
// Errors only for a malformed or MIG CUDA_VISIBLE_DEVICES/HIP_VISIBLE_DEVICES, or one naming a
// GPU that does not exist or cannot be opened.
Result<Devices> discover(const DiscoverOptions& options);

// Parses a CUDA_VISIBLE_DEVICES-style list ("2,3") into physical indices. Rejects MIG ids
// ("MIG-...") and anything that is not a comma-separated list of non-negative integers; GPU UUIDs
// ("GPU-...") are resolved against `uuids` (the physical GPUs' UUIDs in index order).
Result<std::vector<int>> parse_visible_devices(const std::string& value, const std::string& variable,
                                               const std::vector<std::string>& uuids);

}  // namespace zeus
