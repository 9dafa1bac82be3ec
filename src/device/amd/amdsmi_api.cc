#include "device/amd/amdsmi_api.h"

#include <cstring>
#include <utility>

#include "zeus/common/log.h"

namespace zeus {
namespace {

// What the user can do about a failed call, by status.
std::string fix_for(amdsmi::Status status, std::string_view function) {
  switch (status) {
    case amdsmi::kStatusNoPerm:
      if (function.find("_set") != std::string_view::npos) {
        return "changing AMD GPU power caps and clocks needs root: run as root or use zeusd";
      }
      return "reading this AMD GPU value needs root: run as root or use zeusd";
    case amdsmi::kStatusNotSupported:
    case amdsmi::kStatusNotYetImplemented:
      return "this GPU, driver or AMD SMI version does not support it";
    case amdsmi::kStatusInval:
    case amdsmi::kStatusInputOutOfBounds:
      return "check that the value lies within the GPU's range";
    case amdsmi::kStatusNotFound:
      return "the GPU is gone: it may have been reset or removed (check dmesg)";
    case amdsmi::kStatusFileError:
    case amdsmi::kStatusIo:
    case amdsmi::kStatusDrmError:
      return "the GPU's driver files could not be accessed: the GPU may have been lost or the "
             "amdgpu driver unloaded (check dmesg)";
    case amdsmi::kStatusNotInit:
    case amdsmi::kStatusInitError:
    case amdsmi::kStatusDriverNotLoaded:
      return "AMD SMI is not initialised: is the amdgpu driver loaded and an AMD GPU present?";
    case amdsmi::kStatusBusy:
    case amdsmi::kStatusRetry:
    case amdsmi::kStatusTimeout:
    case amdsmi::kStatusInterrupt:
      return "the GPU is busy: retry";
    case amdsmi::kStatusNoData:
      return "the driver has no data for it yet: retry, or the GPU may have been lost";
    default:
      return "report this with the ROCm and kernel versions";
  }
}

ErrorCode code_for(amdsmi::Status status) {
  switch (status) {
    case amdsmi::kStatusNoPerm:
      return ErrorCode::kPermissionDenied;
    case amdsmi::kStatusNotSupported:
    case amdsmi::kStatusNotYetImplemented:
      return ErrorCode::kNotSupported;
    case amdsmi::kStatusInval:
    case amdsmi::kStatusInputOutOfBounds:
      return ErrorCode::kInvalidArgument;
    case amdsmi::kStatusNotFound:
      return ErrorCode::kNotFound;
    case amdsmi::kStatusFileError:
    case amdsmi::kStatusIo:
    case amdsmi::kStatusDrmError:
    case amdsmi::kStatusNotInit:
    case amdsmi::kStatusInitError:
    case amdsmi::kStatusDriverNotLoaded:
    case amdsmi::kStatusBusy:
    case amdsmi::kStatusRetry:
    case amdsmi::kStatusTimeout:
    case amdsmi::kStatusInterrupt:
    case amdsmi::kStatusNoData:
      return ErrorCode::kUnavailable;
    default:
      return ErrorCode::kInternal;
  }
}

template <typename Info>
AmdSmiPower decode(const unsigned char* buffer) {
  Info info;
  std::memcpy(&info, buffer, sizeof(info));
  AmdSmiPower power;
  if (!amdsmi::power_is_na(info.current_socket_power)) power.current_w = info.current_socket_power;
  if (!amdsmi::power_is_na(info.average_socket_power)) power.average_w = info.average_socket_power;
  return power;
}

}  // namespace

AmdSmiApi AmdSmiApi::load(const DynamicLibrary& library) {
  AmdSmiApi api;
  library.find_into("amdsmi_init", &api.init);
  library.find_into("amdsmi_shut_down", &api.shut_down);
  library.find_into("amdsmi_status_code_to_string", &api.status_code_to_string);
  library.find_into("amdsmi_get_lib_version", &api.get_lib_version);
  library.find_into("amdsmi_get_socket_handles", &api.get_socket_handles);
  library.find_into("amdsmi_get_processor_handles", &api.get_processor_handles);
  library.find_into("amdsmi_get_gpu_enumeration_info", &api.get_gpu_enumeration_info);
  library.find_into("amdsmi_get_gpu_kfd_info", &api.get_gpu_kfd_info);
  library.find_into("amdsmi_get_gpu_asic_info", &api.get_gpu_asic_info);
  library.find_into("amdsmi_get_gpu_device_bdf", &api.get_gpu_device_bdf);
  library.find_into("amdsmi_get_power_cap_info", &api.get_power_cap_info);
  library.find_into("amdsmi_set_power_cap", &api.set_power_cap);
  library.find_into("amdsmi_get_power_info", &api.get_power_info);
  library.find_into("amdsmi_get_energy_count", &api.get_energy_count);
  library.find_into("amdsmi_get_temp_metric", &api.get_temp_metric);
  library.find_into("amdsmi_get_clock_info", &api.get_clock_info);
  library.find_into("amdsmi_set_gpu_clk_range", &api.set_gpu_clk_range);
  library.find_into("amdsmi_set_gpu_perf_level", &api.set_gpu_perf_level);
  return api;
}

std::optional<AmdSmiAbi> amdsmi_abi_of(const amdsmi::VersionBuffer& version) {
  const uint32_t first = version.words[0];
  if (first == 24) return AmdSmiAbi::k24;
  if (first == 25) return AmdSmiAbi::k25;
  if (first >= 26 && first < 1000) return AmdSmiAbi::k26;  // a major, not a year
  return std::nullopt;
}

AmdSmiPower decode_power_info(AmdSmiAbi abi, const unsigned char* buffer) {
  switch (abi) {
    case AmdSmiAbi::k24:
      return decode<amdsmi::PowerInfo24>(buffer);
    case AmdSmiAbi::k25:
      return decode<amdsmi::PowerInfo25>(buffer);
    case AmdSmiAbi::k26:
      return decode<amdsmi::PowerInfo26>(buffer);
  }
  return {};
}

std::string amdsmi_status_text(const AmdSmiApi& api, amdsmi::Status status) {
  if (api.status_code_to_string != nullptr) {
    const char* text = nullptr;
    if (api.status_code_to_string(status, &text) == amdsmi::kStatusSuccess && text != nullptr) {
      return text;
    }
  }
  return "amdsmi status " + std::to_string(status);
}

Error amdsmi_error(const AmdSmiApi& api, amdsmi::Status status, std::string_view function) {
  return Error{code_for(status), std::string(function) + " failed: " +
                                     amdsmi_status_text(api, status) + " (" +
                                     fix_for(status, function) + ")"};
}

Error AmdSmi::missing_function(std::string_view function) const {
  return Error{ErrorCode::kNotSupported, "function not found: " + std::string(function) +
                                             " is missing from " + path() +
                                             " (this AMD SMI version is too old for it)"};
}

Result<std::shared_ptr<AmdSmi>> AmdSmi::open(const std::string& path) {
  auto library = DynamicLibrary::open(path);
  if (!library) {
    return fail(ErrorCode::kUnavailable,
                library.error().message +
                    " (install ROCm's AMD SMI library (amd-smi-lib) and the amdgpu driver, or set "
                    "ZEUS_AMDSMI_PATH)");
  }
  AmdSmiApi api = AmdSmiApi::load(*library);
  if (api.init == nullptr || api.get_socket_handles == nullptr ||
      api.get_processor_handles == nullptr) {
    return fail(ErrorCode::kUnavailable,
                path + " is not an AMD SMI library (amdsmi_init, amdsmi_get_socket_handles or "
                       "amdsmi_get_processor_handles is missing)");
  }
  if (api.get_lib_version == nullptr) {
    return fail(ErrorCode::kUnavailable, path + " lacks amdsmi_get_lib_version (AMD SMI before "
                                                "ROCm 6.2); Zeus uses rocm_smi instead");
  }
  amdsmi::VersionBuffer version{};
  amdsmi::Status status = api.get_lib_version(&version);
  if (status != amdsmi::kStatusSuccess) {
    return fail(ErrorCode::kUnavailable,
                "amdsmi_get_lib_version failed: " + amdsmi_status_text(api, status));
  }
  auto abi = amdsmi_abi_of(version);
  if (!abi) {
    return fail(ErrorCode::kUnavailable,
                path + " reports version " + std::to_string(version.words[0]) + "." +
                    std::to_string(version.words[1]) +
                    ", older than AMD SMI 24 (ROCm 6.2); Zeus uses rocm_smi instead");
  }
  status = api.init(amdsmi::kInitAmdGpus);
  if (status != amdsmi::kStatusSuccess) {
    return fail(ErrorCode::kUnavailable,
                "amdsmi_init failed: " + amdsmi_status_text(api, status) +
                    " (no AMD GPU found, or the amdgpu driver is not loaded)");
  }
  return std::shared_ptr<AmdSmi>(new AmdSmi(std::move(*library), api, *abi));
}

AmdSmi::~AmdSmi() {
  if (api_.shut_down == nullptr) return;
  amdsmi::Status status = api_.shut_down();
  if (status != amdsmi::kStatusSuccess) {
    log_warning("amdsmi_shut_down failed: " + amdsmi_status_text(api_, status));
  }
}

Result<AmdSmiPower> AmdSmi::power(amdsmi::ProcessorHandle handle) const {
  alignas(8) unsigned char buffer[amdsmi::kPowerInfoBufferSize] = {};
  ZEUS_TRY(call("amdsmi_get_power_info", api_.get_power_info, handle,
                static_cast<void*>(buffer)));
  return decode_power_info(abi_, buffer);
}

}  // namespace zeus
