// NvmlApi: the subset of NVML (libnvidia-ml.so.1) that Zeus calls, declared here instead of
// including the vendor header, and one plain table of entry points filled by dlsym.
//
// Only code under src/device/nvml/ (and the fake library in testing/fake_nvml/) sees these
// names. Units are NVML's: mW, mJ, MHz. A null entry in the table means the driver's library
// lacks the symbol (an old driver); callers turn that into a NotSupported "function not found"
// error, never a call through a null pointer.
// Thread-safety: the table is filled once and then only read; NVML itself is thread-safe.
//
//   NvmlApi api = ...;  // filled by NvmlLibrary::load()
//   unsigned int count = 0;
//   if (api.device_get_count(&count) == kNvmlSuccess) use(count);
#pragma once

#include <cstdint>

namespace zeus::nvml {

// nvmlReturn_t. Values are NVML's (nvml.h, driver 535+).
using nvmlReturn_t = int;
inline constexpr nvmlReturn_t kNvmlSuccess = 0;
inline constexpr nvmlReturn_t kNvmlErrorUninitialized = 1;
inline constexpr nvmlReturn_t kNvmlErrorInvalidArgument = 2;
inline constexpr nvmlReturn_t kNvmlErrorNotSupported = 3;
inline constexpr nvmlReturn_t kNvmlErrorNoPermission = 4;
inline constexpr nvmlReturn_t kNvmlErrorAlreadyInitialized = 5;
inline constexpr nvmlReturn_t kNvmlErrorNotFound = 6;
inline constexpr nvmlReturn_t kNvmlErrorInsufficientSize = 7;
inline constexpr nvmlReturn_t kNvmlErrorInsufficientPower = 8;
inline constexpr nvmlReturn_t kNvmlErrorDriverNotLoaded = 9;
inline constexpr nvmlReturn_t kNvmlErrorTimeout = 10;
inline constexpr nvmlReturn_t kNvmlErrorIrqIssue = 11;
inline constexpr nvmlReturn_t kNvmlErrorLibraryNotFound = 12;
inline constexpr nvmlReturn_t kNvmlErrorFunctionNotFound = 13;
inline constexpr nvmlReturn_t kNvmlErrorCorruptedInforom = 14;
inline constexpr nvmlReturn_t kNvmlErrorGpuIsLost = 15;
inline constexpr nvmlReturn_t kNvmlErrorResetRequired = 16;
inline constexpr nvmlReturn_t kNvmlErrorOperatingSystem = 17;
inline constexpr nvmlReturn_t kNvmlErrorLibRmVersionMismatch = 18;
inline constexpr nvmlReturn_t kNvmlErrorInUse = 19;
inline constexpr nvmlReturn_t kNvmlErrorMemory = 20;
inline constexpr nvmlReturn_t kNvmlErrorNoData = 21;
inline constexpr nvmlReturn_t kNvmlErrorVgpuEccNotSupported = 22;
inline constexpr nvmlReturn_t kNvmlErrorInsufficientResources = 23;
inline constexpr nvmlReturn_t kNvmlErrorFreqNotSupported = 24;
inline constexpr nvmlReturn_t kNvmlErrorArgumentVersionMismatch = 25;
inline constexpr nvmlReturn_t kNvmlErrorDeprecated = 26;
inline constexpr nvmlReturn_t kNvmlErrorNotReady = 27;
inline constexpr nvmlReturn_t kNvmlErrorGpuNotFound = 28;
inline constexpr nvmlReturn_t kNvmlErrorInvalidState = 29;
inline constexpr nvmlReturn_t kNvmlErrorUnknown = 999;

// nvmlDevice_t: an opaque handle owned by the library.
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;

// nvmlEnableState_t.
inline constexpr int kNvmlFeatureDisabled = 0;
inline constexpr int kNvmlFeatureEnabled = 1;

// nvmlDeviceArchitecture_t values (NVML_DEVICE_ARCH_*). Volta and newer have an energy counter.
inline constexpr unsigned int kNvmlArchVolta = 5;

// Field ids for nvmlDeviceGetFieldValues (NVML_FI_DEV_POWER_*), values in mW.
inline constexpr unsigned int kNvmlFieldPowerAverage = 185;
inline constexpr unsigned int kNvmlFieldPowerInstant = 186;
// nvmlFieldValue_t::scopeId for the power fields (NVML_POWER_SCOPE_*).
inline constexpr unsigned int kNvmlPowerScopeGpu = 0;
inline constexpr unsigned int kNvmlPowerScopeModule = 1;
inline constexpr unsigned int kNvmlPowerScopeMemory = 2;

// nvmlTemperatureSensors_t: the GPU die sensor.
inline constexpr int kNvmlTemperatureGpu = 0;
// nvmlClockType_t: NVML_CLOCK_GRAPHICS 0, NVML_CLOCK_SM 1, NVML_CLOCK_MEM 2.
inline constexpr int kNvmlClockGraphics = 0;
inline constexpr int kNvmlClockSm = 1;
inline constexpr int kNvmlClockMem = 2;

// nvmlValueType_t: which member of nvmlValue_t holds the value.
inline constexpr int kNvmlValueTypeDouble = 0;
inline constexpr int kNvmlValueTypeUnsignedInt = 1;
inline constexpr int kNvmlValueTypeUnsignedLong = 2;
inline constexpr int kNvmlValueTypeUnsignedLongLong = 3;
inline constexpr int kNvmlValueTypeSignedLongLong = 4;
inline constexpr int kNvmlValueTypeSignedInt = 5;

// nvmlValue_t.
union nvmlValue_t {
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
  int siVal;
};

// nvmlFieldValue_t (layout as in nvml.h).
struct nvmlFieldValue_t {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
};
static_assert(sizeof(nvmlFieldValue_t) == 40, "nvmlFieldValue_t must match nvml.h");

// Buffer sizes NVML documents for names and UUIDs.
inline constexpr unsigned int kNvmlDeviceNameBufferSize = 96;
inline constexpr unsigned int kNvmlDeviceUuidBufferSize = 96;

// nvmlPciInfo_t as filled by nvmlDeviceGetPciInfo_v3.
struct nvmlPciInfo_t {
  char bus_id_legacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;
  unsigned int pci_sub_system_id;
  char bus_id[32];
};

// One pointer per entry point. Names are the symbols' names without the "nvml" prefix;
// where a `_v2` symbol exists with the same signature, the loader prefers it.
struct NvmlApi {
  // Required at load.
  nvmlReturn_t (*init)() = nullptr;                           // nvmlInit_v2 | nvmlInit
  nvmlReturn_t (*shutdown)() = nullptr;                       // nvmlShutdown
  const char* (*error_string)(nvmlReturn_t) = nullptr;        // nvmlErrorString
  nvmlReturn_t (*device_get_count)(unsigned int*) = nullptr;  // nvmlDeviceGetCount_v2 | ...
  nvmlReturn_t (*device_get_handle_by_index)(unsigned int, nvmlDevice_t*) = nullptr;

