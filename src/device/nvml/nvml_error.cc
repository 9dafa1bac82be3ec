#include "device/nvml/nvml_error.h"

namespace zeus::nvml {
namespace {

struct CodeInfo {
  nvmlReturn_t code;
  const char* name;
  ErrorCode error_code;
  const char* fix;
};

constexpr CodeInfo kCodes[] = {
    {kNvmlSuccess, "NVML_SUCCESS", ErrorCode::kInternal, "No error (a Zeus bug reported success)."},
    {kNvmlErrorUninitialized, "NVML_ERROR_UNINITIALIZED", ErrorCode::kInternal,
     "NVML was not initialized; this is a Zeus bug, please report it."},
    {kNvmlErrorInvalidArgument, "NVML_ERROR_INVALID_ARGUMENT", ErrorCode::kInvalidArgument,
     "Check the value against what the GPU supports (see nvidia-smi -q)."},
    {kNvmlErrorNotSupported, "NVML_ERROR_NOT_SUPPORTED", ErrorCode::kNotSupported,
     "This GPU or driver does not support it."},
    {kNvmlErrorNoPermission, "NVML_ERROR_NO_PERMISSION", ErrorCode::kPermissionDenied,
     "This needs root or CAP_SYS_ADMIN: run as root, grant CAP_SYS_ADMIN, or run zeusd."},
    {kNvmlErrorAlreadyInitialized, "NVML_ERROR_ALREADY_INITIALIZED", ErrorCode::kInternal,
     "NVML was initialized twice; this is a Zeus bug, please report it."},
    {kNvmlErrorNotFound, "NVML_ERROR_NOT_FOUND", ErrorCode::kNotFound,
     "No such GPU; list the GPUs with nvidia-smi -L."},
    {kNvmlErrorInsufficientSize, "NVML_ERROR_INSUFFICIENT_SIZE", ErrorCode::kInternal,
     "A buffer was too small; this is a Zeus bug, please report it."},
    {kNvmlErrorInsufficientPower, "NVML_ERROR_INSUFFICIENT_POWER", ErrorCode::kUnavailable,
     "A power cable is not connected properly; check the GPU's power connectors."},
    {kNvmlErrorDriverNotLoaded, "NVML_ERROR_DRIVER_NOT_LOADED", ErrorCode::kUnavailable,
     "The NVIDIA driver is not loaded: install it or load the kernel module (nvidia-smi must "
     "work)."},
    {kNvmlErrorTimeout, "NVML_ERROR_TIMEOUT", ErrorCode::kUnavailable,
     "The driver timed out; retry, and check dmesg if it persists."},
    {kNvmlErrorIrqIssue, "NVML_ERROR_IRQ_ISSUE", ErrorCode::kUnavailable,
     "The kernel and the GPU have an interrupt problem; check dmesg."},
    {kNvmlErrorLibraryNotFound, "NVML_ERROR_LIBRARY_NOT_FOUND", ErrorCode::kUnavailable,
     "NVML could not find a library it needs; reinstall the NVIDIA driver."},
    {kNvmlErrorFunctionNotFound, "NVML_ERROR_FUNCTION_NOT_FOUND", ErrorCode::kNotSupported,
     "The driver is too old for this function; upgrade the NVIDIA driver."},
    {kNvmlErrorCorruptedInforom, "NVML_ERROR_CORRUPTED_INFOROM", ErrorCode::kUnavailable,
     "The GPU's infoROM is corrupted; contact the GPU's vendor."},
    {kNvmlErrorGpuIsLost, "NVML_ERROR_GPU_IS_LOST", ErrorCode::kUnavailable,
     "The GPU fell off the bus; check dmesg and reset the GPU (nvidia-smi -r) or reboot."},
    {kNvmlErrorResetRequired, "NVML_ERROR_RESET_REQUIRED", ErrorCode::kUnavailable,
     "The GPU needs a reset (nvidia-smi -r) or a reboot."},
    {kNvmlErrorOperatingSystem, "NVML_ERROR_OPERATING_SYSTEM", ErrorCode::kUnavailable,
     "The operating system blocked the call; check dmesg."},
    {kNvmlErrorLibRmVersionMismatch, "NVML_ERROR_LIB_RM_VERSION_MISMATCH", ErrorCode::kUnavailable,
     "The NVML library and the kernel driver have different versions; reload the driver or "
     "reboot."},
    {kNvmlErrorInUse, "NVML_ERROR_IN_USE", ErrorCode::kUnavailable,
     "The GPU is busy with another operation; retry when it is free."},
    {kNvmlErrorMemory, "NVML_ERROR_MEMORY", ErrorCode::kInternal, "NVML ran out of host memory."},
    {kNvmlErrorNoData, "NVML_ERROR_NO_DATA", ErrorCode::kUnavailable,
     "The driver has no data yet; retry shortly."},
    {kNvmlErrorVgpuEccNotSupported, "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED", ErrorCode::kNotSupported,
     "ECC is not supported on this vGPU."},
    {kNvmlErrorInsufficientResources, "NVML_ERROR_INSUFFICIENT_RESOURCES", ErrorCode::kUnavailable,
     "The driver lacks the resources for this; retry, or free GPU resources."},
    {kNvmlErrorFreqNotSupported, "NVML_ERROR_FREQ_NOT_SUPPORTED", ErrorCode::kInvalidArgument,
     "The clock frequency is not supported; pick one from the supported clocks."},
    {kNvmlErrorArgumentVersionMismatch, "NVML_ERROR_ARGUMENT_VERSION_MISMATCH",
     ErrorCode::kInternal,
     "Zeus and the driver disagree on a structure version; upgrade the NVIDIA driver."},
    {kNvmlErrorDeprecated, "NVML_ERROR_DEPRECATED", ErrorCode::kNotSupported,
     "The driver no longer supports this function."},
    {kNvmlErrorNotReady, "NVML_ERROR_NOT_READY", ErrorCode::kUnavailable,
     "The GPU is not ready yet; retry shortly."},
    {kNvmlErrorGpuNotFound, "NVML_ERROR_GPU_NOT_FOUND", ErrorCode::kNotFound,
     "No such GPU; list the GPUs with nvidia-smi -L."},
    {kNvmlErrorInvalidState, "NVML_ERROR_INVALID_STATE", ErrorCode::kUnavailable,
     "The GPU is in a state that does not allow this; check nvidia-smi -q."},
    {kNvmlErrorUnknown, "NVML_ERROR_UNKNOWN", ErrorCode::kInternal,
     "Unknown NVML error; check dmesg and nvidia-smi."},
};

const CodeInfo* find_code(nvmlReturn_t code) {
  for (const CodeInfo& info : kCodes) {
    if (info.code == code) return &info;
  }
  return nullptr;
}

}  // namespace

std::string nvml_return_name(nvmlReturn_t code) {
  const CodeInfo* info = find_code(code);
  if (info != nullptr) return info->name;
  return "NVML_ERROR_" + std::to_string(code);
}

ErrorCode nvml_error_code(nvmlReturn_t code) {
  const CodeInfo* info = find_code(code);
  return info != nullptr ? info->error_code : ErrorCode::kInternal;
}

std::string_view nvml_fix(nvmlReturn_t code) {
  const CodeInfo* info = find_code(code);
  if (info != nullptr) return info->fix;
  return "Unknown NVML return code; upgrade Zeus or check dmesg and nvidia-smi.";
}

Error nvml_error(nvmlReturn_t code, const char* nvml_message, std::string_view operation) {
  ZEUS_CHECK(code != kNvmlSuccess, "nvml_error called with NVML_SUCCESS");
  std::string message(operation);
  message += " failed: ";
  message += (nvml_message != nullptr && *nvml_message != '\0') ? nvml_message : "no NVML message";
  message += " (" + nvml_return_name(code) + "). ";
  message += nvml_fix(code);
  return Error{nvml_error_code(code), std::move(message)};
}

}  // namespace zeus::nvml
