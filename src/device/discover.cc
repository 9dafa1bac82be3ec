// discover(): finds the GPUs (NVML, then AMD SMI, then rocm_smi) and CPUs (RAPL) of this machine.
#include <cstdlib>
#include <string>
#include <utility>

#include "device/amd/amd_gpu.h"
#include "device/amd/amdsmi_gpu.h"
#include "device/jetson/jetson_soc.h"
#include "device/nvml/nvml_gpu.h"
#include "device/rapl/rapl_cpu.h"
#include "zeus/common/clock.h"
#include "zeus/device/device.h"
#include "zeus/device/rapl_zone.h"

namespace zeus {
namespace {

// Where upstream Zeus's container instructions mount the host's /sys (read-only).
constexpr const char* kContainerPowercapRoot = "/zeus_sys/class/powercap";

// How often a Jetson's rail power is sampled between reads (upstream Zeus polls every 0.1 s).
constexpr double kSocSampleIntervalS = 0.1;

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

// A path override: set and non-empty (an empty ZEUS_NVML_PATH would dlopen the main program).
std::optional<std::string> env_path(const char* name) {
  auto value = env(name);
  if (!value || value->empty()) return std::nullopt;
  return value;
}

// Keeps the GPUs named by a *_VISIBLE_DEVICES value, in its order. `all` holds the GPUs that
// could be opened, `skipped` those that could not; physical indices span both. With
// `by_position`, the value counts `all`'s positions instead (HIP_VISIBLE_DEVICES after
// ROCR_VISIBLE_DEVICES has already picked and renumbered the GPUs).
Result<std::vector<std::unique_ptr<Gpu>>> apply_visible_devices(
    std::vector<std::unique_ptr<Gpu>> all, const std::vector<SkippedGpu>& skipped,
    const std::optional<std::string>& value, const std::string& variable,
    bool by_position = false) {
  if (!value) return all;
  const size_t total = all.size() + skipped.size();
  std::vector<std::string> uuids(total);  // "" for a skipped GPU: no UUID resolves to it
  std::vector<std::unique_ptr<Gpu>*> by_physical(total, nullptr);
  for (size_t position = 0; position < all.size(); ++position) {
    auto& gpu = all[position];
    const auto physical =
        by_position ? position : static_cast<size_t>(gpu->physical_index());
    if (physical >= total) continue;
    uuids[physical] = gpu->uuid();
    by_physical[physical] = &gpu;
  }
  auto indices = parse_visible_devices(*value, variable, uuids);
  if (!indices) return fail(indices.error());
  std::vector<std::unique_ptr<Gpu>> visible;
  for (int index : *indices) {
    if (index >= static_cast<int>(total)) {
      return fail(ErrorCode::kNotFound,
                  variable + "=" + *value + " names GPU " + std::to_string(index) + " but only " +
                      std::to_string(total) + " GPU(s) exist (physical indices 0-" +
                      std::to_string(static_cast<int>(total) - 1) + ")");
    }
    if (by_physical[index] == nullptr) {
      std::string reason = "it could not be opened";
      for (const SkippedGpu& s : skipped) {
        if (s.physical_index == index) reason = s.reason;
      }
      return fail(ErrorCode::kUnavailable,
                  variable + "=" + *value + " names GPU " + std::to_string(index) +
                      ", which cannot be used: " + reason + "; leave it out of " + variable +
                      " (zeus devices lists the usable GPUs)");
    }
    visible.push_back(std::move(*by_physical[index]));
  }
  return visible;
}

// "; GPU 1 skipped: <reason>" for each GPU that could not be opened.
std::string skipped_text(const std::vector<SkippedGpu>& skipped) {
  std::string text;
  for (const SkippedGpu& s : skipped) {
    text += "; GPU " + std::to_string(s.physical_index) + " skipped: " + s.reason;
  }
  return text;
}

std::string count_text(size_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// The AMD GPUs through AMD SMI, else rocm_smi, reporting both backends. ROCm picks GPUs with
// ROCR_VISIBLE_DEVICES first, then numbers what is left for HIP_VISIBLE_DEVICES (or
// CUDA_VISIBLE_DEVICES when that is unset).
Result<std::vector<std::unique_ptr<Gpu>>> discover_amd_gpus(const DiscoverOptions& options,
                                                            std::vector<BackendReport>* reports) {
  static SystemClock clock;
  std::vector<std::unique_ptr<Gpu>> gpus;
  auto amdsmi = open_amdsmi_gpus(options.amdsmi_path, clock);
  const bool use_amdsmi = amdsmi && !amdsmi->empty();
  const size_t amdsmi_report = reports->size();
  if (use_amdsmi) {
    gpus = std::move(*amdsmi);
    reports->push_back({"amdsmi", true, ""});
    reports->push_back({"rocm_smi", false, "skipped: AMD SMI was used"});
  } else {
    reports->push_back(
        {"amdsmi", false, amdsmi ? "AMD SMI loaded but reports no GPU" : amdsmi.error().message});
    auto rocm = open_amd_gpus(options.rocm_smi_path, clock);
    if (!rocm || rocm->empty()) {
      reports->push_back(
          {"rocm_smi", false, rocm ? "rocm_smi loaded but reports no GPU" : rocm.error().message});
      return gpus;
    }
    gpus = std::move(*rocm);
    reports->push_back({"rocm_smi", true, ""});
  }
  auto picked = apply_visible_devices(std::move(gpus), {}, options.rocr_visible_devices,
                                      "ROCR_VISIBLE_DEVICES");
  if (!picked) return fail(picked.error());
  const bool hip = options.hip_visible_devices.has_value();
  auto visible = apply_visible_devices(
      std::move(*picked), {}, hip ? options.hip_visible_devices : options.cuda_visible_devices,
      hip ? "HIP_VISIBLE_DEVICES" : "CUDA_VISIBLE_DEVICES", /*by_position=*/true);
  if (!visible) return fail(visible.error());
  (*reports)[use_amdsmi ? amdsmi_report : amdsmi_report + 1].detail =
      count_text(visible->size(), "GPU");
  return visible;
}

}  // namespace

DiscoverOptions DiscoverOptions::from_environment() {
  DiscoverOptions options;
  if (auto path = env_path("ZEUS_NVML_PATH")) options.nvml_path = *path;
  if (auto path = env_path("ZEUS_ROCM_SMI_PATH")) options.rocm_smi_path = *path;
  if (auto path = env_path("ZEUS_AMDSMI_PATH")) options.amdsmi_path = *path;
  if (auto root = env_path("ZEUS_SYSFS_ROOT")) options.sysfs_root = *root;
  if (auto root = env_path("ZEUS_POWERCAP_ROOT")) {
    options.powercap_root = *root;
  } else if (env_path("ZEUS_SYSFS_ROOT")) {
    options.powercap_root = options.sysfs_root + "/class/powercap";
  } else {
    options.powercap_root = choose_powercap_root(options.powercap_root, kContainerPowercapRoot);
  }
  options.cuda_visible_devices = env("CUDA_VISIBLE_DEVICES");
  options.hip_visible_devices = env("HIP_VISIBLE_DEVICES");
  options.rocr_visible_devices = env("ROCR_VISIBLE_DEVICES");
  return options;
}

Result<Devices> discover(const DiscoverOptions& options) {
  Devices devices;
  if (options.want_gpus) {
    std::vector<SkippedGpu> skipped;
    auto nvidia = open_nvml_gpus(options.nvml_path, &skipped);
    if (nvidia && !nvidia->empty()) {
      auto visible = apply_visible_devices(std::move(*nvidia), skipped,
                                           options.cuda_visible_devices, "CUDA_VISIBLE_DEVICES");
      if (!visible) return fail(visible.error());
      devices.gpus = std::move(*visible);
      devices.backends.push_back(
          {"nvml", true, count_text(devices.gpus.size(), "GPU") + skipped_text(skipped)});
      devices.backends.push_back({"amdsmi", false, "skipped: NVIDIA GPUs were found first"});
      devices.backends.push_back({"rocm_smi", false, "skipped: NVIDIA GPUs were found first"});
    } else {
      devices.backends.push_back(
          {"nvml", false, nvidia ? "NVML loaded but reports no GPU" : nvidia.error().message});
      auto amd = discover_amd_gpus(options, &devices.backends);
      if (!amd) return fail(amd.error());
      devices.gpus = std::move(*amd);
    }
  }
  if (options.want_cpus) {
    auto cpus = open_rapl_cpus(options.powercap_root);
    if (cpus) {
      devices.cpus = std::move(*cpus);
      devices.backends.push_back({"rapl", true, count_text(devices.cpus.size(), "CPU package")});
    } else {
      devices.backends.push_back({"rapl", false, cpus.error().message});
    }
  }
  if (options.want_soc) {
    static SystemClock soc_clock;
    auto soc = open_jetson_soc(options.sysfs_root, soc_clock, kSocSampleIntervalS);
    if (soc) {
      std::string rails;
      for (const auto& rail : (*soc)->rail_descriptions())
        rails += (rails.empty() ? "" : ", ") + rail;
      devices.soc = std::move(*soc);
      devices.backends.push_back({"jetson", true, "rails " + rails});
    } else {
      devices.backends.push_back({"jetson", false, soc.error().message});
    }
  }
  return devices;
}

}  // namespace zeus