  // Optional: a missing one fails only the call that needs it.
  nvmlReturn_t (*device_get_name)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*device_get_uuid)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*device_get_architecture)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*device_get_pci_info)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;  // ..._v3
  nvmlReturn_t (*device_get_power_management_limit_constraints)(nvmlDevice_t, unsigned int*,
                                                                unsigned int*) = nullptr;
  nvmlReturn_t (*device_get_power_management_default_limit)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*device_get_power_management_limit)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*device_set_power_management_limit)(nvmlDevice_t, unsigned int) = nullptr;
  nvmlReturn_t (*device_get_power_usage)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*device_get_field_values)(nvmlDevice_t, int, nvmlFieldValue_t*) = nullptr;
  nvmlReturn_t (*device_get_temperature)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*device_get_clock_info)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*device_get_total_energy_consumption)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*device_get_persistence_mode)(nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*device_set_persistence_mode)(nvmlDevice_t, int) = nullptr;
  nvmlReturn_t (*device_get_supported_memory_clocks)(nvmlDevice_t, unsigned int*,
                                                     unsigned int*) = nullptr;
  nvmlReturn_t (*device_get_supported_graphics_clocks)(nvmlDevice_t, unsigned int, unsigned int*,
                                                       unsigned int*) = nullptr;
  nvmlReturn_t (*device_set_gpu_locked_clocks)(nvmlDevice_t, unsigned int, unsigned int) = nullptr;
  nvmlReturn_t (*device_reset_gpu_locked_clocks)(nvmlDevice_t) = nullptr;
  nvmlReturn_t (*device_set_memory_locked_clocks)(nvmlDevice_t, unsigned int,
                                                  unsigned int) = nullptr;
  nvmlReturn_t (*device_reset_memory_locked_clocks)(nvmlDevice_t) = nullptr;
};

}  // namespace zeus::nvml
