// discover_devices(): discover() with privileged calls routed through zeusd.
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "common/user_name.h"
#include "zeus/zeusd_client/zeusd_client.h"
#include "zeusd_client/zeusd_devices.h"

namespace zeus {
namespace {

bool has_capability(const zeusd::ZeusdInventory& inventory, zeusd::Capability wanted) {
  for (const auto& capability : inventory.capabilities) {
    if (capability == zeusd::capability_name(wanted)) return true;
  }
  return false;
}

// zeusd's GPUs in framework order (CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES by zeusd's indices
// or UUIDs), for a process that cannot open the GPUs itself.
Result<std::vector<zeusd::RemoteGpuInfo>> visible_remote_gpus(
    const zeusd::ZeusdInventory& inventory, const DiscoverOptions& options) {
  const bool hip = options.hip_visible_devices.has_value();
  const auto& value = hip ? options.hip_visible_devices : options.cuda_visible_devices;
  if (!value) return inventory.gpus;
  std::vector<std::string> uuids;
  for (const auto& gpu : inventory.gpus) uuids.push_back(gpu.uuid);
  const char* variable = hip ? "HIP_VISIBLE_DEVICES" : "CUDA_VISIBLE_DEVICES";
  auto indices = parse_visible_devices(*value, variable, uuids);
  if (!indices) return fail(indices.error());
  std::vector<zeusd::RemoteGpuInfo> visible;
  for (int index : *indices) {
    if (index >= static_cast<int>(inventory.gpus.size())) {
      return fail(ErrorCode::kNotFound, std::string(variable) + "=" + *value + " names GPU " +
                                            std::to_string(index) + " but zeusd has " +
                                            std::to_string(inventory.gpus.size()));
    }
    visible.push_back(inventory.gpus[static_cast<size_t>(index)]);
  }
  return visible;
}

}  // namespace

Result<Devices> discover_devices(const DiscoverOptions& options,
                                 const std::optional<ZeusdEndpoint>& endpoint) {
  auto devices = discover(options);
  if (!devices || !endpoint) return devices;
  auto client = std::make_shared<ZeusdClient>(*endpoint);
  auto inventory = zeusd::fetch_inventory(*client);
  const char* variable = endpoint->is_tcp() ? kZeusdHostPortEnvironment : kZeusdSocketEnvironment;
  if (!inventory) {
    return fail(inventory.error().code,
                std::string(variable) + " is set but zeusd did not answer: " +
                    inventory.error().message + " (unset it to use the devices directly)");
  }
  std::string summary = endpoint->describe() + ": ";
  if (options.want_gpus) {
    std::vector<std::unique_ptr<Gpu>> wrapped;
    if (!devices->gpus.empty()) {
      for (auto& local : devices->gpus) {
        zeusd::RemoteGpuInfo info;  // index -1 unless zeusd has the same UUID
        for (const auto& remote : inventory->gpus) {
          if (remote.uuid == local->uuid()) info = remote;
        }
        wrapped.push_back(
            std::make_unique<zeusd::ZeusdGpu>(client, std::move(info), std::move(local)));
      }
      summary += std::to_string(wrapped.size()) + " GPU(s) with changes through zeusd";
    } else {
      auto visible = visible_remote_gpus(*inventory, options);
      if (!visible) return fail(visible.error());
      for (auto& info : *visible)
        wrapped.push_back(std::make_unique<zeusd::ZeusdGpu>(client, std::move(info), nullptr));
      summary += std::to_string(wrapped.size()) + " GPU(s) read and changed through zeusd";
    }
    devices->gpus = std::move(wrapped);
  }
  if (options.want_cpus) {
    if (has_capability(*inventory, zeusd::Capability::kCpuRead)) {
      devices->cpus.clear();
      for (const auto& info : inventory->cpus) {
        auto cpu = std::make_unique<zeusd::ZeusdCpu>(client, info);
        (void)cpu->package_energy_uj();  // counters start now
        if (cpu->has_dram()) (void)cpu->dram_energy_uj();
        devices->cpus.push_back(std::move(cpu));
      }
      summary += ", " + std::to_string(devices->cpus.size()) + " CPU package(s) read through zeusd";
    } else {
      // Not on zeusd's cpu-read list: where RAPL cannot be read here either, the reason given is
      // zeusd's refusal with its fix, not the local advice to "run as root or use zeusd" given to
      // someone who already uses zeusd.
      const std::string fix =
          "the operator adds it with: zeusd serve --allow cpu-read=" + user_name(getuid());
      for (auto& backend : devices->backends) {
        if (backend.backend == "rapl" && !backend.used && devices->cpus.empty()) {
          backend.detail = "reading RAPL energy needs root, and zeusd (" + endpoint->describe() +
                           ") does not let this user read it: " + fix;
        }
      }
      summary += ", CPUs not read through zeusd (this user is not on its cpu-read allow-list; " +
                 fix + ")";
    }
  }
  devices->backends.push_back({"zeusd", true, summary});
  return devices;
}

Result<Devices> discover_devices(const DiscoverOptions& options,
                                 const std::optional<std::string>& zeusd_socket_path) {
  if (!zeusd_socket_path || zeusd_socket_path->empty())
    return discover_devices(options, std::optional<ZeusdEndpoint>());
  ZeusdEndpoint endpoint;
  endpoint.socket_path = *zeusd_socket_path;
  return discover_devices(options, std::optional<ZeusdEndpoint>(std::move(endpoint)));
}

Result<Devices> discover_devices(const DiscoverOptions& options) {
  auto endpoint = ZeusdEndpoint::from_environment();
  if (!endpoint) return fail(endpoint.error());
  return discover_devices(options, *endpoint);
}

}  // namespace zeus
