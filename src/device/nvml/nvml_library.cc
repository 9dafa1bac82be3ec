#include "device/nvml/nvml_library.h"

#include "device/nvml/nvml_error.h"
#include "zeus/common/log.h"

namespace zeus::nvml {
namespace {

// Resolves `name`, preferring `name` + "_v2" when `prefer_v2`; null when neither exists.
template <typename Fn>
void resolve(const DynamicLibrary& library, const char* name, bool prefer_v2, Fn* out) {
  void* address = nullptr;
  if (prefer_v2) address = library.find(std::string(name) + "_v2");
  if (address == nullptr) address = library.find(name);
  *out = reinterpret_cast<Fn>(address);
}

}  // namespace

Result<std::shared_ptr<NvmlLibrary>> NvmlLibrary::load(const std::string& path) {
  auto library = DynamicLibrary::open(path);
  if (!library) {
    return fail(ErrorCode::kUnavailable,
                path +
                    " not found or not loadable: install the NVIDIA driver or set ZEUS_NVML_PATH "
                    "to libnvidia-ml.so.1 (" +
                    library.error().message + ")");
  }
  NvmlApi api;
  resolve(*library, "nvmlInit", true, &api.init);
  resolve(*library, "nvmlShutdown", false, &api.shutdown);
  resolve(*library, "nvmlErrorString", false, &api.error_string);
  resolve(*library, "nvmlDeviceGetCount", true, &api.device_get_count);
  resolve(*library, "nvmlDeviceGetHandleByIndex", true, &api.device_get_handle_by_index);
  const char* missing = api.init == nullptr                         ? "nvmlInit"
                        : api.shutdown == nullptr                   ? "nvmlShutdown"
                        : api.error_string == nullptr               ? "nvmlErrorString"
                        : api.device_get_count == nullptr           ? "nvmlDeviceGetCount"
                        : api.device_get_handle_by_index == nullptr ? "nvmlDeviceGetHandleByIndex"
                                                                    : nullptr;
  if (missing != nullptr) {
    return fail(ErrorCode::kUnavailable, path + " is not a usable NVML library: it lacks " +
                                             missing +
                                             "; point ZEUS_NVML_PATH at the driver's "
                                             "libnvidia-ml.so.1");
  }
  resolve(*library, "nvmlDeviceGetName", false, &api.device_get_name);
  resolve(*library, "nvmlDeviceGetUUID", false, &api.device_get_uuid);
  resolve(*library, "nvmlDeviceGetArchitecture", false, &api.device_get_architecture);
  resolve(*library, "nvmlDeviceGetPciInfo_v3", false, &api.device_get_pci_info);
  resolve(*library, "nvmlDeviceGetPowerManagementLimitConstraints", false,
          &api.device_get_power_management_limit_constraints);
  resolve(*library, "nvmlDeviceGetPowerManagementDefaultLimit", false,
          &api.device_get_power_management_default_limit);
  resolve(*library, "nvmlDeviceGetPowerManagementLimit", false,
          &api.device_get_power_management_limit);
  // nvmlDeviceSetPowerManagementLimit_v2 takes a versioned struct: the plain one is used.
  resolve(*library, "nvmlDeviceSetPowerManagementLimit", false,
          &api.device_set_power_management_limit);
  resolve(*library, "nvmlDeviceGetPowerUsage", false, &api.device_get_power_usage);
  resolve(*library, "nvmlDeviceGetFieldValues", false, &api.device_get_field_values);
  resolve(*library, "nvmlDeviceGetTemperature", false, &api.device_get_temperature);
  resolve(*library, "nvmlDeviceGetClockInfo", false, &api.device_get_clock_info);
  resolve(*library, "nvmlDeviceGetTotalEnergyConsumption", false,
          &api.device_get_total_energy_consumption);
  resolve(*library, "nvmlDeviceGetPersistenceMode", false, &api.device_get_persistence_mode);
  resolve(*library, "nvmlDeviceSetPersistenceMode", false, &api.device_set_persistence_mode);
  resolve(*library, "nvmlDeviceGetSupportedMemoryClocks", false,
          &api.device_get_supported_memory_clocks);
  resolve(*library, "nvmlDeviceGetSupportedGraphicsClocks", false,
          &api.device_get_supported_graphics_clocks);
  resolve(*library, "nvmlDeviceSetGpuLockedClocks", false, &api.device_set_gpu_locked_clocks);
  resolve(*library, "nvmlDeviceResetGpuLockedClocks", false, &api.device_reset_gpu_locked_clocks);
  resolve(*library, "nvmlDeviceSetMemoryLockedClocks", false, &api.device_set_memory_locked_clocks);
  resolve(*library, "nvmlDeviceResetMemoryLockedClocks", false,
          &api.device_reset_memory_locked_clocks);

  nvmlReturn_t rc = api.init();
  if (rc != kNvmlSuccess) {
    Error error = nvml_error(rc, api.error_string(rc), "initialising NVML (" + path + ")");
    error.code = ErrorCode::kUnavailable;
    return fail(std::move(error));
  }
  return std::shared_ptr<NvmlLibrary>(new NvmlLibrary(std::move(*library), api));
}

NvmlLibrary::~NvmlLibrary() {
  nvmlReturn_t rc = api_.shutdown();
  if (rc != kNvmlSuccess) log_warning(error(rc, "shutting down NVML").to_string());
}

Error NvmlLibrary::error(nvmlReturn_t code, std::string_view operation) const {
  return nvml_error(code, api_.error_string(code), operation);
}

Error NvmlLibrary::missing_function(std::string_view symbol, std::string_view operation) const {
  return Error{ErrorCode::kNotSupported,
               std::string(operation) + " failed: function not found: " + std::string(symbol) +
                   " is missing from " + path() +
                   ". The driver is too old for this function; upgrade the NVIDIA driver."};
}

}  // namespace zeus::nvml
