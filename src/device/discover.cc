// discover(): finds the GPUs (NVML, then AMD) and CPUs (RAPL) of this machine.
#include <cstdlib>
#include <string>
#include <utility>

#include "device/amd/amd_gpu.h"
#include "device/jetson/jetson_soc.h"
#include "device/nvml/nvml_gpu.h"
#include "device/rapl/rapl_cpu.h"
#include "zeus/clock.h"
#include "zeus/device.h"
#include "zeus/rapl_zone.h"

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

// A path override: set and non-empty (probe item C6: an empty ZEUS_NVML_PATH would dlopen the
// main program).
std::optional<std::string> env_path(const char* name) {
  auto value = env(name);
  if (!value || value->empty()) return std::nullopt;
  return value;
}

// Keeps the GPUs named by a *_VISIBLE_DEVICES value, in its order. `all` holds the GPUs that
// could be opened, `skipped` those that could not; physical indices span both.
Result<std::vector<std::unique_ptr<Gpu>>> apply_visible_devices(
    std::vector<std::unique_ptr<Gpu>> all, const std::vector<SkippedGpu>& skipped,
    const std::optional<std::string>& value, const std::string& variable) {
  if (!value) return all;
  const size_t total = all.size() + skipped.size();
  std::vector<std::string> uuids(total);  // "" for a skipped GPU: no UUID resolves to it
  std::vector<std::unique_ptr<Gpu>*> by_physical(total, nullptr);
  for (auto& gpu : all) {
    const auto physical = static_cast<size_t>(gpu->physical_index());
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

}  // namespace

DiscoverOptions DiscoverOptions::from_environment() {
  DiscoverOptions options;
  if (auto path = env_path("ZEUS_NVML_PATH")) options.nvml_path = *path;
  if (auto path = env_path("ZEUS_ROCM_SMI_PATH")) options.rocm_smi_path = *path;
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
      devices.backends.push_back({"amd", false, "skipped: NVIDIA GPUs were found first"});
    } else {
      devices.backends.push_back(
          {"nvml", false, nvidia ? "NVML loaded but reports no GPU" : nvidia.error().message});
      static SystemClock clock;
      auto amd = open_amd_gpus(options.rocm_smi_path, clock);
      if (amd && !amd->empty()) {
        // ROCm honours HIP_VISIBLE_DEVICES, and CUDA_VISIBLE_DEVICES when that is unset.
        const bool hip = options.hip_visible_devices.has_value();
        auto visible = apply_visible_devices(
            std::move(*amd), {}, hip ? options.hip_visible_devices : options.cuda_visible_devices,
            hip ? "HIP_VISIBLE_DEVICES" : "CUDA_VISIBLE_DEVICES");
        if (!visible) return fail(visible.error());
        devices.gpus = std::move(*visible);
        devices.backends.push_back({"amd", true, count_text(devices.gpus.size(), "GPU")});
      } else {
        devices.backends.push_back(
            {"amd", false, amd ? "rocm_smi loaded but reports no GPU" : amd.error().message});
      }
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
