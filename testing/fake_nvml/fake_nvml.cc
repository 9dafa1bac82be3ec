// A fake libnvidia-ml.so.1: the NVML entry points Zeus uses, over the state in fake_state.h.
//
// Built twice: ${build}/fakes/libnvidia-ml.so.1 (a current driver) and, with
// ZEUS_FAKE_NVML_OLD_DRIVER, ${build}/fakes/old/libnvidia-ml.so.1 (an old driver: no `_v2`
// symbols, no nvmlDeviceGetTotalEnergyConsumption, no nvmlDeviceGetFieldValues).
// Besides NVML's symbols it exports zeus_fake_nvml_call_count(name) and
// zeus_fake_nvml_reset_call_counts() so tests can see which entry points were called. The clocks'
// entry points are fake_nvml_clocks.cc's; the machinery both use, fake_nvml_calls.h.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "device/nvml/nvml_api.h"
#include "fake_nvml/fake_nvml_calls.h"
#include "fake_nvml/fake_state.h"

using namespace zeus::nvml;
using nlohmann::json;
using zeus::fake_nvml::FakeState;

namespace zeus::fake_nvml::calls {
namespace {

constexpr size_t kMaxDevices = 64;
char g_handle_tokens[kMaxDevices];  // device i's handle is &g_handle_tokens[i]

std::mutex g_mutex;
FakeState g_state;
int g_init_count = 0;
std::map<std::string, long> g_call_counts;  // what zeus_fake_nvml_call_count reports
// Calls per (device, function) since the first nvmlInit of this process's NVML session, for the
// state's "fail_after_calls" and "energy_reset_after_calls" (zeus_fake_nvml_reset_call_counts
// leaves them alone).
std::map<std::pair<size_t, std::string>, long> g_device_calls;

}  // namespace

std::mutex& mutex() { return g_mutex; }
FakeState& state() { return g_state; }

// Common prologue of every device call, under g_mutex: counts the call, checks init, picks up
// another process's change of the state file, checks the handle and injected errors. Sets
// *index (and *call_number: this call's number on this device); returns the code to answer, or
// NVML_SUCCESS to go on.
nvmlReturn_t enter(const char* function, nvmlDevice_t device, size_t* index,
                   long* call_number) {
  ++g_call_counts[function];
  if (g_init_count == 0) return kNvmlErrorUninitialized;
  g_state.refresh();
  const char* token = reinterpret_cast<const char*>(device);
  if (token < g_handle_tokens || token >= g_handle_tokens + kMaxDevices) {
    return kNvmlErrorInvalidArgument;
  }
  *index = static_cast<size_t>(token - g_handle_tokens);
  if (*index >= g_state.device_count()) return kNvmlErrorInvalidArgument;
  const long number = ++g_device_calls[{*index, function}];
  if (call_number != nullptr) *call_number = number;
  return g_state.injected_error(function, static_cast<int>(*index), number);
}

namespace {

// Enter for a device-less call.
nvmlReturn_t enter_global(const char* function) {
  ++g_call_counts[function];
  if (g_init_count == 0) return kNvmlErrorUninitialized;
  g_state.refresh();
  return g_state.injected_error(function, -1, g_call_counts[function]);
}

nvmlReturn_t init(const char* function) {
  std::lock_guard<std::mutex> lock(g_mutex);
  ++g_call_counts[function];
  if (!g_state.load()) return kNvmlErrorUnknown;
  if (int code = g_state.document()["init_error"].get<int>(); code != 0) return code;
  if (int code = g_state.injected_error(function, -1, g_call_counts[function]); code != 0) {
    return code;
  }
  if (g_init_count == 0) g_device_calls.clear();  // a new session counts its calls afresh
  ++g_init_count;
  return kNvmlSuccess;
}

nvmlReturn_t copy_string(const std::string& text, char* out, unsigned int length) {
  if (out == nullptr) return kNvmlErrorInvalidArgument;
  if (text.size() + 1 > length) return kNvmlErrorInsufficientSize;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return kNvmlSuccess;
}

nvmlReturn_t get_count(const char* function, unsigned int* count) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (nvmlReturn_t rc = enter_global(function); rc != kNvmlSuccess) return rc;
  if (count == nullptr) return kNvmlErrorInvalidArgument;
  *count = static_cast<unsigned int>(std::min(g_state.device_count(), kMaxDevices));
  return kNvmlSuccess;
}

nvmlReturn_t get_handle(const char* function, unsigned int index, nvmlDevice_t* device) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (nvmlReturn_t rc = enter_global(function); rc != kNvmlSuccess) return rc;
  if (device == nullptr || index >= g_state.device_count() || index >= kMaxDevices) {
    return kNvmlErrorInvalidArgument;
  }
  if (g_state.device(index)["lost"].get<bool>()) return kNvmlErrorGpuIsLost;
  *device = reinterpret_cast<nvmlDevice_t>(&g_handle_tokens[index]);
  return kNvmlSuccess;
}

}  // namespace
}  // namespace zeus::fake_nvml::calls

