// AmdSmi: the thin shim that alone sees libamd_smi.so. It dlopens the library, resolves one plain
// table of entry points (AmdSmiApi), calls amdsmi_init(AMDSMI_INIT_AMD_GPUS), learns the
// library's ABI from amdsmi_get_lib_version, and maps every amdsmi status to a zeus::Error with
// AMD SMI's own message and the fix. amdsmi_shut_down runs when the last owner (a shared_ptr held
// by each AmdSmiGpu) lets go.
//
// Units: the vendor's (uW caps, W socket power, count x resolution uJ, MHz, degrees C); the
// conversion to Zeus's units happens in AmdSmiGpu.
// Thread-safety: the table is immutable after open(); calls go straight to AMD SMI. Versions
// before 26.2 are not thread-safe (zeusd upstream serialises them), so call() holds one mutex.
// Failure: open() gives Unavailable when the library cannot be loaded, is not AMD SMI, is older
// than ABI 24 (ROCm 6.2), or amdsmi_init fails; discovery then falls back to rocm_smi. A symbol
// the library lacks leaves a null pointer; call() answers NotSupported "function not found".
//
//   auto smi = zeus::AmdSmi::open("libamd_smi.so");
//   zeus::amdsmi::PowerCapInfo info{};
//   auto ok = (*smi)->call("amdsmi_get_power_cap_info", (*smi)->api().get_power_cap_info,
//                          handle, 0u, &info);
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/dynamic_library.h"
#include "device/amd/amdsmi_types.h"
#include "zeus/common/result.h"

namespace zeus {

// The AMD SMI entry points Zeus uses; nullptr where the library lacks one.
struct AmdSmiApi {
  amdsmi::InitFn init = nullptr;
  amdsmi::ShutDownFn shut_down = nullptr;
  amdsmi::StatusCodeToStringFn status_code_to_string = nullptr;
  amdsmi::GetLibVersionFn get_lib_version = nullptr;
  amdsmi::GetSocketHandlesFn get_socket_handles = nullptr;
  amdsmi::GetProcessorHandlesFn get_processor_handles = nullptr;
  amdsmi::GetGpuEnumerationInfoFn get_gpu_enumeration_info = nullptr;
  amdsmi::GetGpuKfdInfoFn get_gpu_kfd_info = nullptr;
  amdsmi::GetGpuAsicInfoFn get_gpu_asic_info = nullptr;
  amdsmi::GetGpuDeviceBdfFn get_gpu_device_bdf = nullptr;
  amdsmi::GetPowerCapInfoFn get_power_cap_info = nullptr;
  amdsmi::SetPowerCapFn set_power_cap = nullptr;
  amdsmi::GetPowerInfoFn get_power_info = nullptr;
  amdsmi::GetEnergyCountFn get_energy_count = nullptr;
  amdsmi::GetTempMetricFn get_temp_metric = nullptr;
  amdsmi::GetClockInfoFn get_clock_info = nullptr;
  amdsmi::SetGpuClkRangeFn set_gpu_clk_range = nullptr;
  amdsmi::SetGpuPerfLevelFn set_gpu_perf_level = nullptr;

  // Resolves every entry point of `library` (missing ones stay nullptr).
  static AmdSmiApi load(const DynamicLibrary& library);
};

// The layout of amdsmi_power_info_t, by library ABI (24: ROCm 6.2-6.4, 25: ROCm 7.0, 26: 7.1+).
enum class AmdSmiAbi { k24 = 24, k25 = 25, k26 = 26 };

// The ABI a version buffer names: its first word is the year (24, 25) or, from 26 on, the major.
// nullopt for anything older (ROCm 6.1 and before), which Zeus does not drive through AMD SMI.
std::optional<AmdSmiAbi> amdsmi_abi_of(const amdsmi::VersionBuffer& version);

// Socket powers of amdsmi_power_info_t in W; nullopt where the GPU reports N/A.
struct AmdSmiPower {
  std::optional<uint32_t> current_w;
  std::optional<uint32_t> average_w;
};
// Decodes a power-info buffer filled by a library of ABI `abi`.
AmdSmiPower decode_power_info(AmdSmiAbi abi, const unsigned char* buffer);

// AMD SMI's text for `status`, or a generic one when status_code_to_string is unavailable.
std::string amdsmi_status_text(const AmdSmiApi& api, amdsmi::Status status);

// Maps a failed status of call `function` to an Error: NO_PERM -> PermissionDenied ("needs
// root"), NOT_SUPPORTED/NOT_YET_IMPLEMENTED -> NotSupported, INVAL/INPUT_OUT_OF_BOUNDS ->
// InvalidArgument, NOT_FOUND -> NotFound, device and driver errors (FILE_ERROR, IO, DRM_ERROR,
// BUSY, RETRY, TIMEOUT, NOT_INIT, DRIVER_NOT_LOADED, NO_DATA, INTERRUPT) -> Unavailable,
// anything else -> Internal. The message names the call, AMD SMI's text and the fix.
Error amdsmi_error(const AmdSmiApi& api, amdsmi::Status status, std::string_view function);

// An initialised AMD SMI library. Shared by the AmdSmiGpus opened from it.
class AmdSmi {
 public:
  // dlopen(path) + amdsmi_init(AMDSMI_INIT_AMD_GPUS) + the ABI check.
  static Result<std::shared_ptr<AmdSmi>> open(const std::string& path);
  ~AmdSmi();
  AmdSmi(const AmdSmi&) = delete;
  AmdSmi& operator=(const AmdSmi&) = delete;

  const AmdSmiApi& api() const { return api_; }
  AmdSmiAbi abi() const { return abi_; }
  const std::string& path() const { return library_.path(); }

  // Calls `fn(args...)` where `function` is its amdsmi name: NotSupported "function not found"
  // when fn is null, the mapped Error when it returns a failure status.
  template <typename Fn, typename... Args>
  Result<void> call(std::string_view function, Fn fn, Args... args) const {
    if (fn == nullptr) return fail(missing_function(function));
    amdsmi::Status status;
    {
      std::lock_guard<std::mutex> lock(call_mutex_);
      status = fn(args...);
    }
    if (status != amdsmi::kStatusSuccess) return fail(amdsmi_error(api_, status, function));
    return ok();
  }

  // amdsmi_get_power_info decoded for this library's ABI.
  Result<AmdSmiPower> power(amdsmi::ProcessorHandle handle) const;

 private:
  AmdSmi(DynamicLibrary library, AmdSmiApi api, AmdSmiAbi abi)
      : library_(std::move(library)), api_(api), abi_(abi) {}
  Error missing_function(std::string_view function) const;

  DynamicLibrary library_;
  AmdSmiApi api_;
  AmdSmiAbi abi_;
  mutable std::mutex call_mutex_;
};

}  // namespace zeus
