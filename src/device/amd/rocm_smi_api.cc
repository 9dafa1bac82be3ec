#include "device/amd/rocm_smi_api.h"

#include <utility>

#include "zeus/common/log.h"

namespace zeus {
namespace {

// What the user can do about a failed call, by status.
std::string rsmi_fix_for(rsmi::Status status, std::string_view function) {
  switch (status) {
    case rsmi::kStatusPermission:
      if (function.find("_set") != std::string_view::npos) {
        return "changing AMD GPU power caps and clocks needs root: run as root or use zeusd";
      }
      return "reading this AMD GPU value needs root: run as root or use zeusd";
    case rsmi::kStatusNotSupported:
    case rsmi::kStatusNotYetImplemented:
      return "this GPU, kernel or rocm_smi version does not support it";
    case rsmi::kStatusInvalidArgs:
    case rsmi::kStatusInputOutOfBounds:
      return "check the device index and that the value lies within the GPU's range";
    case rsmi::kStatusFileError:
      return "the GPU's sysfs files could not be accessed: the GPU may have been lost or the "
             "amdgpu driver unloaded (check dmesg)";
    case rsmi::kStatusInitError:
      return "rocm_smi is not initialised: is the amdgpu driver loaded and an AMD GPU present?";
    case rsmi::kStatusBusy:
    case rsmi::kStatusInterrupt:
      return "the GPU is busy: retry";
    case rsmi::kStatusNoData:
      return "the driver has no data for it yet: retry, or the GPU may have been lost";
    default:
      return "report this with the rocm_smi and kernel versions";
  }
}

ErrorCode rsmi_code_for(rsmi::Status status) {
  switch (status) {
    case rsmi::kStatusPermission:
      return ErrorCode::kPermissionDenied;
    case rsmi::kStatusNotSupported:
    case rsmi::kStatusNotYetImplemented:
      return ErrorCode::kNotSupported;
    case rsmi::kStatusInvalidArgs:
    case rsmi::kStatusInputOutOfBounds:
      return ErrorCode::kInvalidArgument;
    case rsmi::kStatusNotFound:
      return ErrorCode::kNotFound;
    case rsmi::kStatusFileError:
    case rsmi::kStatusInitError:
    case rsmi::kStatusBusy:
    case rsmi::kStatusInterrupt:
    case rsmi::kStatusNoData:
      return ErrorCode::kUnavailable;
    default:
      return ErrorCode::kInternal;
  }
}

}  // namespace

RocmSmiApi RocmSmiApi::load(const DynamicLibrary& library) {
  RocmSmiApi api;
  library.find_into("rsmi_init", &api.init);
  library.find_into("rsmi_shut_down", &api.shut_down);
  library.find_into("rsmi_status_string", &api.status_string);
  library.find_into("rsmi_num_monitor_devices", &api.num_monitor_devices);
  library.find_into("rsmi_dev_name_get", &api.dev_name_get);
  library.find_into("rsmi_dev_unique_id_get", &api.dev_unique_id_get);
  library.find_into("rsmi_dev_serial_number_get", &api.dev_serial_number_get);
  library.find_into("rsmi_dev_power_cap_get", &api.dev_power_cap_get);
  library.find_into("rsmi_dev_power_cap_set", &api.dev_power_cap_set);
  library.find_into("rsmi_dev_power_cap_range_get", &api.dev_power_cap_range_get);
  library.find_into("rsmi_dev_power_cap_default_get", &api.dev_power_cap_default_get);
  library.find_into("rsmi_dev_power_ave_get", &api.dev_power_ave_get);
  library.find_into("rsmi_dev_current_socket_power_get", &api.dev_current_socket_power_get);
  library.find_into("rsmi_dev_energy_count_get", &api.dev_energy_count_get);
  library.find_into("rsmi_dev_gpu_clk_freq_get", &api.dev_gpu_clk_freq_get);
  library.find_into("rsmi_dev_clk_range_set", &api.dev_clk_range_set);
  library.find_into("rsmi_dev_perf_level_set", &api.dev_perf_level_set);
  return api;
}

std::string rsmi_status_text(const RocmSmiApi& api, rsmi::Status status) {
  if (api.status_string != nullptr) {
    const char* text = nullptr;
    if (api.status_string(status, &text) == rsmi::kStatusSuccess && text != nullptr) {
      return text;
    }
  }
  return "rsmi status " + std::to_string(status);
}

Error rsmi_error(const RocmSmiApi& api, rsmi::Status status, std::string_view function) {
  return Error{rsmi_code_for(status), std::string(function) + " failed: " +
                                          rsmi_status_text(api, status) + " (" +
                                          rsmi_fix_for(status, function) + ")"};
}

Error rsmi_missing_function(std::string_view function, const std::string& library_path) {
  return Error{ErrorCode::kNotSupported, "function not found: " + std::string(function) +
                                             " is missing from " + library_path +
                                             " (this rocm_smi version is too old for it)"};
}

Result<std::shared_ptr<RocmSmi>> RocmSmi::open(const std::string& path) {
  auto library = DynamicLibrary::open(path);
  if (!library) {
    return fail(ErrorCode::kUnavailable,
                library.error().message +
                    " (install ROCm's rocm_smi library and the amdgpu driver, or set "
                    "ZEUS_ROCM_SMI_PATH)");
  }
  RocmSmiApi api = RocmSmiApi::load(*library);
  return open(std::move(*library), api);
}

Result<std::shared_ptr<RocmSmi>> RocmSmi::open(DynamicLibrary library, RocmSmiApi api) {
  if (api.init == nullptr || api.num_monitor_devices == nullptr) {
    return fail(ErrorCode::kUnavailable, library.path() +
                                             " is not a rocm_smi library (rsmi_init or "
                                             "rsmi_num_monitor_devices is missing)");
  }
  rsmi::Status status = api.init(0);
  if (status != rsmi::kStatusSuccess) {
    return fail(ErrorCode::kUnavailable,
                "rsmi_init failed: " + rsmi_status_text(api, status) +
                    " (no AMD GPU found, or the amdgpu driver is not loaded)");
  }
  return std::shared_ptr<RocmSmi>(new RocmSmi(std::move(library), api));
}

RocmSmi::~RocmSmi() {
  if (api_.shut_down == nullptr) return;
  rsmi::Status status = api_.shut_down();
  if (status != rsmi::kStatusSuccess) {
    log_warning("rsmi_shut_down failed: " + rsmi_status_text(api_, status));
  }
}

}  // namespace zeus