using namespace zeus::fake_nvml::calls;

FAKE_NVML_EXPORT long zeus_fake_nvml_call_count(const char* function) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_call_counts.find(function);
  return it == g_call_counts.end() ? 0 : it->second;
}

FAKE_NVML_EXPORT void zeus_fake_nvml_reset_call_counts() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_call_counts.clear();
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlInit() { return init("nvmlInit"); }

FAKE_NVML_EXPORT nvmlReturn_t nvmlShutdown() {
  std::lock_guard<std::mutex> lock(g_mutex);
  ++g_call_counts["nvmlShutdown"];
  if (g_init_count == 0) return kNvmlErrorUninitialized;
  --g_init_count;
  return kNvmlSuccess;
}

FAKE_NVML_EXPORT const char* nvmlErrorString(nvmlReturn_t code) {
  switch (code) {
    case kNvmlSuccess:
      return "Success";
    case kNvmlErrorUninitialized:
      return "Uninitialized";
    case kNvmlErrorInvalidArgument:
      return "Invalid Argument";
    case kNvmlErrorNotSupported:
      return "Not Supported";
    case kNvmlErrorNoPermission:
      return "Insufficient Permissions";
    case kNvmlErrorAlreadyInitialized:
      return "Already Initialized";
    case kNvmlErrorNotFound:
      return "Not Found";
    case kNvmlErrorInsufficientSize:
      return "Insufficient Size";
    case kNvmlErrorInsufficientPower:
      return "Insufficient External Power";
    case kNvmlErrorDriverNotLoaded:
      return "Driver Not Loaded";
    case kNvmlErrorTimeout:
      return "Timeout";
    case kNvmlErrorIrqIssue:
      return "Interrupt request issue";
    case kNvmlErrorLibraryNotFound:
      return "NVML Shared Library Not Found";
    case kNvmlErrorFunctionNotFound:
      return "Function Not Found";
    case kNvmlErrorCorruptedInforom:
      return "Corrupted infoROM";
    case kNvmlErrorGpuIsLost:
      return "GPU is lost";
    case kNvmlErrorResetRequired:
      return "GPU requires restart";
    case kNvmlErrorOperatingSystem:
      return "The operating system has blocked the request.";
    case kNvmlErrorLibRmVersionMismatch:
      return "RM has detected an NVML/RM version mismatch.";
    case kNvmlErrorInUse:
      return "In use by another client";
    case kNvmlErrorMemory:
      return "Insufficient Memory";
    case kNvmlErrorNoData:
      return "No data";
    default:
      return "Unknown Error";
  }
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) {
  return get_count("nvmlDeviceGetCount", count);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return get_handle("nvmlDeviceGetHandleByIndex", index, device);
}

