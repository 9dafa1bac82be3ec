// RocmSmi: the thin shim that alone sees librocm_smi64.so. It dlopens the library, resolves one
// plain table of entry points (RocmSmiApi), calls rsmi_init, and maps every rsmi status to a
// zeus::Error with rocm_smi's own message and the fix. rsmi_shut_down runs when the last owner
// (a shared_ptr held by each AmdGpu) lets go.
//
// Units: the vendor's (uW, count x resolution uJ, Hz); conversion happens in AmdGpu.
// Thread-safety: the table is immutable after open(); calls go straight to rocm_smi, which
// serialises them itself.
// Failure: open() gives Unavailable when the library cannot be loaded, is not rocm_smi, or
// rsmi_init fails. A symbol the library lacks leaves a null pointer; call() then answers
// NotSupported "function not found" instead of crashing.
//
//   auto smi = zeus::RocmSmi::open("librocm_smi64.so");
//   uint64_t cap_uw = 0;
//   auto ok = (*smi)->call("rsmi_dev_power_cap_get", (*smi)->api().dev_power_cap_get, 0, 0,
//   &cap_uw);
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "common/dynamic_library.h"
#include "device/amd/rocm_smi_types.h"
#include "zeus/common/result.h"

namespace zeus {

// The rocm_smi entry points Zeus uses; nullptr where the library lacks one.
struct RocmSmiApi {
  rsmi::InitFn init = nullptr;
  rsmi::ShutDownFn shut_down = nullptr;
  rsmi::StatusStringFn status_string = nullptr;
  rsmi::NumMonitorDevicesFn num_monitor_devices = nullptr;
  rsmi::DevNameGetFn dev_name_get = nullptr;
  rsmi::DevUniqueIdGetFn dev_unique_id_get = nullptr;
  rsmi::DevSerialNumberGetFn dev_serial_number_get = nullptr;
  rsmi::DevPowerCapGetFn dev_power_cap_get = nullptr;
  rsmi::DevPowerCapSetFn dev_power_cap_set = nullptr;
  rsmi::DevPowerCapRangeGetFn dev_power_cap_range_get = nullptr;
  rsmi::DevPowerCapDefaultGetFn dev_power_cap_default_get = nullptr;
  rsmi::DevPowerAveGetFn dev_power_ave_get = nullptr;
  rsmi::DevCurrentSocketPowerGetFn dev_current_socket_power_get = nullptr;
  rsmi::DevEnergyCountGetFn dev_energy_count_get = nullptr;
  rsmi::DevGpuClkFreqGetFn dev_gpu_clk_freq_get = nullptr;
  rsmi::DevClkRangeSetFn dev_clk_range_set = nullptr;
  rsmi::DevPerfLevelSetFn dev_perf_level_set = nullptr;

  // Resolves every entry point of `library` (missing ones stay nullptr).
  static RocmSmiApi load(const DynamicLibrary& library);
};

// rocm_smi's own description of `status` ("Permission denied/EACCESS file error..."), or a
// generic text when status_string is unavailable or fails.
std::string rsmi_status_text(const RocmSmiApi& api, rsmi::Status status);

// Maps a failed rsmi status of call `function` (e.g. "rsmi_dev_power_cap_set") to an Error:
// PERMISSION -> PermissionDenied ("needs root"), NOT_SUPPORTED/NOT_YET_IMPLEMENTED ->
// NotSupported, INVALID_ARGS/INPUT_OUT_OF_BOUNDS -> InvalidArgument, NOT_FOUND -> NotFound,
// FILE_ERROR/INIT_ERROR/BUSY/INTERRUPT/NO_DATA -> Unavailable (GPU lost or driver not ready),
// anything else -> Internal. The message names the call, rocm_smi's text and the fix.
Error rsmi_error(const RocmSmiApi& api, rsmi::Status status, std::string_view function);

// The error for an entry point missing from the library: NotSupported "function not found".
Error rsmi_missing_function(std::string_view function, const std::string& library_path);

// An initialised rocm_smi library. Shared by the AmdGpus opened from it.
class RocmSmi {
 public:
  // dlopen(path) + rsmi_init(0). Unavailable when the library cannot be loaded, lacks rsmi_init,
  // or rsmi_init fails (no amdgpu driver, no AMD GPU).
  static Result<std::shared_ptr<RocmSmi>> open(const std::string& path);
  // From an already resolved table (tests may null out entries). Calls rsmi_init like open().
  static Result<std::shared_ptr<RocmSmi>> open(DynamicLibrary library, RocmSmiApi api);
  ~RocmSmi();
  RocmSmi(const RocmSmi&) = delete;
  RocmSmi& operator=(const RocmSmi&) = delete;

  const RocmSmiApi& api() const { return api_; }
  const std::string& path() const { return library_.path(); }

  // Calls `fn(args...)` where `function` is its rsmi name: NotSupported "function not found"
  // when fn is null, the mapped Error when it returns a failure status.
  template <typename Fn, typename... Args>
  Result<void> call(std::string_view function, Fn fn, Args... args) const {
    if (fn == nullptr) return fail(rsmi_missing_function(function, path()));
    rsmi::Status status = fn(args...);
    if (status != rsmi::kStatusSuccess) return fail(rsmi_error(api_, status, function));
    return ok();
  }

 private:
  RocmSmi(DynamicLibrary library, RocmSmiApi api) : library_(std::move(library)), api_(api) {}
  DynamicLibrary library_;
  RocmSmiApi api_;
};

}  // namespace zeus
