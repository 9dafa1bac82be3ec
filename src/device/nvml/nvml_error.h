// NVML return codes as Zeus Errors: every nvmlReturn_t maps to a canonical ErrorCode and a message
// that carries NVML's own text (nvmlErrorString), the code's name and the fix.
//
// Pure functions; thread-safe.
//
//   nvmlReturn_t rc = api.device_set_power_management_limit(handle, 150000);
//   if (rc != kNvmlSuccess) return fail(nvml_error(rc, api.error_string(rc), "setting ..."));
#pragma once

#include <string>
#include <string_view>

#include "device/nvml/nvml_api.h"
#include "zeus/common/result.h"

namespace zeus::nvml {

// "NVML_ERROR_NO_PERMISSION", "NVML_SUCCESS"; "NVML_ERROR_<n>" for a code NVML may add later.
std::string nvml_return_name(nvmlReturn_t code);

// The canonical code for an NVML failure: NO_PERMISSION -> kPermissionDenied, NOT_SUPPORTED and
// FUNCTION_NOT_FOUND -> kNotSupported, GPU_IS_LOST and DRIVER_NOT_LOADED -> kUnavailable, ...
ErrorCode nvml_error_code(nvmlReturn_t code);

// What the user can do about `code`, e.g. "this needs root or CAP_SYS_ADMIN (...)".
std::string_view nvml_fix(nvmlReturn_t code);

// The Error for a failed call: "<operation> failed: <nvml_message> (<NAME>). <fix>".
// `nvml_message` is nvmlErrorString(code); may be null. `code` must not be NVML_SUCCESS.
Error nvml_error(nvmlReturn_t code, const char* nvml_message, std::string_view operation);

}  // namespace zeus::nvml