#ifndef ZEUS_FAKE_NVML_OLD_DRIVER
FAKE_NVML_EXPORT nvmlReturn_t nvmlInit_v2() { return init("nvmlInit_v2"); }

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  return get_count("nvmlDeviceGetCount_v2", count);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                                            nvmlDevice_t* device) {
  return get_handle("nvmlDeviceGetHandleByIndex_v2", index, device);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device,
                                                                  unsigned long long* energy_mj) {
  std::lock_guard<std::mutex> lock(g_mutex);
  size_t index = 0;
  long call_number = 0;
  if (nvmlReturn_t rc = enter("nvmlDeviceGetTotalEnergyConsumption", device, &index, &call_number);
      rc != kNvmlSuccess) {
    return rc;
  }
  if (energy_mj == nullptr) return kNvmlErrorInvalidArgument;
  const json& dev = g_state.device(index);
  if (dev["architecture"].get<unsigned int>() < kNvmlArchVolta) return kNvmlErrorNotSupported;
  // find(), not operator[]: a const json has no entry for a missing key (the reset below erases
  // it).
  if (const auto reset = dev.find("energy_reset_after_calls");
      reset != dev.end() && reset->is_number_integer() && call_number > reset->get<long>()) {
    // A driver reload or GPU reset: the counter starts again from 0, once.
    g_state.mutate([&](json& state) {
      if (index >= state["devices"].size()) return;
      json& changed = state["devices"][index];
      changed["energy_mj"] = 0.0;
      changed["energy_time_ns"] = zeus::fake_nvml::realtime_ns();
      changed.erase("energy_reset_after_calls");
    });
  }
  *energy_mj = static_cast<unsigned long long>(
      FakeState::published_energy_mj(g_state.device(index), zeus::fake_nvml::realtime_ns()));
  return kNvmlSuccess;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int count,
                                                       nvmlFieldValue_t* values) {
  return read_device("nvmlDeviceGetFieldValues", device, [&](const json& dev) {
    if (count < 0 || (count > 0 && values == nullptr)) return kNvmlErrorInvalidArgument;
    for (int i = 0; i < count; ++i) {
      nvmlFieldValue_t& field = values[i];
      field.timestamp = zeus::fake_nvml::realtime_ns() / 1000;
      field.latencyUsec = 0;
      const bool power_field =
          field.fieldId == kNvmlFieldPowerAverage || field.fieldId == kNvmlFieldPowerInstant;
      // The memory scope has only the average field, and only where "memory_power_mw" is set;
      // the GPU and module scopes answer only when listed in "power_scopes".
      const bool memory = field.scopeId == kNvmlPowerScopeMemory;
      const bool module = field.scopeId == kNvmlPowerScopeModule;
      const bool scope_listed =
          memory || FakeState::has_power_scope(dev, module ? "module" : "gpu");
      if (!power_field || !dev["power_fields"].get<bool>() || !scope_listed ||
          (memory &&
           (field.fieldId != kNvmlFieldPowerAverage || dev["memory_power_mw"].is_null()))) {
        field.nvmlReturn = kNvmlErrorNotSupported;
        continue;
      }
      const uint32_t gpu_mw = FakeState::reported_power_mw(dev, zeus::fake_nvml::realtime_ns());
      field.nvmlReturn = kNvmlSuccess;
      field.valueType = kNvmlValueTypeUnsignedInt;
      field.value.uiVal =
          memory ? dev["memory_power_mw"].get<unsigned int>()
                 : (module ? gpu_mw + dev["module_cpu_power_mw"].get<unsigned int>() : gpu_mw);
    }
    return kNvmlSuccess;
  });
}
#endif  // ZEUS_FAKE_NVML_OLD_DRIVER

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name,
                                                unsigned int length) {
  return read_device("nvmlDeviceGetName", device, [&](const json& dev) {
    return copy_string(dev["name"].get<std::string>(), name, length);
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid,
                                                unsigned int length) {
  return read_device("nvmlDeviceGetUUID", device, [&](const json& dev) {
    return copy_string(dev["uuid"].get<std::string>(), uuid, length);
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device,
                                                        unsigned int* architecture) {
  return read_device("nvmlDeviceGetArchitecture", device, [&](const json& dev) {
    if (architecture == nullptr) return kNvmlErrorInvalidArgument;
    *architecture = dev["architecture"].get<unsigned int>();
    return kNvmlSuccess;
  });
}

// The state's "pci_domain", "pci_bus" and "pci_device" (defaults: 0, 1 + index, 0).
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return read_device("nvmlDeviceGetPciInfo_v3", device, [&](const json& dev) {
    if (pci == nullptr) return kNvmlErrorInvalidArgument;
    *pci = nvmlPciInfo_t{};
    pci->domain = dev["pci_domain"].get<unsigned int>();
    pci->bus = dev["pci_bus"].get<unsigned int>();
    pci->device = dev["pci_device"].get<unsigned int>();
    std::snprintf(pci->bus_id, sizeof pci->bus_id, "%08x:%02x:%02x.0", pci->domain, pci->bus,
                  pci->device);
    std::snprintf(pci->bus_id_legacy, sizeof pci->bus_id_legacy, "%04x:%02x:%02x.0",
                  pci->domain & 0xffffu, pci->bus & 0xffu, pci->device & 0xffu);
    return kNvmlSuccess;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device,
                                                                           unsigned int* min_mw,
                                                                           unsigned int* max_mw) {
  return read_device("nvmlDeviceGetPowerManagementLimitConstraints", device, [&](const json& dev) {
    if (min_mw == nullptr || max_mw == nullptr) return kNvmlErrorInvalidArgument;
    *min_mw = dev["min_limit_mw"].get<unsigned int>();
    *max_mw = dev["max_limit_mw"].get<unsigned int>();
    return kNvmlSuccess;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device,
                                                                       unsigned int* limit_mw) {
  return read_device("nvmlDeviceGetPowerManagementDefaultLimit", device, [&](const json& dev) {
    if (limit_mw == nullptr) return kNvmlErrorInvalidArgument;
    *limit_mw = dev["default_limit_mw"].get<unsigned int>();
    return kNvmlSuccess;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device,
                                                                unsigned int* limit_mw) {
  return read_device("nvmlDeviceGetPowerManagementLimit", device, [&](const json& dev) {
    if (limit_mw == nullptr) return kNvmlErrorInvalidArgument;
    *limit_mw = dev["limit_mw"].get<unsigned int>();
    return kNvmlSuccess;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceSetPowerManagementLimit(nvmlDevice_t device,
                                                                unsigned int limit_mw) {
  return change_device(
      "nvmlDeviceSetPowerManagementLimit", device,
      [&](const json& dev) {
        if (limit_mw < dev["min_limit_mw"].get<unsigned int>() ||
            limit_mw > dev["max_limit_mw"].get<unsigned int>()) {
          return kNvmlErrorInvalidArgument;
        }
        return kNvmlSuccess;
      },
      [&](json& dev, json& state, size_t index) {
        FakeState::bring_energy_up_to_date(dev);
        dev["limit_mw"] = limit_mw;
        state["set_power_limit_log"].push_back({{"index", index},
                                                {"limit_mw", limit_mw},
                                                {"time_ns", zeus::fake_nvml::realtime_ns()}});
      });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power_mw) {
  return read_device("nvmlDeviceGetPowerUsage", device, [&](const json& dev) {
    if (power_mw == nullptr) return kNvmlErrorInvalidArgument;
    *power_mw = FakeState::reported_power_mw(dev, zeus::fake_nvml::realtime_ns());
    return kNvmlSuccess;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor,
                                                       unsigned int* celsius) {
  return read_device("nvmlDeviceGetTemperature", device, [&](const json& dev) {
    if (celsius == nullptr || sensor != kNvmlTemperatureGpu) return kNvmlErrorInvalidArgument;
    *celsius = dev["temperature_c"].get<unsigned int>();
    return kNvmlSuccess;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, int* mode) {
  return read_device("nvmlDeviceGetPersistenceMode", device, [&](const json& dev) {
    if (mode == nullptr) return kNvmlErrorInvalidArgument;
    *mode = dev["persistence"].get<bool>() ? kNvmlFeatureEnabled : kNvmlFeatureDisabled;
    return kNvmlSuccess;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceSetPersistenceMode(nvmlDevice_t device, int mode) {
  return change_device(
      "nvmlDeviceSetPersistenceMode", device,
      [&](const json&) {
        return mode == kNvmlFeatureEnabled || mode == kNvmlFeatureDisabled
                   ? kNvmlSuccess
                   : kNvmlErrorInvalidArgument;
      },
      [&](json& dev, json&, size_t) { dev["persistence"] = mode == kNvmlFeatureEnabled; });
}
